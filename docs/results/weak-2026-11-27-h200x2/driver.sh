#!/bin/bash
# Call J (two GPUs): weak scaling, R-MAT 24 on one GPU and 25 on two, every primitive, one MPI rank per GPU.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -3; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
( PYTHONPATH=$G/new timeout 280 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 \
    --experiments weak --scale 24 --runs 3 --sources 3 --out $R/raw/weak24 > $R/raw/weak24.txt 2>&1; echo "weak rc=$?" )
date -u >> $R/device.txt
grep -E "^\| [a-z]+ \| [12] \|" $R/raw/weak24.txt | cut -c1-160

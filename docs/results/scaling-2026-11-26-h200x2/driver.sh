#!/bin/bash
# Call E (2 GPUs): strong scaling R-MAT 26, 1 -> 2 GPUs, MPI ranks (one per GPU), every primitive, validated.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -3; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 560 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 --experiments strong --scale 26 --runs 3 --sources 3 --out $R/strong26 > $R/strong26.txt 2>&1; echo "strong rc=$?"; tail -14 $R/strong26.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

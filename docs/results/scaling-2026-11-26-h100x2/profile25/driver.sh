#!/bin/bash
# D26 (two GPUs): cProfile of CC and direction-optimizing BFS on 2 MPI ranks at R-MAT 25 (bench.py under MPI draws the whole graph on every rank: 26 runs out of memory) (main), every rank's.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 200 mpiexec --allow-run-as-root -n 2 -x PYTHONPATH python3 scripts/bench.py --mode profile \
    --primitives cc,dobfs --scale 25 --runs 3 --top 30 > $R/profile.txt 2>&1; echo "profile rc=$?"
PYTHONPATH=$G/new:$SITE timeout 150 mpiexec --allow-run-as-root -n 2 -x PYTHONPATH python3 scripts/bench.py --mode trace \
    --primitives cc,dobfs --scale 25 > $R/trace.txt 2>&1; echo "trace rc=$?"
date -u >> $R/device.txt
grep -A25 "cc, rank 0" $R/profile.txt | head -40
tail -40 $R/trace.txt

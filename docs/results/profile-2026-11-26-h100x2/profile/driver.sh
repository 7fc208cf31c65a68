#!/bin/bash
# D33 (two GPUs): where BFS, SSSP and BC spend a superstep on 2 MPI ranks at R-MAT 25: cProfile of every rank's
# host time and the per-superstep trace (main).
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 200 mpiexec --allow-run-as-root -n 2 -x PYTHONPATH python3 scripts/bench.py --mode profile \
    --primitives bfs,sssp,bc --scale 25 --runs 3 --top 30 > $R/profile.txt 2>&1; echo "profile rc=$?"
PYTHONPATH=$G/new:$SITE timeout 120 mpiexec --allow-run-as-root -n 2 -x PYTHONPATH python3 scripts/bench.py --mode trace \
    --primitives bfs,sssp,bc --scale 25 > $R/trace.txt 2>&1; echo "trace rc=$?"
date -u >> $R/device.txt
grep -E "^(bfs|sssp|bc), rank 0" -A14 $R/profile.txt | cut -c1-150 | head -60

#!/bin/bash
# D41 (two GPUs, MPI ranks): main at ecb43db. Where a host-driven superstep's time goes on two GPUs: bench.py trace
# (per superstep and device) and profile (cProfile per rank) of dobfs, cc, bfs, sssp at R-MAT 26; a 1-GPU trace beside.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/new/COMMIT)"; which nsys ncu) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
export PYTHONPATH=$G/new:$SITE
timeout 150 $M -n 2 python3 scripts/bench.py --mode trace --scale 26 --primitives dobfs,cc,bfs,sssp --sources 1 \
   --json $R/trace2.json > $R/trace2.txt 2>&1; echo "trace2 rc=$?"
timeout 200 $M -n 2 python3 scripts/bench.py --mode profile --scale 26 --primitives dobfs,cc,bfs --runs 5 --sources 1 --top 45 \
   --json $R/prof2.json > $R/prof2.txt 2>&1; echo "prof2 rc=$?"
date -u >> $R/device.txt

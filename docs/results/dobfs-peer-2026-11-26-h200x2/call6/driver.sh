#!/bin/bash
# Where a 2-rank DOBFS run's time goes outside its kernel: bench.py --mode trace (per superstep and device), R-MAT 26,
# two sources; and one GPU for comparison.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
for s in 0 1; do
PYTHONPATH=$G/new timeout 120 mpiexec --allow-run-as-root -n 2 python3 scripts/bench.py --mode trace --scale 26 \
    --primitives dobfs --sources 1 --seed $s --json $R/trace2-$s.json > $R/trace2-$s.txt 2>&1; echo "trace2 rc=$?"
done
PYTHONPATH=$G/new timeout 120 python3 scripts/bench.py --mode trace --devices 1 --scale 26 --primitives dobfs \
    --sources 1 --json $R/trace1.json > $R/trace1.txt 2>&1; echo "trace1 rc=$?"
tail -30 $R/trace2-0.txt; tail -12 $R/trace2-1.txt; tail -12 $R/trace1.txt

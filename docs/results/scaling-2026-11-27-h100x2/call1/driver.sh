#!/bin/bash
# The run's start not sent (new) against main (4016c95): the link's GPU tests and the exchange's on new; DOBFS
# R-MAT 26 on 1 and 2 ranks, 2 ranks alternating main/new; a cProfile of new on 2 ranks (a call's host work).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 200 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    tests/test_exchange_start.py \
    "tests/test_gpu_levels.py::test_direction_optimizing_bfs_runs_its_levels_in_one_superstep" \
    "tests/test_gpu_levels.py::test_direction_levels_match_the_twin" > $R/gpu_tests.txt 2>&1; rc=$?
echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert|FAIL" $R/gpu_tests.txt | head -30; exit 1; fi
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
D="--experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3"
run new dobfs26-new1 1,2 $D
run main dobfs26-main1 2 $D
run new dobfs26-new2 2 $D
run main dobfs26-main2 2 $D
( cd $G/new && PYTHONPATH=$G/new timeout 150 $M -n 2 python3 scripts/bench.py --mode profile --scale 26 \
    --primitives dobfs --runs 5 --sources 1 --top 30 > $R/raw/profile.txt 2>&1; echo "profile rc=$?" )
date -u >> $R/device.txt
cd $R/raw && for f in dobfs*.txt; do echo "== $f"; grep -E "^\| (dobfs|bfs) " $f | cut -c1-160 | tail -2; done
find $R/raw -name "*.png" -delete
cd $R && tar czf raw.tgz raw && rm -rf raw

#!/bin/bash
# The committed tree (new) against main (cb096fb): the link's GPU tests and the one-GPU directions tests on new;
# DOBFS R-MAT 26 on 1 and 2 ranks (new) and 2 (main); grid 4096^2 BFS on 2 ranks main / new (the light kernel's
# claims now through claim_entry).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 200 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    "tests/test_gpu_levels.py::test_direction_optimizing_bfs_runs_its_levels_in_one_superstep" \
    "tests/test_gpu_levels.py::test_direction_levels_match_the_twin" > $R/gpu_tests.txt 2>&1; rc=$?
echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert|FAIL" $R/gpu_tests.txt | head -30; exit 1; fi
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
run new dobfs26-new 1,2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
run main dobfs26-main 2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
for t in main new; do run $t grid-$t 2 --experiments strong --graph grid:4096x4096 --primitives bfs --runs 3 --sources 1; done
date -u >> $R/device.txt
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| (dobfs|bfs) " $f | cut -c1-160 | tail -2; done
find $R/raw -name "*.png" -delete
cd $R && tar czf raw.tgz raw && rm -rf raw

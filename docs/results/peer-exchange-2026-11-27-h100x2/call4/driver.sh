#!/bin/bash
# A gated link's large levels exchanged by the link (new: the load-balanced advance, then one kernel per GPU that
# sends the claimed copies into their owners' inboxes and claims what arrived) against main (5c4ee61: the host's
# split, NCCL and combine): the link's GPU tests on new; R-MAT 26 BFS on 1 and 2 ranks, 2 ranks alternating.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 200 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; rc=$?
echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert|FAIL" $R/gpu_tests.txt | head -30; exit 1; fi
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
B="--experiments strong --scale 26 --primitives bfs --runs 3 --sources 3"
run new bfs26-new1 1,2 $B
run main bfs26-main1 2 $B
run new bfs26-new2 2 $B
run main bfs26-main2 2 $B
date -u >> $R/device.txt
cd $R/raw && for f in bfs*.txt; do echo "== $f"; grep -E "^\| bfs " $f | cut -c1-150 | tail -3; done
find $R/raw -name "*.png" -delete
cd $R && tar czf raw.tgz raw && rm -rf raw

#!/bin/bash
# D57 (two GPUs): the link kernel launched through the driver from argument slots made once (new) against main.  The link's GPU tests on
# new; the overhead experiment main / new alternating twice; grid 4096^2 BFS on 2 GPU ranks main / new.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; rc=$?; echo "tests rc=$rc"; tail -2 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert" $R/gpu_tests.txt | head -20; exit 1; fi
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 90 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
for i in 1 2; do for t in main new; do run $t over-$t-$i 1,2 --experiments overhead --runs 5; done; done
for t in main new; do run $t grid-$t 2 --experiments strong --graph grid:4096x4096 --primitives bfs --runs 3 --sources 1; done
date -u >> $R/device.txt
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| (bfs|[0-9]) " $f | cut -c1-130 | tail -2; done
cd $R && tar czf raw.tgz raw && rm -rf raw

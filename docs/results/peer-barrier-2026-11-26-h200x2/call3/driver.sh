#!/bin/bash
# D50 (two GPUs): one-barrier light kernel (new) against main.  GPU tests of the link on new; then grid 4096^2 BFS
# 1 and 2 GPU ranks, main / new alternating twice; rgg 22 BFS and the overhead experiment, main / new.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/main/COMMIT) new $(cat $G/new/COMMIT)") > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 200 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; rc=$?; echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert" $R/gpu_tests.txt | head -20; exit 1; fi
run() {  # tree label args...
  t=$1; l=$2; shift 2
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 120 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
for i in 1 2; do
  for t in main new; do run $t grid-$t-$i --experiments strong --graph grid:4096x4096 --primitives bfs --runs 3 --sources 1; done
done
for t in main new; do run $t rgg-$t --experiments strong --graph rgg:22 --primitives bfs --runs 3 --sources 1; done
for t in main new; do run $t over-$t --experiments overhead --runs 5; done
date -u >> $R/device.txt
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\|" $f | cut -c1-160 | tail -5; done
cd $R && tar czf raw.tgz raw && rm -rf raw

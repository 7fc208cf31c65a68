#!/bin/bash
# D56 (two GPUs): the light kernel's grid at 1, 2 (main) and 4 blocks per multiprocessor: grid 4096^2 and rgg 22
# BFS on 2 GPU ranks, alternating.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main b1 b4; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 90 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
for g in grid:4096x4096 rgg:22; do
  for t in main b1 b4; do run $t ${g%%:*}-$t 2 --experiments strong --graph $g --primitives bfs --runs 3 --sources 1; done
done
date -u >> $R/device.txt
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| bfs \| 2 \| [0-9.]+ \| [0-9.]+–" $f | cut -c1-70 | tail -1; done
cd $R && tar czf raw.tgz raw && rm -rf raw

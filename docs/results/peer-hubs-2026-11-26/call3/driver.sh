#!/bin/bash
# D37 (two GPUs): the gated link on a full grid. GPU tests of the hub cases; R-MAT 26 BFS new on 1 and 2 GPUs and
# old (16118de) on 2, alternating twice; grid 4096^2 BFS on 2, new and old alternating twice.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT) old $(cat $G/old/COMMIT)"; nproc) > $R/device.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; echo "tests rc=$?"; tail -2 $R/gpu_tests.txt
i=0
for t in new old new old; do
  i=$((i+1)); L=2; [ $i = 1 ] && L=1,2
  cd $G/$t
  PYTHONPATH=$G/$t:$SITE timeout 100 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list $L \
      --experiments strong --scale 26 --primitives bfs --runs 3 --sources 3 --out $R/raw/$t$i > $R/raw/rmat_$t$i.txt 2>&1
  echo "$t$i rc=$?"; grep -E "^\| bfs \| [12] " $R/raw/rmat_$t$i.txt | head -4 | cut -c1-110
done
i=0
for t in new old new old; do
  i=$((i+1)); cd $G/$t
  PYTHONPATH=$G/$t:$SITE timeout 80 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 2 \
      --experiments strong --graph grid:4096x4096 --primitives bfs --runs 3 --sources 1 --out $R/raw/grid_$t$i > $R/raw/grid_$t$i.txt 2>&1
  echo "grid $t$i rc=$?"; grep -E "^\| bfs \| 2 " $R/raw/grid_$t$i.txt | head -2 | cut -c1-110
done
date -u >> $R/device.txt
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

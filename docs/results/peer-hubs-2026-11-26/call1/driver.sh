#!/bin/bash
# D35 (two GPUs): hubs in the peer levels kernel. GPU tests of the link (new tree), then R-MAT 26 BFS strong
# scaling: new on 1 and 2 GPUs, old (main 16118de) on 2, alternating twice.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT) old $(cat $G/old/COMMIT)"; nproc) > $R/device.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    tests/test_gpu_peer_borders.py > $R/gpu_tests.txt 2>&1; echo "tests rc=$?"; tail -3 $R/gpu_tests.txt
i=0
for t in new old new old; do
  i=$((i+1)); L=2; [ $i = 1 ] && L=1,2
  cd $G/$t
  PYTHONPATH=$G/$t:$SITE timeout 110 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list $L \
      --experiments strong --scale 26 --primitives bfs --runs 3 --sources 3 --out $R/raw/$t$i > $R/$t$i.txt 2>&1
  echo "$t$i rc=$?"; grep -E "^\| bfs \| [12] " $R/$t$i.txt | cut -c1-110
done
date -u >> $R/device.txt
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

#!/bin/bash
# Call 9 (code baacf00): GPU suite; overhead experiment f9e1e81 vs baacf00 alternating; grid 4096^2 BFS/SSSP through the CLI, 5683a37 vs baacf00.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; BASE=$PWD/.gpu/base; OLD=$PWD/.gpu/old; SITE=$PWD/.site
mkdir -p $OUT/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u) > $OUT/raw/device.txt
(cd $NEW && PYTHONPATH=$NEW:$SITE timeout 330 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/raw/gpu_tests.txt 2>&1; echo "gpu suite rc=$?"; tail -4 $OUT/raw/gpu_tests.txt)
for i in 1 2; do
  for tree in base new; do
    T=$([ $tree = base ] && echo $BASE || echo $NEW)
    (cd $T && PYTHONPATH=$T:$SITE timeout 60 python3 scripts/scaling.py --experiments overhead --gpus-list 1 --runs 10 --validate --out $OUT/raw/ovh-$tree-$i > $OUT/raw/ovh-$tree-$i.txt 2>&1; echo "overhead $tree $i rc=$?")
  done
done
for tree in new old; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW)
  for prim in bfs sssp; do
    (cd $T && PYTHONPATH=$T:$SITE timeout 60 python3 -m mgraph $prim grid:4096x4096 --runs 3 --source 0 $([ $tree = new ] && echo --validate) --json $OUT/raw/$tree-$prim-grid4096.json > $OUT/raw/$tree-$prim-grid4096.txt 2>&1; echo "$tree $prim grid rc=$?"; grep -E "^time|^validation" $OUT/raw/$tree-$prim-grid4096.txt)
  done
done
date -u >> $OUT/raw/device.txt
gzip -f $OUT/raw/*grid4096.json
tar -czf $OUT/raw.tar.gz -C $OUT raw; rm -rf $OUT/raw

#!/bin/bash
# Call B (code 066cafd, "new") on one GPU: R-MAT 24 bench new vs 5683a37 ("old") alternating x2; rgg 22 / 24 BFS and SSSP
# validated; a user's level-by-level BFS in batches against fused levels on grid 4096^2.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; OLD=$PWD/.gpu/old; SITE=$PWD/.site
mkdir -p $OUT/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u) > $OUT/raw/device.txt
for i in 1 2; do
  for tree in new old; do
    T=$([ $tree = old ] && echo $OLD || echo $NEW)
    V=$([ $tree = new ] && [ $i = 1 ] && echo --validate || echo --no-validate)
    (cd $T && PYTHONPATH=$T:$SITE timeout 100 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines $V --json $OUT/raw/bench-$tree-$i.json > $OUT/raw/bench-$tree-$i.txt 2>&1; echo "bench $tree $i rc=$?")
  done
done
cd $NEW; export PYTHONPATH=$NEW:$SITE
for g in rgg:22 rgg:24; do
  timeout 120 python3 scripts/bench.py --graph $g --primitives bfs,sssp --runs 3 --sources 2 --no-baselines --json $OUT/raw/long-${g/:/-}.json > $OUT/raw/long-${g/:/-}.txt 2>&1; echo "$g rc=$?"; grep -E "^(bfs|sssp) " $OUT/raw/long-${g/:/-}.txt
done
timeout 60 python3 .gpu/hops_grid.py > $OUT/raw/hops-grid.txt 2>&1; echo "hops rc=$?"; cat $OUT/raw/hops-grid.txt | tail -3
date -u >> $OUT/raw/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw; rm -rf $OUT/raw

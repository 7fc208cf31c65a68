#!/bin/bash
# Call B (one GPU): grid 4096^2 BFS and SSSP through the CLI, old 5683a37 and new; R-MAT 24 bench every primitive,
# new, old, new, old (the first new validated).
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
for t in new old; do for p in bfs sssp; do
  V=""; [ $t = new ] && V=--validate
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 90 python3 -m mgraph $p grid:4096x4096 --runs 3 --source 0 $V --json $R/raw/$t-$p-grid.json > $R/raw/$t-$p-grid.txt 2>&1; echo "$t $p grid rc=$? $(grep -E '^(time|validation|supersteps)' $R/raw/$t-$p-grid.txt | tr '\n' ' ')") | tee -a $R/grid.txt
done; done
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines"
for i in 1 2; do for t in new old; do
  V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 150 python3 $B $V --json $R/raw/bench-$t-$i.json > $R/raw/bench-$t-$i.txt 2>&1; echo "bench $t $i rc=$?")
done; done
date -u >> $R/device.txt
cat $R/grid.txt
for i in 1 2; do for t in new old; do echo "== $t $i"; grep -E "^\| ?(bfs|dobfs|sssp|cc|pr|bc|BFS|direction|SSSP|conn|Page|betw)" $R/raw/bench-$t-$i.txt | cut -c1-110; done; done
gzip -f $R/raw/*grid.json; tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

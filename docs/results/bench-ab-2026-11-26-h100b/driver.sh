#!/bin/bash
# D16 (one GPU): R-MAT 24 bench, the code the superstep issue measured (old, 5683a37) against main (new),
# alternating new, old, new, old; the first new run validated.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines"
for i in 1 2; do
  for t in new old; do
    V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
    (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 150 python3 $B $V --json $R/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?")
  done
done
date -u >> $R/device.txt
for i in 1 2; do for t in new old; do echo "== $t $i"; grep -E "^(bfs|dobfs|sssp|cc|pr|bc) |PASS|FAIL" $R/bench-$t-$i.txt | head -8; done; done

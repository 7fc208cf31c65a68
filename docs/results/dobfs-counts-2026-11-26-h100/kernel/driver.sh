#!/bin/bash
# D17 (one GPU): direction kernel counting arcs only before a push (new) against main (old): GPU level tests on new,
# kt.py alternating three rounds, then the bench's BFS/DOBFS alternating twice (first new validated).
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_levels.py tests/test_gpu_batches.py 2>&1 | tail -5) > $R/tests.txt
tail -2 $R/tests.txt
for k in 1 2 3; do for t in old new; do
  (cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 150 python3 $G/kt.py $t $R/kt.jsonl 2>&1 | tail -1)
done; done
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs"
for i in 1 2; do for t in new old; do
  V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 150 python3 $B $V > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?")
done; done
date -u >> $R/device.txt
for i in 1 2; do for t in new old; do echo "== $t $i"; grep -E "^(bfs|dobfs) |PASS|FAIL|GTEPS" $R/bench-$t-$i.txt | head -6; done; done

#!/bin/bash
# D23 (one GPU): the GPU test suite on new (HEAD); R-MAT 24 bench, every primitive, 947cbc6 (old) against new,
# alternating new, old, new, old; the first new run validated.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -4) > $R/tests.txt
cat $R/tests.txt
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines"
for i in 1 2; do for t in new old; do
  V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 200 python3 $B $V --json $R/raw/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?")
done; done
date -u >> $R/device.txt
for i in 1 2; do for t in new old; do echo "== $t $i"; grep -E "^(bfs|dobfs|sssp|cc|pr|bc) " $R/bench-$t-$i.txt | cut -c1-120; done; done
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

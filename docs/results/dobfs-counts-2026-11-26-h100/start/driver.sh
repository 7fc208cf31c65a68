#!/bin/bash
# D22 (one GPU): DOBFS per-run host cost, ops.start_at (new) against before it (old), alternating three rounds; the
# start_at GPU twin test; a cProfile of new at R-MAT 16.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_ops.py -k "start_at or tree_spread" 2>&1 | tail -2) > $R/tests.txt
cat $R/tests.txt
for k in 1 2 3; do for t in old new; do
  P=""; [ $k = 3 ] && [ $t = new ] && P=$R/prof16-new.txt
  (cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 150 python3 $G/hostab.py $t $R/hostab.jsonl $P 2>&1 | tail -1)
done; done
date -u >> $R/device.txt
head -30 $R/prof16-new.txt | tail -22 | cut -c1-150

#!/bin/bash
# Final call: GPU tests of what changed; R-MAT 24 bench, the code the superstep issue measured (old, 5683a37) and
# main (new) alternating; Louvain on one GPU; networkx through the backend on one GPU (mgraph's side).
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 100 python3 -m pytest -q -m gpu tests/test_louvain.py tests/test_gpu_peel.py tests/test_gpu_levels.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -1 $R/gpu_tests.txt)
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines"
for i in 1 2; do
  for t in new old; do
    V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
    (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 120 python3 $B $V --json $R/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?")
  done
done
for i in 1 2; do for t in new old; do echo "== $t $i"; grep -E "^(bfs|dobfs|sssp|cc|pr|bc) " $R/bench-$t-$i.txt; done; done
cd $G/new; export PYTHONPATH=$G/new:$SITE
for s in 18 20 22; do timeout 60 python3 -m mgraph louvain rmat:$s --runs 2 --validate --json $R/louvain-$s.json > $R/louvain-$s.txt 2>&1; echo "louvain $s rc=$?"; grep -E "^time|^modularity|^validation|rounds" $R/louvain-$s.txt; done
timeout 90 python3 -m mgraph louvain rmat:24 --runs 1 --validate --json $R/louvain-24.json > $R/louvain-24.txt 2>&1; echo "louvain 24 rc=$?"; tail -4 $R/louvain-24.txt
export PYTHONPATH=$G/new:$G/site2:$SITE
timeout 120 python3 $G/nx_gpu.py > $R/nx-gpu.txt 2>&1; echo "nx rc=$?"; tail -4 $R/nx-gpu.txt
date -u >> $R/device.txt; cp $G/h18.sh $G/nx_gpu.py $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
# Call H15 (one H100): DOBFS with visited bits (vis) against main (base), alternating; levels GPU tests; per-level times.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/vis/COMMIT) > $R/device.txt 2>&1
(cd $G/vis && PYTHONPATH=$G/vis:$SITE timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_levels.py > $R/gpu_tests.txt 2>&1; echo "levels tests rc=$?"; tail -2 $R/gpu_tests.txt)
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs"
for i in 1 2; do
  for t in vis base; do
    V=--no-validate; [ $i = 1 ] && [ $t = vis ] && V=--validate
    (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 90 python3 $B $V --json $R/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?"; tail -2 $R/bench-$t-$i.txt)
  done
done
(cd $G/visprof && PYTHONPATH=$G/visprof:$SITE timeout 100 python3 $G/dobfs_prof.py > $R/dobfs-levels-vis.txt 2>&1; echo "prof rc=$?"; tail -4 $R/dobfs-levels-vis.txt)
date -u >> $R/device.txt
cp $G/h15.sh $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

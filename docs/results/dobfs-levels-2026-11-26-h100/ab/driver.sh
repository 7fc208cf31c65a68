#!/bin/bash
# Call H12 (one H100): DOBFS R-MAT 24 before (71f7ead) and main alternating; k-core and PageRank traces at R-MAT 22.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
B="scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs"
for i in 1 2; do
  for t in old new; do
    V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
    (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 90 python3 $B $V --json $R/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "$t $i rc=$?")
    tail -4 $R/bench-$t-$i.txt
  done
done
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 150 python3 scripts/bench.py --scale 22 --runs 1 --sources 1 --no-baselines --no-validate --mode trace --devices 1 --primitives kcore,pr,cc --json $R/trace22.json > $R/trace22.txt 2>&1; echo "trace rc=$?"
grep -E "supersteps|^\| all" $R/trace22.txt
date -u >> $R/device.txt
cp $G/h12.sh $R/driver.sh
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

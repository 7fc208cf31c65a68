#!/bin/bash
# Call H14 (one H100): GPU suite on main (peeling kernel); k-core R-MAT 22/24 before (d6f4dbd) and now; DOBFS per-level times.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
for s in 22 24; do
  for t in new base; do
    (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 100 python3 scripts/bench.py --scale $s --runs 3 --sources 1 --no-baselines --primitives kcore --no-validate --json $R/kcore-$t-$s.json > $R/kcore-$t-$s.txt 2>&1; echo "$t $s rc=$?"; tail -1 $R/kcore-$t-$s.txt)
  done
done
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 120 python3 -m mgraph kcore rmat:22 --runs 3 --validate > $R/kcore-cli-22.txt 2>&1; echo "cli 22 rc=$?"; tail -4 $R/kcore-cli-22.txt)
(cd $G/prof && PYTHONPATH=$G/prof:$SITE timeout 100 python3 $G/dobfs_prof.py > $R/dobfs-levels.txt 2>&1; echo "prof rc=$?"; tail -4 $R/dobfs-levels.txt)
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 330 python3 -m pytest -q -m gpu tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/gpu_suite.txt
date -u >> $R/device.txt
cp $G/h14.sh $G/dobfs_prof.py $G/patch_times.py $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

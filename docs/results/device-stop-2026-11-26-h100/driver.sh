#!/bin/bash
# Call C (one H100): GPU tests of the merged Louvain memory and device-stop work; Louvain R-MAT 24 and 22 (old/new);
# PageRank A/B; DOBFS pieces.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; OLD=$PWD/.gpu/old; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u; cat $NEW/COMMIT $OLD/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_louvain.py tests/test_gpu_ops.py tests/test_gpu_pull.py tests/test_gpu_device_stop.py tests/test_gpu_batches.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" $R/gpu_tests.txt | tail -8
timeout 150 python3 -m mgraph louvain rmat:24 --runs 1 --validate --json $R/louvain-24.json > $R/louvain-24.txt 2>&1; echo "louvain 24 rc=$?"; grep -E "^time|modularity|PASS|FAIL|rror|rounds|memory" $R/louvain-24.txt | head -6
for tree in new old; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW); export PYTHONPATH=$T:$SITE
  (cd $T && timeout 80 python3 -m mgraph louvain rmat:22 --runs 2 --validate --json $R/louvain-22-$tree.json > $R/louvain-22-$tree.txt 2>&1; echo "louvain 22 $tree rc=$?"; grep -E "^time|modularity|PASS|FAIL|rror" $R/louvain-22-$tree.txt | head -3)
done
for tree in new old new old; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW); export PYTHONPATH=$T:$SITE
  (cd $T && timeout 90 python3 scripts/bench.py --scale 24 --runs 3 --no-baselines --primitives pr --no-validate > $R/bench-pr-$tree.txt 2>&1; echo "bench pr $tree rc=$?"; grep -E "^pr " $R/bench-pr-$tree.txt | tail -1)
done
export PYTHONPATH=$NEW:$SITE
timeout 90 python3 $NEW/../dobfs_split2.py $R/dobfs_split.json split > $R/dobfs_split.txt 2>&1; echo "dobfs split rc=$?"; tail -4 $R/dobfs_split.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
# Call B (2 GPUs): new peer kernel (claims at the owner) tests + grids A/B; DOBFS reset/launch pieces and A/B.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; OLD=$PWD/.gpu/old; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT $OLD/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_peer_levels.py > $R/gpu_tests.txt 2>&1; echo "peer tests rc=$?"; grep -E "passed|failed|Error|error" $R/gpu_tests.txt | tail -5
for tree in new old new; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW); export PYTHONPATH=$T:$SITE
  (cd $T && timeout 100 python3 $NEW/../grids.py grid:4096x4096,rgg:22 $R/grids-$tree.json 2 > $R/grids-$tree.txt 2>&1; echo "grids $tree rc=$?"; tail -2 $R/grids-$tree.txt)
done
export PYTHONPATH=$NEW:$SITE
timeout 60 mpiexec -n 2 python3 -m mgraph bfs grid:4096x4096 --source 0 --runs 3 --validate > $R/mpi-grid.txt 2>&1; echo "mpi grid rc=$?"; grep -E "^time|PASS|FAIL|rror" $R/mpi-grid.txt | head -3
timeout 60 mpiexec -n 2 python3 -m mgraph bfs rgg:22 --source 0 --runs 3 --validate > $R/mpi-rgg.txt 2>&1; echo "mpi rgg rc=$?"; grep -E "^time|PASS|FAIL|rror" $R/mpi-rgg.txt | head -3
export CUDA_VISIBLE_DEVICES=0
timeout 90 python3 $NEW/../dobfs_split2.py $R/dobfs_split.json split > $R/dobfs_split.txt 2>&1; echo "dobfs split rc=$?"; tail -4 $R/dobfs_split.txt
V=--validate
for tree in new old new old; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW); export PYTHONPATH=$T:$SITE
  (cd $T && timeout 100 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives dobfs $V > $R/bench-$tree-$V.txt 2>&1; echo "bench $tree rc=$?"; grep -iE "dobfs|gteps|PASS|FAIL" $R/bench-$tree-$V.txt | tail -3); V=--no-validate
done
export PYTHONPATH=$NEW:$SITE
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_levels.py tests/test_gpu_batches.py > $R/gpu_tests1.txt 2>&1; echo "levels/batches tests rc=$?"; tail -2 $R/gpu_tests1.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

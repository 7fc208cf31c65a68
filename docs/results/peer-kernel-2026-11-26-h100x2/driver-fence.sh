#!/bin/bash
# D14 (two GPUs): one system fence per thread and level (fence) against one per inbox entry (new, a713b86): BFS on
# grid 4096^2 and rgg 22 across 2 GPUs in threads, alternated twice; the GPU peer tests on fence.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in new fence; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/fence; PYTHONPATH=$G/fence:$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_peer_levels.py > $R/gpu_tests.txt 2>&1; echo "tests rc=$?"; tail -1 $R/gpu_tests.txt
for k in 1 2; do for t in new fence; do for spec in grid:4096x4096 rgg:22; do
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 120 python3 -m mgraph bfs $spec --source 0 --devices 2 --runs 5 > $R/cli-$t-$spec-$k.txt 2>&1
  echo "$t $spec $k rc=$? $(grep -E '^time' $R/cli-$t-$spec-$k.txt)"
done; done; done
date -u >> $R/device.txt
cd $R; tar czf cli.tgz cli-*.txt && rm cli-*.txt

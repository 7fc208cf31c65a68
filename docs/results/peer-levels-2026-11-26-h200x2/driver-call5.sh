#!/bin/bash
# Call 5 (2 GPUs): GPU tests (peer levels, threads and MPI ranks; multi-GPU); the arrive-gate barrier (new) against
# the per-block waits (old, 6b27b8d), one machine; MPI ranks through IPC on grid 4096² and rgg 22.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; OLD=$PWD/.gpu/old; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_peer_levels.py tests/test_gpu_multi.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED" $R/gpu_tests.txt | tail -4
for tree in new old; do
  T=$([ $tree = old ] && echo $OLD || echo $NEW); export PYTHONPATH=$T:$SITE
  (cd $T && timeout 150 python3 $NEW/../grids.py grid:4096x4096,grid:2048x2048,rgg:22 $R/grids-$tree.json > $R/grids-$tree.txt 2>&1; echo "grids $tree rc=$?"; tail -3 $R/grids-$tree.txt)
done
export PYTHONPATH=$NEW:$SITE
for spec in grid:4096x4096 rgg:22; do
  timeout 90 mpiexec -n 2 python3 -m mgraph bfs $spec --source 0 --runs 3 --validate --json $R/mpi-${spec/:/_}-peer.json > $R/mpi-${spec/:/_}-peer.txt 2>&1; echo "mpi $spec peer rc=$?"; grep -E "^time|PASS|FAIL|rror" $R/mpi-${spec/:/_}-peer.txt | head -3
done
timeout 90 mpiexec -n 2 python3 -m mgraph bfs grid:4096x4096 --source 0 --runs 3 --no-peer-levels --json $R/mpi-grid-host.json > $R/mpi-grid-host.txt 2>&1; echo "mpi grid host rc=$?"; grep -E "^time|rror" $R/mpi-grid-host.txt | head -3
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

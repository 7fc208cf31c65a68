#!/bin/bash
# Call A (2 GPUs): baseline on main: peer-level GPU tests, grids 1 vs 2 GPUs (threads, MPI), overhead experiment, DOBFS pieces.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -4; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_peer_levels.py > $R/gpu_tests.txt 2>&1; echo "peer tests rc=$?"; tail -2 $R/gpu_tests.txt
timeout 100 python3 $NEW/../grids.py grid:4096x4096,rgg:22 $R/grids.json 2 > $R/grids.txt 2>&1; echo "grids rc=$?"; tail -2 $R/grids.txt
timeout 60 mpiexec -n 2 python3 -m mgraph bfs grid:4096x4096 --source 0 --runs 3 --validate > $R/mpi-grid.txt 2>&1; echo "mpi grid rc=$?"; grep -E "^time|PASS|FAIL|rror" $R/mpi-grid.txt | head -3
timeout 120 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 --experiments overhead --runs 3 --out $R/overhead > $R/overhead.txt 2>&1; echo "overhead rc=$?"; tail -6 $R/overhead.txt
CUDA_VISIBLE_DEVICES=0 timeout 120 python3 $NEW/../dobfs_split.py $R/dobfs_split.json > $R/dobfs_split.txt 2>&1; echo "dobfs rc=$?"; tail -4 $R/dobfs_split.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

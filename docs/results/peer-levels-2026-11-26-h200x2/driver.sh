#!/bin/bash
# Call 3 (2 GPUs): levels across GPUs (tests; grids and rgg by blocks per SM, 1 GPU beside), the build's routing profiled.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
cd $NEW; export PYTHONPATH=$NEW:$SITE
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat COMMIT 2>/dev/null) > $R/device.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_peer_levels.py tests/test_gpu_multi.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -3 $R/gpu_tests.txt
timeout 200 python3 $NEW/../grids.py grid:4096x4096,grid:2048x2048,rgg:22 $R/grids.json > $R/grids.txt 2>&1; echo "grids rc=$?"; cat $R/grids.txt | tail -5
date -u >> $R/device.txt
NCCL_DEBUG=INFO timeout 120 mpiexec --allow-run-as-root -n 2 python3 -W error::UserWarning $NEW/../buildprof.py graph500 26 --roots 1 --json $R/g500-2gpu.json > $R/g500-2gpu.txt 2>&1; echo "g500 2 GPU rc=$?"; grep -E "BUILD|construction_time|rror| via |P2P|SHM" $R/g500-2gpu.txt | head -12
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

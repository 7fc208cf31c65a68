#!/bin/bash
# graph500 26 on 2 GPUs (one rank each) and on one, 64 roots validated; the 2-GPU tests.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site
cd $NEW; export PYTHONPATH=$NEW:$SITE
mkdir -p $OUT/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u) > $OUT/raw/device.txt
timeout 330 mpiexec --allow-run-as-root -n 2 python3 -W error::UserWarning -m mgraph graph500 26 --json $OUT/raw/g500-26-2gpu.json > $OUT/raw/g500-26-2gpu.txt 2>&1; echo "2 GPUs rc=$?"; grep -iE "warn|construction|harmonic|valid|error" $OUT/raw/g500-26-2gpu.txt | head -12
date -u >> $OUT/raw/device.txt
timeout 150 python3 -m mgraph graph500 26 --json $OUT/raw/g500-26-1gpu.json > $OUT/raw/g500-26-1gpu.txt 2>&1; echo "1 GPU rc=$?"; grep -iE "warn|construction|harmonic|valid|error" $OUT/raw/g500-26-1gpu.txt | head -12
timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_multi.py tests/test_graph500.py > $OUT/raw/gpu2_tests.txt 2>&1; echo "2-GPU tests rc=$?"; tail -2 $OUT/raw/gpu2_tests.txt
date -u >> $OUT/raw/device.txt

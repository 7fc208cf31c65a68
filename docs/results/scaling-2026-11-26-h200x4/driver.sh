#!/bin/bash
# Call K1 (4 GPUs): strong scaling R-MAT 26, 1 -> 2 -> 4 GPUs, MPI ranks (one per GPU), every primitive, validated;
# then the multi-GPU tests with four GPUs visible.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -6; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 370 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2,4 --experiments strong --scale 26 --runs 3 --sources 3 --out $R/strong26 > $R/strong26.txt 2>&1; echo "strong rc=$?"; tail -16 $R/strong26.txt
date -u >> $R/device.txt
timeout 190 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_multi.py tests/test_gpu_peer_levels.py tests/test_graph500.py tests/test_scaling_script.py tests/test_api_args.py > $R/multi_tests.txt 2>&1; echo "multi tests rc=$?"; grep -E "passed|failed|FAILED|rror" $R/multi_tests.txt | tail -8
date -u >> $R/device.txt
cat $R/device.txt | head -8

#!/bin/bash
# Call H (one H100): final main: the new Louvain kernels' GPU tests, A/B on/off, R-MAT 24 validated, then the GPU suite.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_propose.py tests/test_louvain.py > $R/gpu_tests_louvain.txt 2>&1; echo "louvain gpu tests rc=$?"; grep -E "passed|failed|FAILED" $R/gpu_tests_louvain.txt | tail -8
timeout 120 python3 $NEW/../louv_ab.py 22,24 $R/louvain-ab.json > $R/louvain-ab.txt 2>&1; echo "ab rc=$?"; grep -E "same|elapsed" $R/louvain-ab.txt | cut -c1-200
timeout 90 python3 -m mgraph louvain rmat:24 --runs 1 --validate --json $R/louvain-24.json > $R/louvain-24.txt 2>&1; echo "louvain 24 rc=$?"; grep -E "^time|modularity|PASS|FAIL|rror|memory" $R/louvain-24.txt | head -6
date -u >> $R/device.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu --ignore=tests/test_gpu_propose.py --ignore=tests/test_louvain.py --ignore=tests/test_gpu_multi.py tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/gpu_suite.txt | cut -c1-300
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

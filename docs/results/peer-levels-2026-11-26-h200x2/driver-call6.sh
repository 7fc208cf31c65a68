#!/bin/bash
# Call 6 (2 GPUs): the GPU suite on the final code (test_gpu_multi ran on the kept kernel in call 4 and on c50fe22
# in call 5), Louvain on R-MAT 18 and 20 on one GPU.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
timeout 230 python3 -m pytest -q -p no:cacheprovider -m gpu --ignore=tests/test_gpu_multi.py tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; grep -E "passed|failed|FAILED|ERROR" $R/gpu_suite.txt | tail -8
date -u >> $R/device.txt
for s in 18 20; do
  timeout 45 python3 -m mgraph louvain rmat:$s --runs 1 --validate --json $R/louvain-$s.json > $R/louvain-$s.txt 2>&1; echo "louvain rmat:$s rc=$?"; grep -E "^time|modularity|valid|rror|rounds" $R/louvain-$s.txt | head -5
done
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

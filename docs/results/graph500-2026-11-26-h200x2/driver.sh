#!/bin/bash
# Call G2 (2 GPUs): graph500 26 construction on 1 and 2 GPUs alternating (stages timed), then 64 validated roots
# on 2 GPUs and 4 on one, then the 2-GPU tests.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
for i in 1 2; do
  timeout 60 python3 -W error::UserWarning $NEW/../buildprof2.py graph500 26 --roots 1 --json $R/g1-$i.json > $R/g1-$i.txt 2>&1; echo "1gpu-$i rc=$? $(grep -ohE '"construction_time": [0-9.]+' $R/g1-$i.json)"; grep BUILD $R/g1-$i.txt
  timeout 90 mpiexec -n 2 python3 -W error::UserWarning $NEW/../buildprof2.py graph500 26 --roots 1 --json $R/g2-$i.json > $R/g2-$i.txt 2>&1; echo "2gpu-$i rc=$? $(grep -ohE '"construction_time": [0-9.]+' $R/g2-$i.json)"; grep BUILD $R/g2-$i.txt
done
date -u >> $R/device.txt
timeout 330 mpiexec -n 2 python3 -W error::UserWarning -m mgraph graph500 26 --json $R/g500-26-2gpu.json > $R/g500-26-2gpu.txt 2>&1; echo "64 roots 2 GPUs rc=$?"; grep -iE "warn|^construction|harmonic_mean_TEPS|median_time|mean_validate|error" $R/g500-26-2gpu.txt | head -8
date -u >> $R/device.txt
timeout 60 python3 -W error::UserWarning -m mgraph graph500 26 --roots 4 --json $R/g500-26-1gpu.json > $R/g500-26-1gpu.txt 2>&1; echo "4 roots 1 GPU rc=$?"; grep -iE "warn|^construction|harmonic_mean_TEPS|error" $R/g500-26-1gpu.txt | head -5
date -u >> $R/device.txt
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_multi.py > $R/gpu_multi.txt 2>&1; echo "gpu multi rc=$?"; tail -2 $R/gpu_multi.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

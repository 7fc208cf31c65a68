#!/bin/bash
# Call G1 (2 GPUs): graph500 26 construction, 1 GPU and 2 GPUs (routed count = old, local count, local + packed),
# alternating; then 64 validated roots on 2 GPUs with the new code.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $NEW/COMMIT) > $R/device.txt
cd $NEW; export PYTHONPATH=$NEW:$SITE
for i in 1 2; do
  timeout 60 python3 -W error::UserWarning $NEW/../buildprof2.py graph500 26 --roots 1 --json $R/g1-$i.json > $R/g1-$i.txt 2>&1; echo "1gpu-$i rc=$? $(grep -ohE '"construction_time": [0-9.]+' $R/g1-$i.json)"; grep BUILD $R/g1-$i.txt
  for v in routed local packed; do
    C=local; P=0; [ $v = routed ] && C=routed; [ $v = packed ] && P=1
    COUNT=$C PACK=$P timeout 90 mpiexec -n 2 -x COUNT -x PACK python3 -W error::UserWarning $NEW/../buildprof2.py graph500 26 --roots 1 --json $R/g2-$v-$i.json > $R/g2-$v-$i.txt 2>&1; echo "2gpu-$v-$i rc=$? $(grep -ohE '"construction_time": [0-9.]+' $R/g2-$v-$i.json)"; grep BUILD $R/g2-$v-$i.txt
  done
done
date -u >> $R/device.txt
timeout 200 mpiexec -n 2 python3 -W error::UserWarning -m mgraph graph500 26 --json $R/g500-26-2gpu.json > $R/g500-26-2gpu.txt 2>&1; echo "64 roots 2 GPUs rc=$?"; grep -iE "warn|construction|harmonic_mean_TEPS|valid|error" $R/g500-26-2gpu.txt | head -8
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

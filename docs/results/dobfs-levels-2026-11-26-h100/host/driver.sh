#!/bin/bash
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/base/COMMIT) > $R/device.txt 2>&1
(cd $G/base && PYTHONPATH=$G/base:$SITE timeout 150 python3 $G/dobfs_host.py > $R/dobfs-host.txt 2>&1; echo "rc=$?")
head -8 $R/dobfs-host.txt
date -u >> $R/device.txt; cp $G/h16.sh $G/dobfs_host.py $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

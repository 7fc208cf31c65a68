#!/bin/bash
# Louvain at R-MAT 24 on one H200 (it needs more than an H100's 80 GB), validated.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 200 python3 -m mgraph louvain rmat:24 --runs 1 --validate --json $R/louvain-24.json > $R/louvain-24.txt 2>&1; echo "louvain 24 rc=$?"; cat $R/louvain-24.txt
date -u >> $R/device.txt; cp $G/h19.sh $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/base/COMMIT) > $R/device.txt 2>&1
cd $G/base; export PYTHONPATH=$G/base:$SITE
timeout 80 python3 $G/louv_prof3.py 22 > $R/louvain-profile-22.txt 2>&1; echo "prof22 rc=$?"; head -3 $R/louvain-profile-22.txt
timeout 100 python3 -m mgraph louvain rmat:24 --runs 1 > $R/louvain-24.txt 2>&1; echo "l24 rc=$?"; tail -8 $R/louvain-24.txt
date -u >> $R/device.txt; cp $G/h17.sh $G/louv_prof3.py $R/
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
# Call G6 (one GPU): networkx against mgraph on one GPU, R-MAT 18, pagerank and louvain; the project installed
# metadata (the egg-info with its entry points) in .gpu/site2 so that networkx finds the backend.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
cd $G/new
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT; nproc; lscpu | grep "Model name") > $R/device.txt 2>&1
export PYTHONPATH=$G/new:$G/site2:$SITE
timeout 290 python3 scripts/networkx_speed.py --graphs rmat:18 --backend cupy --families pagerank,louvain --runs 2 --json $R/nx-speed-rmat18.json > $R/nx-speed-rmat18.txt 2>&1; echo "nx speed rc=$?"; tail -8 $R/nx-speed-rmat18.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

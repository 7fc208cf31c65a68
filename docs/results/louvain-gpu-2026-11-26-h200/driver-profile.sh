#!/bin/bash
# Call H9 (one GPU): the GPU suite on main; Louvain R-MAT 20 per level and cProfile
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 80 python3 $G/louv_prof2.py 20 > $R/louv20.txt 2>&1; echo "louv rc=$?"; head -1 $R/louv20.txt
timeout 330 python3 -m pytest -q -m gpu tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/gpu_suite.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

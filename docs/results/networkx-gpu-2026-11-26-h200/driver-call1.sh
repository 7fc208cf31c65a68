#!/bin/bash
# Call G5 (one GPU): Louvain's GPU tests and R-MAT 20 on the merged Louvain; networkx against mgraph on one GPU,
# R-MAT 18, pagerank and louvain (betweenness k=100 in networkx takes longer than this call has).
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT; nproc; python3 -c "import networkx; print('networkx', networkx.__version__)") > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_louvain.py > $R/gpu_louvain.txt 2>&1; echo "gpu louvain tests rc=$?"; tail -1 $R/gpu_louvain.txt
for s in 18 20; do
timeout 50 python3 -m mgraph louvain rmat:$s --runs 1 --validate --json $R/louvain-$s.json > $R/louvain-$s.txt 2>&1; echo "louvain rmat:$s rc=$?"; grep -E "^time|modularity|valid|rror|rounds" $R/louvain-$s.txt | head -4
done
date -u >> $R/device.txt
timeout 300 python3 scripts/networkx_speed.py --graphs rmat:18 --backend cupy --families pagerank,louvain --runs 2 --json $R/nx-speed-rmat18.json > $R/nx-speed-rmat18.txt 2>&1; echo "nx speed rc=$?"; tail -8 $R/nx-speed-rmat18.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
# Call H11 (one GPU), last: GPU tests of the levels and Louvain on main's head; R-MAT 24 bfs,dobfs validated;
# networkx against mgraph on one GPU, PageRank at R-MAT 18.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 100 python3 -m pytest -q -m gpu tests/test_gpu_levels.py tests/test_louvain.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -1 $R/gpu_tests.txt
timeout 60 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs --validate --json $R/bench.json > $R/bench.txt 2>&1; echo "bench rc=$?"; tail -3 $R/bench.txt
export PYTHONPATH=$G/new:$G/site2:$SITE
timeout 70 python3 scripts/networkx_speed.py --graphs rmat:18 --backend cupy --families pagerank --runs 3 --json $R/nx-pagerank-rmat18.json > $R/nx-pagerank-rmat18.txt 2>&1; echo "nx rc=$?"; tail -3 $R/nx-pagerank-rmat18.txt
date -u >> $R/device.txt
cp $G/h11.sh $R/driver.sh
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

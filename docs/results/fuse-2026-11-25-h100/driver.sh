#!/bin/bash
# Experiment: the fused levels' arc bound (FUSE_ARCS) on long-diameter graphs.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
NEW=$PWD/.gpu/new; SITE=$PWD/.site
cd $NEW; export PYTHONPATH=$NEW:$SITE
mkdir -p $OUT/raw
for g in rgg:22 rgg:24 grid:4096x4096; do
  for lim in 65536 1048576 8388608; do
    timeout 100 python3 -c "
import sys, runpy, mgraph.ops as o
o.advance_levels.__kwdefaults__['limit'] = $lim
sys.argv = ['bench.py', '--graph', '$g', '--primitives', 'bfs,sssp', '--runs', '3', '--sources', '2', '--no-baselines', '--no-validate']
runpy.run_path('scripts/bench.py', run_name='__main__')" > $OUT/raw/fuse-${g/:/-}-$lim.txt 2>&1
    echo "$g limit $lim rc=$?"; grep -E "^(bfs|sssp) " $OUT/raw/fuse-${g/:/-}-$lim.txt
  done
done
tar -czf $OUT/raw.tar.gz -C $OUT raw; rm -rf $OUT/raw

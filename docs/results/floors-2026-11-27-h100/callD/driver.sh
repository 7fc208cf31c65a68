#!/bin/bash
# Call D (one GPU): cProfile of the path BFS (overhead experiment) and of direction-optimizing BFS at R-MAT 24.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
date -u > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 120 python3 $G/prof_path.py > $R/prof-path.txt 2>&1; echo "path rc=$?"; head -3 $R/prof-path.txt)
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 150 python3 scripts/bench.py --mode profile --primitives dobfs --scale 24 --runs 40 --top 70 --no-baselines > $R/prof-dobfs.txt 2>&1; echo "dobfs rc=$?")
date -u >> $R/device.txt

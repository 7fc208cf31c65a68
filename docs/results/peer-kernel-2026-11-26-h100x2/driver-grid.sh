#!/bin/bash
# D13 (two GPUs): the peer kernel's grid (2 or 1 blocks per SM, 64 or 16 blocks) for BFS on grid 4096^2 and rgg 22
# across 2 GPUs in threads, against one GPU; old (18bd189) against new (a713b86) for grid 4096^2 through the CLI.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 400 python3 $G/blocks.py $R/blocks.json grid:4096x4096 rgg:22 > $R/blocks.log 2>&1; echo "blocks rc=$?"
for t in old new; do cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 120 python3 -m mgraph bfs grid:4096x4096 --source 0 --devices 2 --runs 3 > $R/cli-$t.txt 2>&1; echo "cli $t rc=$?"; grep -E "^time|levels|validation" $R/cli-$t.txt; done
date -u >> $R/device.txt
tail -14 $R/blocks.log

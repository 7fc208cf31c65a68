#!/bin/bash
set -u
G=$PWD/.gpu; R=$OUT; mkdir -p $R; date -u > $R/device.txt
for i in 1 2; do (cd $G/new && PYTHONPATH=$G/new timeout 100 python3 $G/launch_cost.py 2>&1 | tail -8); done | tee $R/launch.txt

#!/bin/bash
set -u
G=$PWD/.gpu; R=$OUT; mkdir -p $R; date -u > $R/device.txt
for i in 1; do (cd $G/inst2 && PYTHONPATH=$G/inst2 timeout 120 python3 $G/timeline.py 2>&1 | tail -60); done | tee $R/timeline.txt

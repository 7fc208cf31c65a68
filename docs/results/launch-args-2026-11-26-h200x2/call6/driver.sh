#!/bin/bash
# D53 (two GPUs): cProfile of each rank in the overhead experiment on main (21 runs of 1003 supersteps).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT
cd $G/main
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat COMMIT)") > $R/device.txt
PYTHONPATH=$G/main timeout 200 mpiexec --allow-run-as-root -n 2 sh -c 'python3 -m cProfile -o '$R'/over.$OMPI_COMM_WORLD_RANK.prof scripts/scaling.py --experiments overhead --runs 20 --gpus-list 2 --out '$R'/over' > $R/over.txt 2>&1; echo "rc=$?"
grep -E "^\| [12] \| 1003" $R/over.txt | head -2
for r in 0 1; do python3 -c "
import pstats; p = pstats.Stats('$R/over.$r.prof'); p.sort_stats('tottime').print_stats(22)" 2>&1 | tail -30 > $R/top.$r.txt; done
head -40 $R/top.0.txt | cut -c1-150
date -u >> $R/device.txt

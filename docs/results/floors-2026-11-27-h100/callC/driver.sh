#!/bin/bash
# Call C (one GPU): direction-optimizing BFS at R-MAT 24 in 4 processes: wall, run elapsed and event span per run;
# nsys kernel summary where nsys exists.
set -u
G=$PWD/.gpu; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u; which nsys ncu) > $R/device.txt 2>&1
for i in 1 2 3 4 5 6; do
  (cd $G/new && PYTHONPATH=$G/new timeout 80 python3 $G/dobfs_var.py p$i $R/p$i.json 2>&1 | tail -2)
done | tee $R/var.txt
if which nsys >/dev/null 2>&1; then
  for i in 1 2; do
  (cd $G/new && PYTHONPATH=$G/new timeout 150 nsys profile -o $R/n$i -t cuda --force-overwrite true python3 $G/dobfs_var.py n$i $R/n$i.json > $R/nsys$i.log 2>&1;
   nsys stats -r cuda_gpu_kern_sum,cuda_api_sum -f csv -o $R/s$i $R/n$i.nsys-rep >/dev/null 2>&1; tail -1 $R/nsys$i.log)
  head -8 $R/s${i}_cuda_gpu_kern_sum.csv | cut -c1-200
  done
  rm -f $R/*.nsys-rep $R/*.sqlite
fi
date -u >> $R/device.txt

#!/bin/bash
# The current table of docs/multi-gpu.md: strong scaling 1 -> 2 GPUs at R-MAT 26 (every primitive), grid 4096^2 and
# rgg 22 (BFS, SSSP), and the overhead experiment on 1 and 2 GPUs; one MPI job per GPU count, one rank per GPU.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
run() {  # label limit args...
  l=$1; s=$2; shift 2
  ( PYTHONPATH=$G/new timeout $s python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
  find $R/raw -name "*.png" -delete; (cd $R && tar czf raw.tgz raw)
  date -u >> $R/device.txt
}
run strong26 330 --experiments strong --scale 26 --runs 3 --sources 3
run overhead 90 --experiments overhead --runs 5
run grid 110 --experiments strong --graph grid:4096x4096 --primitives bfs,sssp --runs 3 --sources 1
run rgg 60 --experiments strong --graph rgg:22 --primitives bfs,sssp --runs 3 --sources 1
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| [a-z]+ \| [12] \|" $f | cut -c1-120 | tail -12; done
rm -rf $R/raw

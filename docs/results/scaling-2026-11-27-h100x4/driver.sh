#!/bin/bash
# Four GPUs: strong scaling 1 -> 4 at R-MAT 26 (every primitive) and grid 4096^2 BFS, one MPI job per count, one rank
# per GPU; every result validated but BC's.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
run() {  # label limit args...
  l=$1; s=$2; shift 2
  ( PYTHONPATH=$G/new timeout $s python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,4 "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
  find $R/raw -name "*.png" -delete; (cd $R && tar czf raw.tgz raw)
  date -u >> $R/device.txt
}
run strong26 180 --experiments strong --scale 26 --runs 3 --sources 3
run grid 60 --experiments strong --graph grid:4096x4096 --primitives bfs --runs 3 --sources 1
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| [a-z]+ \| [14] \|" $f | cut -c1-110 | tail -14; done
rm -rf $R/raw

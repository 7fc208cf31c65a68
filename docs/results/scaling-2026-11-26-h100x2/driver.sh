#!/bin/bash
# D21 (two GPUs, MPI ranks): CC at R-MAT 26 on 2 ranks, main before (old) and after (new) the spread's root bits,
# alternating twice; then scaling.py strong on new: R-MAT 26 every primitive, grid 4096² and rgg 22 BFS and SSSP.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
for i in 1 2; do for t in old new; do
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 2 --experiments strong \
     --scale 26 --primitives cc --runs 5 --sources 1 --out $R/raw/cc-$t-$i > $R/raw/cc-$t-$i.txt 2>&1
   echo "$t $i rc=$? $(grep -E '^\| cc \| 2' $R/raw/cc-$t-$i.txt | tail -1)") >> $R/cc-ab.txt
done; done
cat $R/cc-ab.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 420 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 \
    --experiments strong --scale 26 --runs 3 --sources 3 --out $R/raw/strong26 > $R/strong26.txt 2>&1; echo "scaling rc=$?"
for g in grid:4096x4096 rgg:22; do
  PYTHONPATH=$G/new:$SITE timeout 240 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 --experiments strong \
      --graph $g --primitives bfs,sssp --runs 3 --sources 1 --out $R/raw/${g%%:*} > $R/${g%%:*}.txt 2>&1; echo "$g rc=$?"
done
date -u >> $R/device.txt
for f in strong26 grid rgg; do sed -n '/one MPI job per count/,$p' $R/$f.txt | grep -E "^\| [a-z]+ \| [12] " | cut -c1-110; done
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

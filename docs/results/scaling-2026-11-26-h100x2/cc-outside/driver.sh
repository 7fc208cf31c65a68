#!/bin/bash
# D25 (two GPUs): the spread's GPU twin tests on new; CC at R-MAT 26 on 2 MPI ranks, main (old) against the spreads
# over the vertices outside the largest tree (new), alternating three times.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_ops.py -k "tree_spread" 2>&1 | tail -3) > $R/tests.txt
cat $R/tests.txt
M="mpiexec --allow-run-as-root"
for i in 1 2 3; do for t in old new; do
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 120 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 2 --experiments strong \
     --scale 26 --primitives cc --runs 5 --sources 1 --out $R/raw/cc-$t-$i > $R/raw/cc-$t-$i.txt 2>&1
   echo "$t $i rc=$? $(grep -E '^\| cc \| 2' $R/raw/cc-$t-$i.txt | tail -1)") >> $R/ab.txt
done; done
date -u >> $R/device.txt
cat $R/ab.txt
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

#!/bin/bash
# D43 (two GPUs, MPI ranks): old = main ecb43db, new = CC asks about the shared vertices outside the hub's tree.
# GPU tests (test_gpu_cc.py) on new, then scaling.py strong R-MAT 26 cc: new on 1 and 2 GPUs, old on 2, new on 2 again.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "old $(cat $G/old/COMMIT) new $(cat $G/new/COMMIT)") > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_cc.py > $R/gpu_tests.txt 2>&1
echo "tests rc=$?"; tail -2 $R/gpu_tests.txt
run() { cd $G/$2; PYTHONPATH=$G/$2:$SITE timeout 100 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $3 --experiments strong \
     --scale 26 --primitives cc --runs 5 $4 --out $R/raw/$1-$2 > $R/$1-$2.txt 2>&1; echo "$1 $2 rc=$?"; }
run 1 new 1,2 ""
run 2 old 2 --no-validate

date -u >> $R/device.txt
for i in 1-new 2-old; do echo "== $i"; grep -E "^\| cc \| [12] " $R/$i.txt | cut -c1-150; done
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

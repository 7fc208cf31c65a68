#!/bin/bash
# DOBFS levels across GPUs in one kernel per GPU (new) against main: the link's GPU tests on new; R-MAT 26 DOBFS on
# 1 and 2 GPU ranks (new), 2 (main).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 300 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; rc=$?; echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert|FAIL" $R/gpu_tests.txt | head -30; tail -60 $R/gpu_tests.txt | cut -c1-200; exit 1; fi
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
run new dobfs26-new 1,2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
run main dobfs26-main 2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
date -u >> $R/device.txt
cd $R/raw && for f in *.txt; do echo "== $f"; grep -E "^\| (dobfs|[0-9]|direction)" $f | cut -c1-160 | tail -4; done
cd $R && tar czf raw.tgz raw && rm -rf raw

#!/bin/bash
# Call K2 (2 GPUs): the warp-combined scatters: Louvain GPU tests on new; Louvain on 2 GPUs (MPI ranks) old / new
# alternating at R-MAT 22; one GPU old / new at R-MAT 22 (no loss); communities compared.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; NEW=$G/new; OLD=$G/old; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo old $(cat $OLD/COMMIT) new $(cat $NEW/COMMIT)) > $R/device.txt
cd $NEW
PYTHONPATH=$NEW:$SITE timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_propose.py tests/test_louvain.py > $R/gpu_tests_louvain.txt 2>&1; echo "louvain gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" $R/gpu_tests_louvain.txt | tail -8
for S in 22; do for T in old new old new; do
  [ $T = old ] && P=$OLD || P=$NEW
  PYTHONPATH=$P:$SITE timeout 100 mpiexec --allow-run-as-root -n 2 python3 -m mgraph louvain rmat:$S --runs 2 --json $R/mpi2-$T-$S.json > $R/mpi2-$T-$S.txt 2>&1; echo -n "mpi2 $T $S rc=$? "; grep -E "^time|modularity|communities" $R/mpi2-$T-$S.txt | tr '\n' ' '; echo
done; done
for T in old new; do  # louv_tree.py: ../louvain-hubs-2026-11-26-h100/louv_tree.py
  [ $T = old ] && P=$OLD || P=$NEW
  PYTHONPATH=$P:$SITE timeout 100 python3 $G/louv_tree.py 22 2 $T $R >> $R/ab1.txt 2>&1; echo -n "one GPU $T rc=$? "
done; echo
grep -E "^\{" $R/ab1.txt | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['tree'], d['scale'], round(d['elapsed_s'], 3), d['rounds'], round(d['modularity'], 7), d['communities'])"
python3 -c "
import numpy as np
print('one GPU same communities old/new:', np.array_equal(np.load('$R/comm-old-22.npy'), np.load('$R/comm-new-22.npy')))"
rm -f $R/*.npy
date -u >> $R/device.txt

#!/bin/bash
# D34 (two GPUs): Open MPI's default binding (each rank of a 2-rank job on one core) against --bind-to none:
# the ranks' CPU affinity, then strong scaling at R-MAT 26 on 2 ranks, every primitive, default then none.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/new/COMMIT)"; nproc) > $R/device.txt
for b in "" "--bind-to none"; do
  echo "binding '$b':" >> $R/affinity.txt
  mpiexec --allow-run-as-root $b -n 2 python3 -c "import os; print(len(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(0))[:4])" >> $R/affinity.txt 2>&1
done
cat $R/affinity.txt
cd $G/new
for b in default none; do
  M="mpiexec --allow-run-as-root"; [ $b = none ] && M="$M --bind-to none"
  PYTHONPATH=$G/new:$SITE timeout 140 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 2 --experiments strong \
      --scale 26 --runs 3 --sources 3 --out $R/raw/$b > $R/$b.txt 2>&1; echo "$b rc=$?"
  grep -E "^\| [a-z]+ \| 2 " $R/$b.txt | cut -c1-100
done
date -u >> $R/device.txt
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

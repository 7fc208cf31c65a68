#!/bin/bash
# The overhead experiment on one GPU: new (bf62397) and base (baacf00, whose record gave 22.1-24.2 us) alternating
# in this process, then new as a one-rank MPI job (Open MPI's binding, and --bind-to none).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in base new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
ov() {  # tree label extra...
  t=$1; l=$2; shift 2
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 100 python3 scripts/scaling.py --experiments overhead --gpus-list 1 --runs 10 \
      "$@" --out /tmp/ov-$l > $R/$l.txt 2>&1; echo "$l rc=$? $(grep -E '^\| 1 \| 1003' $R/$l.txt | tail -1 | cut -c1-60)" )
}
ov base base1; ov new new1; ov base base2; ov new new2
ov new mpi-bound --mpiexec "mpiexec --allow-run-as-root"
ov new mpi-unbound --mpiexec "mpiexec --allow-run-as-root --bind-to none"
date -u >> $R/device.txt

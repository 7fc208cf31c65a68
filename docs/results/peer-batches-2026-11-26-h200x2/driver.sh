#!/bin/bash
# D15 (two GPUs): the final code (new) against main before this session (old 18bd189): the whole GPU suite on new,
# then the overhead experiment as MPI ranks on 1 and 2 GPUs, old / new / new through the host, alternated twice,
# and new in threads once.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 420 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ > $R/gpu_suite.txt 2>&1; echo "suite rc=$?"; grep -E "passed|failed|FAILED" $R/gpu_suite.txt | tail -6
echo "suite done $(date -u)" >> $R/device.txt
MPI="mpiexec --allow-run-as-root"
for k in 1 2; do
  for t in old new newhost; do
    tree=${t%host}; extra=""; [ "$t" = newhost ] && extra="--no-peer-levels"
    cd $G/$tree; PYTHONPATH=$G/$tree:$SITE timeout 200 python3 scripts/scaling.py --mpiexec "$MPI" --gpus-list 1,2 \
      --experiments overhead --runs 5 $extra --out $R/ovh-$t-$k > $R/ovh-$t-$k.log 2>&1; echo "ovh $t $k rc=$?"
  done
done
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 150 python3 scripts/scaling.py --gpus-list 1,2 --experiments overhead --runs 5 --out $R/ovh-threads > $R/ovh-threads.log 2>&1; echo "threads rc=$?"
date -u >> $R/device.txt
cd $R; tar czf ovh.tgz ovh-*; rm -rf ovh-*
for f in $(tar tzf ovh.tgz | grep "\.log$"); do echo "== $f"; tar xzf ovh.tgz -O $f | grep -E "^\| [12] \|" | sort -u; done

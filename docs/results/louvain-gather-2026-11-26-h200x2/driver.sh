#!/bin/bash
# D2 (2 GPUs): Louvain's coarse arcs gathered through NCCL (new) against through the host (old), MPI ranks, R-MAT 22;
# GPU tests of the gather (real NCCL), Louvain and SCC.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; NEW=$G/new; OLD=$G/old; SITE=$PWD/.site; R=$OUT; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo old $(cat $OLD/COMMIT) new $(cat $NEW/COMMIT)) > $R/device.txt
cd $NEW
PYTHONPATH=$NEW:$SITE timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_scc.py tests/test_louvain.py tests/test_gpu_multi.py -k "scc or louvain or Louvain or nccl or route" > $R/tests.txt 2>&1; echo "gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" $R/tests.txt | tail -8
for T in old new old new; do
  [ $T = old ] && P=$OLD || P=$NEW
  PYTHONPATH=$P:$SITE timeout 100 mpiexec --allow-run-as-root -n 2 python3 -m mgraph louvain rmat:22 --runs 2 --json $R/mpi2-$T-22.json > $R/mpi2-$T-22.txt 2>&1; echo -n "mpi2 $T rc=$? "; grep -E "^time|modularity|communities" $R/mpi2-$T-22.txt | tr '\n' ' '; echo
done
PYTHONPATH=$NEW:$SITE timeout 100 python3 -m mgraph louvain rmat:22 --runs 2 > $R/one-new-22.txt 2>&1; echo -n "one GPU new rc=$? "; grep -E "^time|modularity|communities" $R/one-new-22.txt | tr '\n' ' '; echo
date -u >> $R/device.txt
python3 - <<'PY'
import json, os
R = os.environ["OUT"]
for t in ("old", "new"):
    try:
        d = json.load(open(f"{R}/mpi2-{t}-22.json"))
    except Exception as e:
        print(t, "no json", e); continue
    st = d["runs"][-1]
    per = st.get("per_device") or []
    print(t, "elapsed %.3f s" % st["elapsed_s"], "modularity", st.get("modularity"), "communities", st.get("communities"), "coarse levels %.3f s" % st.get("coarse_levels_s", 0))
    for k, rec in enumerate(per):
        w = rec.get("wait_s", []); c = rec.get("compute_s", [])
        top = sorted(range(len(w)), key=lambda i: -w[i])[:2]
        print(t, "device", k, "compute %.3f s wait %.3f s" % (sum(c), sum(w)), "largest waits:", [(i, round(w[i], 3)) for i in top])
PY

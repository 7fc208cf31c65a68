#!/bin/bash
# DOBFS levels across GPUs, final form (the peers' pages read 2 MiB apart at a call's start): the link's GPU tests and the one-GPU directions tests, trace, DOBFS R-MAT 26 new 1,2 and main 2.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in main new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new timeout 280 python3 -m pytest -q -x -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    "tests/test_gpu_levels.py::test_direction_optimizing_bfs_runs_its_levels_in_one_superstep" \
    "tests/test_gpu_levels.py::test_direction_levels_match_the_twin" > $R/gpu_tests.txt 2>&1; rc=$?
echo "tests rc=$rc"; tail -3 $R/gpu_tests.txt
if [ $rc -ne 0 ]; then grep -E "Error|error|assert|FAIL" $R/gpu_tests.txt | head -30; tail -60 $R/gpu_tests.txt | cut -c1-200; exit 1; fi
PYTHONPATH=$G/new timeout 200 mpiexec --allow-run-as-root -n 2 python3 $G/trace_dobfs.py 26 > $R/raw/trace.txt 2>&1; echo "trace rc=$?"
run() {  # tree label gpus args...
  t=$1; l=$2; n=$3; shift 3
  ( cd $G/$t && PYTHONPATH=$G/$t timeout 150 python3 scripts/scaling.py --mpiexec "$M" --gpus-list $n "$@" \
      --out $R/raw/$l > $R/raw/$l.txt 2>&1; echo "$l rc=$?" )
}
run new dobfs26-new 1,2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
run main dobfs26-main 2 --experiments strong --scale 26 --primitives dobfs --runs 3 --sources 3
date -u >> $R/device.txt
python3 - $R/raw/trace.txt <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("TRACE "):
        rows += json.loads(line[6:])
by = {}
for r in rows:
    by.setdefault(r["source"], {})[r["rank"]] = r
for s, ranks in sorted(by.items()):
    if len(ranks[0]["directions"]) < 3: continue
    print(f"source {s} directions {ranks[0]['directions']}")
    for rk, r in sorted(ranks.items()):
        tot = 0
        for i, lv in enumerate(r["levels"]):
            tot += sum(lv["steps_us"])
            print(f"  r{rk} L{i} {'pull' if lv['pull'] else 'push'} {lv['steps_us']}")
        print(f"  r{rk} total {tot:.1f} us, blocks started in {r['started_us']} us")
PY
cd $R/raw && for f in dobfs*.txt; do echo "== $f"; grep -E "^\| (dobfs|bfs) " $f | cut -c1-160 | tail -4; done
cd $R && tar czf raw.tgz raw && rm -rf raw

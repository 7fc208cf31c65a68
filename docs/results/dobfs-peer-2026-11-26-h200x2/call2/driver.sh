#!/bin/bash
# Profile: per-level step times of the DOBFS levels kernel on 2 GPU ranks, R-MAT 26 (Room.trace).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
PYTHONPATH=$G/new timeout 200 mpiexec --allow-run-as-root -n 2 python3 $G/trace_dobfs.py 26 > $R/trace.txt 2>&1; echo "trace rc=$?"
python3 - $R/trace.txt <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("TRACE "):
        rows += json.loads(line[6:])
    elif "Error" in line or "error" in line:
        print(line.rstrip()[:300])
by = {}
for r in rows:
    by.setdefault(r["source"], {})[r["rank"]] = r
for s, ranks in sorted(by.items()):
    print(f"source {s} directions {ranks[0]['directions']}")
    for rk, r in sorted(ranks.items()):
        t0 = r["levels"][0]["start"] if r["levels"] else 0
        tot = 0
        for i, lv in enumerate(r["levels"]):
            tot += sum(lv["steps_us"])
            print(f"  r{rk} L{i} {'pull' if lv['pull'] else 'push'} +{(lv['start']-t0)/1e3:8.1f} {lv['steps_us']}")
        print(f"  r{rk} total {tot:.1f} us")
PY

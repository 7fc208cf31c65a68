#!/bin/bash
# Experiment: the peers' memory read a page (64 KiB) apart by the whole grid at the directions kernel's start: does it
# take away the ~100 us steps of a level's first writes into a peer (trace), and the run (DOBFS R-MAT 26, 2 ranks)?
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new
PYTHONPATH=$G/new timeout 200 mpiexec --allow-run-as-root -n 2 python3 $G/trace_dobfs.py 26 > $R/raw/trace.txt 2>&1; echo "trace rc=$?"
grep -iE "error|Trace" $R/raw/trace.txt | grep -v "^TRACE" | head
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
cd $R && tar czf raw.tgz raw && rm -rf raw

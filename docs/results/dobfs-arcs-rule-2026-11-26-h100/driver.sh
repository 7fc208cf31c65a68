#!/bin/bash
# D1 (one GPU): the direction rule on the frontier's arcs (new) against main (old): GPU tests, then R-MAT 24 DOBFS A/B.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "old $(cat $G/old/COMMIT) new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_levels.py tests/test_scc.py tests/test_gpu_batches.py "tests/test_cli.py::test_gpu_runs_validate" > $R/tests.txt 2>&1; echo "tests rc=$?"; tail -3 $R/tests.txt
for k in 1 2; do for t in old new; do
  V=--no-validate; [ $k = 1 ] && [ $t = new ] && V=--validate
  cd $G/$t; export PYTHONPATH=$G/$t:$SITE
  timeout 120 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs $V --json $R/ab-$t-$k.json > $R/ab-$t-$k.txt 2>&1; echo "$t $k rc=$?"
done; done
date -u >> $R/device.txt
cd $G/new; python3 - <<'PY'
import json, os
R = os.environ["OUT"]
print("run   prim   median_ms  GTEPS  per-source medians (ms)  validation")
for k in (1, 2):
    for t in ("old", "new"):
        try: d = json.load(open(f"{R}/ab-{t}-{k}.json"))
        except Exception as e: print(t, k, "no json", e); continue
        res = d.get("results", d)
        for name in ("bfs", "dobfs"):
            r = res.get(name) if isinstance(res, dict) else None
            if not r: continue
            print(f"{t}{k} {name:6s} {r['median_ms']:9.3f} {r.get('graph500_gteps', 0):6.1f}  "
                  + " ".join(f"{1e3*s['median_s']:.3f}" for s in r['starts']) + f"  {r.get('validation', '-')}")
PY

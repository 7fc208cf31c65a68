#!/bin/bash
# Call H7 (one GPU): main (old, 71f7ead) against new (levels in one kernel + Louvain's hashed pairs and fewer waits):
# GPU tests of levels, batches and Louvain; R-MAT 24 bfs,dobfs alternating twice; grid/rgg DOBFS; Louvain R-MAT 18/20
# old and new, R-MAT 22 and 24 new.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for v in old new; do echo "$v: $(cat $G/$v/COMMIT)"; done) > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_levels.py tests/test_gpu_batches.py tests/test_louvain.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -3 $R/gpu_tests.txt
for i in 1 2; do
  for v in new old; do
    V="--no-validate"; [ $v = new ] && [ $i = 1 ] && V="--validate"
    cd $G/$v; PYTHONPATH=$G/$v:$SITE timeout 150 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs $V --json $R/b-$v-$i.json > $R/b-$v-$i.txt 2>&1; echo "bench $v $i rc=$?"
  done
done
for gr in grid:4096x4096 rgg:22; do for v in new old; do cd $G/$v; PYTHONPATH=$G/$v:$SITE timeout 100 python3 -m mgraph bfs $gr --direction auto --runs 3 --source 0 --validate --json $R/long-$v-${gr%%:*}.json > $R/long-$v-${gr%%:*}.txt 2>&1; echo "$gr $v rc=$?"; done; done
for s in 18 20; do for v in new old; do cd $G/$v; PYTHONPATH=$G/$v:$SITE timeout 120 python3 -m mgraph louvain rmat:$s --runs 2 --validate --json $R/louv-$v-$s.json > $R/louv-$v-$s.txt 2>&1; echo "louvain $s $v rc=$?"; done; done
cd $G/new
for s in 22 24; do timeout 240 python3 -m mgraph louvain rmat:$s --runs 1 --validate --json $R/louv-new-$s.json > $R/louv-new-$s.txt 2>&1; echo "louvain $s new rc=$?"; tail -4 $R/louv-new-$s.txt; done
date -u >> $R/device.txt
python3 - $R <<'PY'
import json, sys, glob, os
R = sys.argv[1]
for f in sorted(glob.glob(f"{R}/b-*.json")):
    d = json.load(open(f))["results"]
    print(os.path.basename(f), " | ".join(f"{k} {v['median_ms']:.3f} ms ({v['supersteps']:.0f}) {v.get('graph500_gteps', 0):.1f} GTEPS" for k, v in d.items()))
for f in sorted(glob.glob(f"{R}/long-*.json")) + sorted(glob.glob(f"{R}/louv-*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    runs = d.get("runs", [])
    print(os.path.basename(f), [round(t, 4) for t in d.get("times_s", [])], [r.get("supersteps") for r in runs][:3],
          [r.get("stats", r).get("modularity") for r in runs][:2] if runs else "", d.get("validation", {}).get("status"))
PY
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

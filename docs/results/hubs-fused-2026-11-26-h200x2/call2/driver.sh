#!/bin/bash
# Call G4 (1 GPU of 2): R-MAT 24 BFS, DOBFS, SSSP: base (424ab8f, no hub fusing) against new with HUB_FUSE_ARCS
# 2^12, 2^16 (the code's), 2^20, alternating twice; then tests/test_gpu_levels.py on new.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt
A="--scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs,sssp"
for i in 1 2; do
  cd $G/base; PYTHONPATH=$G/base:$SITE timeout 90 python3 scripts/bench.py $A --no-validate --json $R/b-base-$i.json > $R/b-base-$i.txt 2>&1; echo "base $i rc=$?"
  for h in 4096 65536 1048576; do
    V=--no-validate; [ $i = 1 ] && [ $h = 65536 ] && V=--validate
    cd $G/new; HUB=$h PYTHONPATH=$G/new:$SITE timeout 90 python3 $G/hubbench.py $A $V --json $R/b-hub$h-$i.json > $R/b-hub$h-$i.txt 2>&1; echo "hub $h $i rc=$?"
  done
done
python3 - $R <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/b-*.json")):
    try: d = json.load(open(f))
    except Exception as e: print(f, e); continue
    tag = f.split("/b-")[1][:-5]
    for k, r in d["results"].items():
        rows.setdefault(k, {})[tag] = "%.3f/%s/%s" % (r.get("median_ms", 0), r.get("supersteps"), r.get("validation"))
for k, v in rows.items(): print(k, " ".join("%s %s" % kv for kv in sorted(v.items())))
PY
date -u >> $R/device.txt
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_levels.py tests/test_gpu_batches.py > $R/gpu_levels.txt 2>&1; echo "gpu levels rc=$?"; tail -3 $R/gpu_levels.txt
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

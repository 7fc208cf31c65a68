#!/bin/bash
# Call G3 (2 GPUs, benchmarks on GPU 0): R-MAT 24 every primitive, new (da93785: hubs in fused levels) / base (424ab8f)
# / old (5683a37, the code issue 37 measured), alternating twice; then the whole GPU suite on new.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; cat $G/new/COMMIT) > $R/device.txt
for i in 1 2; do for t in new base old; do
  V=--no-validate; [ $i = 1 ] && [ $t = new ] && V=--validate
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 120 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines $V --json $R/bench-$t-$i.json > $R/bench-$t-$i.txt 2>&1; echo "bench $t $i rc=$?"
done; done
cd $G/new
python3 - $R <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/bench-*.json")):
    try: d = json.load(open(f))
    except Exception as e: print(f, e); continue
    tag = f.split("bench-")[1][:-5]
    for k, r in d["results"].items():
        rows.setdefault(k, {})[tag] = "%.3f/%s" % (r.get("median_ms", 0), r.get("supersteps"))
for k, v in rows.items(): print(k, " ".join("%s %s" % kv for kv in sorted(v.items())))
PY
date -u >> $R/device.txt
PYTHONPATH=$G/new:$SITE timeout 380 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; grep -E "passed|failed|FAILED|ERROR" $R/gpu_suite.txt | tail -12
date -u >> $R/device.txt
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

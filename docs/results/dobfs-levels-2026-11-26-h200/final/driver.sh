#!/bin/bash
# Call H10 (one GPU), final: GPU tests of what changed (levels, batches, Louvain, partitioners); R-MAT 24 bfs,dobfs
# main-before (71f7ead) / new alternating twice, the first new validated; Louvain R-MAT 18, 20, 22 on new.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for v in old new; do echo "$v: $(cat $G/$v/COMMIT)"; done) > $R/device.txt 2>&1
cd $G/new; export PYTHONPATH=$G/new:$SITE
python3 -c "import pymetis; print('pymetis', pymetis.__file__, hasattr(pymetis, 'Options'))"
timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_levels.py tests/test_gpu_batches.py tests/test_louvain.py tests/test_partitioners.py > $R/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"; tail -1 $R/gpu_tests.txt
for i in 1 2; do
  for v in new old; do
    V="--no-validate"; [ $v = new ] && [ $i = 1 ] && V="--validate"
    cd $G/$v; PYTHONPATH=$G/$v:$SITE timeout 100 python3 scripts/bench.py --scale 24 --runs 3 --sources 4 --no-baselines --primitives bfs,dobfs $V --json $R/bench-$v-$i.json > $R/bench-$v-$i.txt 2>&1; echo "bench $v $i rc=$?"
  done
done
cd $G/new
for s in 18 20; do timeout 60 python3 -m mgraph louvain rmat:$s --runs 2 --validate --json $R/louvain-$s.json > $R/louvain-$s.txt 2>&1; echo "louvain $s rc=$?"; done
timeout 70 python3 -m mgraph louvain rmat:22 --runs 1 --validate --json $R/louvain-22.json > $R/louvain-22.txt 2>&1; echo "louvain 22 rc=$?"
date -u >> $R/device.txt
python3 - $R <<'PY'
import json, sys, glob, os
R = sys.argv[1]
for f in sorted(glob.glob(f"{R}/bench-*.json")):
    d = json.load(open(f))["results"]
    print(os.path.basename(f), " | ".join(f"{k} {v['median_ms']:.3f} ms ({v['supersteps']:.0f}) {v.get('graph500_gteps', 0):.1f} GTEPS" for k, v in d.items()))
for f in sorted(glob.glob(f"{R}/louvain-*.json")):
    d = json.load(open(f)); runs = d.get("runs", [])
    print(os.path.basename(f), [round(t, 3) for t in d.get("times_s", [])], [r.get("stats", r).get("modularity") for r in runs][:1], d.get("validation", {}).get("status"))
PY
cp $G/h10.sh $R/driver.sh
tar -czf $OUT/raw.tar.gz -C $OUT raw && rm -rf $R

#!/bin/bash
# D9 (2 GPUs): PageRank's copies taken over the border lists by a scatter (new) against the merge (old):
# strong scaling R-MAT 26, 1 -> 2 GPUs (MPI ranks), PageRank only, old then new (new validated); GPU tests.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
for t in old new; do
  V=--no-validate; [ $t = new ] && V="--validate --validate-max-scale 26"
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 150 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 --experiments strong --scale 26 --primitives pr --runs 3 $V --out $R/pr-$t > $R/pr-$t.txt 2>&1; echo "$t rc=$?"
done
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 80 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_multi.py -k "every_primitive and rmat13 and selective" >> $R/device.txt 2>&1; echo "tests rc=$?"; tail -1 $R/device.txt
date -u >> $R/device.txt
python3 - <<'PY'
import json, os
R = os.environ["OUT"]
for t in ("old", "new"):
    try: d = json.load(open(f"{R}/pr-{t}/scaling.json"))
    except Exception as e: print(t, "no json", e); continue
    for r in d["strong"]["records"]:
        pd = r.get("per_device") or []
        comb = [round(1e3 * x, 3) for x in pd[0]["combine_s"][:4]] if pd else []
        print(f"{t} gpus {r['gpus']} median {r['median_ms']:.3f} ms supersteps {r['supersteps']} valid {r.get('validation')} breakdown {r.get('breakdown_ms')} combine/superstep {comb}")
PY
for t in old new; do mv $R/pr-$t/scaling.json $R/pr-$t.json 2>/dev/null; rm -rf $R/pr-$t $R/pr-$t.txt; done

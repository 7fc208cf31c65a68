#!/bin/bash
# D8 (2 GPUs): the spread's second pass skipped where nothing was lowered (new) against the two passes (old): the GPU twin tests, then strong scaling R-MAT 26,
# 1 -> 2 GPUs (MPI ranks), CC only, old / new / old / new; the last new run validated.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_ops.py tests/test_gpu_cc.py -k "tree_spread or cc or CC or components" >> $R/device.txt 2>&1; echo "tests rc=$?"; tail -1 $R/device.txt
for k in 1 2; do for t in old new; do
  V=--no-validate; [ $k = 2 ] && [ $t = new ] && V="--validate --validate-max-scale 26"
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 200 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 --experiments strong --scale 26 --primitives cc --runs 5 $V --out $R/cc-$t-$k > $R/cc-$t-$k.txt 2>&1; echo "$t $k rc=$?"
  grep -E "^\| *cc|cc " $R/cc-$t-$k.txt | head -4
done; done
date -u >> $R/device.txt
python3 - <<'PY'
import json, os
R = os.environ["OUT"]
for k in (1, 2):
    for t in ("old", "new"):
        try: d = json.load(open(f"{R}/cc-{t}-{k}/scaling.json"))
        except Exception as e: print(t, k, "no json", e); continue
        for r in d["strong"]["records"]:
            pd = r.get("per_device") or []
            c = [round(1e3 * x, 3) for x in pd[0]["compute_s"]] if pd else []
            print(f"{t}{k} gpus {r['gpus']} median {r['median_ms']:.3f} ms supersteps {r['supersteps']} valid {r.get('validation')} device0 compute/superstep ms {c}")
PY
for k in 1 2; do for t in old new; do mv $R/cc-$t-$k/scaling.json $R/cc-$t-$k.json 2>/dev/null; rm -rf $R/cc-$t-$k $R/cc-$t-$k.txt; done; done

#!/bin/bash
# D5 (one GPU): the traversal's start in one launch (lean) against main (old), each with the direction kernel at 6
# and 4 blocks per multiprocessor; DOBFS R-MAT 24 run and kernel times (kt.py), three rounds.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old lean old4 lean4; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/lean; PYTHONPATH=$G/lean:$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_ops.py tests/test_gpu_levels.py tests/test_gpu_sssp_tree.py -k "start_at or direction or sssp" >> $R/device.txt 2>&1; echo "tests rc=$?"; tail -1 $R/device.txt
for k in 1 2 3; do for t in old lean old4 lean4; do
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 150 python3 $G/kt.py $t $R/kt-$t.jsonl 2>&1 | tail -1
done; done
date -u >> $R/device.txt
python3 - <<'PY'
import json, os, statistics
R = os.environ["OUT"]
for t in ("old", "lean", "old4", "lean4"):
    rows = [json.loads(l)["rows"] for l in open(f"{R}/kt-{t}.jsonl")]
    run = [statistics.mean(r["run_ms"] for r in rs) for rs in rows]
    ker = [statistics.mean(r["kernel_ms"] for r in rs) for rs in rows]
    print(f"{t:6s} mean run {' '.join(f'{x:.3f}' for x in run)}  kernel {' '.join(f'{x:.3f}' for x in ker)}  outside {' '.join(f'{a-b:.3f}' for a, b in zip(run, ker))}")
PY

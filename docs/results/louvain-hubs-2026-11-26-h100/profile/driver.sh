#!/bin/bash
# Call J5 (one H100): main f20f9d9: Louvain GPU tests; old (d4927aa) / new alternating at R-MAT 22 and 24 with
# communities compared; new's profile; the CLI at R-MAT 22 and 24 validated; the rest of the one-GPU suite.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; NEW=$G/new; OLD=$G/old; SITE=$PWD/.site; R=$OUT/raw; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo old $(cat $OLD/COMMIT) new $(cat $NEW/COMMIT)) > $R/device.txt
cd $NEW
PYTHONPATH=$NEW:$SITE timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu_propose.py tests/test_louvain.py > $R/gpu_tests_louvain.txt 2>&1; echo "louvain gpu tests rc=$?"; grep -E "passed|failed|FAILED|Error" $R/gpu_tests_louvain.txt | tail -8
for S in 22 24; do for T in old new old new; do
  [ $T = old ] && P=$OLD || P=$NEW
  PYTHONPATH=$P:$SITE timeout 150 python3 $G/louv_tree.py $S 2 $T $R >> $R/ab.txt 2>&1; echo -n "$T $S rc=$? "
done; done; echo
grep -E "^\{" $R/ab.txt | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['tree'], d['scale'], round(d['elapsed_s'], 3), d['rounds'], round(d['modularity'], 7), d['communities'])"
grep pool $R/ab.txt | tr '\n' ' '; echo
python3 -c "
import numpy as np
for S in (22, 24):
    print(S, 'same communities old/new:', np.array_equal(np.load('$R/comm-old-%d.npy' % S), np.load('$R/comm-new-%d.npy' % S)))"
rm -f $R/*.npy
PYTHONPATH=$NEW:$SITE timeout 120 python3 $G/louv_prof8.py 24 > $R/prof-24.txt 2>&1; echo "prof rc=$?"; head -24 $R/prof-24.txt | cut -c1-100
for S in 22 24; do PYTHONPATH=$NEW:$SITE timeout 90 python3 -m mgraph louvain rmat:$S --runs 3 --validate --json $R/louvain-$S.json > $R/louvain-$S.txt 2>&1; echo "cli $S rc=$?"; grep -E "^time|modularity|PASS|FAIL|rror|memory" $R/louvain-$S.txt | head -6; done
date -u >> $R/device.txt
PYTHONPATH=$NEW:$SITE timeout 230 python3 -m pytest -q -p no:cacheprovider -m gpu --ignore=tests/test_gpu_propose.py --ignore=tests/test_louvain.py --ignore=tests/test_gpu_multi.py tests > $R/gpu_suite.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/gpu_suite.txt | cut -c1-300
date -u >> $R/device.txt

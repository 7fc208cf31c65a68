#!/bin/bash
# Call H (one GPU): the GPU suite on new2 (launches through the driver from slots); the overhead experiment, base
# (029952f) and new2 alternating, four processes each.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "base $(cat $G/new/COMMIT)"; echo "new2 $(cat $G/new2/COMMIT)") > $R/device.txt
(cd $G/new2 && PYTHONPATH=$G/new2:$SITE timeout 345 python3 -m pytest -q -p no:cacheprovider -m gpu tests -x > $R/raw/gpu_tests.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/raw/gpu_tests.txt) | tee $R/tests.txt
date -u >> $R/device.txt
for i in 1 2 3 4; do for t in new base new2; do
  [ $t = new ] && continue
  T=$G/$([ $t = base ] && echo new || echo new2)
  (cd $T && PYTHONPATH=$T:$SITE timeout 60 python3 scripts/scaling.py --experiments overhead --gpus-list 1 --runs 10 --validate --out $R/raw/ovh-$t-$i > $R/raw/ovh-$t-$i.txt 2>&1)
  echo "$t $i $(grep -hoE '[0-9.]+ us per superstep' $R/raw/ovh-$t-$i.txt | head -1) $(grep -hoE 'PASS|FAIL' $R/raw/ovh-$t-$i.txt | head -1)" | tee -a $R/overhead.txt
done; done
date -u >> $R/device.txt
find $R/raw -name "*.png" -delete; tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

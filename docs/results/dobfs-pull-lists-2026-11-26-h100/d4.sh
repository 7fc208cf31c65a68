#!/bin/bash
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new new4; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
for k in 1 2 3; do for t in old new new4; do
  cd $G/$t; PYTHONPATH=$G/$t:$SITE timeout 150 python3 $G/kt.py $t $R/kt-$t.jsonl 2>&1 | tail -1
done; done
date -u >> $R/device.txt

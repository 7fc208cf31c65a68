#!/bin/bash
# Call F (two GPUs): the whole GPU suite on new with two GPUs visible (the tests that need two run too).
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -4; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 560 python3 -m pytest -q -p no:cacheprovider -m gpu tests -rs > $R/gpu_tests.txt 2>&1; echo "gpu suite rc=$?")
date -u >> $R/device.txt
grep -E "passed|failed|SKIPPED|FAILED|Error" $R/gpu_tests.txt | tail -15

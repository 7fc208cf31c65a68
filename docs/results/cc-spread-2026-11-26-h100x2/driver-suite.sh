#!/bin/bash
# D7 (2 GPUs): the whole GPU suite on main's code (new).
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "new $(cat $G/new/COMMIT)") > $R/device.txt
cd $G/new; PYTHONPATH=$G/new:$SITE timeout 560 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ > $R/gpu_suite.txt 2>&1; echo "suite rc=$?"
grep -E "passed|failed|FAILED|Error" $R/gpu_suite.txt | tail -12
date -u >> $R/device.txt

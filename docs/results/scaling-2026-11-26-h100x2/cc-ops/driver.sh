#!/bin/bash
# D19 (two GPUs): GPU tests of the changed operators on new; CC's operators timed at R-MAT 26 (old and new on 1 rank,
# new on 2); scaling.py strong R-MAT 26, every primitive, 1 and 2 GPUs (MPI ranks), new.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_ops.py -k "tree_spread" 2>&1 | tail -2 > $R/tests.txt
PYTHONPATH=$G/new:$SITE timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests -k "connected or cc_ or components" 2>&1 | tail -3 >> $R/tests.txt
cat $R/tests.txt
(cd $G/old && PYTHONPATH=$G/old:$SITE timeout 120 python3 $G/ccprof.py 26 $R/raw/cc-old-1.json | head -12) > $R/ccprof.txt 2>&1
(PYTHONPATH=$G/new:$SITE timeout 120 python3 $G/ccprof.py 26 $R/raw/cc-new-1.json | head -12) >> $R/ccprof.txt 2>&1
(PYTHONPATH=$G/new:$SITE timeout 150 mpiexec --allow-run-as-root -n 2 -x PYTHONPATH=$G/new:$SITE python3 $G/ccprof.py 26 $R/raw/cc-new-2.json) >> $R/ccprof.txt 2>&1
PYTHONPATH=$G/new:$SITE timeout 400 python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2 \
    --experiments strong --scale 26 --runs 3 --sources 3 --out $R/raw/strong26 > $R/strong26.txt 2>&1; echo "scaling rc=$?"
date -u >> $R/device.txt
cat $R/ccprof.txt | cut -c1-150
tail -25 $R/strong26.txt
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

#!/bin/bash
# D39 (two GPUs, MPI ranks): main at 81cd391. The link's GPU tests, then scaling.py strong: R-MAT 26 every
# primitive, grid 4096^2 and rgg 22 BFS and SSSP, on 1 and 2 GPUs.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "main $(cat $G/new/COMMIT)") > $R/device.txt
M="mpiexec --allow-run-as-root"
cd $G/new
PYTHONPATH=$G/new:$SITE timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_peer_levels.py \
    > $R/gpu_tests.txt 2>&1; echo "tests rc=$?"; tail -2 $R/gpu_tests.txt
PYTHONPATH=$G/new:$SITE timeout 260 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 \
    --experiments strong --scale 26 --runs 3 --sources 3 --out $R/raw/strong26 > $R/strong26.txt 2>&1; echo "scaling rc=$?"
for g in grid:4096x4096 rgg:22; do
  PYTHONPATH=$G/new:$SITE timeout 110 python3 scripts/scaling.py --mpiexec "$M" --gpus-list 1,2 --experiments strong \
      --graph $g --primitives bfs,sssp --runs 3 --sources 1 --out $R/raw/${g%%:*} > $R/${g%%:*}.txt 2>&1; echo "$g rc=$?"
done
date -u >> $R/device.txt
for f in strong26 grid rgg; do sed -n '/one MPI job per count/,$p' $R/$f.txt | grep -E "^\| [a-z]+ \| [12] " | cut -c1-120; done
tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

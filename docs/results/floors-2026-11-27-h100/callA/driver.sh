#!/bin/bash
# Call A (one GPU): the GPU suite on new; the overhead experiment (a path of 1000 edges) on one GPU, each line a new
# process: old 5683a37 once, new unbound x3, new bound to the GPU's local CPUs x3, new bound to one core x2.
set -u
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R/raw
(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
(nvidia-smi topo -m; lscpu | grep -Ei "numa|model name|^cpu\(s\)|mhz|socket|thread|core"; nproc) > $R/topo.txt 2>&1
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
LOCAL=$(cat /sys/bus/pci/devices/$BUS/local_cpulist 2>/dev/null || echo "0-$(($(nproc)-1))")
echo "bus $BUS local_cpulist $LOCAL" >> $R/topo.txt
(cd $G/new && PYTHONPATH=$G/new:$SITE timeout 340 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $R/raw/gpu_tests.txt 2>&1; echo "gpu suite rc=$?"; tail -3 $R/raw/gpu_tests.txt) | tee $R/tests.txt
date -u >> $R/device.txt
ovh() {  # label tree prefix...
  l=$1; t=$2; shift 2
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 60 "$@" python3 scripts/scaling.py --experiments overhead --gpus-list 1 --runs 10 --validate --out $R/raw/ovh-$l > $R/raw/ovh-$l.txt 2>&1; echo "$l rc=$?")
  echo "$l $(grep -hoE '[0-9.]+ us per superstep' $R/raw/ovh-$l.txt | head -3 | tr '\n' ' ')" >> $R/overhead.txt
}
ovh new-u1 new env
ovh old-u1 old env
ovh new-l1 new taskset -c $LOCAL
ovh new-u2 new env
ovh new-l2 new taskset -c $LOCAL
ovh new-c1 new taskset -c 2
ovh new-u3 new env
ovh new-l3 new taskset -c $LOCAL
ovh new-c2 new taskset -c 2
date -u >> $R/device.txt
cat $R/topo.txt | tail -8
cat $R/overhead.txt
find $R/raw -name "*.png" -delete; tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

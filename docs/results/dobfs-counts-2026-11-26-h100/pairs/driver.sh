#!/bin/bash
# D24 (one GPU): R-MAT 24 BFS and DOBFS, 947cbc6 (old) against HEAD (new), alternating four times, 5 runs per source.
set -u
python3 -m pip install -q --upgrade --no-index --no-deps --target .site .whl/*.whl >/dev/null 2>&1
G=$PWD/.gpu; SITE=$PWD/.site; R=$OUT; mkdir -p $R
(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; for t in old new; do echo "$t $(cat $G/$t/COMMIT)"; done) > $R/device.txt
B="scripts/bench.py --scale 24 --runs 5 --sources 4 --no-baselines --no-validate --primitives bfs,dobfs"
for i in 1 2 3 4; do for t in old new; do
  (cd $G/$t && PYTHONPATH=$G/$t:$SITE timeout 100 python3 $B > $R/b-$t-$i.txt 2>&1
   echo "$t $i $(grep -E '^(bfs|dobfs) ' $R/b-$t-$i.txt | awk '{printf "%s %s ms %s GTEPS; ", $1, $2, $3}')") | tee -a $R/ab.txt
done; done
date -u >> $R/device.txt
mkdir -p $R/raw && mv $R/b-*.txt $R/raw/ && tar czf $R/raw.tgz -C $R raw && rm -rf $R/raw

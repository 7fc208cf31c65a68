#!/bin/bash
cd /work/wt/louvcpu
for rep in 1 2; do
  for v in main louvcpu; do
    src=/work/main; [ $v = louvcpu ] && src=/work/wt/louvcpu
    echo "== rep $rep $v $(uptime)" 
    PYTHONPATH=$src /work/main/.venv/bin/python $src/scripts/networkx_speed.py --graphs facebook,slashdot,rmat:16 --families louvain --backend numpy --runs 3 --json /tmp/louv/speed_${v}_$rep.json 2>&1
  done
done

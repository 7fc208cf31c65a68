"""Partitioning and subgraph construction on the GPU: random and biased-random at R-MAT scale 24 (GPU).

Times each partitioner (after one warm-up on a small graph) and then building the 1-hop subgraphs on the
graph's GPU, synchronised before reading the clock; the issue's bound for both together is 10 s.

    PYTHONPATH=$PWD python3 scripts/experiments/gpu_partition_times.py [SCALE]
"""
import sys
import time

import cupy as cp

import partitioners
from mgraph import generators, subgraph

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 24
small = generators.rmat(12, xp=cp, seed=1)
for name in ("random", "biased-random"):
    subgraph.build(small, partitioners.assign(small, 2, name, 0), 2, "1-hop")
g = generators.rmat(scale, xp=cp, seed=0)
print(f"R-MAT scale {scale}: {g.num_vertices} vertices, {g.num_edges} edges, "
      f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
for parts in (2, 4):
    for name in ("random", "biased-random"):
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        owner = partitioners.assign(g, parts, name, 0)
        cp.cuda.Device().synchronize()
        t_part = time.perf_counter()
        built = subgraph.build(g, owner, parts, "1-hop")
        cp.cuda.Device().synchronize()
        t_sub = time.perf_counter()
        border = sum(int((b.owner != b.index).sum()) for b in built)
        print(f"{parts} parts, {name}: partition {t_part - t:.3f} s, subgraphs {t_sub - t_part:.3f} s, "
              f"proxies {border}", flush=True)
        del built, owner

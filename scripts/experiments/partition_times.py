"""Partitioner times on the host (NumPy): METIS against biased-random and random on Graph500 R-MAT.

PYTHONPATH=$PWD python3 scripts/experiments/partition_times.py   (docs/multi-gpu.md quotes its output)
"""
import time

import mgraph
import partitioners

for scale in (16, 18, 20):
    g = mgraph.load(f"rmat:{scale}", backend="numpy")
    for parts in (2, 4):
        times = {}
        for name in ("metis", "biased-random", "random"):
            t = time.perf_counter()
            partitioners.assign(g, parts, name, 0)
            times[name] = time.perf_counter() - t
        print(f"scale {scale} ({g.num_edges} edges) parts {parts}: "
              + ", ".join(f"{k} {v:.3g} s" for k, v in times.items()), flush=True)

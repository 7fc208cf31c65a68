"""Partitioner times on the host (NumPy): METIS against biased-random and random on Graph500 R-MAT.

Prints, per scale and part count, each partitioner's time and the border sizes |B_i| of its parts.

PYTHONPATH=$PWD python3 scripts/experiments/partition_times.py [SCALE ...]   (default 16 18 20;
docs/multi-gpu.md quotes its output)
"""
import sys
import time

import mgraph
import partitioners

for scale in [int(a) for a in sys.argv[1:]] or [16, 18, 20]:
    g = mgraph.load(f"rmat:{scale}", backend="numpy")
    for parts in (2, 4):
        for name in ("metis", "biased-random", "random"):
            t = time.perf_counter()
            owner = partitioners.assign(g, parts, name, 0)
            seconds = time.perf_counter() - t
            border = [row["border"] for row in partitioners.quality(g, owner, parts)]
            print(f"scale {scale} ({g.num_edges} edges) parts {parts}: {name} {seconds:.3g} s, border sizes {border}",
                  flush=True)

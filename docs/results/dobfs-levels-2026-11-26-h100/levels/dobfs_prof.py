"""Experiment (tree patched by patch_times.py): R-MAT 24 DOBFS from the bench's 4 sources, per-level device times."""
import statistics, sys, json, os
import numpy as np, cupy as cp, mgraph
sys.path.insert(0, "scripts")
import bench
from mgraph.ops import cupy_levels
g = mgraph.load("rmat:24", backend="cupy")
sources = bench.random_sources(g, 4, 0)
rows = []
for s in sources:
    mgraph.bfs(g, s, direction="auto", output="device")
    ts = []
    for _ in range(5):
        cupy_levels.EXP.clear()
        r = mgraph.bfs(g, s, direction="auto", output="device")
        ts.append(r.stats["elapsed_s"] * 1e3)
    levels = cupy_levels.EXP[-1]
    fs = r.stats.get("frontier_sizes")
    rows.append({"source": int(s), "median_ms": statistics.median(ts), "runs_ms": ts, "levels": levels[0],
                 "level_us": levels[1:], "frontier_sizes": [int(x) for x in fs] if fs is not None else None,
                 "supersteps": r.stats["supersteps"]})
    print(f"source {s}: median {statistics.median(ts):.3f} ms; levels {levels[0]}; per level us "
          + " ".join(f"{x:.0f}" for x in levels[1:]), flush=True)
json.dump(rows, open(os.path.join(os.environ["OUT"], "raw", "dobfs-levels-h100.json"), "w"), indent=1)

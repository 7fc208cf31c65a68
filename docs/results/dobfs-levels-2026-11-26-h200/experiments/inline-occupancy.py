"""DOBFS levels in one kernel: inlined or called level loops, occupancy bound; grid 4096^2, rgg 22, R-MAT 24."""
import statistics, time
import numpy as np, cupy as cp, mgraph
from mgraph.ops import cupy_levels
graphs = {"grid": mgraph.load("grid:4096x4096", backend="cupy"), "rgg22": mgraph.load("rgg:22", backend="cupy"),
          "rmat24": mgraph.load("rmat:24", backend="cupy")}
g = graphs["rmat24"]
deg = cp.asnumpy(g.out_degree())
rng = np.random.default_rng(1)
rsources = [int(s) for s in rng.choice(np.flatnonzero(deg > 0), 4)]
def t(g, s, runs=3):
    mgraph.bfs(g, s, direction="auto", output="device")
    return statistics.median(mgraph.bfs(g, s, direction="auto", output="device").stats["elapsed_s"] * 1e3 for _ in range(runs))
for rep in range(2):
    for fn, mb in (("__noinline__", 6), ("__forceinline__", 6), ("__forceinline__", 4), ("__noinline__", 4), ("__forceinline__", 8)):
        cupy_levels.LEVEL_FN, cupy_levels.DIRECTIONS_MIN_BLOCKS = fn, mb
        cupy_levels._directions_kernel.cache_clear()
        grid = t(graphs["grid"], 0, 2); rgg = t(graphs["rgg22"], 0)
        rm = [t(g, s) for s in rsources]
        print(f"{fn:16s} {mb}  grid {grid:.2f} ms  rgg22 {rgg:.2f} ms  rmat24 {' '.join(f'{x:.3f}' for x in rm)} mean {statistics.mean(rm):.3f}", flush=True)

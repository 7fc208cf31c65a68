"""R-MAT 24 DOBFS, levels in one kernel: the pull's vertices per lane and the occupancy bound; per-level times."""
import statistics
import numpy as np, cupy as cp, mgraph
from mgraph.ops import cupy_levels
g = mgraph.load("rmat:24", backend="cupy")
deg = cp.asnumpy(g.out_degree())
rng = np.random.default_rng(1)
sources = [int(s) for s in rng.choice(np.flatnonzero(deg > 0), 4)]
def run(name):
    out, per = [], []
    for s in sources:
        mgraph.bfs(g, s, direction="auto", output="device")
        ts = []
        for _ in range(5):
            cupy_levels.EXP.clear()
            ts.append(mgraph.bfs(g, s, direction="auto", output="device").stats["elapsed_s"] * 1e3)
        out.append(statistics.median(ts)); per.append(cupy_levels.EXP[-1][1:])
    print(f"{name:12s} ms {' '.join(f'{t:.3f}' for t in out)} mean {statistics.mean(out):.3f}   levels us (source 1) {' '.join(f'{x:.0f}' for x in per[0])}", flush=True)
for rep in range(2):
    for ways, mb in ((2, 6), (4, 6), (4, 4), (1, 6), (2, 8)):
        cupy_levels.PULL_WAYS, cupy_levels.DIRECTIONS_MIN_BLOCKS = ways, mb
        cupy_levels._directions_kernel.cache_clear()
        run(f"ways {ways} mb {mb}")

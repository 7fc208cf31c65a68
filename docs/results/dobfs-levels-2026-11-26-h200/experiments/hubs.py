"""DOBFS at R-MAT 24, levels in one kernel: the hub bound and the hubs' run per warp swept; per-level device times."""
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
            r = mgraph.bfs(g, s, direction="auto", output="device")
            ts.append(r.stats["elapsed_s"] * 1e3)
        out.append(statistics.median(ts))
        per.append((cupy_levels.EXP[-1][1:], ''.join(('L' if d == 'pull' else 'H') for d in r.stats['directions'])))
    print(f"{name:16s} ms per source {' '.join(f'{t:.3f}' for t in out)}  mean {statistics.mean(out):.3f}", flush=True)
    for (p, d) in per:
        print(f"     {d:10s} us {' '.join(f'{x:.0f}' for x in p)}", flush=True)
for rep in range(2):
    for hub, hrun in ((256, 512), (64, 512), (256, 128), (64, 128), (32, 128), (32, 64), (1024, 128)):
        cupy_levels.DIRECTIONS_HUB, cupy_levels.HUB_RUN = hub, hrun
        cupy_levels._HUB_COUNT.clear()
        cupy_levels._directions_kernel.cache_clear()
        run(f"hub {hub} run {hrun}")

"""DOBFS at R-MAT 24 on one GPU, levels in one kernel: do_a and do_b swept; per-level device times; the host-driven
path's supersteps for the same sources."""
import statistics, sys
import numpy as np, cupy as cp, mgraph
from mgraph.ops import cupy_levels, levels
g = mgraph.load("rmat:24", backend="cupy")
deg = cp.asnumpy(g.out_degree())
rng = np.random.default_rng(1)
sources = [int(s) for s in rng.choice(np.flatnonzero(deg > 0), 4)]
front = levels.DIRECTIONS_FRONTIER
def run(name, **kw):
    out, per = [], []
    for s in sources:
        mgraph.bfs(g, s, direction="auto", output="device", **kw)
        ts = []
        for _ in range(5):
            cupy_levels.EXP.clear()
            r = mgraph.bfs(g, s, direction="auto", output="device", **kw)
            ts.append(r.stats["elapsed_s"] * 1e3)
        out.append(statistics.median(ts))
        per.append((cupy_levels.EXP[-1][1:] if cupy_levels.EXP else [round(x * 1e6, 1) for x in r.stats["per_device"][0]["compute_s"]],
                    ''.join(('L' if d == 'pull' else 'H') for d in r.stats['directions']), r.stats["frontier_sizes"]))
    gteps = len(sources) / sum(t / (g.num_edges / 1e6) for t in out) if hasattr(g, "num_edges") else 0
    print(f"{name:14s} ms per source {' '.join(f'{t:.3f}' for t in out)}  mean {statistics.mean(out):.3f}", flush=True)
    for (p, d, f) in per:
        print(f"     {d:10s} us {' '.join(f'{x:.0f}' for x in p)}   frontiers {f}", flush=True)
levels.DIRECTIONS_FRONTIER = 0
run("host 1e-5", do_a=1e-5)
levels.DIRECTIONS_FRONTIER = front
for do_a in (1e-5, 1e-4, 1e-3, 1e-2):
    run(f"kernel a={do_a:g}", do_a=do_a)
for do_b in (0.01, 1.0):
    run(f"kernel b={do_b:g}", do_a=1e-5, do_b=do_b)

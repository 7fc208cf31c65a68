"""Push-advance tile size: BFS per-level times, SSSP, BC and CC at scale 24 for several arcs per thread (GPU).

Switches ``cupy_kernels.ITEMS`` and recompiles inside one process, so every variant runs on the same
graph and machine.  PYTHONPATH=$PWD python3 scripts/experiments/advance_tile_sweep.py
"""
import numpy as np, cupy as cp
import mgraph
from mgraph import generators, ops
from mgraph.ops import cupy_kernels, cupy_ops
g = generators.rmat(24, xp=cp, seed=0)
deg = cp.asnumpy(g.out_degree()); srcs = np.random.default_rng(1).choice(np.flatnonzero(deg > 0), 4, replace=False)
def bfs(s):
    n = g.num_vertices
    label = cp.full(n, -1, cp.int32); pred = cp.full(n, -1, g.indices.dtype); label[s] = 0
    f = cp.asarray([s], g.indices.dtype); lv, times = 0, []
    while len(f):
        lv += 1
        a, b = cp.cuda.Event(), cp.cuda.Event(); a.record()
        nf = ops.advance_visit(g, f, label, pred, lv)
        b.record(); b.synchronize(); times.append((len(f), cp.cuda.get_elapsed_time(a, b))); f = nf
    return times
for items in (1, 4, 8, 16, 1, 8):
    cupy_kernels.ITEMS = items; cupy_ops._module.cache_clear()
    for s in srcs[:2]:
        bfs(int(s)); t = bfs(int(s))
        print(f"ITEMS={items:2d} src {s} total {sum(x[1] for x in t):6.2f} ms  " + " ".join(f"{n}:{ms:.2f}" for n, ms in t), flush=True)
    st = [mgraph.sssp(g, int(s)).stats["elapsed_s"] * 1e3 for s in srcs[:2]]
    bc = [mgraph.betweenness_centrality(g, sources=[int(s)]).stats["elapsed_s"] * 1e3 for s in srcs[:2]]
    cc = mgraph.connected_components(g).stats["elapsed_s"] * 1e3
    print(f"ITEMS={items:2d} sssp(unweighted) {st[0]:.2f} {st[1]:.2f} ms  bc {bc[0]:.2f} {bc[1]:.2f} ms  cc {cc:.2f} ms", flush=True)

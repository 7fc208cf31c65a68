import time, numpy as np, cupy as cp, mgraph
from mgraph import ops
from mgraph.ops import levels, idmaps
g = mgraph.load("rmat:22"); n = g.num_vertices
def t(fn):
    cp.cuda.Device().synchronize(); a = time.perf_counter(); fn(); cp.cuda.Device().synchronize()
    return round((time.perf_counter() - a) * 1e6)
for k in (1, 17, 2, 5445, 106587, 154, 161, 1388662, 17, 5445):
    f = cp.asarray(np.random.default_rng(k).integers(0, n, k).astype(np.int32))
    print(k, "count_arcs", t(lambda: ops.count_arcs(g, f)), t(lambda: ops.count_arcs(g, f)),
          "arcs_of", t(lambda: levels.arcs_of(g, f)), t(lambda: levels.arcs_of(g, f)),
          "count_own", t(lambda: idmaps.count_own(f, None, 0, 1 << 30)), flush=True)

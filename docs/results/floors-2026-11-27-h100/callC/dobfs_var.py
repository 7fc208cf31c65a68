"""Experiment (not for the tree): one process's direction-optimizing BFS at R-MAT 24, per run: the caller's wall,
the run's elapsed (stats), and the GPU's time between events recorded on the run's stream around the call."""
import sys, time, json
import numpy as np, cupy as cp
import mgraph
from mgraph.backend import resolve
from mgraph.io import generators
be = resolve("cupy")
from mgraph.ops import cupy_levels
_orig = cupy_levels._directions_kernel
EV = []
def _wrapped(idx, dev):
    k, grid = _orig(idx, dev)
    def launch(*a, **kw):
        st = cp.cuda.get_current_stream(); e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(st); k(*a, **kw); e1.record(st); EV.append((e0, e1))
    return launch, grid
cupy_levels._directions_kernel = _wrapped
g = generators.rmat(24, 16, xp=cp, seed=0)
cp.cuda.Device().synchronize()
rng = np.random.default_rng(0)
srcs = [8575447, 4526269, 1262320, 2940497]
rows = []
for rep in range(3):
    for s in srcs:
        mgraph.bfs(g, s, backend="cupy", direction="auto", output="device"); EV.clear()  # warm
        for k in range(4):
            cp.cuda.Device().synchronize()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            st = cp.cuda.get_current_stream()
            t0 = time.perf_counter(); e0.record(st)
            r = mgraph.bfs(g, s, backend="cupy", direction="auto", output="device")
            e1.record(st); e1.synchronize(); t1 = time.perf_counter()
            kt = sum(cp.cuda.get_elapsed_time(a, b) for a, b in EV); EV.clear()
            rows.append((s, (t1 - t0) * 1e3, r.stats["elapsed_s"] * 1e3, kt))
a = np.array([r[1:] for r in rows])
print(sys.argv[1], "median wall %.3f elapsed %.3f kernel %.3f ms" % tuple(np.median(a, axis=0)),
      "per source elapsed/kernel", [(round(float(np.median([r[2] for r in rows if r[0] == s])), 3), round(float(np.median([r[3] for r in rows if r[0] == s])), 3)) for s in srcs])
json.dump(rows, open(sys.argv[2], "w"))

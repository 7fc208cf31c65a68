"""Experiment: Louvain's GPU time by piece (R-MAT S): the round's functions timed with a device sync on either side,
summed over one run (after a warm-up run)."""
import sys, time, json
import cupy as cp, mgraph
from mgraph import ops
import mgraph.primitives.louvain as L
S = int(sys.argv[1])
T, N = {}, {}
def timed(name, f):
    def g(*a, **k):
        cp.cuda.runtime.deviceSynchronize(); t = time.perf_counter(); r = f(*a, **k)
        cp.cuda.runtime.deviceSynchronize(); T[name] = T.get(name, 0.0) + time.perf_counter() - t; N[name] = N.get(name, 0) + 1
        return r
    return g
for name in ("sums", "best_per_row"):
    setattr(L, name, timed(name, getattr(L, name)))
for name in ("_scores", "_stay", "_unsettled", "_inside_change", "_after", "_rank", "_commit", "_move", "_measure",
             "_publish", "_apply", "next_phase", "_aggregate", "coarse_graph", "reset", "_inside"):
    setattr(L.Louvain, name, timed("Louvain." + name, getattr(L.Louvain, name)))
real_pt = ops.pair_totals
ops.pair_totals = timed("ops.pair_totals", real_pt)
g = mgraph.load(f"rmat:{S}", backend="cupy")
mgraph.louvain(g)
T.clear(); N.clear()
t = time.perf_counter(); r = mgraph.louvain(g); wall = time.perf_counter() - t
print("wall", round(wall, 3), "rounds", r.stats["level_rounds"])
for k, v in sorted(T.items(), key=lambda kv: -kv[1]):
    print(f"{k:28s} {v:8.3f} s  {N[k]:4d} calls")

"""Experiment: inside Louvain's rounds on one GPU (R-MAT S): each kernel of ops.best_moves by tier, the hub rows,
and each pair_sums call, per level, device-synchronised, one run after a warm-up."""
import sys, time
from collections import defaultdict
import cupy as cp, mgraph
from mgraph import ops, api
from mgraph.ops import cupy_propose as CP, segments
import mgraph.primitives.louvain as L
S = int(sys.argv[1])
LEVEL = [1]
T = defaultdict(float); N = defaultdict(int)
def sync(): cp.cuda.runtime.deviceSynchronize()
def add(name, t):
    T[(LEVEL[0], name)] += t; N[(LEVEL[0], name)] += 1
class Timed:
    def __init__(self, f, name): self.f, self.name = f, name
    def __call__(self, grid, *a, **k):
        sync(); t = time.perf_counter(); r = self.f(grid, *a, **k); sync()
        tier = self.name if self.name == "propose_warp" else f"{self.name} block={a[0][0]}"
        add(tier, time.perf_counter() - t); return r
    def __getattr__(self, k): return getattr(self.f, k)
    def __setattr__(self, k, v):
        if k in ("f", "name"): object.__setattr__(self, k, v)
        else: setattr(self.f, k, v)
real_kernel = CP._function
CP._function = lambda ids, dev, name: Timed(real_kernel(ids, dev, name), name)
def wrap(mod, name, label, info=None):
    f = getattr(mod, name)
    def g(*a, **k):
        sync(); t = time.perf_counter(); r = f(*a, **k); sync()
        add(label if info is None else label + info(*a), time.perf_counter() - t); return r
    setattr(mod, name, g)
wrap(CP, "_hub_rows", "hub rows")
wrap(ops, "best_moves", "best_moves (all)")
wrap(ops, "unsettled_rows", "unsettled_rows")
wrap(ops, "commit_sums", "commit_sums")
wrap(ops, "pair_totals", "pair_totals")
wrap(segments, "pair_sums", "pair_sums", lambda xp, a, *rest: f" n={a.shape[0]:,}")
for name in ("_inside_change", "_after", "_aggregate", "_measure", "_stay", "_rank", "_publish", "_apply"):
    wrap(L.Louvain, name, "Louvain." + name)
for name in ("_positions", "_modularity", "_coarse_graph"):
    wrap(api, name, "api." + name)
real_run_alone = api.run_alone
def run_alone(*a, **k):
    LEVEL[0] += 1
    sync(); t = time.perf_counter(); r = real_run_alone(*a, **k); sync()
    add("level run", time.perf_counter() - t); return r
api.run_alone = run_alone
g = mgraph.load(f"rmat:{S}", backend="cupy")
mgraph.louvain(g)
T.clear(); N.clear(); LEVEL[0] = 1
t = time.perf_counter(); r = mgraph.louvain(g); wall = time.perf_counter() - t
print("wall", round(wall, 3), "rounds", r.stats["level_rounds"], "coarse", round(r.stats["coarse_levels_s"], 3))
for (lvl, k), v in sorted(T.items(), key=lambda kv: (kv[0][0], -kv[1])):
    if v > 0.002:
        print(f"L{lvl} {k:44s} {v:8.3f} s {N[(lvl, k)]:4d} calls")

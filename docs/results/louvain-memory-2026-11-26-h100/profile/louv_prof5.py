"""Experiment: where Louvain's time goes on one GPU (R-MAT S): each coarse level's pieces timed with a device sync
around them (run_alone, _positions, _modularity, _coarse_graph), and a cProfile of one run."""
import cProfile, io, pstats, sys, time, json
import cupy as cp, mgraph
from mgraph import api
S = int(sys.argv[1])
T = {}
def timed(name, f):
    def g(*a, **k):
        cp.cuda.runtime.deviceSynchronize(); t = time.perf_counter(); r = f(*a, **k)
        cp.cuda.runtime.deviceSynchronize(); T.setdefault(name, []).append(round(time.perf_counter() - t, 4)); return r
    return g
for name in ("_positions", "_modularity", "_coarse_graph", "run_alone", "_level"):
    setattr(api, name, timed(name, getattr(api, name)))
g = mgraph.load(f"rmat:{S}", backend="cupy")
mgraph.louvain(g)
T.clear()
r = mgraph.louvain(g)
print("elapsed", round(r.stats["elapsed_s"], 3), "coarse", round(r.stats["coarse_levels_s"], 3), "rounds", r.stats["level_rounds"])
print(json.dumps(T))
rs = r.stats["per_device"][0]["compute_s"]
print("first level supersteps ms", [round(1e3 * x, 1) for x in rs])
prof = cProfile.Profile(); prof.enable(); mgraph.louvain(g); prof.disable()
out = io.StringIO(); st = pstats.Stats(prof, stream=out)
st.sort_stats("tottime").print_stats(30); st.sort_stats("cumulative").print_stats(50)
print(out.getvalue())

"""Louvain at R-MAT S on one GPU: a warm-up, then one run under cProfile (per level rounds and modularity)."""
import cProfile, pstats, sys, time
import cupy as cp, mgraph
scale = int(sys.argv[1])
g = mgraph.load(f"rmat:{scale}", backend="cupy")
t = time.perf_counter(); r = mgraph.louvain(g); cp.cuda.Device().synchronize()
print(f"first run {time.perf_counter()-t:.3f} s", flush=True)
p = cProfile.Profile(); t = time.perf_counter(); p.enable(); r = mgraph.louvain(g); cp.cuda.Device().synchronize(); p.disable()
print(f"profiled run {time.perf_counter()-t:.3f} s modularity {r.stats['modularity']:.5f} rounds {r.stats['level_rounds']}",
      flush=True)
print({k: v for k, v in r.stats.items() if k.startswith("level")})
s = pstats.Stats(p); s.sort_stats("tottime").print_stats(30); s.sort_stats("cumulative").print_stats(45)

"""Louvain at R-MAT S on one GPU: per level rounds and time, then one run under cProfile."""
import cProfile, pstats, sys, time
import cupy as cp, mgraph
scale = int(sys.argv[1])
g = mgraph.load(f"rmat:{scale}", backend="cupy")
r = mgraph.louvain(g); cp.cuda.Device().synchronize()
t = time.perf_counter(); r = mgraph.louvain(g); cp.cuda.Device().synchronize()
print(f"warm run {time.perf_counter()-t:.3f} s modularity {r.stats['modularity']:.5f} rounds {r.stats['level_rounds']} "
      f"level modularity {[round(x, 5) for x in r.stats['level_modularity']]}", flush=True)
p = cProfile.Profile(); p.enable(); r = mgraph.louvain(g); cp.cuda.Device().synchronize(); p.disable()
s = pstats.Stats(p); s.sort_stats("tottime").print_stats(35); s.sort_stats("cumulative").print_stats(40)

import sys, time
sys.path.insert(0, sys.argv[1])
import mgraph
g = mgraph.load("rmat:20", backend="numpy")
t = time.perf_counter()
r = mgraph.louvain(g, seed=0, threads=1)
print("rmat:20 seed 0: rounds", r.stats["level_rounds"], "(total %d)" % sum(r.stats["level_rounds"]), "modularity %.5f" % r.stats["modularity"], "level modularity", ["%.5f" % x for x in r.stats["level_modularity"]], "communities", r.stats["communities"], flush=True)

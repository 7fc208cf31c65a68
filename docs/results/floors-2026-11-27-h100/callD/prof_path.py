"""Experiment (not for the tree): cProfile of the overhead experiment's path BFS on one GPU, 5 runs after a warm-up."""
import sys, cProfile, pstats, io
sys.path.insert(0, "scripts")
import cupy as cp, mgraph
from scaling import PathBFS, paths_graph, path_partitioner
g = paths_graph(1, 1000, cp)
run = dict(backend="cupy", devices=1, seed=0, partitioner=path_partitioner(1000))
mgraph.run(PathBFS, g, **run)
r = [mgraph.run(PathBFS, g, **run).stats["elapsed_s"] for _ in range(5)]
print("no profile: us/superstep", [round(x / 1003 * 1e6, 2) for x in r])
p = cProfile.Profile(); p.enable()
for _ in range(5):
    mgraph.run(PathBFS, g, **run)
p.disable()
s = io.StringIO(); st = pstats.Stats(p, stream=s); st.sort_stats("tottime").print_stats(45); st.sort_stats("cumulative").print_stats(60)
print(s.getvalue())

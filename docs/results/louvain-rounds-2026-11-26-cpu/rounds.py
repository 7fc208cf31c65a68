"""Rounds per level and modularity of mgraph.louvain (one thread, NumPy) from the tree on sys.argv[1]."""
import os, sys
tree = sys.argv[1]; sys.path.insert(0, tree); sys.path.insert(0, os.path.join(tree, "scripts"))
import mgraph, networkx as nx
from louvain_vs_networkx import graph
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
cases = [("rmat:16", 0), ("rmat:16", 1), ("facebook", 0), ("facebook", 1), ("facebook", 2),
         ("slashdot", 0), ("slashdot", 1), ("slashdot", 2), ("rmat:18", 0)]
for name, seed in cases:
    g = mgraph.load(name, backend="numpy") if name.startswith("rmat") else mgraph.as_graph(graph(name)) if hasattr(mgraph, "as_graph") else graph(name)
    r = mgraph.louvain(g, seed=seed, threads=1)
    print(f"{name} seed {seed}: rounds {r.stats['level_rounds']} (total {sum(r.stats['level_rounds'])}), modularity {r.stats['modularity']:.5f}", flush=True)

import numpy as np, mgraph, statistics
from mgraph.group import world
n = 2001
g = mgraph.Graph.from_edges(np.arange(n-1), np.arange(1,n), num_vertices=n, directed=False)
out = {}
for pl in (True, False):
    mgraph.bfs(g, 0, backend="numpy", peer_levels=pl)
    out[pl] = statistics.median([mgraph.bfs(g, 0, backend="numpy", peer_levels=pl).stats["elapsed_s"] * 1e3 for _ in range(5)])
if world().rank == 0:
    print(f"peer {out[True]:.1f} host {out[False]:.1f}")

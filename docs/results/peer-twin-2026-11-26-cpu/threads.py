import numpy as np, mgraph, sys, statistics
n = 2001
g = mgraph.Graph.from_edges(np.arange(n-1), np.arange(1,n), num_vertices=n, directed=False)
p = int(sys.argv[1])
mgraph.bfs(g, 0, devices=p, backend="numpy", peer_levels=True)
ts = [mgraph.bfs(g, 0, devices=p, backend="numpy", peer_levels=True).stats["elapsed_s"] * 1e3 for _ in range(5)]
print(round(statistics.median(ts), 1))

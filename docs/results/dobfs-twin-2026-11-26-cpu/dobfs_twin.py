"""DOBFS on CPU devices: levels across the devices (NumpyLink.visit_directions) against the host's exchange.
Worker threads (devices=2) or, under mpiexec, the ranks; per source a warm-up of each, then 3 rounds alternating;
medians of elapsed_s in ms."""
import json, statistics, sys
import mgraph
from mgraph.cli import random_sources
spec = sys.argv[1]
mpi = len(sys.argv) > 2 and sys.argv[2] == "mpi"
g = mgraph.load(spec)
opts = {} if mpi else {"devices": 2}
srcs = random_sources(g, 3, 0)
t = {True: [], False: []}
steps = {}
for s in srcs:
    for peer in (True, False):
        mgraph.bfs(g, s, direction="auto", peer_levels=peer, **opts)
    for _ in range(3):
        for peer in (True, False):
            r = mgraph.bfs(g, s, direction="auto", peer_levels=peer, **opts)
            t[peer].append(r.stats["elapsed_s"] * 1e3)
            steps[peer] = r.stats["supersteps"]
if r.depth is not None:
    print(json.dumps({"graph": spec, "workers": "mpi" if mpi else "threads", "sources": [int(x) for x in srcs],
                      "levels_ms": statistics.median(t[True]), "host_ms": statistics.median(t[False]),
                      "supersteps_levels": steps[True], "supersteps_host": steps[False],
                      "runs_levels_ms": t[True], "runs_host_ms": t[False]}))

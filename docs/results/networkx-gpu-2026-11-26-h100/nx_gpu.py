"""mgraph's side of scripts/networkx_speed.py on one GPU (networkx's own side is timed elsewhere): R-MAT 18 as a
networkx graph, each family dispatched with backend="mgraph" (cupy), one call filling the cache, then 3 timed."""
import json, os, statistics, sys, time
import networkx as nx
sys.path.insert(0, "scripts")
import networkx_speed as ns
cfg = nx.config.backends.mgraph
cfg["backend"], nx.config.cache_converted_graphs = "cupy", True
small = ns.load("rmat:8")
for name, (call, _) in ns.families(small, 4, next(iter(small))).items():
    if name in ("betweenness", "louvain", "pagerank"):
        call(backend="mgraph")
t = time.perf_counter(); G = ns.load("rmat:18"); print(f"graph {G.number_of_nodes()} {G.number_of_edges()} in {time.perf_counter()-t:.1f} s", flush=True)
fam = ns.families(G, 100, next(iter(G)))
out = {}
for name in ("pagerank", "betweenness", "louvain"):
    call, _ = fam[name]
    G.__networkx_cache__.clear()
    t = time.perf_counter(); first = call(backend="mgraph"); t_first = time.perf_counter() - t
    times = []
    for _ in range(3):
        t = time.perf_counter(); got = call(backend="mgraph"); times.append(time.perf_counter() - t)
    extra = {}
    if name == "louvain":
        extra["modularity"] = nx.community.modularity(G, got)
        extra["communities"] = len(got)
    out[name] = {"first_s": t_first, "runs_s": times, "median_s": statistics.median(times), **extra}
    print(name, json.dumps(out[name]), flush=True)
json.dump(out, open(os.path.join(os.environ["OUT"], "raw", "nx-gpu-rmat18.json"), "w"), indent=1)

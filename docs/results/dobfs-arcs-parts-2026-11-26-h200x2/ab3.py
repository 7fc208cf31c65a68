import sys, numpy as np, mgraph
from mgraph.primitives.bfs import BFS
g = mgraph.load(sys.argv[1])
srcs = [63412987, 55110462, 58622425, 31399571, 54790356, 20140673, 20333104, 53488715]
keep, off = BFS.wants_frontier_arcs, property(lambda self: False)
V = [("estimate", 1e-5), ("arcs", 1e-5), ("arcs", 1e-4), ("arcs", 1e-3), ("arcs", 1e-2)]
def run(s, v):
    BFS.wants_frontier_arcs = off if v[0] == "estimate" else keep
    r = mgraph.bfs(g, s, direction="auto", devices=2, do_a=v[1])
    BFS.wants_frontier_arcs = keep
    return r.stats["elapsed_s"] * 1e3, "".join("P" if d == "pull" else "s" for d in r.stats["directions"]), \
        round(sum(sum(d["bytes"]) for d in r.stats["per_device"]) / 1e6, 1)
mgraph.bfs(g, srcs[0], direction="auto", devices=2)
tot = {v: [] for v in V}
for s in srcs:
    t = {v: [] for v in V}
    for rep in range(6):
        for v in (V if rep % 2 else V[::-1]):
            t[v].append(run(s, v))
    line = []
    for v, xs in t.items():
        m = float(np.median([x[0] for x in xs])); tot[v].append(m)
        line.append(f"{v[0]}@{v[1]:g} {xs[0][1]} {xs[0][2]}MB {m:.2f}")
    print(s, " | ".join(line), flush=True)
print("sum of medians", {f"{k[0]}@{k[1]:g}": round(sum(x), 1) for k, x in tot.items()})

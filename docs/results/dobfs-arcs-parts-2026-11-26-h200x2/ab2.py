import sys, numpy as np, cupy as cp, mgraph
from mgraph.primitives.bfs import BFS
g = mgraph.load(sys.argv[1])
deg = cp.diff(g.indptr).get()
srcs = np.random.default_rng(7).choice(np.flatnonzero(deg > 0), int(sys.argv[2]), replace=False).tolist()
keep, off = BFS.wants_frontier_arcs, property(lambda self: False)
K = ("compute_s", "package_s", "push_s", "wait_s", "combine_s")
def run(s, rule):
    BFS.wants_frontier_arcs = off if rule == "estimate" else keep
    r = mgraph.bfs(g, s, direction="auto", devices=2)
    BFS.wants_frontier_arcs = keep
    per = r.stats["per_device"]
    steps = [round(1e3 * max(sum(d[k][i] for k in K) for d in per), 2) for i in range(len(per[0]["frontier"]))]
    return r.stats["elapsed_s"] * 1e3, "".join("P" if d == "pull" else "s" for d in r.stats["directions"]), steps, \
        round(sum(sum(d["bytes"]) for d in per) / 1e6, 1)
mgraph.bfs(g, srcs[0], direction="auto", devices=2)
for s in srcs:
    a, e = run(s, "arcs"), run(s, "estimate")
    if a[1] == e[1]:
        print(s, "same", a[1], flush=True)
        continue
    t = {"arcs": [], "estimate": []}
    for rep in range(8):
        for rule in (("arcs", "estimate") if rep % 2 else ("estimate", "arcs")):
            x = run(s, rule)
            t[rule].append(x)
    for rule, xs in t.items():
        print(s, rule, xs[0][1], "MB", xs[0][3], "median ms", round(float(np.median([x[0] for x in xs])), 2),
              "all", sorted(round(x[0], 1) for x in xs), "per superstep (median)",
              np.median(np.array([x[2] for x in xs]), axis=0).round(2).tolist(), flush=True)

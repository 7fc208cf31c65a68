import sys, mgraph
from mgraph.primitives.bfs import BFS
g = mgraph.load(sys.argv[1])
srcs = [int(s) for s in sys.argv[2].split(",")]
keep, it = BFS.wants_frontier_arcs, BFS.iterate
off = property(lambda self: False)
def blind(self, frontier):  # counts, but the rule does not read the count
    a = self.frontier_arcs; self.frontier_arcs = None
    try:
        return it(self, frontier)
    finally:
        self.frontier_arcs = a
mgraph.bfs(g, srcs[0], direction="auto", devices=2)
for s in srcs:
    res = {}
    for rep in range(int(sys.argv[3])):
        for rule in (("estimate", "count_only", "arcs") if rep % 2 == 0 else ("arcs", "count_only", "estimate")):
            BFS.wants_frontier_arcs = off if rule == "estimate" else keep
            BFS.iterate = blind if rule == "count_only" else it
            r = mgraph.bfs(g, s, direction="auto", devices=2)
            res.setdefault(rule, []).append(round(r.stats["elapsed_s"] * 1e3, 1))
            res[rule + "_d"] = "".join("P" if d == "pull" else "s" for d in r.stats["directions"])
    BFS.wants_frontier_arcs, BFS.iterate = keep, it
    print(s, res, flush=True)

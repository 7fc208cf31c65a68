"""Single-source shortest paths (non-negative weights) with a shortest-path tree."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive


class SSSP(Primitive):
    """Frontier Bellman-Ford, then the predecessor tree from the final distances.

    Building the tree after the distances are final (instead of recording the
    last relaxer) keeps it a tree even across zero-weight cycles.  Where every
    weight is positive, one pull over in-arcs gives each vertex the tail of its
    first tight in-arc (dist[u] + w == dist[v]): distances fall strictly along
    those arcs, so they form a tree.  With a zero weight the tree is walked from
    the source instead, a BFS over tight arcs that claims each vertex once.

    On a CPU holding the whole graph (one device, compiled kernels) a run
    that is still relaxing after ``DIJKSTRA_AFTER`` rounds (a long-diameter
    graph, which would take thousands) finishes its distances with
    Dijkstra's algorithm in one compiled call (``ops.whole_graph_kernel``),
    from the frontier and the distances the rounds left; a power-law graph,
    whose rounds are few and wide, relaxes to the end, which there is faster
    than Dijkstra's heap (R-MAT 19: 300 against 458 ms).  The tree is then
    built as above.  Several devices, MPI ranks, GPUs and the NumPy twins
    relax frontiers to the end.
    """

    #: relaxation rounds (levels) after which a run on a whole graph on a CPU finishes with Dijkstra's algorithm
    DIJKSTRA_AFTER = 64

    name = "sssp"
    vertex_valued = ("predecessor",)
    needs_source = True
    global_mins = ("weight_floor",)  # the smallest weight of the whole graph: whether the one-pull tree applies

    def __init__(self, graph):
        super().__init__(graph)
        self.rgraph = graph.reverse()
        w = graph.weights
        # read once per graph, before the runs' clock starts; no arcs, no weight (inf)
        self._floor = (1.0 if w is None else float(w.min())) if graph.num_arcs else np.inf

    @property
    def combine(self):
        return {"distance": "min"} if self.phase == "relax" else {"label": "min"}

    @property
    def reads_proxies(self):
        """Relaxing pushes, so a stale copy only lets a useless relaxation through (its owner drops it); the tree
        compares distances across arcs, so copies must agree then (the framework brings them up to date)."""
        return self.phase != "relax"

    @property
    def carry(self):
        return () if self.phase == "relax" else ("predecessor",)

    def reset(self, source=None):
        xp, n = self.xp, self.num_vertices
        self.source = source
        self.distance = xp.full(n, np.inf, dtype=np.float64)
        self.label = ops.unvisited(self.graph, np.int32)
        self.marks = xp.zeros(n, dtype=np.int32)
        self.predecessor = ops.unvisited(self.graph, self.graph.indices.dtype)
        self.phase = "relax"
        self.tree_level = 0
        self.weight_floor = self._floor
        self._dijkstra = ops.whole_graph_kernel(self.graph, "shortest_distances")
        return ops.start_at(self.graph, source, (self.distance, 0.0))

    def iterate(self, frontier):
        if self.phase == "relax":  # small frontiers relax several rounds at once on one device
            rounds = 1 << 30
            if self._dijkstra is not None:  # the whole graph on a CPU: a long relaxation ends in Dijkstra's
                if self.step >= self.DIJKSTRA_AFTER:
                    self._dijkstra(self.graph, frontier, self.distance)
                    return self.frontier_of(None)
                rounds = self.DIJKSTRA_AFTER - self.step
            r = ops.advance_levels(self.graph, frontier, ops.functors.RELAX, self.distance, self.marks,
                                   self.step + 1, level="stamp", max_levels=rounds)
            self.step += r.levels - 1
            return r.frontier
        self.tree_level += 1
        return ops.advance_visit(self.graph, frontier, self.label, self.predecessor, self.tree_level,
                                 dist=self.distance)

    def next_phase(self):
        """Distances are final everywhere: build the tree.  With positive weights, first one empty superstep so
        that copies of the relaxed distances are brought up to date, then one pull; else a walk of the tight arcs
        from the source."""
        if self.phase == "tree":
            return None
        if self.phase == "pull":
            ops.tight_predecessors(self.rgraph, self.distance, self.predecessor)
            return None
        self.phase = "pull" if self.weight_floor > 0 else "tree"
        if self.source is not None:
            self.label[self.source] = 0
            self.predecessor[self.source] = self.source
        return self.frontier_of(None if self.phase == "pull" else self.source)

    def result(self):
        return {"distance": self.distance, "predecessor": self.predecessor}

"""Single-source shortest paths (non-negative weights) with a shortest-path tree."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class SSSP(Primitive):
    """Frontier Bellman-Ford, then a BFS over tight arcs for the predecessor tree.

    Building the tree after the distances are final (instead of recording the
    last relaxer) keeps it a tree even across zero-weight cycles: a vertex is
    claimed once, from a vertex already in the tree, along an arc with
    dist[u] + w == dist[v].
    """

    name = "sssp"
    vertex_valued = ("predecessor",)
    needs_source = True

    @property
    def combine(self):
        return {"distance": "min"} if self.phase == "relax" else {"label": "min"}

    @property
    def reads_proxies(self):
        """Relaxing pushes, so a stale copy only lets a useless relaxation through (its owner drops it); the tree
        walk compares distances across arcs, so copies must agree then (the framework brings them up to date)."""
        return self.phase == "tree"

    @property
    def carry(self):
        return () if self.phase == "relax" else ("predecessor",)

    def reset(self, source=None):
        xp, n = self.xp, self.num_vertices
        self.source = source
        self.distance = xp.full(n, np.inf, dtype=np.float64)
        self.label = xp.full(n, ops.UNVISITED, dtype=np.int32)
        self.marks = xp.zeros(n, dtype=np.int32)
        self.predecessor = xp.full(n, ops.UNVISITED, dtype=self.graph.indices.dtype)
        if source is not None:
            self.distance[source] = 0.0
        self.phase = "relax"
        self.tree_level = 0
        return self.frontier_of(source)

    def iterate(self, frontier):
        if self.phase == "relax":
            return ops.advance_relax(self.graph, frontier, self.distance, self.marks, self.step + 1)
        self.tree_level += 1
        return ops.advance_visit(self.graph, frontier, self.label, self.predecessor, self.tree_level,
                                 dist=self.distance)

    def next_phase(self):
        """Distances are final everywhere: walk the tight arcs from the source to build the tree."""
        if self.phase == "tree":
            return None
        self.phase = "tree"
        if self.source is not None:
            self.label[self.source] = 0
            self.predecessor[self.source] = self.source
        return self.frontier_of(self.source)

    def result(self):
        return {"distance": self.distance, "predecessor": self.predecessor}

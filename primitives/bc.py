"""Betweenness centrality: Brandes' forward path counting and backward dependency accumulation."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class BC(Primitive):
    """Per source: a BFS that counts shortest paths (sigma), then levels in reverse accumulating delta.

    ``centrality`` accumulates over successive sources (each reset is one
    source); undirected graphs count each pair from both ends, so their sum is
    halved, as networkx does for normalized=False.
    """

    name = "bc"
    combine = {"depth": "min", "sigma": "sum", "delta": "sum"}
    needs_source = True

    def __init__(self, graph):
        super().__init__(graph)
        self.centrality = self.xp.zeros(self.num_vertices, dtype=np.float64)

    def reset(self, source=None):
        xp, n = self.xp, self.num_vertices
        self.source = source
        self.depth = xp.full(n, ops.UNVISITED, dtype=np.int32)
        self.sigma = xp.zeros(n, dtype=np.float64)
        self.delta = xp.zeros(n, dtype=np.float64)
        self.depth[source] = 0
        self.sigma[source] = 1.0
        first = self.frontier_of(source)
        self.levels = [first]
        self.phase = "forward"
        return first

    def iterate(self, frontier):
        if self.phase == "forward":
            new = ops.advance_count_paths(self.graph, frontier, self.depth, self.sigma, len(self.levels))
            if len(new):
                self.levels.append(new)
                return new
            self.phase = "backward"
            self.back_level = len(self.levels) - 1
        # backward: the deepest level has no successors; walk up from the one above it
        self.back_level -= 1
        if self.back_level < 0:
            self._accumulate()
            return self.levels[0][:0]
        ops.advance_dependency(self.graph, self.levels[self.back_level], self.depth, self.sigma, self.delta,
                               self.back_level)
        return self.levels[self.back_level]

    def _accumulate(self):
        self.delta[self.source] = 0.0
        self.centrality += self.delta * (1.0 if self.graph.directed else 0.5)

    def result(self):
        return {"centrality": self.centrality}

"""Betweenness centrality: Brandes' forward path counting and backward dependency accumulation."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive


class BC(Primitive):
    """Per source: a BFS that counts shortest paths (sigma), then levels in reverse accumulating delta.

    ``centrality`` accumulates over successive sources (each reset is one
    source); undirected graphs count each pair from both ends, so their sum is
    halved, as networkx does for normalized=False.  The forward phase keeps
    each level's frontier as it arrives, so the backward phase walks exactly
    the vertices that were on each level.
    """

    name = "bc"
    needs_source = True

    def __init__(self, graph):
        super().__init__(graph)
        self.centrality = self.xp.zeros(self.num_vertices, dtype=np.float64)
        self.phase = "forward"

    @property
    def combine(self):
        # path counts from several predecessors add up; a level's dependencies are final where computed
        return {"depth": "min", "sigma": "sum"} if self.phase == "forward" else {"delta": "sum"}

    def reset(self, source=None):
        xp, n = self.xp, self.num_vertices
        self.source = source
        self.depth = ops.unvisited(self.graph, np.int32)
        self.sigma = xp.zeros(n, dtype=np.float64)
        self.delta = xp.zeros(n, dtype=np.float64)
        self.levels = []
        self.phase = "forward"
        return ops.start_at(self.graph, source, (self.depth, 0), (self.sigma, 1.0))

    def iterate(self, frontier):
        if self.phase == "forward":
            self.levels.append(frontier)
            return ops.advance_count_paths(self.graph, frontier, self.depth, self.sigma, len(self.levels))
        level = self.back_level
        ops.advance_dependency(self.graph, self.levels[level], self.depth, self.sigma, self.delta, level)
        self.back_level -= 1
        return self.levels[level]

    def frontier_values(self):
        # a forward level's vertices all hold its depth (the backward sweep's deltas differ)
        return {"depth": len(self.levels)} if self.phase == "forward" else {}

    def converged(self, frontier):
        return len(frontier) == 0 if self.phase == "forward" else self.back_level < 0

    def next_phase(self):
        if self.phase == "forward":
            # the deepest level has no successors; walk up from the one above it.  A run from no vertex (the sum
            # over no sources, or an empty graph) iterated no level: back_level < 0 ends the backward sweep at once
            self.phase = "backward"
            self.back_level = len(self.levels) - 2
            return self.frontier_of(None)
        if self.source is not None:
            self.delta[self.source] = 0.0
        self.centrality += self.delta * (1.0 if self.graph.directed else 0.5)
        return None

    def result(self):
        return {"centrality": self.centrality}

"""Breadth-first search with predecessors; push, pull, or direction-optimizing."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive

DIRECTIONS = ops.direction.MODES


class BFS(Primitive):
    """Level-synchronous BFS: each level's frontier visits its unvisited neighbours.

    ``direction`` is the visit's (:class:`mgraph.ops.Direction`): "push",
    "pull", or "auto", the seed paper's direction-optimizing switch with
    thresholds ``do_a`` (None: the backend's, ``ops.direction.DO_A_GPU`` or
    ``DO_A_CPU``) and ``do_b``.
    """

    name = "bfs"
    combine = {"depth": "min"}
    carry = ("predecessor",)
    vertex_valued = ("predecessor",)
    needs_source = True

    def __init__(self, graph, direction="push", do_a=None, do_b=0.1):
        super().__init__(graph)
        self.direction = ops.Direction(graph, direction, do_a, do_b)
        self.reads_proxies = self.direction.reads_proxies

    @property
    def directions(self):
        """The direction of every level so far."""
        return self.direction.directions

    def reset(self, source=None):
        self.depth = ops.unvisited(self.graph, np.int32)
        self.predecessor = ops.unvisited(self.graph, self.graph.indices.dtype)
        self.level = 0  # the depth of every vertex of the last returned frontier
        self.direction.reset()
        return ops.start_at(self.graph, source, (self.depth, 0), (self.predecessor, source))

    def iterate(self, frontier):
        r = ops.visit_levels(self.graph, frontier, self.depth, self.predecessor, self.step + 1,
                             direction=self.direction, frontier_total=self.frontier_total)
        self.step += r.levels - 1  # levels run beyond this superstep's own (small frontiers, one device)
        self.level = self.step + 1
        return r.frontier

    def frontier_values(self):
        return {"depth": self.level}

    def result(self):
        return {"depth": self.depth, "predecessor": self.predecessor}

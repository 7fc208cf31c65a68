"""Breadth-first search with predecessors; push, pull, or direction-optimizing."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive

DIRECTIONS = ("push", "pull", "auto")


class BFS(Primitive):
    """Level-synchronous BFS.

    ``direction="auto"`` is the seed paper's direction-optimizing rule, which
    needs only sizes the host already knows: with frontier Q, unvisited U and
    visited P, forward work FV = |Q|·|E|/|V| and backward work BV = |U|·|V|/|P|;
    switch to pull once when FV > BV·do_a, back to push when FV < BV·do_b.
    The seed tuned do_a = 0.01 on K40s; with these kernels on R-MAT, 1e-5
    switches one level earlier and measured faster (docs/perf-notes.md).
    """

    name = "bfs"
    combine = {"depth": "min"}
    carry = ("predecessor",)
    vertex_valued = ("predecessor",)
    needs_source = True

    def __init__(self, graph, direction="push", do_a=1e-5, do_b=0.1):
        super().__init__(graph)
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown direction {direction!r}: expected one of {', '.join(DIRECTIONS)}")
        if not do_a > 0 or not do_b > 0:
            raise ValueError(f"do_a and do_b must be positive, got {do_a}, {do_b}")
        self.direction, self.do_a, self.do_b = direction, float(do_a), float(do_b)
        self.reads_proxies = direction != "push"  # pulling tests in-neighbours against the whole frontier
        self.rgraph = graph.reverse() if direction != "push" else None

    def reset(self, source=None):
        self.depth = ops.unvisited(self.graph, np.int32)
        self.predecessor = ops.unvisited(self.graph, self.graph.indices.dtype)
        if source is not None:
            self.depth[source] = 0
            self.predecessor[source] = source
        self.visited = 0
        self.level = 0  # the depth of every vertex of the last returned frontier
        self.pulling = self.direction == "pull"
        self.switched = False
        self.directions = []
        return self.frontier_of(source)

    def _choose_direction(self, frontier_size):
        # whole-graph sizes, so that every device of a run takes the same direction
        n, m = self.graph.num_global_vertices, max(self.graph.num_global_arcs, 1)
        forward = frontier_size * m / n
        backward = (n - self.visited) * n / max(self.visited, 1)
        if not self.pulling and not self.switched and forward > backward * self.do_a:
            self.pulling, self.switched = True, True
        elif self.pulling and forward < backward * self.do_b:
            self.pulling = False

    def iterate(self, frontier):
        level = self.level = self.step + 1
        self.visited += self.frontier_total
        if self.direction == "auto":
            self._choose_direction(self.frontier_total)
        if self.pulling:
            bits = ops.bitmap(frontier, self.num_vertices)
            new = ops.advance_visit_pull(self.rgraph, self.depth, self.predecessor, level, bits)
        elif self.direction == "push":  # small frontiers run several levels at once on one device
            r = ops.advance_levels(self.graph, frontier, ops.functors.VISIT, self.depth, self.predecessor, level,
                                   level="level")
            self.step += r.levels - 1
            self.level = level + r.levels - 1
            self.directions.extend(["push"] * r.levels)
            return r.frontier
        else:
            new = ops.advance_visit(self.graph, frontier, self.depth, self.predecessor, level)
        self.directions.append("pull" if self.pulling else "push")
        return new

    def frontier_values(self):
        return {"depth": self.level}

    def result(self):
        return {"depth": self.depth, "predecessor": self.predecessor}

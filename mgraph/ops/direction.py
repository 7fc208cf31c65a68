"""Which way a traversal's advance goes each superstep: push out of the frontier, or pull into the unvisited.

The choice is the operator's, not the primitive's (Ligra's edgeMap makes it
the same way): a primitive creates one :class:`Direction` and hands it to the
advance with the whole frontier's size each superstep.  The rule reads only
whole-graph totals, so every device of a run takes the same direction.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

MODES = ("push", "pull", "auto")
# do_a where the caller gives none: on a GPU, 1e-5 switches to pulling one level before the seed's 0.01 on R-MAT and
# measured faster; on the CPU both switch at the same level of R-MAT, while on a grid 1e-5 pulls once mid-traversal,
# a pass over every unvisited vertex to find a few hundred, which a CPU pays in full (docs/perf-notes.md)
DO_A_GPU = 1e-5
DO_A_CPU = 1e-2


def _positive(value, what: str) -> float:
    """``value`` as a float where it is a finite positive real number (bools refused)."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
            or not value > 0):
        raise ValueError(f"{what} must be a finite positive real number, got {value!r}")
    return float(value)


class Direction:
    """A traversal's direction policy: ``mode`` "push", "pull", or "auto" (direction-optimizing).

    "auto" is the seed paper's rule (after Beamer et al.), from sizes the host
    already knows: with frontier Q, unvisited U and visited P of the whole
    graph, forward work FV = |Q|·|E|/|V| and backward work BV = |U|·|V|/|P|;
    switch to pull once when FV > BV·do_a, back to push when FV < BV·do_b.
    The seed tuned do_a = 0.01 on K40s; with these kernels on R-MAT, 1e-5
    switches one level earlier and measured faster on a GPU, so ``do_a`` None
    is ``DO_A_GPU`` (1e-5) on a GPU and the seed's ``DO_A_CPU`` (0.01) on the
    CPU, where a pull that finds little costs a pass over the unvisited
    vertices (docs/perf-notes.md).

    ``directions`` lists the direction of every superstep since ``reset``.
    Pulling reads the in-neighbours of unvisited vertices, so a primitive that
    may pull declares ``reads_proxies`` as this policy's.
    """

    def __init__(self, graph, mode="push", do_a=None, do_b=0.1):
        if not isinstance(mode, str) or mode not in MODES:
            raise ValueError(f"unknown direction {mode!r}: expected one of {', '.join(MODES)}")
        self.mode = mode
        if do_a is None:
            do_a = DO_A_CPU if graph.xp is np else DO_A_GPU
        self.do_a, self.do_b = _positive(do_a, "do_a"), _positive(do_b, "do_b")
        self.num_vertices = graph.num_global_vertices
        self.num_arcs = max(graph.num_global_arcs, 1)
        if mode != "push":
            graph.reverse()  # the in-arcs a pull walks, built with the primitive rather than in its first run
        self.reset()

    @property
    def reads_proxies(self) -> bool:
        return self.mode != "push"

    def reset(self):
        """A new traversal: nothing visited yet, and the direction ``mode`` starts in."""
        self.visited = 0
        self.pulling = self.mode == "pull"
        self.switched = False
        self.directions = []

    def choose(self, frontier_total: int) -> str:
        """The direction of the superstep that expands a frontier of ``frontier_total`` vertices (all devices);
        the vertices of every frontier chosen for count as visited."""
        self.visited += frontier_total
        self.pulling, self.switched = self._rule(frontier_total, self.visited)
        way = "pull" if self.pulling else "push"
        self.directions.append(way)
        return way

    def next_way(self, frontier_total: int) -> str:
        """The direction :meth:`choose` would give a frontier of ``frontier_total`` vertices, without choosing."""
        return "pull" if self._rule(frontier_total, self.visited + frontier_total)[0] else "push"

    def _rule(self, frontier_total, visited):
        """(pulling, switched) after a frontier of ``frontier_total`` vertices, ``visited`` counting it."""
        pulling, switched = self.pulling, self.switched
        if self.mode == "auto":
            n = self.num_vertices
            forward = frontier_total * self.num_arcs / n
            backward = (n - visited) * n / max(visited, 1)
            if not pulling and not switched and forward > backward * self.do_a:
                pulling, switched = True, True
            elif pulling and forward < backward * self.do_b:
                pulling = False
        return pulling, switched

    def took(self, ways, visited: int):
        """Levels chose ``ways`` ("push" or "pull", in order) on the device by this policy's rule, starting from its
        state, and their frontiers brought the visited count to ``visited``: the state :meth:`choose` would have
        left."""
        self.directions.extend(ways)
        self.visited = visited
        if ways:
            self.pulling = ways[-1] == "pull"
            self.switched = self.switched or "pull" in ways

    def took_switching(self, levels: int, first_pull: int, first_push: int, visited: int):
        """:meth:`took` for ``levels`` levels a kernel ran by this policy's rule, which records only where they switched:
        ``first_pull`` the first that pulled and ``first_push`` the first that pushed after pulling, each plus one
        (0: none), the levels before the first switch going this policy's way."""
        ways, pulling = [], self.pulling
        for it in range(levels):
            if it + 1 == first_pull:
                pulling = True
            elif it + 1 == first_push:
                pulling = False
            ways.append("pull" if pulling else "push")
        self.took(ways, visited)

    def pushes_to_the_end(self) -> bool:
        """Whether every level from here on pushes: "push", or "auto" once it has switched to pull and back (it
        switches to pull once), so that levels may run several at a time without asking again."""
        return self.mode == "push" or (self.mode == "auto" and self.switched and not self.pulling)

    def pushed(self, levels: int, visited: int):
        """``levels`` more push levels ran without asking (fused), and their frontiers held ``visited`` vertices."""
        self.visited += visited
        self.directions.extend(["push"] * levels)

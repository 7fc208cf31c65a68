"""The primitive contract: what a programmer writes, and nothing about devices.

A primitive is a single-device program over one graph.  It declares what the
seed paper says a programmer must: the per-superstep iteration (written with
:mod:`mgraph.ops` only), the per-vertex values that travel with remote
vertices (``combine`` and ``carry``), how received values combine with local
ones, and the stop condition.  The enactor owns the loop, the timing and,
with several devices, the exchange.
"""
from __future__ import annotations


class Primitive:
    """Base class.  Subclasses set ``name`` and implement reset/iterate/result."""

    name = "primitive"
    #: per-vertex arrays merged when copies of a vertex meet: {"depth": "min"}; "min"|"max"|"sum"|callable
    combine: dict = {}
    #: per-vertex arrays sent along with each remote vertex, taken from the sender
    carry: tuple = ()
    #: True when the run starts from one source vertex
    needs_source = False

    def __init__(self, graph):
        self.graph = graph
        self.xp = graph.xp
        self.num_vertices = graph.num_vertices
        self.step = 0

    def reset(self, source=None):
        """Initialise per-vertex state; return the first frontier."""
        raise NotImplementedError

    def iterate(self, frontier):
        """One superstep on one device; return the next frontier."""
        raise NotImplementedError

    def converged(self, frontier) -> bool:
        """Local stop condition: by default, an empty frontier."""
        return len(frontier) == 0

    def result(self) -> dict:
        """Per-vertex results (arrays on the device) by name."""
        raise NotImplementedError

    def frontier_of(self, vertices):
        """A frontier array of ``vertices`` in this graph's id type."""
        return self.xp.asarray(vertices, dtype=self.graph.indices.dtype).reshape(-1)

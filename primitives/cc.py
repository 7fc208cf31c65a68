"""Weakly connected components: union-find over the arcs here, then the smallest label spreads between copies."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class CC(Primitive):
    """Labels each vertex with the smallest vertex id (caller's numbering) of its weakly connected component.

    Union-find over the arcs this graph holds (out-arcs and, for a directed
    graph, in-arcs; an edge between two own vertices once) gives local trees;
    each tree takes the smallest label of its members.  On one whole graph
    that is already the answer (hooking puts the larger root under the
    smaller, so every root is its component's smallest id); on a part of a
    graph, labels lowered elsewhere arrive as changed copies and spread
    through the local trees until nothing changes.
    """

    name = "cc"
    combine = {"label": "min"}

    def reset(self, source=None):
        self.parent = self.xp.arange(self.num_vertices, dtype=np.int64)
        own = self.graph.own_below  # an edge between two of them is here both ways: hooked once
        ops.hook_components(self.graph, self.parent, own)
        if self.graph.directed:  # an arc into an own vertex from a copy is stored only in the reverse
            ops.hook_components(self.graph.reverse(), self.parent, own)
        ops.compress(self.parent)
        self.label = self.graph.vertex_ids.astype(np.int64)
        return self._spread()

    def _spread(self):
        """Give every tree its smallest label; the vertices whose label dropped."""
        xp = self.xp
        smallest = ops.segment_min(self.parent, self.label, self.label)[self.parent]
        changed = xp.flatnonzero(smallest < self.label)
        self.label = smallest
        return changed.astype(self.graph.indices.dtype)

    def iterate(self, frontier):
        return self._spread()

    def result(self):
        return {"labels": self.label}

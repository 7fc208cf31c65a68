"""Weakly connected components: union-find over the arcs here, then the smallest label spreads between copies."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class CC(Primitive):
    """Labels each vertex with the smallest vertex id (caller's numbering) of its weakly connected component.

    Union-find over the arcs this graph holds (out-arcs and, for a directed
    graph, in-arcs; an edge between two own vertices once; on a whole graph,
    sampled first, see ``_hook_sampled``) gives local trees;
    each tree takes the smallest label of its members.  On one whole graph
    that is already the answer (hooking puts the larger root under the
    smaller, so every root is its component's smallest id); on a part of a
    graph, labels lowered elsewhere arrive as changed copies and spread
    through the local trees until nothing changes.
    """

    name = "cc"
    combine = {"label": "min"}
    SAMPLED_ARCS = 2  # arcs per row hooked before the largest tree is picked (Afforest's neighbour rounds)
    SAMPLE = 1024  # vertices whose roots pick the largest tree

    def reset(self, source=None):
        g = self.graph
        self.parent = self.xp.arange(self.num_vertices, dtype=np.int64)
        if g.own_vertices.shape[0] == self.num_vertices:  # a whole graph: every arc is here both ways
            self._hook_sampled()
        else:
            own = g.own_below  # an edge between two of them is here both ways: hooked once
            ops.hook_components(g, self.parent, own)
            if g.directed:  # an arc into an own vertex from a copy is stored only in the reverse
                ops.hook_components(g.reverse(), self.parent, own)
        ops.compress(self.parent)
        self.label = self.graph.vertex_ids.astype(np.int64)
        return self._spread()

    def _hook_sampled(self):
        """Afforest: hook each row's first arcs, pick the largest tree from a sample of roots, then hook the other
        arcs of the rows outside it (and of a directed graph every in-arc of those rows, so that an arc leaving the
        largest tree is hooked from its head).  A part of a graph lacks the other end's row of its arcs to
        proxies, so it hooks every arc instead."""
        g, parent = self.graph, self.parent
        for r in range(self.SAMPLED_ARCS):
            ops.hook_components(g, parent, arcs=(r, r + 1))
        ops.compress(parent)
        step = max(1, self.num_vertices // self.SAMPLE)
        roots, counts = self.xp.unique(parent[::step], return_counts=True)
        largest = int(roots[int(counts.argmax())]) if roots.shape[0] else None
        ops.hook_components(g, parent, arcs=(self.SAMPLED_ARCS, None), skip=largest)
        if g.directed:
            ops.hook_components(g.reverse(), parent, skip=largest)

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

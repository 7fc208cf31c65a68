"""Weakly connected components: union-find over the arcs here, then the smallest label spreads between copies."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive


class CC(Primitive):
    """Labels each vertex with the smallest vertex id (caller's numbering) of its weakly connected component.

    Union-find over the arcs this graph holds (out-arcs and, for a directed
    graph, in-arcs), sampled first (Afforest, see ``next_phase``), gives local
    trees; each tree takes the smallest label of its members.  On one whole
    graph that is already the answer (hooking puts the larger root under the
    smaller, so every root is its component's smallest id); on a part of a
    graph, labels lowered elsewhere arrive as changed copies and spread
    through the local trees until nothing changes.
    """

    name = "cc"
    combine = {"label": "min"}
    SAMPLED_ARCS = 2  # arcs per row hooked before the hub's tree is known (Afforest's neighbour rounds)
    PIVOT_ID_BITS = 40  # a pivot key is (63 - log2 degree bucket) * 2**40 + caller id: exact in a float64

    def __init__(self, graph):
        super().__init__(graph)
        self.phase = None
        self._pivot = self._pivot_key()  # once per graph, before the runs' clock starts

    def _pivot_key(self):
        """This graph's candidate hub, as a key whose minimum over all devices names the smallest id among the
        vertices of the top degree bucket (degrees within a factor 2 of the largest): own rows only, since only
        their degrees are whole here; inf where no own vertex has an arc."""
        g = self.graph
        own = g.own_vertices
        if own.shape[0] == 0 or g.num_arcs == 0:
            return np.inf
        degree = (g.indptr[own + 1] - g.indptr[own])
        top = int(degree.max())
        if top == 0:
            return np.inf
        bucket = top.bit_length() - 1
        hub = int(g.vertex_ids[own[degree >= (1 << bucket)]].min())
        if hub >= 1 << self.PIVOT_ID_BITS:
            return np.inf  # beyond the key's id bits: no hub, every arc is hooked
        return float((63 - bucket) * (1 << self.PIVOT_ID_BITS) + hub)

    @property
    def global_mins(self):
        """The hub whose tree every device leaves out of the full hooking, agreed once, after the sample."""
        return ("pivot",) if self.phase == "sample" else ()

    def reset(self, source=None):
        """Hook each own row's first arcs, and propose a hub: every device learns the pivot before hooking the rest."""
        g = self.graph
        self.parent = self.xp.arange(self.num_vertices, dtype=np.int64)
        self.label = g.vertex_ids.astype(np.int64)
        for r in range(self.SAMPLED_ARCS):
            ops.hook_components(g, self.parent, arcs=(r, r + 1))
        self.pivot = self._pivot
        self.phase = "sample"
        return self.frontier_of(None)

    def next_phase(self):
        """Afforest (Sutton et al. 2018) across devices: hook the other arcs of the rows outside the pivot's tree
        (and, of a directed graph, every in-arc of those rows).  An arc u - v left out has u in the pivot's tree
        where u's row is and v in it where v's row is (the other end's row, or its in-arcs); those trees meet at
        the pivot's copies, so u and v are one component without it.  A device that does not hold the pivot
        hooks every arc.  Then labels spread."""
        if self.phase != "sample":
            return None
        g, parent = self.graph, self.parent
        ops.compress(parent)
        skip = None
        if np.isfinite(self.pivot):
            local = g.local_id(int(self.pivot) % (1 << self.PIVOT_ID_BITS))
            skip = None if local is None else int(parent[local])
        ops.hook_components(g, parent, arcs=(self.SAMPLED_ARCS, None), skip=skip)
        if g.directed:
            ops.hook_components(g.reverse(), parent, skip=skip)
        ops.compress(parent)
        self.phase = "spread"
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

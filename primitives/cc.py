"""Weakly connected components: union-find over the own vertices' arcs, then the smallest label spreads."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive


class CC(Primitive):
    """Labels each vertex with the smallest vertex id (caller's numbering) of its weakly connected component.

    Union-find over the arcs of the own vertices (out-arcs and, for a directed
    graph, in-arcs), sampled first (Afforest, see ``next_phase``), gives
    trees; each tree takes the smallest label of its members.  With every
    vertex own that is already the answer (hooking puts the larger root under
    the smaller, so every root is its component's smallest id); else labels
    lowered at copies arrive (``combine`` min) and spread through the trees
    until nothing changes.

    On a CPU holding the whole graph (one device, compiled kernels) the same
    hooking runs in one call (``ops.whole_graph_kernel``): its roots are the
    labels, with no spreading to do, and every step of it — the trees'
    start, the hooks, the pointer jumping — runs on the run's threads, where
    the NumPy steps between the hooks would run on one.  Several devices, MPI
    ranks, GPUs and the NumPy twins run the phases above.
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
        """The candidate hub among the own vertices (whose degrees are whole), as a key whose minimum over the
        graph (``global_mins``) names the smallest id among the vertices of the top degree bucket (degrees within
        a factor 2 of the largest); inf where no own vertex has an arc."""
        g = self.graph
        degree = g.own(g.out_degree())
        top = int(degree.max()) if degree.shape[0] and g.num_arcs else 0
        if top == 0:
            return np.inf
        bucket = top.bit_length() - 1
        hub = int(g.own(g.vertex_ids)[degree >= (1 << bucket)].min())
        if hub >= 1 << self.PIVOT_ID_BITS:
            return np.inf  # beyond the key's id bits: no hub, every arc is hooked
        return float((63 - bucket) * (1 << self.PIVOT_ID_BITS) + hub)

    @property
    def global_mins(self):
        """The hub whose tree the full hooking leaves out, agreed once, after the sample."""
        return ("pivot",) if self.phase == "sample" else ()

    def reset(self, source=None):
        """Hook each own row's first arcs, and propose a hub, agreed on before the rest is hooked."""
        g = self.graph
        find = ops.whole_graph_kernel(g, "connected_components")
        if find is not None:  # the whole graph on a CPU: every label final after one call
            hub = int(self._pivot) % (1 << self.PIVOT_ID_BITS) if np.isfinite(self._pivot) else None
            self.parent = self.label = find(g, self.SAMPLED_ARCS, hub)
            self.phase = "whole"
            return self.frontier_of(None)
        self.parent = self.xp.arange(self.num_vertices, dtype=np.int64)
        self.label = g.vertex_ids.astype(np.int64)
        for r in range(self.SAMPLED_ARCS):
            ops.hook_components(g, self.parent, arcs=(r, r + 1))
        self.pivot = self._pivot
        self.phase = "sample"
        return self.frontier_of(None)

    def next_phase(self):
        """Afforest (Sutton et al. 2018): hook the other arcs of the rows outside the pivot's tree (and, of a
        directed graph, every in-arc of those rows).  An arc u - v left out has u in the pivot's tree where u's row
        is and v in it where v's row is (the other end's row, or its in-arcs); those trees meet at the pivot's
        copies, so u and v are one component without it.  Then labels spread."""
        if self.phase != "sample":
            return None
        g, parent = self.graph, self.parent
        ops.compress(parent)
        pivot = int(self.pivot) % (1 << self.PIVOT_ID_BITS) if np.isfinite(self.pivot) else None
        skip = ops.tree_of(g, parent, pivot)
        ops.hook_components(g, parent, arcs=(self.SAMPLED_ARCS, None), skip=skip)
        if g.directed:
            ops.hook_components(g.reverse(), parent, skip=skip)
        ops.compress(parent)
        self.phase = "spread"
        self.tree_min = self.label.copy()  # each tree's smallest label, at its root
        return ops.tree_spread(g, parent, self.label, self.tree_min)

    def iterate(self, frontier):
        """Labels lowered at copies (the frontier) lower their trees' minima, which spread through the trees."""
        return ops.tree_spread(self.graph, self.parent, self.label, self.tree_min, lowered=frontier)

    def result(self):
        return {"labels": self.label}

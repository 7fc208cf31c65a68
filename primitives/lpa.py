"""Semi-synchronous label propagation (networkx.algorithms.community.label_propagation_communities)."""
from __future__ import annotations

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive, owners_value


class LabelPropagation(Primitive):
    """``labels``: each vertex's community label, the communities that networkx's semi-synchronous label
    propagation finds (Cordasco and Gargano), each labelled by the id of the vertex whose starting label it kept.

    Every vertex starts with its own id.  The vertices are greedily coloured
    in networkx's order (largest degree first, then smallest id), so that no
    two neighbours share a colour; then, colour class by colour class, each
    vertex takes the most frequent label among its neighbours, keeping its own
    where that is among the most frequent and else taking the largest.  A
    round that starts with every vertex's label among its most frequent ends
    the run.

    The colouring is Jones-Plassmann's with that order as priorities: a vertex
    takes the smallest colour its neighbours lack once every neighbour ahead
    of it in the order has one, which gives exactly the sequential greedy
    colouring.  Its supersteps follow the longest chain of neighbours in
    decreasing order (short on power-law graphs, the grid's width plus height
    on a grid).
    """

    name = "label_propagation"
    combine = {"priority": owners_value, "color": owners_value, "label": owners_value}
    global_sums = ("waiting", "later", "unsettled")

    def __init__(self, graph):
        if graph.directed:
            raise ValueError("label propagation runs on undirected graphs, and this graph is directed "
                             "(networkx's label_propagation_communities refuses directed graphs too)")
        super().__init__(graph)

    def reset(self, source=None):
        g, xp = self.graph, self.xp
        own, ids = g.own_vertices, g.vertex_ids.astype(np.int64)
        n = max(g.num_global_vertices, 1)
        # networkx's greedy order, largest degree first and then the smaller id, as one number (larger: earlier)
        self.priority = g.out_degree().astype(np.int64) * n + (n - 1 - ids)
        self.color = xp.full(self.num_vertices, -1, dtype=np.int64)
        self.label = ids.copy()
        self.coloring, self.checked, self.round_class = True, False, 0
        self.own = own
        self.waiting, self.later, self.unsettled = int(own.shape[0]), 1, 0
        return own  # the priorities reach the copies

    def iterate(self, frontier):
        return self._color() if self.coloring else self._propagate()

    def _color(self):
        g, xp = self.graph, self.xp
        left = self.own[self.color[self.own] < 0]
        ahead = ops.neighbor_reduce(g, xp.where(self.color < 0, self.priority, -1), "max", left, empty=-1)
        ready = left[ahead < self.priority[left]]
        self.color[ready] = ops.neighbor_reduce(g, self.color, "mex", ready)
        self.waiting = int(left.shape[0] - ready.shape[0])
        return ready

    def _propagate(self):
        g = self.graph
        if not self.checked and self.later == 0:  # a round ended everywhere: is every label among the most frequent?
            best = ops.neighbor_reduce(g, self.label, "mode", self.own, prefer=self.label)
            self.unsettled = int((best != self.label[self.own]).sum())
            self.checked, self.round_class, self.later = True, 0, 1
            return self.frontier_of(None)
        self.checked = False
        c = self.round_class
        group = self.own[self.color[self.own] == c]
        best = ops.neighbor_reduce(g, self.label, "mode", group, prefer=self.label)
        moved = group[best != self.label[group]]
        self.label[moved] = best[best != self.label[group]]
        self.later = int((self.color[self.own] > c).sum())
        self.round_class = c + 1
        return moved

    def converged(self, frontier):
        if self.coloring:
            return self.waiting == 0
        return self.checked and self.unsettled == 0

    def next_phase(self):
        if not self.coloring:
            return None
        self.coloring, self.later = False, 0  # the first superstep of propagation checks the starting labels
        return self.frontier_of(None)

    def result(self):
        return {"labels": self.label}

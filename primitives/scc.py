"""Strongly connected components: trimming, then forward colouring and a backward reach, round after round."""
from __future__ import annotations

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive

UNASSIGNED = -1


def _raise_color(u, v, w, color, label, marks, stamp):
    keep = (label[v] == UNASSIGNED) & (color[u] > color[v])
    np.maximum.at(color, v[keep], color[u[keep]])
    return ops.first_claims(v, keep)  # each raised target once


RAISE_COLOR = ops.Functor("scc_raise_color", "i64* color, const i64* label, int* marks, int stamp", r"""
        const long long c = color[u];
        if (label[v] == -1 && c > color[v]) {
            const long long old = atomicMax((long long*)&color[v], c);
            if (c > old && atomicExch(&marks[v], stamp) != stamp) emit = true;
        }
""", _raise_color)
"""Colouring: an unassigned out-neighbour takes the larger colour; marks[v] == stamp emits it once per superstep."""


def _reach(u, v, w, label, color):
    claim = ops.first_claims(v, (label[v] == UNASSIGNED) & (color[v] == color[u]))
    label[v[claim]] = color[v[claim]]
    return claim


REACH = ops.Functor("scc_reach", "i64* label, const i64* color", r"""
        if (label[v] == -1 && color[v] == color[u]
            && atomicCAS((unsigned long long*)&label[v], 0xFFFFFFFFFFFFFFFFull, (unsigned long long)color[v])
               == 0xFFFFFFFFFFFFFFFFull) emit = true;
""", _reach)
"""Backward reach over the reversed graph: an unassigned in-neighbour of the same colour joins its root's component."""


class SCC(Primitive):
    """``labels``: each vertex's strongly connected component, labelled by the largest vertex id (caller's
    numbering) among its members (int64).

    The forward-backward colouring of Orzan (2004) and Slota et al.
    (Multistep, 2014), in rounds over the vertices still unassigned:

    * trimming: a vertex with no unassigned in-neighbour or no unassigned
      out-neighbour is a component by itself; repeated while any device
      trims one (``global_sums``), which peels chains and DAGs that the
      colouring would take a round per vertex for;
    * colouring: every unassigned vertex starts with its own id as colour and
      the larger colour spreads along out-arcs between unassigned vertices
      (``combine`` max) until nothing changes, so a vertex's colour is the
      largest id that reaches it;
    * reach: each root (colour == own id) is the largest id of its component,
      since every member reaches it; from the roots a traversal over in-arcs
      (``graph.reverse()``) between unassigned vertices of the root's colour
      finds the vertices that reach the root without leaving the colour: its
      component.  They take the root's id as label.

    Every round assigns at least the component of the largest unassigned id,
    so the rounds end; the labels are the largest id of each component
    whatever the order of the arcs or the number of devices.  A self-loop
    keeps its vertex from trimming (it is its own unassigned neighbour); the
    colouring then gives it its own component all the same.

    Labels and colours are caller's ids.  A label is set once: -1 (unassigned,
    which a ``combine`` min orders above every id) to its component's; colours
    only rise (``combine`` max).  So copies agree at every superstep's start
    (``reads_proxies``).
    """

    name = "strongly_connected_components"
    combine = {"label": "min", "color": "max"}
    global_sums = ("trimmed", "left")

    def __init__(self, graph):
        if not graph.directed:
            raise ValueError("strongly connected components need a directed graph, and this graph is undirected "
                             "(its connected components are connected_components)")
        super().__init__(graph)

    def reset(self, source=None):
        g, xp = self.graph, self.xp
        self.ids = g.vertex_ids.astype(np.int64)
        self.label = xp.full(self.num_vertices, UNASSIGNED, dtype=np.int64)
        self.color = self.ids.copy()
        self.marks = xp.zeros(self.num_vertices, dtype=np.int32)
        self.stamp = 0
        self.rounds = 0
        self.mode = "trim"
        return self._trim()

    def _unassigned(self, vertices):
        return vertices[self.label[vertices] == UNASSIGNED]

    def _trim(self):
        """Assign every own unassigned vertex without an unassigned in- or out-neighbour; those vertices."""
        g = self.graph
        left = self._unassigned(g.own_vertices)
        open_ = (self.label == UNASSIGNED).astype(np.int32)
        has_out = ops.neighbor_reduce(g, open_, "max", left, empty=0)
        has_in = ops.neighbor_reduce(g.reverse(), open_, "max", left, empty=0)
        alone = (has_out == 0) | (has_in == 0)
        trimmed = left[alone]
        self.label[trimmed] = self.ids[trimmed]
        self.trimmed, self.left = int(trimmed.shape[0]), int(left.shape[0] - trimmed.shape[0])
        return trimmed

    def iterate(self, frontier):
        if self.mode == "trim":
            return self._trim()
        self.trimmed = self.left = 0
        if self.mode == "color":
            self.stamp += 1
            return ops.advance(self.graph, frontier, RAISE_COLOR, self.color, self.label, self.marks, self.stamp)
        return ops.advance(self.graph.reverse(), frontier, REACH, self.label, self.color)

    def converged(self, frontier):
        if self.mode == "trim":
            return self.trimmed == 0
        return len(frontier) == 0

    def next_phase(self):
        g = self.graph
        left, self.trimmed, self.left = self.left, 0, 0
        if self.mode == "trim":
            if left == 0:  # the last trimming's global sum: nothing unassigned anywhere
                return None
            self.mode, self.rounds = "color", self.rounds + 1
            self.color = self.ids.copy()  # the same on every copy: no exchange needed to agree
            return self._unassigned(g.own_vertices)
        if self.mode == "color":
            self.mode = "reach"
            roots = self._unassigned(g.own_vertices)
            roots = roots[self.color[roots] == self.ids[roots]]
            self.label[roots] = self.ids[roots]
            return roots
        self.mode = "trim"
        return self._trim()

    def result(self):
        return {"labels": self.label}

"""Power iterations over the adjacency matrix: eigenvector centrality, Katz centrality and HITS.

Each is a pull over arcs, the same shape as PageRank (primitives/pagerank.py):
every own vertex changes every superstep, its new value summed from its
neighbours' (``ops.pull_sum``), the copies kept current by the exchange
(``owners_value``).  What needs the whole graph (a vector's norm, the change
between two iterations) is a global sum over own vertices, which every device
sees after the superstep that computed it; a normalisation therefore happens
one superstep after the sum it divides by, on every copy at once (each
device divides the values it holds by the same number).

The iterations are networkx's (``eigenvector_centrality``,
``katz_centrality``) step for step; HITS is the power iteration whose fixed
point is networkx's ``hits`` (the leading singular vectors, which networkx
finds with ARPACK).  Each ``result()`` also holds ``converged`` (1 on every
vertex where the iteration met its tolerance within ``max_iter``, else 0).
"""
from __future__ import annotations

import math

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive, owners_value


class _Pull(Primitive):
    """What the three share: the reverse graph prepared for pulls, own vertices, the sum over them."""

    every_own_vertex = True

    def __init__(self, graph, tol, max_iter):
        super().__init__(graph)
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol}")
        if int(max_iter) < 0:
            raise ValueError(f"max_iter must be >= 0, got {max_iter}")
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.rgraph = graph.reverse()
        ops.prepare_pull(self.rgraph)
        self.own = graph.own_vertices
        self.n = graph.num_global_vertices
        self.done = 0  # iterations finished (networkx's loop count)

    def _own(self, a):
        return self.graph.own(a)

    def _l1(self, a, b) -> float:
        return float(ops.l1_distance(self.graph.own(a), self.graph.own(b)))

    def _sum_squares(self, a) -> float:
        mine = self._own(a)
        return float((mine * mine).sum())

    def converged(self, frontier):
        return self.error < self.n * self.tol or self.done >= self.max_iter

    def _flag(self):
        ok = self.error < self.n * self.tol
        return self.xp.full(self.num_vertices, 1 if ok else 0, dtype=np.int8)


class EigenvectorCentrality(_Pull):
    """networkx.eigenvector_centrality's iteration: x <- (x + A^T x) / ||x + A^T x||_2 from x = 1/n, stopping when
    the L1 change is below n * tol.  Weights, where the graph has them, weigh the arcs.

    Superstep 1 computes y = x + A^T x and its squares' sum; each later
    superstep first normalises the y it holds (copies included) by that sum's
    root, measures the change, then computes the next y.
    """

    name = "eigenvector_centrality"
    combine = {"y": owners_value}
    global_sums = ("squares", "error")

    def __init__(self, graph, tol=1e-6, max_iter=100):
        super().__init__(graph, tol, max_iter)

    def reset(self, source=None):
        self.x = self.xp.full(self.num_vertices, 1.0 / self.n, dtype=np.float64)
        self.y = self.x
        self.squares = 0.0
        self.error = math.inf
        self.done = 0
        return self.own

    def iterate(self, frontier):
        if self.step > 0:  # normalise the y of the last superstep, now that its norm is known everywhere
            norm = math.sqrt(self.squares) or 1.0
            x = self.y / norm
            self.error = self._l1(x, self.x)
            self.x = x
            self.done += 1
        else:
            self.error = 0.0  # no change measured yet: only this device's share of the sum, summed to 0
        self.y = ops.pull_sum(self.rgraph, self.x) + self.x
        self.squares = self._sum_squares(self.y)
        return self.own

    def converged(self, frontier):
        return self.step >= 2 and super().converged(frontier)  # a change exists from the second iterate on

    def result(self):
        return {"centrality": self.x, "converged": self._flag()}


class KatzCentrality(_Pull):
    """networkx.katz_centrality's iteration: x <- alpha * A^T x + beta from x = 0, stopping when the L1 change is
    below n * tol (not normalised here: the caller scales by the norm, as networkx does at the end).

    ``beta`` is a number or a per-vertex array of the caller's vertices
    (``graph.vertex_ids`` picks each device's).
    """

    name = "katz_centrality"
    combine = {"x": owners_value}
    global_sums = ("error",)

    def __init__(self, graph, alpha=0.1, beta=1.0, tol=1e-6, max_iter=1000):
        super().__init__(graph, tol, max_iter)
        self.alpha = float(alpha)
        if np.ndim(beta):
            beta = np.asarray(beta, dtype=np.float64)
            self.beta = self.xp.asarray(beta)[graph.vertex_ids]
        else:
            self.beta = float(beta)

    def reset(self, source=None):
        self.x = self.xp.zeros(self.num_vertices, dtype=np.float64)
        self.error = math.inf
        self.done = 0
        return self.own

    def iterate(self, frontier):
        if np.ndim(self.beta):
            new = ops.pull_sum(self.rgraph, self.x, scale=self.alpha) + self.beta
        else:
            new = ops.pull_sum(self.rgraph, self.x, scale=self.alpha, shift=self.beta)
        self.error = self._l1(new, self.x)
        self.x = new
        self.done += 1
        return self.own

    def result(self):
        return {"centrality": self.x, "converged": self._flag()}


class HITS(_Pull):
    """Hubs and authorities by power iteration: a <- A^T h, h <- A a, each scaled to sum 1, from h = 1/n, until
    the hubs change by less than ``tol`` in L1 (networkx's ``hits`` finds the same leading singular vectors with
    ARPACK).  Two supersteps per iteration: authorities pulled over in-arcs, then hubs over out-arcs (the
    forward graph, prepared for pulls as well); each normalised one superstep after its sum is known.
    """

    name = "hits"
    combine = {"a": owners_value, "h": owners_value}
    global_sums = ("a_sum", "h_sum", "error")

    def __init__(self, graph, tol=1e-8, max_iter=100):
        super().__init__(graph, tol, max_iter)
        ops.prepare_pull(graph)

    def reset(self, source=None):
        xp = self.xp
        self.h = xp.full(self.num_vertices, 1.0 / self.n, dtype=np.float64)
        self.a = xp.zeros(self.num_vertices, dtype=np.float64)
        self.h_norm = self.h
        self.a_sum = self.h_sum = 0.0
        self.error = math.inf
        self.done = 0
        return self.own

    def iterate(self, frontier):
        if self.step % 2 == 0:  # authorities from the hubs, normalised by the sum the last superstep agreed on
            if self.step > 0:
                h = self.h / (self.h_sum or 1.0)
                self.error = self._l1(h, self.h_norm)
                self.h_norm = h
                self.done += 1
            else:
                self.error = 0.0
            self.a = ops.pull_sum(self.rgraph, self.h_norm)
            self.a_sum = float(self._own(self.a).sum())
            self.h_sum = 0.0
        else:  # hubs from the authorities
            self.h = ops.pull_sum(self.graph, self.a / (self.a_sum or 1.0))
            self.h_sum = float(self._own(self.h).sum())
            self.a_sum = self.error = 0.0
        return self.own

    def converged(self, frontier):
        # a change exists after the authorities' supersteps from the second on (prim.step odd, >= 3 after them)
        if self.step % 2 == 0 or self.step < 3:
            return False
        return self.error < self.tol or self.done >= self.max_iter

    def _flag(self):
        ok = self.error < self.tol
        return self.xp.full(self.num_vertices, 1 if ok else 0, dtype=np.int8)

    def result(self):
        return {"hubs": self.h_norm, "authorities": self.a, "converged": self._flag()}

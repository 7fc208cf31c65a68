"""PageRank by power iteration, pulling over in-arcs."""
from __future__ import annotations

import numbers

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive, owners_value


class PageRank(Primitive):
    """networkx.pagerank's iteration: uniform teleport and dangling redistribution, L1 stop at N·tol.

    Edge weights, when the graph has them, weight the transitions as they do
    in networkx (its default weight="weight").  Each vertex publishes its
    share rank/out-weight; a vertex's new rank pulls the shares of its
    in-neighbours.  The L1 change and the dangling mass are totals over the
    whole graph (``global_sums``): sums over the own vertices.

    ``alpha`` is in [0, 1): 0 gives the uniform ranks, and 1 (no teleport) is
    refused, since the undamped walk has no unique rank where the graph has
    several closed components.
    """

    name = "pagerank"
    combine = {"share": owners_value}
    every_own_vertex = True  # every rank changes every iteration
    global_sums = ("error", "dangling_mass")

    SHARES = ("float64", "float32")

    def __init__(self, graph, alpha=0.85, tol=1e-6, max_iter=100, shares="float64"):
        super().__init__(graph)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 <= alpha < 1.0:
            raise ValueError(f"alpha must be a real number in [0, 1), got {alpha!r}")
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0.0 < tol < np.inf:
            raise ValueError(f"tol must be a finite positive real number, got {tol!r}")
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
        if not isinstance(shares, str) or shares not in self.SHARES:
            raise ValueError(f"shares must be one of {', '.join(self.SHARES)}, got {shares!r}")
        self.alpha, self.tol, self.max_iter = float(alpha), float(tol), int(max_iter)
        # float32: the shares each pull gathers are rounded to float32 (ranks, sums and the stop test stay float64)
        self.share_dtype = np.dtype(shares)
        self.rgraph = graph.reverse()
        ops.prepare_pull(self.rgraph)  # once per graph, before the runs' clock starts
        xp, own = self.xp, graph.own_vertices
        if graph.weights is None:
            out = graph.out_degree().astype(np.float64)
        else:
            out = xp.bincount(graph.arc_sources(), weights=graph.weights, minlength=self.num_vertices)
        dangling = out == 0
        self.dangling = own[graph.own(dangling)]  # indices, so the mass is a gather + sum
        self.inv_out = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, out))
        self.own = own
        self.n = graph.num_global_vertices

    def reset(self, source=None):
        self.rank = self.xp.full(self.num_vertices, 1.0 / self.n, dtype=np.float64)
        self.share = self.xp.zeros(self.num_vertices, dtype=self.share_dtype)
        self._publish()
        self.error = np.inf
        return self.own

    def _publish(self):
        """Each own vertex's share, rank / out-weight, which its out-neighbours pull; and the dangling mass."""
        ops.own_map(self.graph, self.xp.multiply, self.rank, self.inv_out, out=self.share)
        self.dangling_mass = self.rank[self.dangling].sum()  # a 0-d array, not read to the host here

    def iterate(self, frontier):
        a, n, g = self.alpha, self.n, self.graph
        # a * (pull + dangling / n) + (1 - a) / n, the affine step fused into the pull (the dangling mass may be
        # a 0-d array: the pull reads it where it is)
        new = ops.pull_sum(self.rgraph, self.share, scale=a, shift=self.dangling_mass * (a / n) + (1.0 - a) / n)
        self.error = float(ops.l1_distance(g.own(new), g.own(self.rank)))
        self.rank = new
        self._publish()
        return self.own

    def converged(self, frontier):
        return self.error < self.n * self.tol or self.step >= self.max_iter

    def result(self):
        return {"rank": self.rank}

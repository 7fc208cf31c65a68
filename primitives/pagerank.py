"""PageRank by power iteration, pulling over in-arcs."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from mgraph.primitives.contract import Primitive, owners_value


class PageRank(Primitive):
    """networkx.pagerank's iteration: uniform teleport and dangling redistribution, L1 stop at N·tol.

    Edge weights, when the graph has them, weight the transitions as they do
    in networkx (its default weight="weight").  Each vertex publishes its
    share rank/out-weight; a vertex's new rank pulls the shares of its
    in-neighbours.  The L1 change and the dangling mass are totals over the
    whole graph (``global_sums``), each device adding up its own vertices.
    """

    name = "pagerank"
    combine = {"share": owners_value}
    every_own_vertex = True  # every rank changes every iteration
    global_sums = ("error", "dangling_mass")

    SHARES = ("float64", "float32")

    def __init__(self, graph, alpha=0.85, tol=1e-6, max_iter=100, shares="float64"):
        super().__init__(graph)
        if shares not in self.SHARES:
            raise ValueError(f"shares must be one of {', '.join(self.SHARES)}, got {shares!r}")
        # float32: the shares each pull gathers are rounded to float32 (ranks, sums and the stop test stay float64)
        self.share_dtype = np.dtype(shares)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol}")
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter}")
        self.alpha, self.tol, self.max_iter = float(alpha), float(tol), int(max_iter)
        self.rgraph = graph.reverse()
        ops.prepare_pull(self.rgraph)  # once per graph, before the runs' clock starts
        xp = self.xp
        own = graph.own_vertices
        if graph.weights is None:
            out = graph.out_degree().astype(np.float64)
        else:
            out = xp.bincount(graph.arc_sources(), weights=graph.weights, minlength=self.num_vertices)
        dangling = out == 0
        self.dangling = own[dangling[own]]  # indices, so the mass is a gather + sum
        self.inv_out = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, out))
        self.own = own
        below = graph.own_below  # own vertices first (one device, 1-hop parts): a view, not a gather, of theirs
        self.mine = own if below is None else slice(0, below)
        self.n = graph.num_global_vertices

    def reset(self, source=None):
        self.rank = self.xp.full(self.num_vertices, 1.0 / self.n, dtype=np.float64)
        self.share = self.xp.zeros(self.num_vertices, dtype=self.share_dtype)
        self._publish()
        self.error = np.inf
        return self.own

    def _publish(self):
        mine = self.mine
        if isinstance(mine, slice):  # own vertices first: theirs in place, in one pass; copies' shares arrive
            self.xp.multiply(self.rank[mine], self.inv_out[mine], out=self.share[mine])
        else:
            self.share = (self.rank * self.inv_out).astype(self.share_dtype, copy=False)
        self.dangling_mass = self.rank[self.dangling].sum()  # stays on the device; the enactor reads shares

    def iterate(self, frontier):
        a, n, mine = self.alpha, self.n, self.mine
        x = self.rank
        # a * (pull + dangling / n) + (1 - a) / n, the affine step fused into the pull (the dangling mass may be
        # a device value: it stays there)
        new = ops.pull_sum(self.rgraph, self.share, scale=a, shift=self.dangling_mass * (a / n) + (1.0 - a) / n)
        if isinstance(mine, slice):  # own vertices first: the L1 change over a prefix, one fused reduction
            self.error = float(ops.l1_distance(new, x, mine.stop))
        else:
            self.error = float(ops.l1_distance(new[mine], x[mine]))
        self.rank = new
        self._publish()
        return self.own

    def converged(self, frontier):
        return self.error < self.n * self.tol or self.step >= self.max_iter

    def result(self):
        return {"rank": self.rank}

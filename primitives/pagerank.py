"""PageRank by power iteration, pulling over in-arcs."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class PageRank(Primitive):
    """networkx.pagerank's iteration: uniform teleport and dangling redistribution, L1 stop at N·tol.

    Edge weights, when the graph has them, weight the transitions as they do
    in networkx (its default weight="weight").
    """

    name = "pagerank"
    combine = {"rank": "sum"}

    def __init__(self, graph, alpha=0.85, tol=1e-6, max_iter=100):
        super().__init__(graph)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if not tol > 0:
            raise ValueError(f"tol must be positive, got {tol}")
        if int(max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter}")
        self.alpha, self.tol, self.max_iter = float(alpha), float(tol), int(max_iter)
        self.rgraph = graph.reverse()
        xp = self.xp
        if graph.weights is None:
            out = graph.out_degree().astype(np.float64)
        else:
            rows = xp.repeat(xp.arange(self.num_vertices), graph.out_degree())
            out = xp.bincount(rows, weights=graph.weights, minlength=self.num_vertices)
        dangling = out == 0
        self.dangling = xp.flatnonzero(dangling)  # indices, so the mass is a gather + sum with no host sync
        self.inv_out = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, out))

    def reset(self, source=None):
        n = self.num_vertices
        self.rank = self.xp.full(n, 1.0 / n, dtype=np.float64)
        self.error = np.inf
        return self.xp.arange(n, dtype=self.graph.indices.dtype)

    def iterate(self, frontier):
        xp, n, a = self.xp, self.num_vertices, self.alpha
        x = self.rank
        pulled = ops.pull_sum(self.rgraph, x * self.inv_out)
        dangling_mass = x[self.dangling].sum()
        new = a * (pulled + dangling_mass / n) + (1.0 - a) / n
        self.error = float(xp.abs(new - x).sum())
        self.rank = new
        return frontier

    def converged(self, frontier):
        return self.error < self.num_vertices * self.tol or self.step >= self.max_iter

    def result(self):
        return {"rank": self.rank}

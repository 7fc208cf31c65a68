"""Core numbers by parallel peeling (networkx.core_number)."""
from __future__ import annotations

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive


def _lose_one(u, v, w, lost):
    np.add.at(lost, v, 1)


LOSE_ONE = ops.Functor("lose_one", "int* lost", "atomicAdd(&lost[v], 1);", _lose_one, emits=False)
"""Each arc out of a removed vertex: its target has lost a neighbour."""


class KCore(Primitive):
    """``core``: each vertex's core number (int64), the largest k of a k-core holding it, as
    ``networkx.core_number`` (for a directed graph, degree is in-degree plus out-degree).

    Peeling level by level: at level k every remaining vertex of degree <= k
    leaves with core number k, all such vertices at once, and each of their
    neighbours loses one degree per arc (``LOSE_ONE``); when a superstep
    removes nothing anywhere, the level is exhausted and the next is the
    smallest remaining degree.  A removal's losses at a copy travel to its
    owner and are summed there (``combine`` "sum"), so a vertex's degree is
    kept only where it is owned.

    Where one device holds the whole graph, the levels' supersteps would
    each scan the remaining vertices and read their counts on the host,
    a superstep per cascade round; there the run peels in one call
    instead (``ops.whole_graph_kernel``, reset alone): on a GPU one
    cooperative kernel runs every level and cascade round, keeping the
    remaining vertices in a list it compacts per level; on a CPU with the
    compiled kernels one thread runs the same levels, each arc read once,
    empty levels skipped.  The core numbers are the same.  Several devices,
    MPI ranks and the NumPy twins run the levels above.
    """

    name = "core_number"
    combine = {"lost": "sum"}
    reads_proxies = False
    global_sums = ("removed", "remaining")
    global_mins = ("lowest",)

    def reset(self, source=None):
        g, xp = self.graph, self.xp
        peel = ops.whole_graph_kernel(g, "core_numbers")
        if peel is not None:  # the whole graph on one device: every level in one call
            self.core = peel(g)
            self.lost = xp.zeros(self.num_vertices, dtype=np.int32)  # declared for the exchange; nothing is lost
            self.removed, self.remaining, self.lowest = g.num_vertices, 0, np.inf
            return self.frontier_of(None)
        self.deg = g.out_degree().astype(np.int64)
        if g.directed:
            self.deg += g.reverse().out_degree()
        self.core = xp.full(self.num_vertices, -1, dtype=np.int64)
        self.lost = xp.zeros(self.num_vertices, dtype=np.int32)
        self.owned_elsewhere = ~g.own_mask()  # the vertices owned elsewhere, whose losses go to their owners
        self.own = g.own_vertices
        self.level = 0
        return self._peel()

    def iterate(self, frontier):
        if self.removed == 0:  # nothing left at this level anywhere, and no loss in flight
            self.level = int(self.lowest)
        return self._peel()

    def _peel(self):
        g, xp, own = self.graph, self.xp, self.own
        self.deg -= self.lost  # losses found here and received for own vertices; proxies' were sent
        self.lost[:] = 0
        left = own[self.core[own] < 0]
        take = left[self.deg[left] <= self.level]
        self.core[take] = self.level
        ops.advance(g, take, LOSE_ONE, self.lost)
        if g.directed:
            ops.advance(g.reverse(), take, LOSE_ONE, self.lost)
        stay = left[self.deg[left] > self.level]
        self.removed, self.remaining = int(take.shape[0]), int(stay.shape[0])
        self.lowest = float(self.deg[stay].min()) if stay.shape[0] else np.inf
        return xp.flatnonzero((self.lost > 0) & self.owned_elsewhere).astype(g.indices.dtype)

    def converged(self, frontier):
        return self.remaining == 0

    def result(self):
        return {"core": self.core}

"""k-hop reachability: which vertices lie within k hops of a source, and at what hop.

A complete user primitive, written for one device with mgraph.ops only.  The
same class runs on N devices unchanged:

    import functools
    import mgraph
    from khop import KHop
    two_hops = functools.partial(KHop, k=2)
    r = mgraph.run(two_hops, graph, source=0)               # one device
    r = mgraph.run(two_hops, graph, source=0, devices=4)    # four
    r.hops        # -1 beyond k hops
"""
import numbers

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive


class KHop(Primitive):
    name = "khop"
    combine = {"hops": "min"}      # copies of a vertex keep the smallest hop count; an improved copy moves on
    needs_source = True

    def __init__(self, graph, k=2):
        super().__init__(graph)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        self.k = int(k)

    def reset(self, source=None):
        n = self.num_vertices
        self.hops = self.xp.full(n, ops.UNVISITED, dtype=np.int32)
        self.via = self.xp.full(n, ops.UNVISITED, dtype=self.graph.indices.dtype)  # scratch for the visit
        if source is not None:
            self.hops[source] = 0
        return self.frontier_of(source)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.hops, self.via, self.step + 1)

    def converged(self, frontier):
        return len(frontier) == 0 or self.step >= self.k

    def result(self):
        return {"hops": self.hops}

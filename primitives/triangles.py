"""Triangles through each vertex, by intersecting neighbour lists (networkx.triangles)."""
from __future__ import annotations

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive


class Triangles(Primitive):
    """``triangles``: how many triangles each vertex is a corner of (int64), as ``networkx.triangles``.

    A triangle at v is a pair of its neighbours u, w that are adjacent: for
    each arc v -> u, the neighbours v and u share are the third corners, so
    summing |N(v) ∩ N(u)| over v's arcs counts each triangle at v twice (once
    through each other corner).  On a part, an own vertex's neighbours are
    held here, but a proxy's list would be empty: the primitive declares
    ``proxy_arcs`` and the framework brings proxies' arcs to the vertices held.
    One superstep, nothing exchanged.
    """

    name = "triangles"
    proxy_arcs = True
    reads_proxies = False

    def __init__(self, graph):
        if graph.directed:
            raise ValueError("triangles are counted on undirected graphs, and this graph is directed "
                             "(networkx.triangles refuses directed graphs too)")
        super().__init__(graph)

    def reset(self, source=None):
        src, dst = ops.arcs(self.graph, self.graph.own_vertices)
        common = ops.intersect_count(self.graph, src, dst)
        twice = self.xp.bincount(src, weights=common, minlength=self.num_vertices)
        self.triangles = self.xp.rint(twice).astype(np.int64) // 2  # float sums of counts are exact below 2^53
        return self.frontier_of(None)

    def iterate(self, frontier):
        return frontier

    def result(self):
        return {"triangles": self.triangles}

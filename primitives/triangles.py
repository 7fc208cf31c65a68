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
    through each other corner).  An own vertex's neighbours are all held, but
    a copy of a vertex owned elsewhere has no arcs: the primitive declares
    ``proxy_arcs`` and the framework brings copies' arcs to the vertices held.
    One superstep, nothing exchanged.

    On a CPU holding the whole graph (one device, compiled kernels) the count
    is compact-forward instead (``ops.whole_graph_kernel``): each edge
    oriented from the lower to the higher (degree, id), each triangle found
    once from its lowest corner, so a hub's long list is walked by none of its
    low-degree neighbours.  Several devices, MPI ranks, GPUs and the NumPy
    twins intersect as above.
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
        g, xp, n = self.graph, self.xp, self.num_vertices
        count = ops.whole_graph_kernel(g, "triangle_counts")
        if count is not None:  # the whole graph on a CPU: compact-forward, one call
            self.triangles = count(g)
            return self.frontier_of(None)
        mine = g.own_mask()
        src, dst = ops.arcs(g, g.own_vertices)
        # an edge between two own vertices is intersected once and counts for both; one to a proxy counts here
        # for the own end only (the proxy's owner counts it for the other)
        keep = ~mine[dst] | (src < dst)
        src, dst = src[keep], dst[keep]
        common = ops.intersect_count(g, src, dst)
        both = mine[dst]
        twice = xp.bincount(src, weights=common, minlength=n) + xp.bincount(dst[both], weights=common[both],
                                                                             minlength=n)
        self.triangles = xp.rint(twice).astype(np.int64) // 2  # float sums of counts are exact below 2^53
        return self.frontier_of(None)

    def iterate(self, frontier):
        return frontier

    def result(self):
        return {"triangles": self.triangles}

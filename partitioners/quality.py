"""How good a partition is, in the terms that cost a multi-device run.

The seed paper's point: a superstep sends each remote frontier vertex once,
however many arcs lead to it, so the communication volume of part i is
bounded by its border |B_i| (the distinct remote vertices next to it), not
by its edge cut.  Both are reported, with the load balance of vertices and
of arcs (the work of an advance).
"""
from __future__ import annotations

import numpy as np

from mgraph.backend import to_numpy

from mgraph.partitioners.arrays import check_owner, count, on_device


def quality(graph, owner, num_parts: int) -> list[dict]:
    """Per part i, a dict of Python numbers:

    - ``vertices``: vertices owned;
    - ``edges``: arcs stored on the part (arcs whose source it owns; an
      undirected edge is two arcs, each stored with its source);
    - ``border``: |B_i|, distinct vertices of other parts adjacent to part
      i's vertices by an arc in either direction (the proxies part i needs);
    - ``edge_cut``: arcs from part i to vertices of other parts;
    - ``edge_imbalance``, ``vertex_imbalance``: part edges / mean part edges,
      vertices likewise (1.0 is perfect; 1.0 for all when the mean is 0).

    ``owner`` is checked like :func:`partitioners.assign`'s output.
    """
    xp = graph.xp
    n, k = graph.num_vertices, int(num_parts)
    with on_device(graph):
        owner = check_owner(graph, owner, k)
        vertices = to_numpy(count(xp, owner, k))
        deg = graph.indptr[1:] - graph.indptr[:-1]
        edges = to_numpy(count(xp, owner, k, weights=deg.astype(np.float64))).round().astype(np.int64)
        src = _sources(xp, graph.indptr, graph.num_arcs)
        src_part = owner[src]
        dst = graph.indices
        dst_part = owner[dst]
        cut = src_part != dst_part
        src, dst, src_part, dst_part = src[cut], dst[cut], src_part[cut], dst_part[cut]
        edge_cut = to_numpy(count(xp, src_part, k))
        # (part, remote vertex) pairs: dst is on src's part's border; for a directed graph src is on dst's too
        pairs = src_part.astype(np.int64) * max(n, 1) + dst
        if graph.directed:
            pairs = xp.concatenate([pairs, dst_part.astype(np.int64) * max(n, 1) + src])
        del src, dst, src_part, dst_part, cut
        if pairs.shape[0]:
            pairs = xp.unique(pairs)
        border = to_numpy(count(xp, pairs // max(n, 1), k))
    mean_v, mean_e = n / k, float(edges.sum()) / k
    return [{"part": i, "vertices": int(vertices[i]), "edges": int(edges[i]), "border": int(border[i]),
             "edge_cut": int(edge_cut[i]),
             "edge_imbalance": float(edges[i] / mean_e) if mean_e else 1.0,
             "vertex_imbalance": float(vertices[i] / mean_v) if mean_v else 1.0}
            for i in range(k)]


def _sources(xp, indptr, num_arcs: int):
    """The source vertex of every arc of a CSR (int64), by binary search of the arc positions in the row ends."""
    return xp.searchsorted(indptr[1:], xp.arange(num_arcs, dtype=np.int64), side="right")

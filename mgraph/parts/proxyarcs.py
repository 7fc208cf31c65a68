"""Parts whose proxies carry arcs: what a primitive that reads its neighbours' neighbour lists needs.

A part normally stores only its own vertices' arcs (mgraph.parts.subgraph).  That
is enough for every primitive that reads one hop at a time, but not for one
that compares a vertex's neighbour list with its neighbours' lists (triangle
counting): on a part, a proxy's list would be empty and the count silently
short.  A primitive declares ``proxy_arcs = True``, and before it starts
each device asks the owners of its proxies for their arcs, keeping those
that end at a vertex the part holds.  For an own vertex v, every neighbour
u is held (its own or a proxy), so N(v) ∩ N(u) is then exact on the part.

Collective over the run's group (threads or MPI ranks): one exchange of the
requested ids and one of the arcs, through the host.  Rows come out sorted,
as the intersection operator needs.
"""
from __future__ import annotations

import numpy as np

from mgraph.backend import to_numpy
from mgraph.parts.subgraph import SubGraph


def with_proxy_arcs(part, group):
    """``part`` (a SubGraph) with each proxy's arcs to vertices held here; kept on the part for later runs."""
    cached = part.__dict__.get("_with_proxy_arcs")
    if cached is not None:
        return cached
    if part.directed:
        raise ValueError("proxies' arcs are provided for undirected graphs only")
    xp = part.xp
    n = part.num_vertices
    caller = np.arange(n, dtype=np.int64) if part.caller_ids is None else to_numpy(part.caller_ids).astype(np.int64)
    to_local = None if part.global_to_local is None else to_numpy(part.global_to_local).astype(np.int64)
    owner = to_numpy(part.owner)
    indptr, indices = to_numpy(part.indptr), to_numpy(part.indices).astype(np.int64)
    weights = None if part.weights is None else to_numpy(part.weights)
    own = np.zeros(n, dtype=bool)
    own[to_numpy(part.own_vertices)] = True

    def local(ids):
        return ids if to_local is None else to_local[ids]

    proxies = np.flatnonzero(~own)
    asks = group.alltoallv([caller[proxies[owner[proxies] == k]] for k in range(group.size)])
    src, dst, wts = [], [], []
    for ids in asks:  # the own vertices a peer holds copies of: their arcs, in caller ids
        rows = local(np.asarray(ids, dtype=np.int64))
        starts, ends = indptr[rows], indptr[rows + 1]
        count = ends - starts
        at = np.repeat(starts - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
        src.append(np.repeat(caller[rows], count))
        dst.append(caller[indices[at]])
        wts.append(weights[at] if weights is not None else np.zeros(0))
    got_src = np.concatenate(group.alltoallv(src)).astype(np.int64)
    got_dst = np.concatenate(group.alltoallv(dst)).astype(np.int64)
    got_w = np.concatenate(group.alltoallv(wts)) if weights is not None else None
    rows, cols = local(got_src), local(got_dst)
    held = cols >= 0
    rows, cols = rows[held], cols[held]
    own_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    rows = np.concatenate([own_rows, rows])
    cols = np.concatenate([indices, cols])
    order = np.lexsort((cols, rows))
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=new_indptr[1:])
    new_w = None if weights is None else np.concatenate([weights, got_w[held]])[order]
    sub = SubGraph(xp.asarray(new_indptr), xp.asarray(cols[order].astype(part.indices.dtype)),
                   None if new_w is None else xp.asarray(new_w), directed=False, index=part.index,
                   own=part.own_vertices, vertex_ids=part.caller_ids, owner=part.owner,
                   global_to_local=part.global_to_local, num_global=part.num_global,
                   num_global_arcs=part.num_global_arcs, duplication=part.duplication)
    sub.arc_rows = n  # proxies have rows now
    sub.id_on = part.id_on
    if hasattr(part, "build_info"):
        sub.build_info = part.build_info
    part.__dict__["_with_proxy_arcs"] = sub
    return sub

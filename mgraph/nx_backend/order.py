"""networkx's search order and search tree, from distances that mgraph computed.

networkx's BFS visits a level's vertices in the order their parents were
visited, each parent's children in its neighbour order, and gives each
vertex the first visited neighbour one level up as its parent.  Its
Dijkstra settles vertices by (distance, order pushed), a vertex being pushed
for the last time by the first settled vertex that reaches it along a tight
arc (``dist[u] + w == dist[v]``), at that vertex's place in the neighbour
order.  Both are therefore functions of the distances, the tight arcs and the
neighbour order; :func:`search_tree` computes them with array code from
distances that mgraph's BFS or SSSP gave (on any number of devices), so that
paths, trees and traversal orders come out exactly as networkx gives them.

The work is a few passes over the arcs plus one small step per group of
vertices at equal distance that holds more than one vertex (the levels of a
BFS; ties of a weighted search), each over that group's vertices and their
tight arcs.  It runs on the host (NumPy): its output becomes Python objects.
"""
from __future__ import annotations

import numpy as np


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, s + c)`` for each (s, c)."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
    return offsets + np.arange(total, dtype=np.int64)


class SearchTree:
    """The order a search settles its vertices in (``order``: vertex ids, sources first) and each vertex's parent
    (``parent``, -1 for sources and unreached vertices), with the distances it was computed from."""

    def __init__(self, order: np.ndarray, parent: np.ndarray, dist: np.ndarray):
        self.order = order
        self.parent = parent
        self.dist = dist


def search_tree(indptr, indices, weights, pos, dist, sources, *, hops: bool) -> SearchTree:
    """networkx's search tree over the CSR (``indptr``, ``indices``) from ``sources`` (vertex ids, in the order
    networkx seeds its queue or heap).

    ``dist`` holds each vertex's distance: hop counts (-1 unreached) with
    ``hops``, else weighted distances (inf unreached) along ``weights`` (None:
    every arc weighs 1).  ``pos[k]`` is arc k's place in its tail's neighbour
    order.  Raises NotImplementedError where the order cannot be derived:
    a tight arc of weight 0 (networkx then settles vertices of one distance in
    an order that depends on its queue), or distances that disagree with the
    arcs.
    """
    indptr, indices, dist = np.asarray(indptr), np.asarray(indices), np.asarray(dist)
    n = dist.shape[0]
    sources = np.asarray(sources, dtype=np.int64)
    reached = dist >= 0 if hops else np.isfinite(dist)
    is_source = np.zeros(n, dtype=bool)
    is_source[sources] = True
    tail = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    head = indices.astype(np.int64)
    arcs = np.flatnonzero(reached[tail] & reached[head] & ~is_source[head])
    t, h = tail[arcs], head[arcs]
    step = 1 if (hops or weights is None) else np.asarray(weights)[arcs]
    tight = dist[t] + step == dist[h]
    arcs, t, h = arcs[tight], t[tight], h[tight]
    if not hops and weights is not None and bool((np.asarray(weights)[arcs] == 0).any()):
        raise NotImplementedError("a tight arc of weight 0: networkx's order among vertices at equal distance then "
                                  "follows its heap")
    dt = dist[t]
    o = np.lexsort((dt, h))  # by head, nearest tails first
    arcs, t, h, dt = arcs[o], t[o], h[o], dt[o]
    # a head's candidates: its tight in-arcs from the nearest tails (settled first; equal tails by their order)
    first = np.ones(h.shape, dtype=bool)
    first[1:] = h[1:] != h[:-1]
    starts = np.flatnonzero(first)
    lead = np.repeat(starts, np.diff(np.append(starts, h.size)))
    cand = dt == dt[lead]
    arcs, t, h = arcs[cand], t[cand], h[cand]
    heads, cstart, ccount = np.unique(h, return_index=True, return_counts=True)
    ncand = np.zeros(n, dtype=np.int64)
    ncand[heads] = ccount
    cs = np.zeros(n, dtype=np.int64)
    cs[heads] = cstart
    parent = np.full(n, -1, dtype=np.int64)
    parc = np.full(n, -1, dtype=np.int64)
    one = ccount == 1
    parent[heads[one]] = t[cstart[one]]
    parc[heads[one]] = arcs[cstart[one]]
    sub = np.zeros(n, dtype=np.int64)  # place among the vertices at the same distance
    sub[sources] = np.arange(sources.size)

    def resolve(vs):  # several candidates: the one settled first (all share a distance: by their place)
        cnt = ncand[vs]
        idx = ranges(cs[vs], cnt)
        owner = np.repeat(np.arange(vs.size), cnt)
        o = np.lexsort((sub[t[idx]], owner))
        firsts = np.ones(o.size, dtype=bool)
        firsts[1:] = owner[o][1:] != owner[o][:-1]
        chosen = idx[o[firsts]]
        parent[vs] = t[chosen]
        parc[vs] = arcs[chosen]

    vs = np.flatnonzero(reached)
    vs = vs[np.argsort(dist[vs], kind="stable")]
    cut = np.flatnonzero(dist[vs][1:] != dist[vs][:-1]) + 1
    gstart = np.concatenate([[0], cut])
    gend = np.concatenate([cut, [vs.size]])
    pos = np.asarray(pos)
    for g in np.flatnonzero(gend - gstart > 1):
        members = vs[gstart[g]:gend[g]]
        if is_source[members].any():
            if not is_source[members].all():
                raise NotImplementedError("a vertex at distance 0 from the sources that is not one of them")
            continue
        multi = members[ncand[members] > 1]
        if multi.size:
            resolve(multi)
        p = parent[members]
        if (p < 0).any():
            raise NotImplementedError("distances that no tight arc explains")
        o = np.lexsort((pos[parc[members]], sub[p], dist[p]))
        sub[members[o]] = np.arange(members.size)
    rest = np.flatnonzero((ncand > 1) & (parent < 0))
    if rest.size:
        resolve(rest)
    if ((parent < 0) & reached & ~is_source).any():
        raise NotImplementedError("distances that no tight arc explains")
    order = vs[np.lexsort((sub[vs], dist[vs]))]
    return SearchTree(order, parent, dist)


def paths(nodes: list, tree: SearchTree, ids=None, *, forward: bool = True) -> dict:
    """``{node: path}`` in the order the search settled them (``ids``: those vertex ids, default every reached
    one), each path the list of nodes from its source along the tree (``forward=False``: to it, reversed)."""
    order = tree.order if ids is None else ids
    parent = tree.parent.tolist()
    out_by_id = {}
    for v in order.tolist():
        p = parent[v]
        if p < 0:
            out_by_id[v] = [nodes[v]]
        elif forward:
            out_by_id[v] = out_by_id[p] + [nodes[v]]
        else:
            out_by_id[v] = [nodes[v]] + out_by_id[p]
    return {nodes[v]: path for v, path in out_by_id.items()}


def path_to(nodes: list, tree: SearchTree, v: int) -> list:
    """The tree path (nodes) from a source to vertex ``v``."""
    parent = tree.parent
    out = [v]
    while parent[out[-1]] >= 0:
        out.append(int(parent[out[-1]]))
    return [nodes[i] for i in reversed(out)]

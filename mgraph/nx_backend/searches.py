"""The searches the traversal and shortest-path functions share: distances on mgraph, trees in networkx's order.

Distances come from mgraph's BFS (hops) or SSSP (weights), on
``nx.config.backends.mgraph.devices`` devices; a search towards a vertex (the
predecessors of a directed graph) runs on the reverse graph.  Trees, paths and
visiting orders come from :func:`mgraph.nx_backend.order.search_tree`, which
gives networkx's own from those distances.  Several sources at once (networkx's
``bfs_layers``) are searched with array code, one level at a time.
"""
from __future__ import annotations

import numpy as np

from mgraph import api
from mgraph.nx_backend.common import host, options
from mgraph.nx_backend.graph import NxGraph
from mgraph.nx_backend.order import SearchTree, ranges, search_tree


def _run_graph(G: NxGraph, weight, reverse: bool):
    g = G.for_weight(weight)
    return g.reverse() if reverse and g.directed else g


def hops(G: NxGraph, source: int, run: dict, *, reverse: bool = False) -> np.ndarray:
    """Hop counts from vertex ``source`` (towards it with ``reverse``), -1 where unreached: mgraph's BFS."""
    if len(G) == 0:
        return np.zeros(0, dtype=np.int64)
    return host(api.bfs(_run_graph(G, None, reverse), source, **options(run, G)).depth).astype(np.int64)


def distances(G: NxGraph, source: int, weight, run: dict, *, reverse: bool = False) -> np.ndarray:
    """Weighted distances from vertex ``source`` (towards it with ``reverse``), inf where unreached: mgraph's
    SSSP along attribute ``weight`` (None: every edge weighs 1)."""
    return host(api.sssp(_run_graph(G, weight, reverse), source, **options(run, G)).distance)


def multi_source_hops(G: NxGraph, sources: list, *, reverse: bool = False) -> np.ndarray:
    """Hop counts from the nearest of several sources: a level-synchronous BFS in array code on the host."""
    indptr, indices, _, _ = G.order_arrays(reverse)
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    depth = np.full(len(G), -1, dtype=np.int64)
    frontier = np.unique(np.asarray(sources, dtype=np.int64))
    depth[frontier] = 0
    level = 0
    while frontier.size:
        level += 1
        nbrs = indices[ranges(indptr[frontier], indptr[frontier + 1] - indptr[frontier])]
        nbrs = np.unique(nbrs[depth[nbrs] < 0])
        depth[nbrs] = level
        frontier = nbrs
    return depth


def bfs_tree(G: NxGraph, sources: list, run: dict, *, reverse: bool = False) -> SearchTree:
    """networkx's BFS tree and visiting order from ``sources`` (vertex ids, in networkx's queue order)."""
    indptr, indices, _, pos = G.order_arrays(reverse)
    if len(sources) == 1:
        depth = hops(G, sources[0], run, reverse=reverse)
    else:
        depth = multi_source_hops(G, sources, reverse=reverse)
    return search_tree(indptr, indices, None, pos, depth, sources, hops=True)


def dijkstra_tree(G: NxGraph, source: int, weight, run: dict, *, reverse: bool = False) -> SearchTree:
    """networkx's Dijkstra tree and settling order from vertex ``source`` along attribute ``weight``."""
    indptr, indices, w, pos = G.order_arrays(reverse)
    dist = distances(G, source, weight, run, reverse=reverse)
    return search_tree(indptr, indices, w if weight is not None else None, pos, dist, [source], hops=False)


def tight_in_arcs(G: NxGraph, dist: np.ndarray, weight) -> np.ndarray:
    """How many tight arcs (``dist[u] + w == dist[v]``) enter each vertex: more than one where several shortest
    paths reach it."""
    g = G.for_weight(weight)
    indptr, indices = host(g.indptr), host(g.indices).astype(np.int64)
    tail = np.repeat(np.arange(len(G), dtype=np.int64), np.diff(indptr))
    w = 1.0 if g.weights is None else host(g.weights)
    ok = np.isfinite(dist[tail]) & (dist[tail] + w == dist[indices])
    return np.bincount(indices[ok], minlength=len(G))

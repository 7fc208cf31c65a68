"""The networkx functions the backend runs, each answering exactly as networkx does.

Same return types (dicts in networkx's node order, generators of sets, ints,
bools, Python numbers: never NumPy scalars), same exceptions for the same
mistakes (NodeNotFound, NetworkXPointlessConcept,
PowerIterationFailedConvergence), same numbers within networkx's own
tolerances.  Where mgraph cannot give networkx's answer, the function raises
NotImplementedError (after :func:`can_run` has said so where it can tell
from the arguments), and networkx runs the call itself when
``nx.config.fallback_to_nx`` is set.

Every function takes mgraph's run options as extra keywords (``devices=4``,
``partitioner="metis"``, ...), which default to ``nx.config.backends.mgraph``.
"""
from __future__ import annotations

import math
import numbers
import random
import warnings

import networkx as nx
import numpy as np

from mgraph import api
from mgraph.nx_backend.graph import NxGraph, convert_from_nx

CONFIG_KEYS = ("devices", "backend", "partitioner")


def _options(extra: dict) -> dict:
    """mgraph's run options: nx.config.backends.mgraph, then what the call passed."""
    cfg = getattr(nx.config.backends, "mgraph", None)
    out = {key: cfg[key] for key in CONFIG_KEYS if cfg is not None and key in cfg}
    out.update(extra)
    return out


def _graph(G, weight=None) -> NxGraph:
    """``G`` as an NxGraph: as given when the dispatcher converted it, else converted here with ``weight``."""
    if isinstance(G, NxGraph):
        return G
    return convert_from_nx(G, edge_attrs=None if weight is None else {weight: 1})


def _nodes(G: NxGraph, ids: np.ndarray) -> list:
    """The networkx nodes of vertex ids ``ids`` (the original objects)."""
    labels = G.graph.labels
    return labels[ids].tolist() if labels.dtype != object else [G.node_list[i] for i in ids.tolist()]


def _source(G: NxGraph, source, message: str) -> int:
    try:
        return G.index[source]
    except (KeyError, TypeError):
        raise nx.NodeNotFound(message) from None


def _by_distance(G: NxGraph, dist: np.ndarray, keep: np.ndarray, as_int: bool) -> dict:
    """``{node: dist}`` of the kept vertices, nearest first (vertex order within a distance)."""
    ids = np.flatnonzero(keep)
    ids = ids[np.argsort(dist[ids], kind="stable")]
    values = dist[ids]
    if as_int:
        values = values.astype(np.int64)
    return dict(zip(_nodes(G, ids), values.tolist()))


# -- shortest paths -------------------------------------------------------------


def single_source_shortest_path_length(G, source, cutoff=None, **run):
    """networkx's: ``{node: hops}`` for the nodes within ``cutoff`` hops of ``source`` (BFS on mgraph)."""
    G = _graph(G)
    s = _source(G, source, f"Source {source} is not in G")
    if cutoff is None:
        cutoff = float("inf")
    depth = api.bfs(G.for_weight(None), s, **_options(run)).depth
    # networkx's loop reaches level L while cutoff > L - 1: L <= cutoff for whole cutoffs, one more for 2.5
    keep = (depth >= 0) & ((depth == 0) | (depth - 1 < cutoff))
    return _by_distance(G, depth, keep, as_int=True)


def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight", **run):
    """networkx's: ``{node: distance}`` within ``cutoff`` of ``source`` (SSSP on mgraph, non-negative weights)."""
    if callable(weight):
        raise NotImplementedError("mgraph takes weights from an edge attribute, not a function")
    G = _graph(G, weight)
    s = _source(G, source, f"Node {source} not found in graph")
    g = G.for_weight(weight)
    if weight is not None and G.negative_weights:
        raise NotImplementedError("negative weights: networkx's Dijkstra decides what they mean, mgraph refuses them")
    dist = api.sssp(g, s, **_options(run)).distance
    keep = np.isfinite(dist)
    if cutoff is not None:
        keep &= dist <= cutoff
    keep[s] = True  # networkx settles the source whatever the cutoff
    out = _by_distance(G, dist, keep, as_int=weight is None or G.int_weights)
    out[G.node_list[s]] = 0  # networkx's source distance is the int 0 whatever the weights
    return out


# -- components -----------------------------------------------------------------


def _component_labels(G: NxGraph, run: dict) -> np.ndarray:
    """Each vertex's component (its smallest vertex id), weak components for a directed graph."""
    if len(G) == 0:
        return np.empty(0, dtype=np.int64)
    return api.connected_components(G.for_weight(None), **_options(run)).labels


def _components(G: NxGraph, run: dict):
    """The components as sets of nodes, in networkx's order: by their first node in ``list(G)``, which is their
    smallest vertex id, which is the label mgraph gives them."""
    labels = _component_labels(G, run)
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    return (set(_nodes(G, ids)) for ids in groups)


def _count(G: NxGraph, run: dict) -> int:
    labels = _component_labels(G, run)
    return int(np.count_nonzero(labels == np.arange(labels.size)))


def _undirected_only(G):
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")


def _directed_only(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")


def _connected(G: NxGraph, run: dict) -> bool:
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _count(G, run) == 1


def connected_components(G, **run):
    """networkx's: a generator of node sets, one per connected component."""
    _undirected_only(G)
    return _components(_graph(G), run)


def number_connected_components(G, **run):
    _undirected_only(G)
    return _count(_graph(G), run)


def is_connected(G, **run):
    _undirected_only(G)
    return _connected(_graph(G), run)


def weakly_connected_components(G, **run):
    """networkx's: a generator of node sets, one per weakly connected component."""
    _directed_only(G)
    return _components(_graph(G), run)


def number_weakly_connected_components(G, **run):
    _directed_only(G)
    return _count(_graph(G), run)


def is_weakly_connected(G, **run):
    _directed_only(G)
    return _connected(_graph(G), run)


# -- PageRank -------------------------------------------------------------------


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None, weight="weight",
             dangling=None, **run):
    """networkx's: ``{node: rank}``, the same power iteration and stop rule; PowerIterationFailedConvergence
    where networkx raises it."""
    reason = _pagerank_declines(G, alpha, personalization, max_iter, tol, nstart, weight, dangling)
    if reason is not None:
        raise NotImplementedError(reason)
    G = _graph(G, weight)
    if len(G) == 0:
        return {}
    if max_iter < 1:  # networkx's loop runs no iteration, then gives up
        raise nx.PowerIterationFailedConvergence(max_iter)
    with warnings.catch_warnings():  # mgraph warns where it stops unconverged; networkx raises
        warnings.filterwarnings("ignore", message="pagerank did not converge", category=RuntimeWarning)
        r = api.pagerank(G.for_weight(weight), alpha=alpha, tol=tol, max_iter=int(max_iter), **_options(run))
    if not r.stats["converged"]:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.node_list, r.rank.tolist()))


def _real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _pagerank_declines(G, alpha, personalization, max_iter, tol, nstart, weight, dangling):
    """Why mgraph cannot give networkx's pagerank for these arguments, or None when it can."""
    for name, value in (("personalization", personalization), ("nstart", nstart), ("dangling", dangling)):
        if value is not None:
            return f"{name} is not supported: mgraph's PageRank starts uniform and teleports uniformly"
    if weight is not None and not isinstance(weight, str):
        return "weight must be an edge attribute name"
    if G.is_multigraph():
        return "networkx's pagerank sums parallel edges' weights; mgraph merges them keeping the lightest"
    if _has_self_loops(G):
        return "networkx's pagerank counts self-loops; mgraph graphs drop them"
    if not (_real(alpha) and 0 <= alpha < 1):
        return "mgraph's PageRank needs 0 <= alpha < 1"
    if not (_real(tol) and tol > 0):
        return "mgraph's PageRank needs tol > 0"
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral):
        return "max_iter must be an integer"
    return None


def _has_self_loops(G) -> bool:
    if isinstance(G, NxGraph):
        return G.self_loops > 0
    return any(u in nbrs for u, nbrs in G.adj.items())


# -- betweenness ----------------------------------------------------------------


def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False, seed=None, **run):
    """networkx's: ``{node: centrality}`` from all sources, or from the ``k`` that ``seed`` samples as networkx
    does, scaled as networkx scales it (Brandes' BFS on mgraph; unweighted, endpoints excluded)."""
    reason = _betweenness_declines(k, weight, endpoints)
    if reason is not None:
        raise NotImplementedError(reason)
    G = _graph(G)
    n = len(G)
    if k == n:  # networkx does the same: every source, no sampling
        k = None
    sampled = None
    if k is not None:
        rng = seed if isinstance(seed, random.Random) else nx.utils.create_py_random_state(seed)
        sampled = np.array([G.index[v] for v in rng.sample(G.node_list, k)], dtype=np.int64)
    r = api.betweenness_centrality(G.for_weight(None), sources=sampled, **_options(run))
    # mgraph halves an undirected graph's sum (each pair counted from both ends): networkx's raw sum is twice it
    raw = r.centrality * (1.0 if G.is_directed() else 2.0)
    b = _rescale(raw, n, normalized=normalized, directed=G.is_directed(), sampled=sampled)
    return dict(zip(G.node_list, b.tolist()))


def _betweenness_declines(k, weight, endpoints):
    if weight is not None:
        return "mgraph's betweenness is unweighted (weight=None only)"
    if endpoints:
        return "mgraph's betweenness leaves out endpoints (endpoints=False only)"
    if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral)):
        return "k must be None or an integer"
    return None


def _rescale(b: np.ndarray, n: int, *, normalized, directed: bool, sampled) -> np.ndarray:
    """networkx's ``_rescale`` (endpoints=False) on the raw sums ``b``: the same scale factors, computed the same
    way in Python floats (so k=0 divides by zero as networkx does), applied to the array."""
    N = n - 1
    if N < 2:
        return b
    k = None if sampled is None else len(sampled)
    K = N if k is None else k
    correction = 1 if directed else 2
    if k is None:
        scale = 1 / (K * (N - 1)) if normalized else N / (K * correction)
        return b * scale if scale != 1 else b
    if normalized:
        s_source = 1 / ((K - 1) * (N - 1)) if K > 1 else math.nan
        s_other = 1 / (K * (N - 1))
    else:
        s_source = N / ((K - 1) * correction) if K > 1 else math.nan
        s_other = N / (K * correction)
    scale = np.full(n, s_other)
    scale[sampled] = s_source
    return b * scale


# -- triangles and cores -----------------------------------------------------------


def triangles(G, nodes=None, **run):
    """networkx's: ``{node: triangles}`` over ``nodes`` (all where None), or the count of one node given alone."""
    _undirected_only(G)
    G = _graph(G)
    counts = api.triangles(G.for_weight(None), **_options(run)).triangles.tolist() if len(G) else []
    try:
        single = nodes is not None and nodes in G
    except TypeError:
        single = False
    if single:
        return counts[G.index[nodes]]
    if nodes is None:
        return dict(zip(G.node_list, counts))
    return {v: counts[G.index[v]] for v in nodes if v in G}


def core_number(G, **run):
    """networkx's: ``{node: core number}`` (a directed graph's degree counts in- and out-arcs)."""
    if _has_self_loops(G):  # networkx refuses them; mgraph graphs have dropped them
        raise NotImplementedError("networkx's core_number refuses self-loops; mgraph graphs drop them")
    G = _graph(G)
    if len(G) == 0:
        return {}
    return dict(zip(G.node_list, api.core_number(G.for_weight(None), **_options(run)).core.tolist()))


FUNCTIONS = {f.__name__: f for f in (
    betweenness_centrality, connected_components, is_connected, number_connected_components,
    weakly_connected_components, is_weakly_connected, number_weakly_connected_components,
    pagerank, single_source_shortest_path_length, single_source_dijkstra_path_length, triangles, core_number)}

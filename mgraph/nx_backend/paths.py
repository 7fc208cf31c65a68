"""Shortest paths: networkx's unweighted, Dijkstra and Bellman-Ford families, answered from mgraph's BFS and SSSP.

Distances come from mgraph (several devices where configured).  Paths are
networkx's own: for BFS and Dijkstra networkx's tree follows from the
distances and its neighbour order (:mod:`mgraph.nx_backend.order`), and
networkx's bidirectional BFS is replayed level by level from the two trees.
Bellman-Ford's paths depend on networkx's queue, so the backend gives them
only where the shortest path is unique (one tight arc into every vertex on
it) and declines otherwise; networkx's bidirectional Dijkstra likewise.
Negative weights stay with networkx (mgraph's SSSP refuses them).
Dictionaries of lengths list the nearest nodes first; dictionaries of paths
follow networkx's search order.  A length is an int where the weights were
ints, as networkx's sums are.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from mgraph import api
from mgraph.nx_backend import searches
from mgraph.nx_backend.common import (as_number, declines, graph_of, host, nodes_of, options, real, vertex,
                                      weight_name, weighted_paths_decline)
from mgraph.nx_backend.order import path_to, paths, ranges


def _cutoff_declines(a):
    cutoff = a.get("cutoff")
    if not (cutoff is None or real(cutoff)):
        return "cutoff must be None or a real number"
    return weight_name(a.get("weight"))


def _by_distance(G, dist: np.ndarray, keep: np.ndarray, integral: bool) -> dict:
    """``{node: dist}`` of the kept vertices, nearest first (vertex order within a distance)."""
    ids = np.flatnonzero(keep)
    ids = ids[np.argsort(dist[ids], kind="stable")]
    values = dist[ids]
    values = values.astype(np.int64).tolist() if integral else values.astype(np.float64).tolist()
    return dict(zip(nodes_of(G, ids), values))


def within_hops(depth: np.ndarray, cutoff) -> np.ndarray:
    """The vertices networkx's level loop reaches: level L while cutoff > L - 1 (L <= cutoff for whole cutoffs)."""
    keep = depth >= 0
    if cutoff is not None:
        keep &= (depth == 0) | (depth - 1 < cutoff)
    return keep


# -- unweighted -----------------------------------------------------------------


def _hop_lengths(G, s: int, cutoff, run, reverse=False) -> dict:
    depth = searches.hops(G, s, run, reverse=reverse)
    return _by_distance(G, depth, within_hops(depth, cutoff), integral=True)


def _hop_paths(G, s: int, cutoff, run, reverse=False) -> dict:
    tree = searches.bfs_tree(G, [s], run, reverse=reverse)
    within = within_hops(tree.dist, cutoff)
    return paths(G.node_list, tree, tree.order[within[tree.order]], forward=not reverse)


@declines(_cutoff_declines)
def single_source_shortest_path_length(G, source, cutoff=None, **run):
    """networkx's: ``{node: hops}`` for the nodes within ``cutoff`` hops of ``source`` (mgraph's BFS)."""
    G = graph_of(G)
    s = vertex(G, source, nx.NodeNotFound(f"Source {source} is not in G"))
    return _hop_lengths(G, s, cutoff, run)


@declines(_cutoff_declines)
def single_target_shortest_path_length(G, target, cutoff=None, **run):
    """networkx's: ``{node: hops to target}`` (mgraph's BFS over the reverse graph where directed)."""
    G = graph_of(G)
    t = vertex(G, target, nx.NodeNotFound(f"Target {target} is not in G"))
    return _hop_lengths(G, t, cutoff, run, reverse=G.is_directed())


@declines(_cutoff_declines)
def single_source_shortest_path(G, source, cutoff=None, **run):
    """networkx's: ``{node: path from source}`` in networkx's BFS order, the paths networkx's BFS finds."""
    G = graph_of(G)
    s = vertex(G, source, nx.NodeNotFound(f"Source {source} not in G"))
    return _hop_paths(G, s, cutoff, run)


@declines(_cutoff_declines)
def single_target_shortest_path(G, target, cutoff=None, **run):
    """networkx's: ``{node: path to target}``, searched from the target along predecessors as networkx does."""
    G = graph_of(G)
    t = vertex(G, target, nx.NodeNotFound(f"Target {target} not in G"))
    if not G.is_directed():
        return {node: path[::-1] for node, path in _hop_paths(G, t, cutoff, run).items()}
    return _hop_paths(G, t, cutoff, run, reverse=True)


@declines(_cutoff_declines)
def all_pairs_shortest_path_length(G, cutoff=None, **run):
    """networkx's: a generator of (node, its single_source_shortest_path_length), one mgraph BFS each."""
    G = graph_of(G)

    def pairs():
        for node in G.node_list:
            yield node, _hop_lengths(G, G.index[node], cutoff, run)

    return pairs()


@declines(_cutoff_declines)
def all_pairs_shortest_path(G, cutoff=None, **run):
    """networkx's: a generator of (node, its single_source_shortest_path), one mgraph BFS each."""
    G = graph_of(G)
    G.order_arrays()  # declines now where the order cannot be read, not while iterating

    def pairs():
        for node in G.node_list:
            yield node, _hop_paths(G, G.index[node], cutoff, run)

    return pairs()


def _levels(tree):
    """The tree's vertices by level, each level in visiting order."""
    order = tree.order
    depth = tree.dist[order]
    cuts = (np.flatnonzero(depth[1:] != depth[:-1]) + 1).tolist()
    return [order[a:b] for a, b in zip([0] + cuts, cuts + [order.size])]


def _first_hit(G, level: np.ndarray, reverse: bool, hit) -> int:
    """Scanning the arcs of ``level``'s vertices as networkx does (vertex by vertex, each in neighbour order),
    the first head for which ``hit`` holds, or -1."""
    indptr, indices, _, pos = G.order_arrays(reverse)
    cnt = indptr[level + 1] - indptr[level]
    idx = ranges(indptr[level], cnt)
    owner = np.repeat(np.arange(level.size), cnt)
    idx = idx[np.lexsort((pos[idx], owner))]
    heads = np.asarray(indices)[idx].astype(np.int64)
    found = np.flatnonzero(hit(heads))
    return int(heads[found[0]]) if found.size else -1


def _bidirectional(G, s: int, t: int, run) -> list:
    """networkx's bidirectional BFS path from s to t, replayed from the two BFS trees (NetworkXNoPath if none).

    networkx expands the smaller fringe a whole level at a time and stops at
    the first scanned node the other side has reached; each side's parents
    are its BFS tree's, so the replay needs the two trees, the levels' sizes
    and the first hit of the level where they meet.
    """
    names = G.node_list
    if s == t:
        return [names[s]]
    fwd = searches.bfs_tree(G, [s], run)
    if fwd.dist[t] < 0:
        raise nx.NetworkXNoPath(f"No path between {names[s]} and {names[t]}.")
    back = G.is_directed()
    bwd = searches.bfs_tree(G, [t], run, reverse=back)
    F, B = _levels(fwd), _levels(bwd)
    fi = bj = 0
    while True:
        if F[fi].size <= B[bj].size:
            w = _first_hit(G, F[fi], False, lambda h: (bwd.dist[h] >= 0) & (bwd.dist[h] <= bj))
            fi += 1
        else:
            w = _first_hit(G, B[bj], back, lambda h: (fwd.dist[h] >= 0) & (fwd.dist[h] <= fi))
            bj += 1
        if w >= 0:
            break
    path = path_to(names, fwd, w)
    v = int(bwd.parent[w])
    while v >= 0:
        path.append(names[v])
        v = int(bwd.parent[v])
    return path


def bidirectional_shortest_path(G, source, target, **run):
    """networkx's: the path its bidirectional BFS finds (replayed from mgraph's two BFS trees)."""
    G = graph_of(G)
    s = vertex(G, source, nx.NodeNotFound(f"Source {source} is not in G"))
    t = vertex(G, target, nx.NodeNotFound(f"Target {target} is not in G"))
    return _bidirectional(G, s, t, run)


def has_path(G, source, target, **run):
    """networkx's: whether ``target`` is reachable from ``source`` (mgraph's BFS)."""
    G = graph_of(G)
    s = vertex(G, source, nx.NodeNotFound(f"Source {source} is not in G"))
    t = vertex(G, target, nx.NodeNotFound(f"Target {target} is not in G"))
    return bool(searches.hops(G, s, run)[t] >= 0)


# -- Dijkstra -------------------------------------------------------------------


def dijkstra_setup(G, weight):
    G = graph_of(G, weight).with_weight(weight)
    weighted_paths_decline(G, weight)
    return G


def _integral(G, weight) -> bool:
    return weight is None or G.int_weights


def _dijkstra_lengths(G, s: int, cutoff, weight, run, reverse=False) -> dict:
    dist = searches.distances(G, s, weight, run, reverse=reverse)
    keep = np.isfinite(dist)
    if cutoff is not None:
        keep &= dist <= cutoff
    keep[s] = True  # networkx settles the source whatever the cutoff
    out = _by_distance(G, dist, keep, _integral(G, weight))
    out[G.node_list[s]] = 0  # networkx's source distance is the int 0 whatever the weights
    return out


def dijkstra_paths(G, s: int, cutoff, weight, run, reverse=False):
    """(dist dict, paths dict) in networkx's settling order, within ``cutoff``."""
    tree = searches.dijkstra_tree(G, s, weight, run, reverse=reverse)
    order = tree.order
    if cutoff is not None:
        order = order[(tree.dist[order] <= cutoff) | (order == s)]
    values = tree.dist[order]
    values = values.astype(np.int64).tolist() if _integral(G, weight) else values.tolist()
    names = nodes_of(G, order)
    dist = dict(zip(names, values))
    dist[G.node_list[s]] = 0
    return dist, paths(G.node_list, tree, order, forward=not reverse)


def _node_not_found(node):
    return nx.NodeNotFound(f"Node {node} not found in graph")


@declines(_cutoff_declines)
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight", **run):
    """networkx's: ``{node: distance}`` within ``cutoff`` of ``source`` (mgraph's SSSP, non-negative weights)."""
    G = dijkstra_setup(G, weight)
    s = vertex(G, source, _node_not_found(source))
    return _dijkstra_lengths(G, s, cutoff, weight, run)


@declines(_cutoff_declines)
def single_source_dijkstra_path(G, source, cutoff=None, weight="weight", **run):
    """networkx's: ``{node: path}``, the paths networkx's Dijkstra finds, in its settling order."""
    G = dijkstra_setup(G, weight)
    s = vertex(G, source, _node_not_found(source))
    return dijkstra_paths(G, s, cutoff, weight, run)[1]


@declines(_cutoff_declines)
def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight", **run):
    """networkx's: (distances, paths) from ``source``, or (distance, path) to ``target``."""
    G = dijkstra_setup(G, weight)
    s = vertex(G, source, _node_not_found(source))
    if target == source:
        return 0, [target]
    dist, found = dijkstra_paths(G, s, cutoff, weight, run)
    if target is None:
        return dist, found
    try:
        return dist[target], found[target]
    except KeyError:
        raise nx.NetworkXNoPath(f"No path to {target}.") from None


@declines(lambda a: weight_name(a.get("weight")))
def dijkstra_path(G, source, target, weight="weight", **run):
    """networkx's: the path networkx's Dijkstra finds from ``source`` to ``target``."""
    return single_source_dijkstra(G, source, target=target, weight=weight, **run)[1]


@declines(lambda a: weight_name(a.get("weight")))
def dijkstra_path_length(G, source, target, weight="weight", **run):
    """networkx's: the distance from ``source`` to ``target`` (NetworkXNoPath where unreachable)."""
    G = dijkstra_setup(G, weight)
    s = vertex(G, source, _node_not_found(source))
    if source == target:
        return 0
    t = G.index.get(target) if target in G else None
    dist = searches.distances(G, s, weight, run)
    if t is None or not np.isfinite(dist[t]):
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return as_number(dist[t], _integral(G, weight))


def _all_pairs_dijkstra_setup(G, weight):
    G = dijkstra_setup(G, weight)
    if weight is not None and G.zero_weights:
        raise NotImplementedError("zero weights: networkx's Dijkstra order among vertices at equal distance then "
                                  "follows its heap")
    G.order_arrays()
    return G


@declines(_cutoff_declines)
def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight", **run):
    """networkx's: a generator of (node, its single_source_dijkstra_path_length), one mgraph SSSP each."""
    G = dijkstra_setup(G, weight)

    def pairs():
        for node in G.node_list:
            yield node, _dijkstra_lengths(G, G.index[node], cutoff, weight, run)

    return pairs()


@declines(_cutoff_declines)
def all_pairs_dijkstra_path(G, cutoff=None, weight="weight", **run):
    """networkx's: a generator of (node, its single_source_dijkstra_path)."""
    G = _all_pairs_dijkstra_setup(G, weight)

    def pairs():
        for node in G.node_list:
            yield node, dijkstra_paths(G, G.index[node], cutoff, weight, run)[1]

    return pairs()


@declines(_cutoff_declines)
def all_pairs_dijkstra(G, cutoff=None, weight="weight", **run):
    """networkx's: a generator of (node, (distances, paths))."""
    G = _all_pairs_dijkstra_setup(G, weight)

    def pairs():
        for node in G.node_list:
            yield node, dijkstra_paths(G, G.index[node], cutoff, weight, run)

    return pairs()


# -- Bellman-Ford (non-negative weights) --------------------------------------------------


def _sssp(G, s: int, weight, run):
    """(distances, predecessors) from mgraph's SSSP: a shortest-path tree of some order."""
    r = api.sssp(G.for_weight(weight), s, **options(run, G))
    return host(r.distance), host(r.predecessor).astype(np.int64)


def _require_unique(G, s: int, dist, weight, ids) -> None:
    """NotImplementedError unless one tight arc enters each of ``ids`` (the source aside): then the shortest paths
    to them are unique, and networkx's Bellman-Ford or bidirectional Dijkstra find the same."""
    count = searches.tight_in_arcs(G, dist, weight)
    ids = np.asarray(ids, dtype=np.int64)
    if (count[ids[ids != s]] != 1).any():
        raise NotImplementedError("several shortest paths: networkx picks one by the order of its queues")


def _chain(pred: np.ndarray, s: int, v: int) -> list:
    out = [v]
    while out[-1] != s:
        out.append(int(pred[out[-1]]))
    return out[::-1]


def _bf_lengths(G, s, weight, run) -> dict:
    dist = searches.distances(G, s, weight, run)
    out = _by_distance(G, dist, np.isfinite(dist), _integral(G, weight))
    out[G.node_list[s]] = 0
    return out


def _bf_source(G, source):
    return vertex(G, source, nx.NodeNotFound(f"Source {source} not in G"))


@declines(lambda a: weight_name(a.get("weight")))
def single_source_bellman_ford_path_length(G, source, weight="weight", **run):
    """networkx's: ``{node: distance}`` (mgraph's SSSP; negative weights stay with networkx)."""
    G = dijkstra_setup(G, weight)
    return _bf_lengths(G, _bf_source(G, source), weight, run)


@declines(lambda a: weight_name(a.get("weight")))
def bellman_ford_path_length(G, source, target, weight="weight", **run):
    """networkx's: the distance from ``source`` to ``target``."""
    if source == target:
        if source not in G:
            raise _node_not_found(source)
        return 0
    G = dijkstra_setup(G, weight)
    s = _bf_source(G, source)
    dist = searches.distances(G, s, weight, run)
    t = G.index.get(target) if target in G else None
    if t is None or not np.isfinite(dist[t]):
        raise nx.NetworkXNoPath(f"node {target} not reachable from {source}")
    return as_number(dist[t], _integral(G, weight))


@declines(lambda a: weight_name(a.get("weight")))
def single_source_bellman_ford(G, source, target=None, weight="weight", **run):
    """networkx's: (distances, paths), or (distance, path) to ``target``; paths where they are unique."""
    if source == target:
        if source not in G:
            raise nx.NodeNotFound(f"Node {source} is not found in the graph")
        return 0, [source]
    G = dijkstra_setup(G, weight)
    s = _bf_source(G, source)
    names = G.node_list
    integral = _integral(G, weight)
    dist, pred = _sssp(G, s, weight, run)
    if target is not None:
        t = G.index.get(target) if target in G else None
        if t is None or not np.isfinite(dist[t]):  # networkx's message from building the path
            raise nx.NetworkXNoPath(f"Target {target} cannot be reached from given sources")
        chain = _chain(pred, s, t)
        _require_unique(G, s, dist, weight, chain)
        return as_number(dist[t], integral), [names[i] for i in chain]
    ids = np.flatnonzero(np.isfinite(dist))
    _require_unique(G, s, dist, weight, ids)
    ids = ids[np.argsort(dist[ids], kind="stable")]
    lengths = _by_distance(G, dist, np.isfinite(dist), integral)
    lengths[names[s]] = 0
    found = {}
    for v in ids.tolist():
        found[names[v]] = [names[v]] if v == s else found[names[int(pred[v])]] + [names[v]]
    return lengths, found


@declines(lambda a: weight_name(a.get("weight")))
def single_source_bellman_ford_path(G, source, weight="weight", **run):
    """networkx's: ``{node: path}`` where every shortest path is unique."""
    return single_source_bellman_ford(G, source, weight=weight, **run)[1]


@declines(lambda a: weight_name(a.get("weight")))
def bellman_ford_path(G, source, target, weight="weight", **run):
    """networkx's: the shortest path from ``source`` to ``target`` where it is unique."""
    return single_source_bellman_ford(G, source, target=target, weight=weight, **run)[1]


@declines(lambda a: weight_name(a.get("weight")))
def all_pairs_bellman_ford_path_length(G, weight="weight", **run):
    """networkx's: a generator of (node, its single_source_bellman_ford_path_length)."""
    G = dijkstra_setup(G, weight)

    def pairs():
        for node in G.node_list:
            yield node, _bf_lengths(G, G.index[node], weight, run)

    return pairs()


# -- the generic entry points ----------------------------------------------------


def _path_declines(a):
    reason = weight_name(a.get("weight"))
    if reason:
        return reason
    if (a.get("weight") is not None and a.get("method") == "bellman-ford" and a.get("source") is None
            and a.get("target") is None):
        return "all-pairs Bellman-Ford paths: networkx picks among equal paths by its queue order"
    return None


def _check_method(method):
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")


@declines(_path_declines)
def shortest_path(G, source=None, target=None, weight=None, method="dijkstra", **run):
    """networkx's: paths from, to or between nodes, by BFS (``weight=None``), Dijkstra or Bellman-Ford."""
    _check_method(method)
    method = "unweighted" if weight is None else method
    G = graph_of(G, weight)
    if source is None and target is None:
        if method == "unweighted":
            return all_pairs_shortest_path(G, **run)
        if method == "dijkstra":
            return all_pairs_dijkstra_path(G, weight=weight, **run)
        raise NotImplementedError("all-pairs Bellman-Ford paths stay with networkx")
    if source is None:  # every path to target: searched from it along predecessors, then reversed
        back = G.is_directed()
        if method == "unweighted":
            t = vertex(G, target, nx.NodeNotFound(f"Source {target} not in G"))
            return _hop_paths(G, t, None, run, reverse=True) if back else {
                k: p[::-1] for k, p in _hop_paths(G, t, None, run).items()}
        G = dijkstra_setup(G, weight)
        if method == "dijkstra":
            t = vertex(G, target, _node_not_found(target))
            found = dijkstra_paths(G, t, None, weight, run, reverse=back)[1]
            return found if back else {k: p[::-1] for k, p in found.items()}
        if not back:
            return {k: p[::-1] for k, p in single_source_bellman_ford(G, target, weight=weight, **run)[1].items()}
        raise NotImplementedError("Bellman-Ford paths to a target of a directed graph stay with networkx")
    if target is None:
        if method == "unweighted":
            return single_source_shortest_path(G, source, **run)
        if method == "dijkstra":
            return single_source_dijkstra_path(G, source, weight=weight, **run)
        return single_source_bellman_ford_path(G, source, weight=weight, **run)
    if method == "unweighted":
        return bidirectional_shortest_path(G, source, target, **run)
    if method == "dijkstra":  # networkx's bidirectional Dijkstra: its path where the shortest one is unique
        return _unique_dijkstra_path(G, source, target, weight, run)
    return bellman_ford_path(G, source, target, weight=weight, **run)


def _unique_dijkstra_path(G, source, target, weight, run) -> list:
    """networkx's bidirectional_dijkstra path, where the shortest path is unique (else NotImplementedError)."""
    G = dijkstra_setup(G, weight)
    s = vertex(G, source, nx.NodeNotFound(f"Source {source} is not in G"))
    t = vertex(G, target, nx.NodeNotFound(f"Target {target} is not in G"))
    if s == t:
        return [source]
    dist, pred = _sssp(G, s, weight, run)
    if not np.isfinite(dist[t]):
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    chain = _chain(pred, s, t)
    _require_unique(G, s, dist, weight, chain)
    return [G.node_list[i] for i in chain]


@declines(lambda a: weight_name(a.get("weight")))
def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra", **run):
    """networkx's: lengths from, to or between nodes, by BFS (``weight=None``), Dijkstra or Bellman-Ford."""
    _check_method(method)
    method = "unweighted" if weight is None else method
    G = graph_of(G, weight)
    if source is None and target is None:
        if method == "unweighted":
            return all_pairs_shortest_path_length(G, **run)
        if method == "dijkstra":
            return all_pairs_dijkstra_path_length(G, weight=weight, **run)
        return all_pairs_bellman_ford_path_length(G, weight=weight, **run)
    if source is None:
        back = G.is_directed()
        if method == "unweighted":
            t = vertex(G, target, nx.NodeNotFound(f"Source {target} is not in G"))
            return _hop_lengths(G, t, None, run, reverse=back)
        G = dijkstra_setup(G, weight)
        if method == "dijkstra":
            t = vertex(G, target, _node_not_found(target))
            return _dijkstra_lengths(G, t, None, weight, run, reverse=back)
        t = _bf_source(G, target)
        dist = searches.distances(G, t, weight, run, reverse=back)
        out = _by_distance(G, dist, np.isfinite(dist), _integral(G, weight))
        out[target] = 0
        return out
    if target is None:
        if method == "unweighted":
            return single_source_shortest_path_length(G, source, **run)
        if method == "dijkstra":
            return single_source_dijkstra_path_length(G, source, weight=weight, **run)
        return single_source_bellman_ford_path_length(G, source, weight=weight, **run)
    if method == "unweighted":
        s = vertex(G, source, nx.NodeNotFound(f"Source {source} is not in G"))
        t = vertex(G, target, nx.NodeNotFound(f"Target {target} is not in G"))
        depth = searches.hops(G, s, run)
        if depth[t] < 0:
            raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
        return int(depth[t])
    if method == "dijkstra":
        return dijkstra_path_length(G, source, target, weight=weight, **run)
    return bellman_ford_path_length(G, source, target, weight=weight, **run)


FUNCTIONS = [single_source_shortest_path_length, single_target_shortest_path_length, single_source_shortest_path,
             single_target_shortest_path, all_pairs_shortest_path_length, all_pairs_shortest_path,
             bidirectional_shortest_path, has_path, single_source_dijkstra_path_length, single_source_dijkstra_path,
             single_source_dijkstra, dijkstra_path, dijkstra_path_length, all_pairs_dijkstra_path_length,
             all_pairs_dijkstra_path, all_pairs_dijkstra, single_source_bellman_ford_path_length,
             bellman_ford_path_length, single_source_bellman_ford, single_source_bellman_ford_path, bellman_ford_path,
             all_pairs_bellman_ford_path_length, shortest_path, shortest_path_length]

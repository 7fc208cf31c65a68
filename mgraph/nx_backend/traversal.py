"""Breadth-first traversals: networkx's edges, trees, layers and reach, in networkx's own order.

Hop counts come from mgraph's BFS (on several devices where configured);
the tree and the visiting order from :mod:`mgraph.nx_backend.order`, which
reproduces networkx's queue from them: the same edges in the same order as
networkx yields them.  Like networkx's, the generator functions raise their
errors (a source not in the graph) when first iterated; what the backend
declines it declines at the call, before any generator exists.
"""
from __future__ import annotations

import numbers

import networkx as nx
import numpy as np

from mgraph.nx_backend import searches
from mgraph.nx_backend.common import declines, graph_of, nodes_of, real


def _not_in(G, node) -> nx.NetworkXError:
    """networkx's error for a node that G.neighbors / successors / predecessors does not know."""
    return nx.NetworkXError(f"The node {node} is not in the {'digraph' if G.is_directed() else 'graph'}.")


def _source_id(G, source) -> int:
    try:
        return G.index[source]
    except KeyError:  # an unhashable source raises networkx's TypeError
        raise _not_in(G, source) from None


def _bfs_declines(a):
    if a.get("sort_neighbors") is not None:
        return "sort_neighbors reorders networkx's queue; mgraph follows the graph's own neighbour order"
    limit = a.get("depth_limit")
    if limit is not None and not real(limit):
        return "depth_limit must be None or a real number"
    return None


def _limited(tree, limit):
    """The vertices the tree reaches within ``depth_limit`` (networkx's rule: depth - 1 < limit), sources left out,
    in visiting order."""
    order = tree.order
    depth = tree.dist[order]
    keep = depth > 0
    if limit is not None:
        keep &= depth - 1 < limit
    return order[keep]


def _edge_ids(G, source, reverse, depth_limit, run):
    """(parent ids, child ids) of networkx's bfs_edges, in its order."""
    s = _source_id(G, source)
    tree = searches.bfs_tree(G, [s], run, reverse=reverse)
    children = _limited(tree, depth_limit)
    return tree.parent[children], children


def _check_order(G, reverse):
    """Decline at the call where networkx's neighbour order cannot be read (raises NotImplementedError)."""
    G.order_arrays(reverse)


@declines(_bfs_declines)
def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None, **run):
    """networkx's: a generator of the BFS tree's edges (parent, child), in the order networkx's queue finds them."""
    G = graph_of(G)
    reverse = bool(reverse) and G.is_directed()
    _check_order(G, reverse)

    def edges():
        parents, children = _edge_ids(G, source, reverse, depth_limit, run)
        yield from zip(nodes_of(G, parents), nodes_of(G, children))

    return edges()


@declines(_bfs_declines)
def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None, **run):
    """networkx's: the BFS tree as a networkx DiGraph (source first, then the edges in networkx's order)."""
    G = graph_of(G)
    reverse = bool(reverse) and G.is_directed()
    _check_order(G, reverse)
    parents, children = _edge_ids(G, source, reverse, depth_limit, run)
    T = nx.DiGraph()
    T.add_node(source)
    T.add_edges_from(zip(nodes_of(G, parents), nodes_of(G, children)))
    return T


@declines(_bfs_declines)
def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None, **run):
    """networkx's: a generator of (node, its BFS parent) in BFS order."""
    G = graph_of(G)
    _check_order(G, False)

    def pairs():
        parents, children = _edge_ids(G, source, False, depth_limit, run)
        yield from zip(nodes_of(G, children), nodes_of(G, parents))

    return pairs()


@declines(_bfs_declines)
def bfs_successors(G, source, depth_limit=None, sort_neighbors=None, **run):
    """networkx's: a generator of (node, [its BFS children]) in BFS order, the source's first even without any."""
    G = graph_of(G)
    _check_order(G, False)

    def groups():
        parents, children = _edge_ids(G, source, False, depth_limit, run)
        if parents.size == 0:
            yield (source, [])
            return
        cuts = np.flatnonzero(parents[1:] != parents[:-1]) + 1
        starts = np.concatenate([[0], cuts]).tolist()
        ends = np.concatenate([cuts, [parents.size]]).tolist()
        kids = nodes_of(G, children)
        heads = nodes_of(G, parents[starts])  # the first is the source: its children come first
        for head, a, b in zip(heads, starts, ends):
            yield (head, kids[a:b])

    return groups()


def _generic_declines(a):
    if a.get("neighbors") is not None:
        return "neighbors is a function networkx calls per node; mgraph follows the graph's own neighbours"
    return _bfs_declines(a)


@declines(_generic_declines)
def generic_bfs_edges(G, source, neighbors=None, depth_limit=None, **run):
    """networkx's with ``neighbors=None`` (the graph's successors): a generator of BFS edges in networkx's order."""
    G = graph_of(G)
    _check_order(G, False)

    def edges():
        parents, children = _edge_ids(G, source, False, depth_limit, run)
        yield from zip(nodes_of(G, parents), nodes_of(G, children))

    return edges()


def bfs_layers(G, sources, **run):
    """networkx's: a generator of lists, the nodes at each distance from ``sources`` in networkx's order (the
    first layer is ``list(set(sources))``, as networkx takes it)."""
    G = graph_of(G)
    _check_order(G, False)

    def layers():
        nonlocal sources
        if sources in G:
            sources = [sources]
        first = list(set(sources))
        for s in first:
            if s not in G:
                raise nx.NetworkXError(f"The node {s} is not in the graph.")
        if not first:
            return
        tree = searches.bfs_tree(G, [G.index[s] for s in first], run)
        order = tree.order
        depth = tree.dist[order]
        cuts = (np.flatnonzero(depth[1:] != depth[:-1]) + 1).tolist()
        names = nodes_of(G, order)
        for a, b in zip([0] + cuts, cuts + [len(names)]):
            yield names[a:b]

    return layers()


def descendants_at_distance(G, source, distance, **run):
    """networkx's: the set of nodes exactly ``distance`` hops from ``source`` (mgraph's BFS)."""
    G = graph_of(G)
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if not (isinstance(distance, numbers.Real) and float(distance).is_integer()) or distance < 0:
        return set()  # networkx compares each layer's index with it: no layer matches
    depth = searches.hops(G, G.index[source], run)
    return set(nodes_of(G, np.flatnonzero(depth == int(distance))))


def _reach(G, source, run, reverse: bool) -> set:
    G = graph_of(G)
    s = _source_id(G, source)
    depth = searches.hops(G, s, run, reverse=reverse and G.is_directed())
    depth[s] = -1
    return set(nodes_of(G, np.flatnonzero(depth > 0)))


def descendants(G, source, **run):
    """networkx's: the set of nodes reachable from ``source`` (mgraph's BFS), the source left out."""
    return _reach(G, source, run, reverse=False)


def ancestors(G, source, **run):
    """networkx's: the set of nodes that reach ``source`` (mgraph's BFS over the reverse graph), it left out."""
    return _reach(G, source, run, reverse=True)


FUNCTIONS = [bfs_edges, bfs_tree, bfs_predecessors, bfs_successors, generic_bfs_edges, bfs_layers,
             descendants_at_distance, descendants, ancestors]

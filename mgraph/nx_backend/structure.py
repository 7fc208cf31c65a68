"""Components, triangles and clustering, cores and trusses, similarity, degrees, reciprocity, trees, subgraphs.

What runs on mgraph's primitives (several devices where configured):
components (``connected_components``, ``strongly_connected_components``), triangles and the clustering
family (``triangles``), ``core_number``, ``label_propagation_communities``,
the tree predicates (components), ``ego_graph`` (BFS or SSSP).  What is
thin array code on one device (the configured backend: CuPy on a GPU):
``k_truss`` and ``jaccard_coefficient`` (``ops.intersect_count``),
``reciprocity``, ``complement``.  What reads the degrees and counts kept at
conversion: isolates, self-loops, negative weights.  Functions that return a
graph return a networkx graph built as networkx builds it, from the networkx
graph itself where it carries attributes.
"""
from __future__ import annotations

import weakref

import networkx as nx
import numpy as np

from mgraph import api, ops
from mgraph.graph import Graph
from mgraph.nx_backend import searches
from mgraph.nx_backend.common import (declines, directed_only, graph_of, has_self_loops, host, nodes_of, options,
                                      real, thin_graph, undirected_only, vertex, weight_name)
from mgraph.nx_backend.graph import CACHE_KEY, NxGraph
from mgraph.nx_backend.paths import dijkstra_paths, dijkstra_setup, within_hops

NOT_FOR_MULTIGRAPH = "not implemented for multigraph type"


def nbunch_ids(G: NxGraph, nbunch) -> list:
    """Vertex ids of networkx's ``G.nbunch_iter(nbunch)``: every node for None, one node, or the nodes of a
    container that are in G, in its order; networkx's errors for what is neither."""
    if nbunch is None:
        return list(range(len(G)))
    if nbunch in G:
        return [G.index[nbunch]]
    out = []
    try:
        for n in nbunch:
            if n in G.index:
                out.append(G.index[n])
    except TypeError as err:
        message = err.args[0] if err.args else ""
        exc = err
        if "iter" in message:
            exc = nx.NetworkXError("nbunch is not a node or a sequence of nodes.")
        if "object is not iterable" in message:
            exc = nx.NetworkXError(f"Node {nbunch} is not in the graph.")
        if "hashable" in message:
            exc = nx.NetworkXError(f"Node {n} in sequence nbunch is not a valid node.")
        raise exc from None
    return out


# -- components -----------------------------------------------------------------


def _component_labels(G: NxGraph, run: dict) -> np.ndarray:
    """Each vertex's component (its smallest vertex id), weak components for a directed graph."""
    if len(G) == 0:
        return np.empty(0, dtype=np.int64)
    return host(api.connected_components(G.for_weight(None), **options(run, G)).labels)


def _components(G: NxGraph, run: dict):
    """The components as sets of nodes, in networkx's order: by their first node in ``list(G)``, which is their
    smallest vertex id, which is the label mgraph gives them."""
    labels = _component_labels(G, run)
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    return (set(nodes_of(G, ids)) for ids in groups)


def _count(G: NxGraph, run: dict) -> int:
    labels = _component_labels(G, run)
    return int(np.count_nonzero(labels == np.arange(labels.size)))


def _connected(G: NxGraph, run: dict) -> bool:
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _count(G, run) == 1


def connected_components(G, **run):
    """networkx's: a generator of node sets, one per connected component."""
    undirected_only(G)
    return _components(graph_of(G), run)


def number_connected_components(G, **run):
    undirected_only(G)
    return _count(graph_of(G), run)


def is_connected(G, **run):
    undirected_only(G)
    return _connected(graph_of(G), run)


def weakly_connected_components(G, **run):
    """networkx's: a generator of node sets, one per weakly connected component."""
    directed_only(G)
    return _components(graph_of(G), run)


def number_weakly_connected_components(G, **run):
    directed_only(G)
    return _count(graph_of(G), run)


def is_weakly_connected(G, **run):
    directed_only(G)
    return _connected(graph_of(G), run)


def _strong_labels(G: NxGraph, run: dict) -> np.ndarray:
    """Each vertex's strongly connected component (its largest vertex id)."""
    if len(G) == 0:
        return np.empty(0, dtype=np.int64)
    return host(api.strongly_connected_components(G.for_weight(None), **options(run, G)).labels)


def strongly_connected_components(G, **run):
    """networkx's: a generator of node sets, one per strongly connected component, ordered by each component's last
    node in ``list(G)`` (its label in mgraph), not in the order of networkx's Tarjan search (so nx.condensation,
    which numbers its nodes in the order it gets, numbers them differently)."""
    directed_only(G)
    G = graph_of(G)
    labels = _strong_labels(G, run)
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    return (set(nodes_of(G, ids)) for ids in groups)


def number_strongly_connected_components(G, **run):
    directed_only(G)
    labels = _strong_labels(graph_of(G), run)
    return int(np.count_nonzero(labels == np.arange(labels.size)))


def is_strongly_connected(G, **run):
    directed_only(G)
    G = graph_of(G)
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return bool((_strong_labels(G, run) == len(G) - 1).all())


def node_connected_component(G, n, **run):
    """networkx's: the set of nodes in ``n``'s component (mgraph's components)."""
    undirected_only(G)
    G = graph_of(G)
    if n not in G:
        raise KeyError(n)
    labels = _component_labels(G, run)
    return set(nodes_of(G, np.flatnonzero(labels == labels[G.index[n]])))


# -- triangles, clustering, cores ---------------------------------------------------------


def _triangle_counts(G: NxGraph, run: dict) -> np.ndarray:
    if len(G) == 0:
        return np.zeros(0, dtype=np.int64)
    return host(api.triangles(G.for_weight(None), **options(run, G)).triangles).astype(np.int64)


def triangles(G, nodes=None, **run):
    """networkx's: ``{node: triangles}`` over ``nodes`` (all where None), or the count of one node given alone."""
    undirected_only(G)
    G = graph_of(G)
    counts = _triangle_counts(G, run).tolist()
    if nodes is not None and nodes in G:
        return counts[G.index[nodes]]
    if nodes is None:
        return dict(zip(G.node_list, counts))
    return {v: counts[G.index[v]] for v in nodes if v in G}


def _clustering_declines(a):
    if a["G"].is_directed():
        return "mgraph counts undirected triangles: directed clustering stays with networkx"
    if a.get("weight") is not None:
        return "weighted clustering (geometric means of weights) stays with networkx"
    return None


@declines(_clustering_declines)
def clustering(G, nodes=None, weight=None, **run):
    """networkx's: ``{node: 2 T / (d (d - 1))}`` (0 where no triangle; one node's value where ``nodes`` is a node),
    triangles from mgraph, ``d`` the node's neighbours other than itself."""
    if G.is_multigraph():
        raise nx.NetworkXNotImplemented(NOT_FOR_MULTIGRAPH)
    G = graph_of(G)
    ids = nbunch_ids(G, nodes)
    t = 2 * _triangle_counts(G, run)
    d = host(G.graph.out_degree()).astype(np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    tt, dd = t[ids], d[ids]
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(tt == 0, 0.0, tt / np.maximum(dd * (dd - 1), 1))
    values = [0 if x == 0 else v for x, v in zip(tt.tolist(), c.tolist())]
    out = dict(zip(nodes_of(G, ids), values))
    if nodes is not None and nodes in G:
        return out[nodes]
    return out


@declines(_clustering_declines)
def average_clustering(G, nodes=None, weight=None, count_zeros=True, **run):
    """networkx's: the mean of ``clustering`` over ``nodes`` (without zeros unless ``count_zeros``), summed in
    the same order as networkx sums it."""
    c = clustering(G, nodes, weight=weight, **run).values()
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


@declines(lambda a: "mgraph counts undirected triangles" if a["G"].is_directed() else None)
def transitivity(G, **run):
    """networkx's: 3 x triangles / connected triples, from mgraph's triangle counts (exact integer sums)."""
    if G.is_multigraph():
        raise nx.NetworkXNotImplemented(NOT_FOR_MULTIGRAPH)
    G = graph_of(G)
    if len(G) == 0:
        return 0
    t = int(2 * _triangle_counts(G, run).sum())
    d = host(G.graph.out_degree()).astype(np.int64)
    contri = int((d * (d - 1)).sum())
    return 0 if t == 0 else t / contri


def core_number(G, **run):
    """networkx's: ``{node: core number}`` (a directed graph's degree counts in- and out-arcs)."""
    if has_self_loops(G):  # networkx refuses them; mgraph graphs have dropped them
        raise NotImplementedError("networkx's core_number refuses self-loops; mgraph graphs drop them")
    G = graph_of(G)
    if len(G) == 0:
        return {}
    return dict(zip(G.node_list, host(api.core_number(G.for_weight(None), **options(run, G)).core).tolist()))


def _filtered(g: Graph, keep) -> Graph:
    """The graph of ``g``'s arcs where ``keep`` holds (array code on g's backend)."""
    xp = g.xp
    rows = g.arc_sources()[keep]
    indptr = xp.zeros(g.num_vertices + 1, dtype=np.int64)
    xp.cumsum(xp.bincount(rows, minlength=g.num_vertices), out=indptr[1:])
    return Graph(indptr, g.indices[keep], None, directed=g.directed)


def k_truss(G, k, **run):
    """networkx's: the k-truss (every edge in at least k - 2 triangles of it, isolated nodes dropped) as a networkx
    graph with G's attributes.  The edges' supports are ``ops.intersect_count`` over the arcs, peeled until none
    falls short (array code on one device); the graph is then G's copy without the dropped edges, as networkx
    builds it."""
    G = graph_of(G)
    if G.self_loops:
        raise nx.NetworkXNotImplemented("Input graph has self loops which is not permitted; Consider using "
                                        "G.remove_edges_from(nx.selfloop_edges(G)).")
    source = G.networkx_graph()
    if source is None:
        raise NotImplementedError("k_truss returns the networkx graph's copy, and that graph is gone")
    g = thin_graph(G, None, run)
    while g.num_arcs:
        support = ops.intersect_count(g, g.arc_sources(), g.indices.astype(np.int64))
        keep = support >= k - 2
        if bool(keep.all()):
            break
        g = _filtered(g, keep)
    kept = set(zip(*(nodes_of(G, a) for a in _arc_ends(g))))
    H = source.copy()
    H.remove_edges_from([(u, v) for u, v in H.edges() if (u, v) not in kept])
    H.remove_nodes_from([v for v, d in H.degree() if d == 0])
    return H


def _arc_ends(g: Graph):
    return host(g.arc_sources()), host(g.indices).astype(np.int64)


# -- similarity -------------------------------------------------------------------


def _jaccard_declines(a):
    if has_self_loops(a["G"]):
        return "networkx counts a self-loop's node among its own neighbours; mgraph graphs drop self-loops"
    return None


BATCH = 1 << 16  # node pairs scored per intersect_count call


@declines(_jaccard_declines)
def jaccard_coefficient(G, ebunch=None, **run):
    """networkx's: a generator of (u, v, |N(u) & N(v)| / |N(u) | N(v)|) over ``ebunch`` (every non-edge where None,
    in networkx's order), the common neighbours counted by ``ops.intersect_count`` in batches (array code on one
    device)."""
    G = graph_of(G)
    if ebunch is None:
        pairs = _non_edges(G)
    else:
        for u, v in ebunch:  # networkx checks every pair first (an iterator is then spent, as there)
            if u not in G:
                raise nx.NodeNotFound(f"Node {u} not in G.")
            if v not in G:
                raise nx.NodeNotFound(f"Node {v} not in G.")
        pairs = iter(list(ebunch))
    g = thin_graph(G, None, run)
    degree = host(g.out_degree()).astype(np.int64)
    index = G.index

    def scored():
        while True:
            batch = []
            for pair in pairs:
                batch.append(pair)
                if len(batch) == BATCH:
                    break
            if not batch:
                return
            a = np.fromiter((index[u] for u, _ in batch), dtype=np.int64, count=len(batch))
            b = np.fromiter((index[v] for _, v in batch), dtype=np.int64, count=len(batch))
            common = host(ops.intersect_count(g, g.xp.asarray(a), g.xp.asarray(b))).astype(np.int64)
            union = degree[a] + degree[b] - common
            with np.errstate(divide="ignore", invalid="ignore"):
                p = (common / np.where(union == 0, 1, union)).tolist()
            for (u, v), x, un in zip(batch, p, union.tolist()):
                yield u, v, 0 if un == 0 else x

    return scored()


def _non_edges(G: NxGraph):
    """networkx's ``non_edges`` of an undirected graph, in its order (the same set operations on the same nodes)."""
    names = G.node_list
    g = G.graph
    indptr, indices = host(g.indptr), host(g.indices)
    nodes = set(names)
    while nodes:
        u = nodes.pop()
        i = G.index[u]
        nbrs = {names[j] for j in indices[indptr[i]:indptr[i + 1]].tolist()}
        for v in nodes - nbrs:
            yield u, v


# -- degrees and counts kept at conversion ----------------------------------------------


def isolates(G, **run):
    """networkx's: a generator of the nodes of degree 0 (a self-loop is degree 2, as networkx counts it)."""
    G = graph_of(G)
    return (v for v in nodes_of(G, np.flatnonzero(G.degree == 0)))


def is_isolate(G, n, **run):
    """networkx's: whether ``n`` has degree 0."""
    G = graph_of(G)
    if n in G:
        return bool(G.degree[G.index[n]] == 0)
    try:
        iter(n)  # networkx compares a view of the nodes of n with 0: never equal
    except TypeError:
        raise nx.NetworkXError(f"Node {n} is not in the graph.") from None
    return False


def number_of_isolates(G, **run):
    G = graph_of(G)
    return int(np.count_nonzero(G.degree == 0))


def number_of_selfloops(G, **run):
    """networkx's: how many self-loop edges (each parallel one) the graph has, counted at conversion."""
    return graph_of(G).self_loops


@declines(lambda a: "edge= reads one edge's data, which the mgraph graph does not keep" if a.get("edge") is not None
          else weight_name(a.get("weight")))
def is_negatively_weighted(G, edge=None, weight="weight", **run):
    """networkx's (``edge=None``): whether any edge's ``weight`` attribute is negative, seen at conversion."""
    return bool(graph_of(G, weight).with_weight(weight).negative_weights) if weight is not None else False


# -- reciprocity (thin: arc keys on one device) --------------------------------------------


def _reciprocal_arcs(G: NxGraph, run) -> np.ndarray:
    """For each vertex, how many of its out-arcs have their reverse arc too."""
    g = thin_graph(G, None, run)
    xp = g.xp
    n = np.int64(max(g.num_vertices, 1))
    src, dst = g.arc_sources(), g.indices.astype(np.int64)
    key = src * n + dst  # sorted: rows in order, each sorted by column
    back = dst * n + src
    at = xp.searchsorted(key, back)
    if key.size == 0:
        return np.zeros(g.num_vertices, dtype=np.int64)
    found = (at < key.size) & (key[xp.minimum(at, key.size - 1)] == back)
    return host(xp.bincount(src[found], minlength=g.num_vertices)).astype(np.int64)


def _reciprocity_declines(a):
    G = a["G"]
    if G.is_multigraph():
        return "networkx counts a multigraph's parallel edges in its reciprocity"
    if not G.is_directed() and a.get("nodes") is not None:
        return "per-node reciprocity of an undirected graph: networkx's own error"
    return None


@declines(_reciprocity_declines)
def reciprocity(G, nodes=None, **run):
    """networkx's: the graph's reciprocity (``nodes=None``), one node's, or ``{node: reciprocity or None}``."""
    G = graph_of(G)
    if nodes is None:
        return overall_reciprocity(G, **run)
    recip = _reciprocal_arcs(G, run)
    g = G.graph
    loops = (G.loops > 0).astype(np.int64)
    simple_out = host(g.out_degree()).astype(np.int64)
    simple_in = np.bincount(host(g.indices).astype(np.int64), minlength=len(G))
    overlap = recip + loops
    total = simple_in + simple_out + 2 * loops

    def value(i):
        return None if total[i] == 0 else 2 * int(overlap[i]) / int(total[i])

    if nodes in G:
        r = value(G.index[nodes])
        if r is None:
            raise nx.NetworkXError("Not defined for isolated nodes.")
        return r
    return {G.node_list[i]: value(i) for i in nbunch_ids(G, nodes)}


@declines(lambda a: "networkx counts a multigraph's parallel edges" if a["G"].is_multigraph() else None)
def overall_reciprocity(G, **run):
    """networkx's: the fraction of edges whose reverse edge exists too (a self-loop counts as an edge only)."""
    G = graph_of(G)
    if G.num_edges == 0:
        raise nx.NetworkXError("Not defined for empty graphs")
    if not G.is_directed():
        return 0 / G.num_edges
    return int(_reciprocal_arcs(G, run).sum()) / G.num_edges


# -- trees ----------------------------------------------------------------------


def _pointless(G):
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("G has no nodes.")


def is_tree(G, **run):
    """networkx's: n - 1 edges (as networkx counts them) and connected (weakly, if directed)."""
    G = graph_of(G)
    _pointless(G)
    return len(G) - 1 == G.num_edges and _count(G, run) == 1


def is_forest(G, **run):
    """networkx's: every component (weak, if directed) has one edge fewer than nodes, i.e. n - components edges."""
    G = graph_of(G)
    _pointless(G)
    return G.num_edges <= len(G) - 1 and G.num_edges == len(G) - _count(G, run)


def is_arborescence(G, **run):
    """networkx's: a tree whose nodes have in-degree at most 1."""
    directed_only(G)
    G = graph_of(G)
    return is_tree(G, **run) and int(G.in_degree.max()) <= 1


def is_branching(G, **run):
    """networkx's: a forest whose nodes have in-degree at most 1."""
    directed_only(G)
    G = graph_of(G)
    return is_forest(G, **run) and int(G.in_degree.max()) <= 1


# -- graphs out ------------------------------------------------------------------


CHUNK = 1 << 22  # node pairs per block of complement's rows


def complement(G, **run):
    """networkx's: a graph of G's class on G's nodes with every edge G lacks, added in networkx's order (array code
    over the adjacency on the host, row blocks at a time)."""
    G = graph_of(G)
    if not G.own_order or G.graph_class is None:
        raise NotImplementedError("this graph class's adjacency() differs from its adj; networkx decides")
    R = G.graph_class()
    R.add_nodes_from(G.node_list)
    n = len(G)
    if n == 0:
        return R
    g = G.graph
    indptr, indices = host(g.indptr), host(g.indices).astype(np.int64)
    names = np.empty(n, dtype=object)
    names[:] = G.node_list
    rows = max(1, CHUNK // n)
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        mask = np.ones((hi - lo, n), dtype=bool)
        r = np.repeat(np.arange(hi - lo), np.diff(indptr[lo:hi + 1]))
        mask[r, indices[indptr[lo]:indptr[hi]]] = False
        mask[np.arange(hi - lo), np.arange(lo, hi)] = False
        u, v = np.nonzero(mask)
        R.add_edges_from(zip(names[u + lo].tolist(), names[v].tolist()))
    return R


def reverse(G, copy=True, **run):
    """networkx's: the reverse of a directed graph (networkx's own copy, with its attributes), which comes with its
    mgraph graph already converted (the reverse arcs), so that the backend's calls on it convert nothing."""
    if not G.is_directed():
        raise nx.NetworkXError("Cannot reverse an undirected graph.")
    G = graph_of(G)
    source = G.networkx_graph()
    if source is None:
        raise NotImplementedError("reverse returns the networkx graph's reverse, and that graph is gone")
    H = source.reverse(copy=copy)
    cache = getattr(H, "__networkx_cache__", None)
    if copy and type(H) is nx.DiGraph and G.own_order and cache is not None:
        mine = cache.setdefault(CACHE_KEY, {})
        for conversion in _conversions(G, source):
            mine[(conversion.weight, conversion.default)] = _reversed(conversion, H)
    return H


def _conversions(G: NxGraph, source) -> list:
    """G and the other conversions of its networkx graph that the caches hold (weighted by other attributes)."""
    cache = getattr(source, "__networkx_cache__", None) or {}
    found = [G] + list(cache.get(CACHE_KEY, {}).values()) + list(cache.get("backends", {}).get("mgraph", {}).values())
    out = {}
    for c in found:
        if isinstance(c, NxGraph):
            out.setdefault((c.weight, c.default), c)
    return list(out.values())


def _reversed(G: NxGraph, H) -> NxGraph:
    """The NxGraph of ``H = G.reverse(copy=True)`` from G's arrays: H lists each node's successors in the order
    networkx's copy inserted them (G's edges node by node: ascending vertex id) and its predecessors in G's
    successor order."""
    g = G.graph
    r = g.reverse()
    rev = Graph(r.indptr, r.indices, r.weights, directed=True, num_input_edges=g.num_input_edges)
    rev.labels, rev._label_index = g.labels, G.index
    rows = np.repeat(np.arange(len(G), dtype=np.int64), np.diff(host(r.indptr)))
    pos = np.arange(rows.size, dtype=np.int64) - host(r.indptr)[rows]
    out = NxGraph(rev, G.node_list, G.index, multigraph=False, weight=G.weight, default=G.default,
                  int_weights=G.int_weights, negative_weights=G.negative_weights, zero_weights=G.zero_weights,
                  exact_weights=G.exact_weights, degree=G.degree, in_degree=G.out_degree, out_degree=G.in_degree,
                  loops=G.loops, num_edges=G.num_edges, pos=pos, graph_class=nx.DiGraph, own_order=True,
                  source=weakref.ref(H))
    out._reverse_order = (g.indptr, g.indices, g.weights, G.pos)
    return out


def _ego_declines(a):
    G = a["G"]
    if a.get("undirected") and G.is_directed():
        return "undirected=True on a directed graph searches networkx's to_undirected copy"
    if not (a.get("radius") is None or real(a.get("radius"))):
        return "radius must be a real number"
    return weight_name(a.get("distance"))


@declines(_ego_declines)
def ego_graph(G, n, radius=1, center=True, undirected=False, distance=None, **run):
    """networkx's: the subgraph (with G's attributes) of the nodes within ``radius`` of ``n``, hops by mgraph's BFS
    or ``distance``-weighted by its SSSP, taken in networkx's search order as networkx takes them.  mgraph's
    searches have no depth limit: the whole component is searched."""
    G = graph_of(G, distance)
    source = G.networkx_graph()
    if source is None:
        raise NotImplementedError("ego_graph returns the networkx graph's subgraph, and that graph is gone")
    if distance is None:
        s = vertex(G, n, nx.NodeNotFound(f"Source {n} is not in G"))
        tree = searches.bfs_tree(G, [s], run)
        ids = tree.order[within_hops(tree.dist, radius)[tree.order]]
        sp = nodes_of(G, ids)
    else:
        G = dijkstra_setup(G, distance)
        s = vertex(G, n, nx.NodeNotFound(f"Node {n} not found in graph"))
        sp = list(dijkstra_paths(G, s, radius, distance, run)[0])
    H = source.subgraph(sp).copy()
    if not center:
        H.remove_node(n)
    return H


def _lpa_declines(a):
    if has_self_loops(a["G"]):
        return "networkx counts a self-loop's node among its neighbours' labels; mgraph graphs drop self-loops"
    return None


@declines(_lpa_declines)
def label_propagation_communities(G, **run):
    """networkx's: the communities (a dict_values of node sets, in the order networkx lists them) of its
    semi-synchronous label propagation, which mgraph's label_propagation runs with the same colouring and ties."""
    undirected_only(G)
    G = graph_of(G)
    if len(G) == 0:
        return {}.values()
    labels = host(api.label_propagation(G.for_weight(None), **options(run, G)).labels).tolist()
    clusters = {}
    for node, label in zip(G.node_list, labels):
        clusters.setdefault(label, set()).add(node)
    return clusters.values()


def _community_declines(a):
    G = a["G"]
    if G.is_multigraph() and _parallel_edges(G):
        return "networkx sums a multigraph's parallel edges; mgraph keeps the lightest"
    return weight_name(a.get("weight"))


def _parallel_edges(G) -> bool:
    """Whether multigraph ``G`` (an NxGraph, or a networkx graph read through its public adjacency) has two edges
    between one pair of nodes."""
    if isinstance(G, NxGraph):
        return G.num_edges != G.graph.num_edges + G.self_loops
    return any(len(keys) > 1 for nbrs in G.adj.values() for keys in nbrs.values())


def _loop_weights(G: NxGraph, weight):
    """Each vertex's self-loop weight (networkx counts self-loops as communities reduced before; the mgraph graph
    has none), read from the networkx graph; None where it has none."""
    if G.self_loops == 0:
        return None
    source = G.networkx_graph()
    if source is None:
        raise NotImplementedError("the networkx graph with the self-loops is gone; mgraph's graph has none")
    loops = np.zeros(len(G))
    for u, _, w in nx.selfloop_edges(source, data=weight or "weight", default=1):
        loops[G.index[u]] += w if weight is not None else 1
    return loops


def _communities(fn, G, weight, resolution, threshold, max_level, seed, run):
    """networkx's list of node sets, from mgraph's community numbers per vertex."""
    G = graph_of(G, weight)
    if len(G) == 0:
        return []
    if weight is not None and G.negative_weights:
        raise NotImplementedError("negative weights: mgraph's modularity needs non-negative degrees")
    if isinstance(seed, int) and not isinstance(seed, bool):
        run = {"seed": seed, **run}
    kw = {} if threshold is None else {"threshold": threshold}
    community = host(fn(G.for_weight(weight), resolution=resolution, max_level=max_level,
                        self_loops=_loop_weights(G, weight), **kw, **options(run, G)).community).tolist()
    sets = {}
    for node, c in zip(G.node_list, community):
        sets.setdefault(c, set()).add(node)
    return list(sets.values())


@declines(_community_declines)
def louvain_communities(G, weight="weight", resolution=1, threshold=0.0000001, max_level=None, seed=None, **run):
    """networkx's: a list of node sets, mgraph's Louvain (synchronous moves, so not networkx's partition for a
    seed, but one of comparable modularity); directed graphs get the directed modularity, as in networkx."""
    return _communities(api.louvain, G, weight, resolution, threshold, max_level, seed, run)


@declines(_community_declines)
def leiden_communities(G, weight="weight", resolution=1, max_level=None, seed=None, **run):
    """networkx's (which networkx leaves to backends): a list of node sets, mgraph's Leiden.  Undirected graphs."""
    undirected_only(G)
    return _communities(api.leiden, G, weight, resolution, None, max_level, seed, run)


FUNCTIONS = [connected_components, number_connected_components, is_connected, weakly_connected_components,
             number_weakly_connected_components, is_weakly_connected, strongly_connected_components,
             number_strongly_connected_components, is_strongly_connected, node_connected_component, triangles, clustering,
             average_clustering, transitivity, core_number, k_truss, jaccard_coefficient, isolates, is_isolate,
             number_of_isolates, number_of_selfloops, is_negatively_weighted, reciprocity, overall_reciprocity,
             is_tree, is_forest, is_arborescence, is_branching, complement, reverse, ego_graph,
             label_propagation_communities, louvain_communities, leiden_communities]

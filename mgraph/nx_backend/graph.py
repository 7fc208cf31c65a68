"""The backend's graph type and its conversions to and from networkx.

A networkx graph is read once, through its public adjacency ``G.adj``
(:func:`mgraph.convert.networkx_adjacency`: one walk over the neighbour dicts,
then arrays), into an :class:`NxGraph`: the simple mgraph Graph the run
functions take, plus what answering exactly as networkx needs (networkx's
degrees and edge count, which count self-loops and parallel edges; each
arc's place in networkx's neighbour order, which its BFS and Dijkstra
follow).

Converted graphs live in networkx's cache on the graph (``G.__networkx_cache__``,
cleared by networkx whenever ``G`` changes through its methods), under a key of
the backend's own (:data:`CACHE_KEY`): networkx warns each time it hands out a
graph from its own entries, so after every call the backend moves what networkx
stored there to its key (:meth:`NxGraph.keep_cached`), and
:func:`convert_from_nx` answers from it.  Nothing is cached where networkx
would not cache (``nx.config.cache_converted_graphs = False``, its test
runs, ``G.__networkx_cache__ = None``).
"""
from __future__ import annotations

import sys
import weakref

import numpy as np

from mgraph.convert import graph_of_adjacency, networkx_adjacency, networkx_order_is_own, simple_csr
from mgraph.graph import Graph

CACHE_KEY = "mgraph"
"""Where in ``G.__networkx_cache__`` the backend keeps its converted graphs: ``{(weight, default): NxGraph}``."""

EXACT_INTS = 2 ** 53  # integers beyond this do not all have a float64: sums of such weights would round


class NxGraph:
    """A networkx graph converted for mgraph: the mgraph Graph plus what the algorithms need to answer as networkx.

    ``graph`` is the simple mgraph Graph (self-loops dropped, parallel edges
    merged keeping the smallest weight), labelled by the networkx nodes;
    vertex i is ``node_list[i]`` (``list(G)`` order), so results come back in
    networkx's node order.  Kept besides, as networkx counts them:
    ``degree`` (``G.degree``: a self-loop twice in an undirected graph, each
    parallel edge), ``in_degree``/``out_degree`` (directed), ``num_edges``,
    ``loops`` (self-loop edges per node) and ``self_loops`` (their total);
    ``pos[k]``, arc k's place among its tail's neighbours in ``G.adj``;
    whether the weights (of attribute ``weight``) were all ints, any
    negative or zero; the class of the graph; whether its neighbour order is
    networkx's own (:func:`mgraph.convert.networkx_order_is_own`); and a weak
    reference to the networkx graph itself (``source``), for what only it
    holds (attributes, its predecessor order).
    """

    __networkx_backend__ = "mgraph"

    def __init__(self, graph: Graph, node_list: list, index: dict, *, multigraph: bool, weight: str | None,
                 default=1, int_weights: bool = True, negative_weights: bool = False, zero_weights: bool = False,
                 exact_weights: bool = True, degree=None, in_degree=None, out_degree=None, loops=None,
                 num_edges: int | None = None, pos=None, graph_class=None, own_order: bool = False, source=None):
        self.graph = graph
        self.node_list = node_list
        self.index = index
        self.multigraph = multigraph
        self.weight = weight
        self.default = default
        self.int_weights = int_weights
        self.negative_weights = negative_weights
        self.zero_weights = zero_weights
        self.exact_weights = exact_weights
        n = len(node_list)
        zeros = np.zeros(n, dtype=np.int64)
        self.loops = zeros if loops is None else loops
        self.self_loops = int(self.loops.sum())
        self.out_degree = graph.out_degree().astype(np.int64) if out_degree is None else out_degree
        if in_degree is None:
            in_degree = np.bincount(np.asarray(graph.indices), minlength=n).astype(np.int64) if graph.directed \
                else self.out_degree
        self.in_degree = in_degree
        if degree is None:
            degree = self.in_degree + self.out_degree if graph.directed else self.out_degree + self.loops
        self.degree = degree
        self.num_edges = graph.num_edges + self.self_loops if num_edges is None else int(num_edges)
        self.pos = pos
        self.graph_class = graph_class
        self.own_order = own_order
        self.source = source
        self._views = {}
        self._reverse_order = None

    @classmethod
    def from_networkx(cls, G, weight: str | None = None, default=1) -> "NxGraph":
        """Convert networkx graph ``G`` reading ``weight`` (None: unweighted) as the weights, ``default`` where an
        edge has no such attribute; ValueError where they are not real numbers."""
        adj = networkx_adjacency(G, weight, default)
        graph, entry = graph_of_adjacency(adj)
        rows = adj.rows()
        n = adj.num_vertices
        mult = adj.multiplicity
        loop = rows == adj.indices
        loops = np.bincount(rows[loop], weights=None if mult is None else mult[loop], minlength=n).astype(np.int64)
        out = np.bincount(rows, weights=None if mult is None else mult, minlength=n).astype(np.int64)
        if adj.directed:
            ins = np.bincount(adj.indices, weights=None if mult is None else mult, minlength=n).astype(np.int64)
            degree, num_edges = ins + out, int(out.sum())
        else:
            ins, degree = out + loops, out + loops
            out = degree
            num_edges = int(degree.sum()) // 2
        w = adj.weights
        kept = None if w is None else w[entry]
        int_weights = w is None or w.dtype.kind in "iu"
        exact = not (w is not None and int_weights and w.size and int(np.abs(w).max()) > EXACT_INTS)
        try:
            ref = weakref.ref(G)
        except TypeError:  # a graph object that takes no weak references: attributes come from the arrays
            ref = None
        return cls(graph, adj.nodes, adj.index, multigraph=bool(G.is_multigraph()), weight=weight, default=default,
                   int_weights=int_weights, exact_weights=exact,
                   negative_weights=w is not None and bool((w < 0).any()),  # a self-loop's too
                   zero_weights=kept is not None and bool((kept == 0).any()),
                   degree=degree, in_degree=ins, out_degree=out, loops=loops, num_edges=num_edges,
                   pos=(entry - adj.indptr[rows[entry]]).astype(np.int64), graph_class=type(G),
                   own_order=networkx_order_is_own(G), source=ref)

    # what networkx's decorators (not_implemented_for, ...) and dispatcher ask of a graph
    def is_directed(self) -> bool:
        return self.graph.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.node_list)

    def number_of_nodes(self) -> int:
        return len(self.node_list)

    def number_of_edges(self) -> int:
        return self.num_edges

    def __iter__(self):
        return iter(self.node_list)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable: not a node, as networkx answers
            return False

    def networkx_graph(self):
        """The networkx graph this was converted from while it lives, else None."""
        return None if self.source is None else self.source()

    def for_weight(self, weight) -> Graph:
        """The mgraph Graph an algorithm called with ``weight`` runs on: unweighted for None, else this graph's
        weights, which must be that attribute's (a graph converted for another attribute cannot answer).

        The graph is unlabelled, so that the run functions take vertex ids (a
        labelled graph makes them take labels), and kept, so that what a Graph
        caches (its reverse, its copy on a GPU) serves every call.
        """
        if weight is not None and weight != self.weight:
            raise NotImplementedError(f"this mgraph graph holds edge attribute {self.weight!r} as its weights, "
                                      f"not {weight!r}: convert the networkx graph again")
        weighted = weight is not None and self.graph.weights is not None
        view = self._views.get(weighted)
        if view is None:
            g = self.graph
            view = self._views[weighted] = Graph(g.indptr, g.indices, g.weights if weighted else None,
                                                 directed=g.directed, num_input_edges=g.num_input_edges)
        return view

    def with_weight(self, weight) -> "NxGraph":
        """This graph converted with ``weight`` as its weights: itself where it already is (or ``weight`` is None),
        else converted again from the networkx graph (through the cache).  NotImplementedError where that graph
        is gone."""
        if weight is None or weight == self.weight:
            return self
        G = self.networkx_graph()
        if G is None:
            raise NotImplementedError(f"this mgraph graph holds edge attribute {self.weight!r} as its weights, and "
                                      f"the networkx graph to read {weight!r} from is gone")
        return convert_from_nx(G, edge_attrs={weight: 1})

    def order_arrays(self, reverse: bool = False):
        """(indptr, indices, weights, pos) of the arcs a search walks in networkx's neighbour order: out-arcs
        (``G.adj``), or with ``reverse`` in-arcs (``G.pred`` of a directed graph, read from the networkx graph
        on first use).  NotImplementedError where that order is not networkx's own or cannot be read."""
        if not self.own_order:
            raise NotImplementedError("this graph's class redefines how networkx walks its neighbours, so its "
                                      "order cannot be read from the adjacency")
        g = self.graph
        if not (reverse and g.directed):
            return g.indptr, g.indices, g.weights, self.pos
        if self._reverse_order is None:
            G = self.networkx_graph()
            if G is None:
                raise NotImplementedError("the order of predecessors is read from the networkx graph, which is gone")
            adj = networkx_adjacency(G, self.weight, self.default, mapping="pred")
            indptr, indices, w, entry = simple_csr(adj)
            if w is not None and g.weights is None:  # this graph stores all-one weights as unweighted
                w = None
            pos = entry - adj.indptr[adj.rows()[entry]]
            self._reverse_order = (indptr, indices, w, pos)
        return self._reverse_order

    def keep_cached(self) -> None:
        """Move the converted graphs networkx cached on the networkx graph to the backend's own key.

        networkx warns whenever it reuses one of its cache entries; from
        :data:`CACHE_KEY` :func:`convert_from_nx` hands them out without the
        warning.  Entries exist only where networkx itself caches, and both
        keys go when networkx clears the cache (any change through G's methods).
        """
        G = self.networkx_graph()
        cache = getattr(G, "__networkx_cache__", None) if G is not None else None
        if not cache:
            return
        theirs = cache.get("backends", {}).get("mgraph")
        if not theirs:
            return
        mine = cache.setdefault(CACHE_KEY, {})
        for key, value in list(theirs.items()):
            if isinstance(value, NxGraph):
                mine[(value.weight, value.default)] = value
            del theirs[key]  # a failed conversion's marker too: networkx would warn on it as well

    def __repr__(self) -> str:
        return f"NxGraph({self.graph!r}, weight={self.weight!r})"


def _edge_attribute(edge_attrs, preserve_edge_attrs):
    """(weight, default) from the dispatcher's ``edge_attrs`` (``{attr: default}`` or None)."""
    if not edge_attrs:
        return None, 1  # preserve_edge_attrs: the attributes stay reachable through the networkx graph
    if len(edge_attrs) > 1:
        raise NotImplementedError(f"mgraph holds one edge attribute as weights, not {sorted(edge_attrs)}")
    (weight, default), = edge_attrs.items()
    return weight, 1 if default is None else default


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                    preserve_graph_attrs=False, name=None, graph_name=None) -> NxGraph:
    """networkx graph ``G`` as an :class:`NxGraph`, its weights from the one edge attribute ``edge_attrs`` names.

    The dispatcher passes ``edge_attrs={attr: default}`` when the algorithm was
    called with ``weight=attr`` (edges without it weigh ``default``) and None
    when unweighted.  Node, graph and other edge attributes are not
    converted: the algorithms that return graphs with them read them from
    ``G`` itself.  A graph converted before (in the backend's cache key,
    :data:`CACHE_KEY`) is returned as it is; an unweighted request takes any
    conversion of ``G``.  Nothing is read from the cache where
    ``nx.config.cache_converted_graphs`` is off.  What mgraph cannot hold (several edge attributes,
    weights that are not finite real numbers) raises NotImplementedError,
    which lets networkx run the call itself.
    """
    weight, default = _edge_attribute(edge_attrs, preserve_edge_attrs)
    cache = getattr(G, "__networkx_cache__", None) if sys.modules["networkx"].config.cache_converted_graphs else None
    mine = cache.get(CACHE_KEY) if cache else None
    if mine:
        hit = mine.get((weight, default))
        if hit is None and weight is None:
            hit = next(iter(mine.values()), None)
        if hit is not None:
            return hit
    try:
        return NxGraph.from_networkx(G, weight, default)
    except ValueError as e:  # weights that are not real numbers, NaN or infinite
        raise NotImplementedError(str(e)) from None


def cached_conversion(G) -> NxGraph | None:
    """Any conversion of networkx graph ``G`` in the backend's cache key (where networkx caches at all), else None:
    what the graph's structure alone decides (its self-loops) is read there instead of walking ``G`` again."""
    cache = getattr(G, "__networkx_cache__", None) if sys.modules["networkx"].config.cache_converted_graphs else None
    mine = cache.get(CACHE_KEY) if cache else None
    return next(iter(mine.values()), None) if mine else None


def convert_to_nx(obj, *, name=None):
    """Results (dicts, generators, numbers, networkx graphs) are networkx's already; an :class:`NxGraph` becomes a
    networkx graph of the simple graph it holds (its nodes in order, each edge once, weights under their
    attribute)."""
    if not isinstance(obj, NxGraph):
        return obj
    nx = sys.modules["networkx"]
    g = obj.graph
    cls = {(False, False): nx.Graph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph}[(g.directed, obj.multigraph)]
    H = cls()
    H.add_nodes_from(obj.node_list)
    src, dst, w = g.edges()
    nodes = np.fromiter(obj.node_list, dtype=object, count=len(obj.node_list))
    ends = zip(nodes[src].tolist(), nodes[dst].tolist())
    if obj.weight is None:
        H.add_edges_from(ends)
    else:
        w = np.ones(src.size) if w is None else w
        weights = w.astype(np.int64).tolist() if obj.int_weights else w.tolist()
        H.add_weighted_edges_from(((u, v, x) for (u, v), x in zip(ends, weights)), weight=obj.weight)
    return H

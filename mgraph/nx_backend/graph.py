"""The backend's graph type and its conversions to and from networkx."""
from __future__ import annotations

import numpy as np

from mgraph.convert import _set_labels, label_array, networkx_edges
from mgraph.graph import Graph


class NxGraph:
    """A networkx graph converted for mgraph: the mgraph Graph plus what the algorithms need to answer as networkx.

    ``graph`` is the simple mgraph Graph (self-loops dropped, parallel edges
    merged keeping the smallest weight), labelled by the networkx nodes;
    vertex i is ``node_list[i]`` (``list(G)`` order), so results come back in
    networkx's node order.  Kept besides: whether the networkx graph was
    directed or a multigraph, how many self-loops it had (pagerank counts
    them; mgraph does not), which edge attribute the weights came from, and
    whether every weight was an int (networkx then sums to ints).
    """

    __networkx_backend__ = "mgraph"

    def __init__(self, graph: Graph, node_list: list, index: dict, *, multigraph: bool, self_loops: int,
                 weight: str | None, int_weights: bool, negative_weights: bool):
        self.graph = graph
        self.node_list = node_list
        self.index = index
        self.multigraph = multigraph
        self.self_loops = self_loops
        self.weight = weight
        self.int_weights = int_weights
        self.negative_weights = negative_weights
        self._views = {}

    # what networkx's decorators (not_implemented_for, ...) and dispatcher ask of a graph
    def is_directed(self) -> bool:
        return self.graph.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.node_list)

    def number_of_nodes(self) -> int:
        return len(self.node_list)

    def __iter__(self):
        return iter(self.node_list)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable: not a node, as networkx answers
            return False

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

    def __repr__(self) -> str:
        return f"NxGraph({self.graph!r}, weight={self.weight!r})"


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                    preserve_graph_attrs=False, name=None, graph_name=None) -> NxGraph:
    """networkx graph ``G`` as an :class:`NxGraph`, its weights from the one edge attribute ``edge_attrs`` names.

    The dispatcher passes ``edge_attrs={attr: default}`` when the algorithm was
    called with ``weight=attr`` (edges without it weigh ``default``) and None
    when unweighted.  Node and graph attributes are not needed by any
    algorithm the backend runs.  What mgraph cannot hold (several edge
    attributes, all of them, weights that are not real numbers) raises
    NotImplementedError, which lets networkx run the call itself.
    """
    weight, default = None, 1
    if edge_attrs:
        if len(edge_attrs) > 1:
            raise NotImplementedError(f"mgraph holds one edge attribute as weights, not {sorted(edge_attrs)}")
        (weight, default), = edge_attrs.items()
        if default is None:
            default = 1
    elif preserve_edge_attrs:
        raise NotImplementedError("mgraph holds one named edge attribute as weights, not every attribute")
    try:
        nodes, index, src, dst, w = networkx_edges(G, weight, default)
    except ValueError as e:
        raise NotImplementedError(str(e)) from None
    loops = int(np.count_nonzero(src == dst))
    int_weights = w is None or w.dtype.kind in "iu"
    negative = w is not None and bool((w < 0).any())
    if w is not None and bool(np.all(w == 1)):
        w = None  # every weight 1: the unweighted graph gives the same numbers
    try:
        graph = Graph.from_edges(src, dst, w, num_vertices=len(nodes), directed=bool(G.is_directed()))
    except ValueError as e:  # NaN or infinite weights
        raise NotImplementedError(str(e)) from None
    _set_labels(graph, label_array(nodes), index)
    return NxGraph(graph, nodes, index, multigraph=bool(G.is_multigraph()), self_loops=loops, weight=weight,
                   int_weights=int_weights, negative_weights=negative)


def convert_to_nx(obj, *, name=None):
    """Results (dicts, generators, numbers) are networkx's already; an :class:`NxGraph` becomes a networkx graph
    of the simple graph it holds (its nodes in order, each edge once, weights under their attribute)."""
    if not isinstance(obj, NxGraph):
        return obj
    import networkx as nx

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

"""The NetworkX backend "mgraph": ``nx.pagerank(G, backend="mgraph")`` runs mgraph's PageRank and answers as networkx.

NetworkX finds it through the ``networkx.backends`` entry point
(``backend_interface`` below) and its metadata through
``networkx.backend_info`` (``mgraph_nx_info.get_info``, a package apart so
that ``import networkx`` does not import mgraph).  A call converts the
networkx graph (:func:`~mgraph.nx_backend.graph.convert_from_nx`: nodes
renumbered in ``list(G)`` order, the weight attribute the call names as the
weights), runs the mgraph primitive on ``nx.config.backends.mgraph.devices``
devices and maps the values back to the nodes.  docs/networkx.md lists what
runs, what is declined and why.
"""
from __future__ import annotations

import functools

from mgraph.nx_backend import graph
from mgraph.nx_backend.algorithms import FUNCTIONS, declines
from mgraph.nx_backend.testing import mark_expected_failures

# Below this many edges networkx beats mgraph on one CPU even with the graph converted: measured on the 2-core
# development machine (NumPy backend), number_connected_components, single_source_shortest_path_length, pagerank
# and betweenness_centrality break even between 1,000 and 15,000 edges (docs/networkx.md).
SMALL_GRAPH_EDGES = 5000


def _keeping_cache(fn):
    """``fn`` as networkx calls it: afterwards the converted graphs networkx cached go to the backend's own cache
    key, where they are reused without networkx's warning (:meth:`NxGraph.keep_cached`)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            for a in args[:1] + tuple(v for v in kwargs.values() if isinstance(v, graph.NxGraph)):
                if isinstance(a, graph.NxGraph):
                    a.keep_cached()
    return call


class BackendInterface:
    """What networkx's dispatcher asks of a backend: conversions, the algorithms, can_run/should_run, test marks."""

    convert_from_nx = staticmethod(graph.convert_from_nx)
    convert_to_nx = staticmethod(graph.convert_to_nx)

    def __init__(self):
        for name, fn in FUNCTIONS.items():
            setattr(self, name, _keeping_cache(fn))

    @staticmethod
    def can_run(name, args, kwargs):
        """True where the backend gives networkx's answer for these arguments, else a string saying why not.

        Only the arguments are looked at (and, for a few functions, a
        networkx graph's self-loops: one pass over its adjacency); what shows
        only in the converted graph (negative weights for Dijkstra, ties
        among Bellman-Ford paths) makes the function raise
        NotImplementedError instead, which networkx treats the same way.
        """
        reason = declines(name, args, kwargs)
        return True if reason is None else reason

    @staticmethod
    def should_run(name, args, kwargs):
        """Whether running on mgraph is likely faster than networkx: not on a networkx graph of fewer than
        ``SMALL_GRAPH_EDGES`` edges, where mgraph's fixed cost per call (about 1 ms on a CPU) exceeds networkx's
        whole run.  A graph already converted (an NxGraph) always runs here.  Only automatic dispatch
        (``nx.config.backend_priority``) asks; ``backend="mgraph"`` runs regardless.
        """
        G = args[0] if args else kwargs.get("G")
        if isinstance(G, graph.NxGraph) or not hasattr(G, "number_of_edges"):
            return True
        if G.number_of_edges() < SMALL_GRAPH_EDGES:
            return (f"a graph of fewer than {SMALL_GRAPH_EDGES} edges runs faster in networkx than mgraph's fixed "
                    "cost per call")
        return True

    @staticmethod
    def on_start_tests(items):
        """Mark networkx's own tests that are expected to fail with this backend, each with its reason."""
        mark_expected_failures(items)


backend_interface = BackendInterface()

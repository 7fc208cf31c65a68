"""What every backend function shares: the run options, the graph it runs on, nodes and ids, declines.

A backend function takes the networkx function's arguments plus mgraph's run
options (``devices=4``, ``partitioner="metis"``, ...), which default to
``nx.config.backends.mgraph``.  Where mgraph cannot give networkx's answer it
raises NotImplementedError (networkx then runs the call itself where
``nx.config.fallback_to_nx`` is set); :func:`declines` attaches to each
function the test ``can_run`` asks before any conversion, from the arguments
alone.
"""
from __future__ import annotations

import math
import numbers

import networkx as nx
import numpy as np

from mgraph.backend import resolve, to_numpy
from mgraph.nx_backend.graph import NxGraph, cached_conversion, convert_from_nx

CONFIG_KEYS = ("devices", "backend", "partitioner")


def options(extra: dict, G=None) -> dict:
    """mgraph's run options: nx.config.backends.mgraph, then what the call passed.  A count of ``devices`` larger
    than ``G``'s nodes (a run's limit: a device owns at least one vertex) becomes one device per node, so a
    configured count serves small graphs too."""
    cfg = getattr(nx.config.backends, "mgraph", None)
    out = {key: cfg[key] for key in CONFIG_KEYS if cfg is not None and key in cfg}
    out.update(extra)
    devices = out.get("devices")
    if G is not None and isinstance(devices, int) and not isinstance(devices, bool) and devices > max(len(G), 1):
        out["devices"] = max(len(G), 1)
    return out


def thin_graph(G: NxGraph, weight, run: dict):
    """The Graph that array code (the thin functions, stated as such in docs/networkx.md) runs on: on the
    configured backend's first device (CuPy on a GPU, NumPy on a CPU), one device whatever ``devices`` says.
    Only ``backend`` of the run options applies; the others are checked as a run would check them."""
    opts = options(run)
    g = G.for_weight(weight)
    return g.to(resolve(opts.get("backend", "auto")))


def graph_of(G, weight=None) -> NxGraph:
    """``G`` as an NxGraph: as given when the dispatcher converted it, else converted here with ``weight``."""
    if isinstance(G, NxGraph):
        return G
    return convert_from_nx(G, edge_attrs=None if weight is None else {weight: 1})


def nodes_of(G: NxGraph, ids) -> list:
    """The networkx nodes of vertex ids ``ids`` (the original objects, in that order)."""
    ids = np.asarray(to_numpy(ids), dtype=np.int64)
    labels = G.graph.labels
    return labels[ids].tolist() if labels.dtype != object else [G.node_list[i] for i in ids.tolist()]


def vertex(G: NxGraph, node, error):
    """The vertex id of ``node``, or ``error`` (an exception) raised."""
    try:
        return G.index[node]
    except (KeyError, TypeError):
        raise error from None


def host(a) -> np.ndarray:
    return to_numpy(a)


def real(x) -> bool:
    """A finite real number that is not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def integer(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def undirected_only(G):
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")


def directed_only(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")


def has_self_loops(G) -> bool:
    """Whether ``G`` (an NxGraph, or a networkx graph read through its public adjacency) has a self-loop."""
    if isinstance(G, NxGraph):
        return G.self_loops > 0
    converted = cached_conversion(G)  # a walk over every node costs more than a cached call's whole run
    if converted is not None:
        return converted.self_loops > 0
    return any(u in nbrs for u, nbrs in G.adj.items())


def weight_name(weight) -> str | None:
    """Why an edge weight argument cannot run here (a function, not an attribute name), or None."""
    if weight is not None and not isinstance(weight, str):
        return "mgraph takes weights from an edge attribute, not a function"
    return None


def declines(test):
    """Attach ``test(arguments) -> reason or None`` to a backend function: ``can_run`` binds the call's arguments
    (defaults applied) and calls it; a reason declines the call before anything is converted."""
    def mark(fn):
        fn.declines = test
        return fn
    return mark


def weighted_paths_decline(G: NxGraph, weight) -> None:
    """Raise NotImplementedError where mgraph's SSSP cannot give networkx's weighted distances: negative weights
    (networkx's own rules or errors decide what they mean) and integer weights too large for float64 sums."""
    if weight is None:
        return
    if G.negative_weights:
        raise NotImplementedError("negative weights: networkx decides what they mean, mgraph's SSSP refuses them")
    if not G.exact_weights:
        raise NotImplementedError("integer weights beyond 2**53 do not add up exactly in float64")


def as_number(x: float, integral: bool):
    """A distance as networkx gives it: an int where every weight summed was an int, else a float."""
    return int(x) if integral else float(x)

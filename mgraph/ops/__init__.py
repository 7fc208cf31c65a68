"""Operators over frontiers, in the Gunrock model: advance (push; pull with early exit), filter, compute.

A frontier is an array of vertex ids (or, for pulling, a bitmap).  Every
operator runs on the array module its arrays live in: CuPy RawKernels in
:mod:`.cupy_ops`, their NumPy twins in :mod:`.numpy_ops`.  Primitives call
only these functions, so the same primitive runs on either backend.
"""
from __future__ import annotations

import numpy as np

from ..backend import array_module
from . import numpy_ops

UNVISITED = numpy_ops.UNVISITED
Bits = numpy_ops.Bits
__all__ = ["UNVISITED", "advance_visit", "advance_visit_pull", "advance_relax", "advance_count_paths",
           "advance_dependency", "pull_sum", "prepare_pull", "hook_components", "compress", "bitmap", "Bits", "bit_test",
           "filter", "segment_min"]


def _impl(a):
    if array_module(a) is np:
        return numpy_ops
    from . import cupy_ops

    return cupy_ops


def advance_visit(graph, frontier, label, pred, level, dist=None):
    """Push advance + filter: claim unvisited out-neighbours (only tight arcs when ``dist`` is given); the new frontier."""
    return _impl(label).advance_visit(graph, frontier, label, pred, level, dist)


def advance_visit_pull(rgraph, label, pred, level, frontier_bits):
    """Pull advance with early exit over in-arcs (``rgraph`` is the reverse graph); the new frontier."""
    return _impl(label).advance_visit_pull(rgraph, label, pred, level, frontier_bits)


def advance_relax(graph, frontier, dist, marks, stamp):
    """Push advance + filter: min-relax distances along out-arcs; the improved vertices, once each.

    ``marks`` (int32 per vertex, never equal to a fresh ``stamp``) is scratch
    that dedupes the output without a sort: pass a new stamp each superstep.
    """
    return _impl(dist).advance_relax(graph, frontier, dist, marks, stamp)


def advance_count_paths(graph, frontier, label, sigma, level):
    """Brandes forward: visit the next level and count shortest paths into it; the new frontier."""
    return _impl(sigma).advance_count_paths(graph, frontier, label, sigma, level)


def advance_dependency(graph, frontier, label, sigma, delta, level):
    """Brandes backward: accumulate dependencies of the ``level`` frontier from its successors."""
    return _impl(delta).advance_dependency(graph, frontier, label, sigma, delta, level)


def pull_sum(rgraph, x):
    """Compute: y[v] = sum over in-arcs of x[u] * w(u, v)."""
    return _impl(x).pull_sum(rgraph, x)


def prepare_pull(rgraph):
    """Prepare ``rgraph`` for repeated :func:`pull_sum` calls, once while it lives (a primitive calls it where it
    is built, so that the work is timed apart from its runs): on a GPU, column ids renumbered hot first, so that
    the gathers hit L2.  Results are unchanged."""
    _impl(rgraph.indptr).prepare_pull(rgraph)


def hook_components(graph, parent, pairs_below=None):
    """Compute: union-find over the arcs; roots end as the smallest id of each component they connect.  An arc
    u -> v between two vertices below ``pairs_below`` is hooked only where u < v: the caller hooks the other arc of
    every such pair (an undirected graph stores both; a directed graph's other direction is in its reverse, which
    the caller hooks too), so each of those edges is hooked once (None: every arc)."""
    return _impl(parent).hook_components(graph, parent, pairs_below)


def compress(parent):
    """Compute: pointer jumping until every vertex points at its root."""
    return _impl(parent).compress(parent)


def segment_min(seg, values, initial):
    """Compute: a copy of ``initial`` lowered to the smallest of ``values`` landing on each slot (``seg`` gives each
    value's slot).  CC: the smallest label of each union-find tree, starting from the roots' own labels."""
    return _impl(values).segment_min(seg, values, initial)


def bitmap(vertices, num_vertices, table=None, base=0):
    """A frontier as a bitmap of uint32 words over ``num_vertices`` bits; with ``table``, bit ``table[v] - base``
    for each vertex v whose ``table[v]`` is not -1 (the bits of another numbering's block of ids)."""
    return _impl(vertices).bitmap(vertices, num_vertices, table, base)


def bit_test(bits, ids):
    """Which of ``ids`` are set in ``bits``."""
    return _impl(bits).bit_test(bits, ids)


def filter(frontier, keep):
    """The frontier's vertices where ``keep`` (a boolean array over the frontier) holds."""
    return frontier[keep]

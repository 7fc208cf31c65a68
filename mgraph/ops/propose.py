"""Louvain's proposal on a whole undirected graph: each scored vertex's best neighbouring community, as one operator.

A round of Louvain's local moving scores, for every vertex u to be scored,
each community c of its neighbours by w(u, c) - gamma * 2 k(u) K(c) / S
(w(u, c): u's arc weight into c; k: degrees; K: the communities' degree
totals; S twice the total weight) and keeps the best that is not u's own,
ties to the smallest label, with u's arc weight to its own community.  Built
from array operations (:func:`best_moves`, the NumPy twin) that is a hash
table of the (vertex, community) pairs, a scatter-add for the weight to the
own community and two scatters for the best: four passes with atomics over
every arc or pair.  On one GPU holding the whole graph, :mod:`.cupy_propose`
does it in one pass, a warp or a block per vertex, the pairs summed in
shared memory; the vertices whose rows do not fit there (power-law hubs) take
these array operations on their arcs alone.

:func:`best_per_row`, :func:`ordered` and :func:`sums` are Louvain's own
pieces, kept here so that the operator and the primitive share them.
"""
from __future__ import annotations

import numpy as np

from mgraph.ops import segments

# the fused GPU proposal is used where it applies (switch it off to compare with the array operations in one process)
ENABLED = True


def sums(xp, at, weights, n):
    """The sum of ``weights`` landing on each of ``n`` slots (``at``: each weight's slot; ``weights`` None: 1 each,
    an unweighted graph's arcs, which keep no array of ones), float64: a bincount on the CPU; on a GPU atomic adds,
    which take an empty ``at`` too (CuPy's bincount reads its maximum first)."""
    if xp is np:
        return np.bincount(at, weights=weights, minlength=n).astype(np.float64, copy=False)
    from mgraph.ops import cupy_scatter  # a warp's entries of one slot added first: a hub's arcs share one

    return cupy_scatter.add_at(xp.zeros(n), at, weights)


def ordered(scores):
    """float64 scores as int64 in the same order (IEEE bits, negatives' magnitude bits flipped; -0.0 as 0.0), so
    that a largest score per row is an integer scatter-max, which CuPy's float64 maximum.at does not give right."""
    bits = (scores + 0.0).view(np.int64)
    return bits ^ ((bits >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))


def unordered(bits):
    """The float64 scores of :func:`ordered`'s integers (its inverse, but that -0.0 comes back as 0.0)."""
    return (bits ^ ((bits >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))).view(np.float64)


def best_per_row(xp, rows, keys, scores, allowed, num_rows):
    """Per row 0 .. ``num_rows`` - 1, among its ``allowed`` pairs (rows[i], keys[i]) in any order: the highest score,
    ties to the smallest key; two arrays of one entry per row, the key (-1 where a row has no allowed pair) and its
    score (-inf there; -0.0 comes back as 0.0).  Scatters of int64 over every pair, the others masked (a max of the
    ordered scores, a min of the keys at it), the same on any order of the pairs: a compaction of the allowed pairs
    or of the ties would make a GPU wait to learn how many there are."""
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    bits = xp.where(allowed, ordered(scores), low)
    top = xp.full(num_rows, low, dtype=np.int64)
    _scatter(xp, "max", top, rows, bits)
    tie = allowed & (bits == top[rows])
    pick = xp.full(num_rows, high, dtype=np.int64)
    _scatter(xp, "min", pick, rows, xp.where(tie, keys.astype(np.int64, copy=False), high))
    none = pick == high
    return xp.where(none, -1, pick), xp.where(none, -np.inf, unordered(top))


def _scatter(xp, op, out, at, values):
    """``out[at] = op(out[at], values)`` entry by entry (op "max" or "min"): NumPy's ufunc.at on the CPU; on a GPU
    :mod:`.cupy_scatter`, whose warps combine the entries of one row first (CuPy's ufunc.at queued every pair of a
    hub on the hub's one slot)."""
    if xp is np:
        (np.maximum if op == "max" else np.minimum).at(out, at, values)
        return
    from mgraph.ops import cupy_scatter

    (cupy_scatter.max_at if op == "max" else cupy_scatter.min_at)(out, at, values)


def pair_scores(weights, ko, totals, resolution, scale):
    """w(u, c) - gamma * (2 k(u) K(c)) / S, in the operation order of Louvain's scores (k(u) K(c) doubled, times
    gamma, over S, from w): the GPU kernel rounds the same operations in the same order."""
    terms = ko * totals * 2.0
    return weights - resolution * terms / scale


def score_pairs(xp, rows, keys, weights, community, k_out, totals, resolution, scale, num_rows, look=None):
    """The proposal of rows 0 .. ``num_rows`` - 1 from their (row, community) pairs (``weights``: each pair's arc
    weight, or the number 1.0): (target, best, w_stay) as :func:`best_moves` gives them, ``community``, ``k_out``
    and ``look`` taken per row (arrays of ``num_rows``), ``totals`` per label."""
    mine = keys == community[rows]
    w_stay = sums(xp, rows, xp.where(mine, weights, 0.0), num_rows)
    scores = pair_scores(weights, k_out[rows], totals[keys], resolution, scale)
    target, best = best_per_row(xp, rows, keys, scores, ~mine, num_rows)
    if look is not None:  # rows not scored: no pair, as the array operations on their compacted arcs give them
        target, best = xp.where(look, target, -1), xp.where(look, best, -np.inf)
        w_stay = xp.where(look, w_stay, 0.0)
    return target, best, w_stay


def best_moves(graph, community, k_out, totals, resolution, scale, look, distinct, pair_totals):
    """The NumPy twin of :func:`mgraph.ops.best_moves` (its docstring has the rules): the array operations over the
    arcs of the rows in ``look``, compacted, and their pairs from ``pair_totals`` (:func:`mgraph.ops.pair_totals`,
    passed in by the package, which this module does not import)."""
    xp = graph.xp
    nv = graph.num_vertices
    src, dst = segments.arcs(graph, None, True)
    w = None if graph.weights is None else graph.weights.astype(np.float64, copy=False)
    if look is not None:
        at = xp.flatnonzero(look[src])
        src, dst = src[at], dst[at]
        w = None if w is None else w[at]
    keys = community[dst]
    if look is None and distinct:  # every pair is one arc
        rows, weights = src, (1.0 if w is None else w)
    else:
        rows, keys, weights = pair_totals(src, keys, w, totals.shape[0])
    return score_pairs(xp, rows, keys, weights, community, k_out, totals, resolution, scale, nv)


def unsettled_rows(graph, moved, priority):
    """The NumPy twin of :func:`mgraph.ops.unsettled_rows`: the array operations Louvain ran, a scatter of every arc
    whose target moved into an extra last slot (the sources of those arcs, without a compaction to wait for)."""
    xp = graph.xp
    nv = graph.num_vertices
    src, dst = segments.arcs(graph, None, True)
    look = xp.zeros(nv + 1, dtype=bool)
    look[xp.where(moved[dst], src, nv)] = True
    look = look[:nv]
    look |= moved | (priority >= 0)
    return look


def inside_change(graph, moved, community, old):
    """The NumPy twin of :func:`mgraph.ops.inside_change`: the array operations Louvain ran, the moved vertices'
    arcs compacted and summed."""
    xp = graph.xp
    src, dst = segments.arcs(graph, None, True)
    at = xp.flatnonzero(moved[src])
    x, y = src[at], dst[at]
    change = (community[x] == community[y]).astype(np.float64) - (old[x] == old[y])
    times = 1.0 + ~moved[y]
    if graph.weights is None:  # unit weights: w * change is change, exactly
        return xp.asarray((change * times).sum())
    return xp.asarray((graph.weights.astype(np.float64, copy=False)[at] * change * times).sum())


def commit_sums(graph, priority, target, community, blocked=False):
    """The NumPy twin of :func:`mgraph.ops.commit_sums`: the array operations Louvain ran, the proposers' arcs
    compacted and two scatter-adds over them (bincount on the CPU: each row's arcs added in CSR order from 0.0)."""
    xp = graph.xp
    nv = graph.num_vertices
    p, t, c = priority, target, community
    src, dst = segments.arcs(graph, None, True)
    at = xp.flatnonzero((p >= 0)[src])
    u, v = src[at], dst[at]
    w = 1.0 if graph.weights is None else graph.weights.astype(np.float64, copy=False)[at]
    del at, src, dst
    first = p[v] >= p[u]
    there = xp.where(first, t[v], c[v])
    w_to = sums(xp, u, xp.where(there == t[u], w, 0.0), nv)
    w_stay = sums(xp, u, xp.where(there == c[u], w, 0.0), nv)
    held = None
    if blocked:
        held = xp.zeros(nv, dtype=bool)
        held[u[first]] = True
    return w_to, w_stay, held

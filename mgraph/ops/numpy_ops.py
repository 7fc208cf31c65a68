"""NumPy operators: the CPU backend, and the reference twin of every CuPy kernel.

Each function has the signature and the result of its namesake in
:mod:`mgraph.ops.cupy_ops`.  Where the GPU picks one of several valid answers
(which predecessor claims a vertex first), both give a valid one, and
GPU tests compare them by what must agree (depths, sums, labels).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mgraph.ops import functors, segments

UNVISITED = -1


def bitmap(vertices, num_vertices, table=None, base=0):
    """A frontier as bits (uint32 words, vertex i is bit i % 32 of word i // 32): |V|/8 bytes.  With ``table``, bit
    ``table[v] - base`` for each vertex v whose ``table[v]`` is not -1."""
    mask = np.zeros(-(-num_vertices // 32) * 32, dtype=bool)
    if table is not None:
        vertices = table[vertices]
        vertices = vertices[vertices >= 0] - base
    mask[vertices] = True
    return np.packbits(mask, bitorder="little").view("<u4")


class Bits(NamedTuple):
    """A package's vertex ids given as a bitmap (:func:`bitmap`'s uint32 words): a broadcast frontier sent as bits.
    Bit i stands for id ``base + i`` (a receiver's block of copies of one peer's vertices starts at ``base``)."""

    words: object
    base: int = 0


def bit_test(bits, ids):
    """Boolean: is each of ``ids`` set in ``bits`` (NumPy or CuPy arrays)."""
    return ((bits[ids >> 5] >> (ids & 31).astype(np.uint32)) & 1).astype(bool)


def expand(graph, frontier):
    """(src, dst, arc) for every out-arc of the frontier: the advance's edge list."""
    indptr = graph.indptr
    f = frontier.astype(np.int64, copy=False)
    starts = indptr[f]
    degs = indptr[f + 1] - starts
    total = int(degs.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    first = np.cumsum(degs) - degs
    arcs = np.repeat(starts - first, degs) + np.arange(total, dtype=np.int64)
    return np.repeat(f, degs), graph.indices[arcs].astype(np.int64, copy=False), arcs


def advance(graph, frontier, functor, args):
    """ops.advance on the CPU: the functor's twin over the frontier's arcs (every arc where ``frontier`` is None);
    the emitted vertices once each, in increasing order (None for a functor that does not emit)."""
    if frontier is None:
        u = np.repeat(np.arange(graph.num_vertices, dtype=np.int64), np.diff(graph.indptr))
        v, arcs = graph.indices.astype(np.int64, copy=False), slice(None)
    else:
        u, v, arcs = expand(graph, frontier)
    w = None if graph.weights is None else graph.weights[arcs]
    emit = functor.numpy(u, v, w, *args)
    if not functor.emits:
        return None
    emit = np.asarray(emit)
    if emit.dtype != bool or emit.shape != v.shape:
        raise ValueError(f"functor {functor.name}: its NumPy twin must return a boolean mask over the {v.shape[0]} "
                         f"arcs, got {emit.dtype} of shape {emit.shape}")
    return np.unique(v[emit]).astype(graph.indices.dtype)


INTERSECT_CHUNK = 1 << 22  # arcs looked up at once by intersect_count: bounds its memory on hub-heavy graphs


def intersect_count(graph, a, b):
    """For each pair (a[i], b[i]), how many out-neighbours the two share (rows sorted): each arc of the shorter row is
    looked up among the other's arcs by its (row, column) key, which the sorted rows order globally.  Pairs go in
    chunks of about INTERSECT_CHUNK looked-up arcs, since two hubs' rows may hold millions."""
    n = max(graph.num_vertices, 1)
    deg = np.diff(graph.indptr)
    a, b = a.astype(np.int64), b.astype(np.int64)
    swap = deg[a] > deg[b]  # walk the shorter list of each pair: sum of min degrees, not of the first's
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    keys = graph.arc_sources().astype(np.int64) * n + graph.indices.astype(np.int64)
    out = np.zeros(a.shape[0], dtype=np.int64)
    if not keys.shape[0]:
        return out
    work = np.cumsum(deg[a])
    start = 0
    while start < a.shape[0]:
        stop = max(int(np.searchsorted(work, (work[start - 1] if start else 0) + INTERSECT_CHUNK, side="right")),
                   start + 1)
        k, at = segments.expand_rows(np, graph.indptr, a[start:stop])
        want = b[start:stop][k] * n + graph.indices[at].astype(np.int64)
        pos = np.minimum(np.searchsorted(keys, want), keys.shape[0] - 1)
        out[start:stop] = np.bincount(k[keys[pos] == want], minlength=stop - start)
        start = stop
    return out


def _weights(graph, arcs):
    return np.ones(arcs.size) if graph.weights is None else graph.weights[arcs]


def advance_visit(graph, frontier, label, pred, level, dist=None):
    """Push: label every unvisited out-neighbour ``level`` and its predecessor; return them once each.

    With ``dist``, only tight arcs (dist[u] + w == dist[v]) are followed: the
    SSSP tree walk.
    """
    if dist is None:
        return advance(graph, frontier, functors.VISIT, (label, pred, level))
    return advance(graph, frontier, functors.VISIT_TIGHT, (label, pred, level, dist))


def advance_visit_pull(rgraph, label, pred, level, frontier_bits):
    """Pull with early exit: each unvisited vertex (of the rows that may hold arcs) takes its first in-neighbour
    in the frontier."""
    cand = np.flatnonzero(label[:rgraph.arc_rows] == UNVISITED)
    v, u, _ = expand(rgraph, cand)
    hit = bit_test(frontier_bits, u)
    v, u = v[hit], u[hit]
    new, first = np.unique(v, return_index=True)
    label[new] = level
    pred[new] = u[first]
    return new.astype(rgraph.indices.dtype)


def tight_predecessors(rgraph, dist, pred):
    """Each reached row v (of those that may hold arcs) whose pred is -1 takes the in-neighbour of its first
    tight in-arc (dist[u] + w == dist[v]), in row order."""
    cand = np.flatnonzero(np.isfinite(dist[:rgraph.arc_rows]) & (pred[:rgraph.arc_rows] == UNVISITED))
    v, u, arcs = expand(rgraph, cand)
    w = rgraph.weights[arcs] if rgraph.weights is not None else 1.0
    tight = dist[u] + w == dist[v]
    v, u = v[tight], u[tight]
    first_v, first = np.unique(v, return_index=True)
    pred[first_v] = u[first]


def advance_relax(graph, frontier, dist, marks, stamp):
    """Push: dist[v] = min(dist[v], dist[u] + w); return the improved vertices once each (marked ``stamp``)."""
    return advance(graph, frontier, functors.RELAX, (dist, marks, stamp))


def advance_count_paths(graph, frontier, label, sigma, level):
    """Brandes forward step: visit like BFS, and add sigma[u] into every successor on the next level."""
    return advance(graph, frontier, functors.COUNT_PATHS, (label, sigma, level))


def advance_dependency(graph, frontier, label, sigma, delta, level):
    """Brandes backward step: delta[u] += sigma[u] / sigma[v] * (1 + delta[v]) over arcs u->v to ``level + 1``."""
    advance(graph, frontier, functors.DEPENDENCY, (label, sigma, delta, level))


def prepare_pull(rgraph):
    """Nothing to prepare on the CPU: the relabelled column ids of the CuPy twin serve the GPU's L2."""


def pull_sum(rgraph, x, scale=1.0, shift=0.0):
    """y[v] = scale * (sum of x[u] * w(u, v) over in-arcs u->v, the reverse graph's rows) + shift: PageRank's SpMV
    and its affine step.  The product and the sum are rounded apart (no fused multiply-add), as on the GPU."""
    vals = x[rgraph.indices]
    if rgraph.weights is not None:
        vals = vals * rgraph.weights
    rows = np.repeat(np.arange(rgraph.num_vertices), np.diff(rgraph.indptr))
    y = np.bincount(rows, weights=vals, minlength=rgraph.num_vertices).astype(np.float64, copy=False)  # none: int
    if scale != 1.0:
        y *= scale
    if np.ndim(shift) or shift != 0.0:  # an array (of one value) is added even where it holds 0
        y += shift
    return y


def l1_distance(a, b, count=None):
    """The sum of |a[i] - b[i]| over i < count (every i where None), float64, as a 0-d array."""
    n = a.shape[0] if count is None else int(count)
    return np.asarray(np.abs(a[:n].astype(np.float64, copy=False) - b[:n]).sum(), dtype=np.float64)


def id_range(ids):
    """(ids.min(), ids.max()) as Python ints."""
    return int(ids.min()), int(ids.max())


def unvisited(n, dtype):
    """np.full(n, -1, dtype)."""
    return np.full(n, UNVISITED, dtype=dtype)


def start_at(idx_dtype, source, writes):
    """Each (array, value) of ``writes`` takes value at ``source``; the frontier [source]."""
    for array, value in writes:
        array[source] = value
    return np.array([source], dtype=idx_dtype)


def hook_components(graph, parent, pairs_below=None, arcs=None, skip=None):
    """Union the endpoints of every arc u -> v but those with v < u < pairs_below, hooking the larger root under
    the smaller, until nothing changes; with ``arcs`` (lo, hi) only each row's arcs at positions lo..hi - 1 (hi
    None: to its end), and with ``skip`` not the rows u whose parent[u] is ``skip`` when the call starts.

    Leaves ``parent`` a forest whose roots are the smallest ids of the
    components those arcs connect (the GPU's union-find gives the same roots).
    """
    if arcs is None and skip is None:
        advance(graph, None, functors.HOOK, (parent, pairs_below or 0))
        return
    lo, hi = arcs if arcs is not None else (0, None)
    end = int(graph.indptr[graph.arc_rows])
    src = graph.arc_sources()[:end]
    position = np.arange(end, dtype=np.int64) - graph.indptr[src]
    keep = position >= lo
    if hi is not None:
        keep &= position < hi
    if skip is not None:
        keep &= parent[src] != skip
    functors._hook(src[keep], graph.indices[:end][keep].astype(np.int64), None, parent, 0)


compress = functors.compress  # pointer jumping, the union-find twins' (functors._hook) and ops.compress's on the CPU


def segment_min(seg, values, initial):
    """out = copy of ``initial``; out[seg[i]] = min(out[seg[i]], values[i]) for every i (int64)."""
    out = initial.astype(np.int64, copy=True)
    np.minimum.at(out, seg, values)
    return out


def tree_spread(parent, label, tree_min, lowered, id_dtype, emit):
    """ops.tree_spread: the trees' minima lowered by the labels of ``lowered`` (every vertex where None), then every
    vertex below its tree's minimum takes it; those vertices in increasing order where ``emit``, else none."""
    ids = slice(None) if lowered is None else lowered
    np.minimum.at(tree_min, parent[ids], label[ids])
    return _spread_down(parent, label, tree_min, id_dtype, emit)


def _spread_down(parent, label, tree_min, id_dtype, emit):
    smallest = tree_min[parent]
    if not emit:
        np.minimum(label, smallest, out=label)
        return np.empty(0, dtype=id_dtype)
    changed = np.flatnonzero(smallest < label)
    label[changed] = smallest[changed]
    return changed.astype(id_dtype)


def pair_totals(rows, keys, weights, span):
    """ops.pair_totals on NumPy arrays: the hash table as array operations (segments.pair_totals), the reference
    the compiled kernel and the GPU's are checked against."""
    return segments.pair_totals(np, rows, keys, weights, span)


def translate(ids, table):
    """table[ids] where ids >= 0, else -1, in the type of ``ids``: renumbering vertex ids between devices."""
    return np.where(ids >= 0, table[np.maximum(ids, 0)], -1).astype(ids.dtype, copy=False)


def count_own(ids, owner, me, own_below=None):
    """How many of ``ids`` device ``me`` owns: ids below ``own_below`` when given, else by ``owner``."""
    return int((ids < own_below).sum() if own_below is not None else (owner[ids] == me).sum())

"""Neighbour lists as segments: the array code behind ``ops.arcs`` and the sorting reductions (mode, mex).

Written once against the array module ``xp`` (NumPy or CuPy): these are
sorts, scans and scatters that both libraries provide, so the GPU path and
its NumPy twin are the same code run on different arrays.
"""
from __future__ import annotations

import numpy as np


def scatter(xp, op, out, at, values):
    """``out[at] op= values`` with repeats in ``at`` (op "add", "min" or "max"): the ufuncs' unbuffered ``at``."""
    getattr(xp, {"add": "add", "min": "minimum", "max": "maximum"}[op]).at(out, at, values)


def expand_rows(xp, indptr, rows):
    """(k, arc) for every arc of the listed ``rows``: k is the row's position in ``rows``, arc its CSR index."""
    rows = rows.astype(np.int64, copy=False)
    starts = indptr[rows]
    deg = indptr[rows + 1] - starts
    offs = xp.zeros(rows.shape[0] + 1, dtype=np.int64)
    xp.cumsum(deg, out=offs[1:])
    total = int(offs[-1])
    pos = xp.arange(total, dtype=np.int64)
    if xp is np:  # NumPy repeats by counts; CuPy's repeat takes no array of counts, so it searches the offsets
        k = np.repeat(np.arange(rows.shape[0], dtype=np.int64), deg)
    else:
        k = xp.searchsorted(offs, pos, side="right") - 1
    return k, starts[k] + (pos - offs[k])


def arcs(graph, vertices=None, narrow=False):
    """(sources, targets) of the out-arcs of ``vertices`` (every vertex where None), in CSR order, int64; with
    ``narrow`` (every vertex only) in the graph's id dtype, the targets its own ``indices`` (not copied)."""
    xp = graph.xp
    if vertices is None:
        if narrow:
            return graph.arc_sources().astype(graph.indices.dtype), graph.indices
        return graph.arc_sources().astype(np.int64, copy=False), graph.indices.astype(np.int64)
    k, at = expand_rows(xp, graph.indptr, vertices)
    return vertices.astype(np.int64)[k], graph.indices[at].astype(np.int64)


def _runs(xp, k, vals):
    """The distinct (k, value) pairs, sorted, with how many times each occurs.  Both go into one int64 key where
    it fits (a plain radix sort on the GPU), else they are sorted as two keys."""
    if k.shape[0] == 0:
        return k, vals, xp.zeros(0, dtype=np.int64)
    k = k.astype(np.int64, copy=False)
    # k is non-decreasing (CSR order), so k[-1] is its largest: the three bounds in one read
    bounds = xp.stack([k[-1], vals.min().astype(np.int64), vals.max().astype(np.int64)])
    last, low, high = (int(x) for x in bounds.tolist())
    span = high - low + 1
    if (last + 1) * span < 2 ** 62:
        key = xp.sort(k * span + (vals.astype(np.int64) - low))
        new = xp.ones(key.shape[0], dtype=bool)
        new[1:] = key[1:] != key[:-1]
        start = xp.flatnonzero(new)
        first = key[start]
        runs_k, runs_v = first // span, (first % span + low).astype(vals.dtype)
    else:
        order = xp.lexsort(xp.stack([vals.astype(np.int64), k]))
        k, vals = k[order], vals[order]
        new = xp.ones(k.shape[0], dtype=bool)
        new[1:] = (k[1:] != k[:-1]) | (vals[1:] != vals[:-1])
        start = xp.flatnonzero(new)
        runs_k, runs_v = k[start], vals[start]
    ends = xp.empty_like(start)
    ends[:-1] = start[1:]
    ends[-1] = new.shape[0]
    return runs_k, runs_v, ends - start


def in_order(a, b, chunk=1 << 24):
    """Whether the pairs (a[i], b[i]) are distinct and sorted by a then b: chunk by chunk (small temporaries where
    a whole pass made five of the entries' length, and a read per chunk), stopping at the first out of order."""
    n = a.shape[0]
    for lo in range(0, n - 1, chunk):
        hi = min(lo + chunk, n - 1)
        a0, a1, b0, b1 = a[lo:hi], a[lo + 1:hi + 1], b[lo:hi], b[lo + 1:hi + 1]
        if not bool(((a1 > a0) | ((a1 == a0) & (b1 > b0))).all()):
            return False
    return True


def pair_sums(xp, a, b, weights, run_sums=None):
    """The distinct pairs (a[i], b[i]) of non-negative integers, sorted by a then b, and the sum of ``weights`` over
    each pair's entries (how many entries where None).  One int64 key where it fits (a plain radix sort on the
    GPU), else the two sorted as two keys; on a CPU each sum adds in the entries' order (the same bits every run),
    on a GPU by ``run_sums(pair of each sorted entry, its weight, pairs)``, a kernel's atomics (the same to
    rounding)."""
    done = in_order(a, b)
    a, b = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    w = xp.ones(a.shape[0], dtype=np.float64) if weights is None else weights.astype(np.float64, copy=False)
    if done:  # already distinct and in order (one device's coarse arcs, summed again for every device's): one read
        return a, b, w
    span = int(b.max()) + 1
    if (int(a.max()) + 1) * span < 2 ** 62:
        key = a * span + b
        order = np.argsort(key, kind="stable") if xp is np else xp.argsort(key)
        key, w = key[order], w[order]
        new = xp.ones(key.shape[0], dtype=bool)
        xp.not_equal(key[1:], key[:-1], out=new[1:])
        start = xp.flatnonzero(new)
        first = key[start]
        a, b = first // span, first % span
    else:
        order = xp.lexsort(xp.stack([b, a]))
        a, b, w = a[order], b[order], w[order]
        new = xp.ones(a.shape[0], dtype=bool)
        new[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
        start = xp.flatnonzero(new)
        a, b = a[start], b[start]
    if xp is np:
        total = np.add.reduceat(w, start)
    else:
        total = run_sums(xp.cumsum(new) - 1, w, start.shape[0])
    return a, b, total


def mix(x):
    """A 64-bit hash of each of the integers ``x`` (splitmix64's finaliser), uint64."""
    x = x.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xD6E8FEB86659FD93)
    x ^= x >> np.uint64(32)
    return x


def pair_bound(xp, rows, keys, least):
    """At least how many distinct pairs (rows[i], keys[i]) there are: the entries where there are fewer than
    ``least``, else the runs of equal pairs among consecutive entries, which every distinct pair starts at least
    once (one pass and one read).  The GPU's table is sized from it."""
    n = rows.shape[0]
    if n < least or n < 2:
        return n
    starts = (rows[1:] != rows[:-1]) | (keys[1:] != keys[:-1])
    return 1 + int(xp.count_nonzero(starts))


def table_slots(pairs):
    """The GPU table's slots for ``pairs`` distinct pairs: a power of two, at least twice them (at most half full,
    and a probe's wrap is a mask)."""
    return 1 << (2 * max(int(pairs), 1) - 1).bit_length()


def pair_totals(xp, rows, keys, weights, span):
    """ops.pair_totals as array operations (the NumPy twin of :mod:`.cupy_pairs`' kernel; its docstring has the
    rules): each pair's key goes into an open addressing table of 2 m + 1 slots by rounds of linear probing
    (every entry not yet placed claims its slot where it is empty, one claimant wins, the entries whose key is now
    in their slot are placed, the others try the next slot), then the weights are summed per slot.  The pairs come
    in the table's order and each sum adds its pair's entries in their order, so a run gives the same bits every
    time (a Leiden superstep sums these totals again per row, in this order)."""
    m = rows.shape[0]
    if m == 0:
        return rows.astype(np.int64), keys.astype(np.int64), xp.zeros(0)
    key = rows.astype(np.int64) * np.int64(span) + keys.astype(np.int64)
    size = 2 * m + 1
    slot = (mix(key) % np.uint64(size)).astype(np.int64)  # each entry's slot so far; at the end, its pair's
    table = xp.full(size, -1, dtype=np.int64)
    table[slot] = key  # the table is empty: every entry claims its first slot, one claimant of each wins
    todo = xp.flatnonzero(table[slot] != key)
    while todo.shape[0]:  # the entries of one key probe together, so a key is placed once
        at = slot[todo] + 1
        at = xp.where(at == size, 0, at)
        slot[todo] = at
        want = key[todo]
        free = table[at] < 0
        table[at[free]] = want[free]  # one claimant of each empty slot wins
        todo = todo[table[at] != want]
    if xp is np:  # weights None: counts, the same numbers as sums of ones
        total = np.bincount(slot, weights=weights, minlength=size).astype(np.float64, copy=False)
    else:
        total = xp.zeros(size)
        xp.add.at(total, slot, xp.ones(m) if weights is None else weights.astype(np.float64, copy=False))
    used = xp.flatnonzero(table >= 0)
    pairs = table[used]
    return pairs // span, pairs % span, total[used]


def mode(xp, k, vals, num_rows, prefer, empty):
    """Per row, the most frequent of its ``vals`` (``k``: each value's row); ties go to ``prefer``'s entry where it
    is among the most frequent, else to the largest.  Rows without values get ``prefer`` (or ``empty``)."""
    rk, rv, count = _runs(xp, k, vals)
    best = xp.zeros(num_rows, dtype=np.int64)
    scatter(xp, "max", best, rk, count)
    top = count == best[rk]
    info = np.iinfo(vals.dtype) if vals.dtype.kind in "iu" else None
    low = info.min if info is not None else -np.inf
    out = xp.full(num_rows, low, dtype=vals.dtype)
    scatter(xp, "max", out, rk[top], rv[top])
    if prefer is not None:
        prefer = prefer.astype(vals.dtype, copy=False)
        hit = top & (rv == prefer[rk])
        keep = xp.zeros(num_rows, dtype=bool)
        keep[rk[hit]] = True
        out = xp.where(keep, prefer, out)
    none = best == 0
    fill = prefer if prefer is not None else xp.full(num_rows, empty, dtype=vals.dtype)
    return xp.where(none, fill, out)


def mex(xp, k, vals, num_rows):
    """Per row, the smallest non-negative integer not among its ``vals`` (negative values are ignored)."""
    keep = vals >= 0
    rk, rv, _ = _runs(xp, k[keep], vals[keep])
    count = xp.zeros(num_rows, dtype=np.int64)
    scatter(xp, "add", count, rk, xp.ones(rk.shape[0], dtype=np.int64))
    first = xp.zeros(num_rows + 1, dtype=np.int64)
    xp.cumsum(count, out=first[1:])
    rank = xp.arange(rk.shape[0], dtype=np.int64) - first[rk]  # distinct values sorted: rank j holds a value >= j
    out = count.copy()
    gap = rv.astype(np.int64) != rank
    scatter(xp, "min", out, rk[gap], rank[gap])
    return out


def rows_sorted(graph) -> bool:
    """Whether every row's column ids increase strictly (what the intersection's merge needs); kept per graph."""
    got = graph.__dict__.get("_rows_sorted")
    if got is None:
        xp = graph.xp
        idx = graph.indices.astype(np.int64, copy=False)
        down = xp.zeros(idx.shape[0], dtype=bool)
        if idx.shape[0] > 1:
            down[1:] = idx[1:] <= idx[:-1]
            down[graph.indptr[:-1][graph.indptr[:-1] < idx.shape[0]]] = False  # a row's first arc starts afresh
        got = not bool(down.any())
        graph.__dict__["_rows_sorted"] = got
    return got


REDUCTIONS = ("sum", "min", "max", "mode", "mex")


def neighbor_reduce(graph, values, op, rows=None, weighted=False, prefer=None, empty=None):
    """ops.neighbor_reduce on either array module (its docstring has the rules)."""
    xp = graph.xp
    listed = xp.arange(graph.num_vertices, dtype=np.int64) if rows is None else rows.astype(np.int64, copy=False)
    num_rows = listed.shape[0]
    k, at = expand_rows(xp, graph.indptr, listed)
    vals = values[graph.indices[at]]
    if weighted and graph.weights is not None:
        vals = vals * graph.weights[at]
    if op == "mode":
        return mode(xp, k, vals, num_rows, None if prefer is None else prefer[listed], -1 if empty is None else empty)
    if op == "mex":
        return mex(xp, k, vals, num_rows)
    dtype = vals.dtype
    if op == "sum":
        out = xp.zeros(num_rows, dtype=dtype)
        scatter(xp, "add", out, k, vals)
        return out
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    identity = (info.max if info else np.inf) if op == "min" else (info.min if info else -np.inf)
    out = xp.full(num_rows, identity, dtype=dtype)
    scatter(xp, op, out, k, vals)
    if empty is not None:
        deg = graph.indptr[listed + 1] - graph.indptr[listed]
        out[deg == 0] = empty
    return out

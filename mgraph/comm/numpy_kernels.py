"""The exchange's kernels on the CPU, and the reference twin of each CuPy kernel of :mod:`mgraph.comm.cupy_kernels`.

Each function has the signature and the result of its namesake there; where
the GPU's order is any (within a package, a merge's output), GPU tests compare
the two as sets.
"""
from __future__ import annotations

import numpy as np

from mgraph.ops.numpy_ops import Bits, translate


def _ordered(a):
    """A view in which -1 of a signed integer array (unreached) sorts above every value."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "i" else a


def combine_merge(frontier, received, seen, owner, me, own_below=None, marked=False, keep=False):
    """Fold each received package into its arrays and append the vertices it changed to ``frontier``, each vertex
    once (first occurrence, in order), with how many of them device ``me`` owns (ids below ``own_below`` when
    given, else by ``owner``).  Dedupes by sorting; ``seen``, the GPU's scratch bitmap, ends as the GPU leaves it
    (the output's bits where ``keep``, else none; ``marked``: the frontier's were set).  Where ``seen`` is None the
    caller says no vertex can repeat, which the GPU relies on: a repeat raises here."""
    parts, keeps = [frontier], [None]
    for ids, to_local, fields, carried in received:
        if isinstance(ids, Bits):  # the set bits
            bits = np.unpackbits(ids.words.view(np.uint8), bitorder="little")
            ids = (np.flatnonzero(bits) + ids.base).astype(frontier.dtype)
        fields = [(array, op, np.full(ids.shape[0], values, dtype=array.dtype) if np.ndim(values) == 0 else values)
                  for array, op, values in fields]  # one value for every id
        if to_local is not None:
            ids = translate(ids, to_local)
        here = np.flatnonzero(ids >= 0)
        at = ids[here]
        changed = np.zeros(ids.shape[0], dtype=bool)
        for array, op, values in fields:
            new = values.astype(array.dtype, copy=False)[here]
            if op == "sum":
                array[at] += new  # ids are unique within a package
                continue
            old = array[at]
            if op == "assign":
                better = new != old
            else:
                better = _ordered(new) < _ordered(old) if op == "min" else _ordered(new) > _ordered(old)
            array[at[better]] = new[better]
            changed[here[better]] = True
        if all(op == "sum" for _, op, _ in fields):
            changed[here] = True
        for array, values, table in carried:
            values = values[changed]
            array[ids[changed]] = values if table is None else translate(values, table)
        parts.append(ids)
        keeps.append(changed)
    cand = np.concatenate([p if k is None else p[k] for p, k in zip(parts, keeps)]).astype(frontier.dtype, copy=False)
    _, first = np.unique(cand, return_index=True)
    if seen is None and len(first) < len(cand):
        raise RuntimeError("combine_merge: a vertex repeated where the caller said none can (seen=None)")
    out = cand[np.sort(first)]
    own = out < own_below if own_below is not None else owner[out] == me
    if seen is not None and marked:
        unmark(frontier, seen)
    if seen is not None and keep:
        np.bitwise_or.at(seen, out >> 5, np.left_shift(1, out & 31).astype(seen.dtype))
    return out, int(np.count_nonzero(own))


def unmark(vertices, seen):
    """Clear the words of ``seen`` that hold the bits of ``vertices`` (every set bit is one of theirs)."""
    seen[vertices >> 5] = 0


def bucket(dest, num_buckets):
    """Entry indices grouped by destination (``dest`` in [0, num_buckets)), input order kept in a group, and each
    group's size (host ints): the grouping of :func:`split`."""
    order = np.argsort(dest, kind="stable")
    return order, np.bincount(dest, minlength=num_buckets).tolist()


def select_mapped(vertices, table, below=None):
    """The ``vertices`` (below ``below`` where given) whose ``table`` entry is not -1, in order, and those entries."""
    if below is not None:
        vertices = vertices[vertices < below]
    ids = table[vertices]
    keep = ids >= 0
    return vertices[keep], ids[keep]


def split(vertices, owner, me, num_parts, values, tables, id_on=None):
    """The frontier split and package: of ``vertices``, those a device k other than ``me`` owns go to k with their
    ids there (``id_on[k]``, or the vertices themselves where None) and their :func:`gather` of ``values``.
    Returns (how many of ``vertices`` each device owns, {k: (ids, values)} for every peer that gets some)."""
    order, counts = bucket(owner[vertices], num_parts)
    out, start = {}, 0
    for k, c in enumerate(counts):
        if c and k != me:
            chosen = vertices[order[start:start + c]]
            out[k] = (chosen if id_on is None else id_on[k][chosen], gather(chosen, values, tables))
        start += c
    return counts, out


def gather(vertices, values, tables):
    """Each of ``values`` at ``vertices``; through its table where one is given (vertex ids to caller ids)."""
    return [v[vertices] if t is None else translate(v[vertices], t) for v, t in zip(values, tables)]

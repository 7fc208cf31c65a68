"""The exchange's kernels: how a frontier is split, packaged and merged between devices.

They serve :mod:`mgraph.comm.exchange`, not primitives, so they live here rather than among the public operators
of :mod:`mgraph.ops`.  Like the operators, each runs on the array module its arrays live in: CuPy RawKernels in
:mod:`mgraph.comm.cupy_kernels` (their CUDA sources beside them), their NumPy twins in
:mod:`mgraph.comm.numpy_kernels`.  Ids between numberings (``translate``, ``count_own``) are
:mod:`mgraph.ops.idmaps`', since the parts use them too.
"""
from __future__ import annotations

import numpy as np

from mgraph.backend import array_module
from mgraph.comm import numpy_kernels

__all__ = ["select_mapped", "split", "gather", "combine_merge", "unmark"]


def _impl(a):
    """The kernels for ``a``'s array module: the NumPy twins, or the CuPy kernels (CuPy is imported only here)."""
    if array_module(a) is np:
        return numpy_kernels
    from mgraph.comm import cupy_kernels

    return cupy_kernels


def combine_merge(frontier, received, seen, owner, me, own_below=None, marked=False, keep=False):
    """Combine + filter: the receive side of a hop, one pass per package.  Each received package is (ids,
    to_local, fields, carried): ``ids`` of this device's vertices, or ids to map through ``to_local`` (-1: a vertex
    this device lacks, skipped), or :class:`mgraph.ops.Bits` of them (bit i is id ``base + i``) with a scalar per
    field and nothing carried; ``fields`` (array, op, values: one per id, or a scalar for every id) with op "min"
    or "max" (signed integer arrays order -1, unreached, above every value), "sum" or "assign"; ``carried`` (array,
    values, table or None) stored where a field changed, through ``table`` (vertex ids to local ones, -1 kept).
    Ids are unique within a package and packages apply in order.  Returns the next frontier, ``frontier`` (each
    vertex once) and then every vertex a min, max or assign changed (every entry when all fields are sums), each
    once, and how many of them device ``me`` owns: ids below ``own_below`` where own vertices come first in the
    numbering, else by ``owner``.  ``seen`` is a zeroed bitmap of uint32 words over the vertices
    (:func:`mgraph.ops.bitmap`), zeroed again on return, or None where no vertex can repeat (the packages'
    vertices differ from each other's and the frontier's).  ``marked``: ``seen`` holds the frontier's bits
    already (a previous merge kept them); ``keep``: leave the output's bits set for the next merge (or
    :func:`unmark`), so a superstep of two hops marks its frontier once.
    One host read."""
    return _impl(frontier).combine_merge(frontier, received, seen, owner, me, own_below, marked, keep)


def unmark(vertices, seen):
    """Zero ``seen`` (a bitmap whose set bits are all among ``vertices``, as a merge with ``keep`` left it)."""
    return _impl(vertices).unmark(vertices, seen)


def select_mapped(vertices, table, below=None):
    """Filter: the ``vertices`` (those below ``below`` where given) whose ``table`` entry is not -1, and those
    entries (a device's own vertices that a peer keeps copies of, with the copies' ids there), in one pass and one
    host read; the GPU's order is any."""
    return _impl(vertices).select_mapped(vertices, table, below)


def split(vertices, owner, me, num_parts, values, tables, id_on=None):
    """Filter: the frontier split and package.  Of ``vertices``, those owned (``owner``) by a device k other than
    ``me`` go to k, with their ids on k (``id_on[k]``; the vertices themselves where None) and each array of
    ``values`` at them, through ``tables[j]`` where not None (vertex-valued arrays, local to caller ids, -1 kept).
    Returns (how many of ``vertices`` each device owns, host ints; {k: (ids, [values])} for each peer that gets
    any).  One host read (the counts); the GPU's order within a package is any."""
    _check_tables(values, tables)
    return _impl(vertices).split(vertices, owner, me, num_parts, values, tables, id_on)


def gather(vertices, values, tables):
    """Filter: each array of ``values`` at ``vertices`` (a package), through ``tables[j]`` where not None."""
    _check_tables(values, tables)
    return _impl(vertices).gather(vertices, values, tables)


def _check_tables(values, tables):
    for v, t in zip(values, tables):
        if t is not None and v.dtype.kind not in "iu":
            raise ValueError(f"a vertex-valued array must hold integer vertex ids, got dtype {v.dtype}")

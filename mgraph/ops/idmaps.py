"""Vertex ids between numberings: ids looked up in an id table, and how many of them a device owns.

A part of a graph (:mod:`mgraph.parts`) numbers its vertices its own way and
keeps tables to and from the caller's ids and its peers'; these two
operations read those tables and the owner map.  They are generic lookups
rather than frontier operators, used by the parts and the exchange, not by
primitives.  Like the operators, each runs on the array module its arrays live
in: a CuPy kernel in :mod:`mgraph.ops.cupy_ops`, its NumPy twin in
:mod:`mgraph.ops.numpy_ops`.
"""
from __future__ import annotations

from mgraph.ops import _impl

__all__ = ["translate", "count_own"]


def translate(ids, table):
    """Compute: ``table[ids]`` where ids >= 0, else -1 (vertex ids from one device's numbering to another's)."""
    return _impl(ids).translate(ids, table)


def count_own(ids, owner, me, own_below=None):
    """Filter count: how many of ``ids`` device ``me`` owns (ids below ``own_below`` where own vertices come first
    in the numbering, else by ``owner``), in one pass and one host read."""
    return _impl(ids).count_own(ids, owner, me, own_below)

"""Combining received per-vertex values with local ones: min, max, sum, or a primitive's own function."""
from __future__ import annotations

import numpy as np

from .. import ops
from ..backend import array_module

COMBINES = ("min", "max", "sum")


def _ordered(a):
    """A view in which ops.UNVISITED (-1) of a signed integer array sorts above every value (unreached)."""
    if a.dtype.kind == "i":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def check(op, name):
    if not (callable(op) or op in COMBINES):
        raise ValueError(f"combine for {name!r} must be one of {', '.join(COMBINES)} or a function, got {op!r}")


def apply(array, ids, received, op):
    """Combine ``received`` into ``array[ids]`` (ids unique); the mask of entries whose local value changed.

    For "sum" every received entry counts as a change (None), even one that
    adds 0: the vertex was touched this superstep.  No host read: the write
    keeps the old value where nothing improved.
    """
    if op == "sum":
        ops.scatter_add(array, ids, received)
        return None
    old = array[ids]
    if op == "min":
        new = received.astype(old.dtype, copy=False)
        better = _ordered(new) < _ordered(old)
    elif op == "max":
        new = received.astype(old.dtype, copy=False)
        better = _ordered(new) > _ordered(old)
    else:
        new = op(old, received).astype(old.dtype, copy=False)
        better = new != old
    array[ids] = array_module(array).where(better, new, old)
    return better

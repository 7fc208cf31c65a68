"""Combining received per-vertex values with local ones: min, max, sum, or a primitive's own function."""
from __future__ import annotations

from .. import ops

COMBINES = ("min", "max", "sum")
EXTREMES = ("min", "max")  # combines that skip ids of -1 (vertices a device lacks): see ops.combine_extreme


def check(op, name):
    if not (callable(op) or op in COMBINES):
        raise ValueError(f"combine for {name!r} must be one of {', '.join(COMBINES)} or a function, got {op!r}")


def apply(array, ids, received, op):
    """Combine ``received`` into ``array[ids]`` (ids unique); the mask of entries whose local value changed.

    For "sum" every received entry counts as a change (None), even one that
    adds 0: the vertex was touched this superstep.  No host read.
    """
    if op == "sum":
        ops.scatter_add(array, ids, received)
        return None
    if op in EXTREMES:
        return ops.combine_extreme(array, ids, received, op)
    old = array[ids]
    new = op(old, received).astype(old.dtype, copy=False)
    better = new != old
    ops.put_where(array, ids, better, new)
    return better

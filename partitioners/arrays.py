"""Array-module helpers the partitioners share: the graph's device, seeded permutations, owner checks."""
from __future__ import annotations

import contextlib

import numpy as np


def on_device(graph):
    """A context making the graph's GPU the current one (nothing on the CPU), so new arrays land beside it."""
    if graph.xp is np:
        return contextlib.nullcontext()
    return graph.indptr.device


def permutation(xp, rng, n: int):
    """A uniformly random permutation of ``range(n)`` (int64).

    CuPy's Generator has no ``permutation``; sorting random keys is its
    equivalent and is fast on a GPU.
    """
    if hasattr(rng, "permutation"):
        return rng.permutation(n).astype(np.int64, copy=False)
    return xp.argsort(rng.random(n)).astype(np.int64, copy=False)


def count(xp, x, length: int, weights=None):
    """``bincount(x, weights, minlength=length)``, also for an empty ``x`` (CuPy's bincount takes the max of ``x``)."""
    if x.shape[0] == 0:
        return xp.zeros(length, dtype=np.int64 if weights is None else np.float64)
    return xp.bincount(x, weights=weights, minlength=length)


def check_owner(graph, owner, num_parts: int, *, what="owner array"):
    """``owner`` as int32 on the graph's array module, after checking length, dtype and range (ValueError otherwise)."""
    xp = graph.xp
    n = graph.num_vertices
    if owner is None:
        raise ValueError(f"{what} returned None, expected an owner array of length {n}")
    try:
        owner = xp.asarray(owner)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}: the owner array is not an array of integers ({e})") from None
    if owner.ndim != 1 or owner.shape[0] != n:
        raise ValueError(f"{what}: the owner array has shape {tuple(owner.shape)}, expected ({n},): one part per vertex")
    if owner.dtype.kind not in "iu":
        raise ValueError(f"{what}: the owner array has dtype {owner.dtype}, expected an integer dtype")
    if n:
        lo, hi = int(owner.min()), int(owner.max())
        if lo < 0 or hi >= num_parts:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{what}: owner value {bad} is outside [0, {num_parts}) for num_parts={num_parts}")
    return owner.astype(np.int32, copy=False)

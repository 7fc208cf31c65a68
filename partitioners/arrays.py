"""Array-module helpers the partitioners share: the graph's device, seeded permutations."""
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

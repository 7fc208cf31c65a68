"""The "random" partitioner: every vertex to a pseudo-random part, a hash of its id.

The seed paper's default: no preprocessing, balanced in expectation, and
on power-law graphs hardly worse than smarter schemes, whose borders are
dominated by hubs anyway.  On graphs with locality (meshes, roads) it is
the worst choice: nearly every neighbour is remote.

The owner is a seeded hash of the vertex id, not a drawn table, so any
worker can name the owner of any vertex without holding an array of n
owners, and every worker of a distributed build agrees on it.
"""
from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def hash_owner(ids, num_parts: int, seed: int = 0, xp=np):
    """The owner part (int32) of each vertex id in ``ids``: SplitMix64 of (id, seed), mapped to [0, num_parts)."""
    z = xp.asarray(ids).astype(np.uint64) + np.uint64((int(seed) + 1) * 0x9E3779B97F4A7C15 % 2**64)
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z ^= z >> np.uint64(31)
    return (z % np.uint64(num_parts)).astype(np.int32)


def random_owner(graph, num_parts: int, seed: int = 0):
    """:func:`hash_owner` of every vertex of ``graph`` (int32, on ``graph.xp``)."""
    xp = graph.xp
    return hash_owner(xp.arange(graph.num_vertices, dtype=np.int64), num_parts, seed, xp)

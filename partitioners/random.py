"""The "random" partitioner: every vertex to a uniformly random part.

The seed paper's default: no preprocessing, balanced in expectation, and
on power-law graphs hardly worse than smarter schemes, whose borders are
dominated by hubs anyway.  On graphs with locality (meshes, roads) it is
the worst choice: nearly every neighbour is remote.
"""
from __future__ import annotations

import numpy as np


def random_owner(graph, num_parts: int, seed: int = 0):
    """A uniformly random owner in [0, num_parts) per vertex, from a generator seeded by ``seed`` (int32, on ``graph.xp``)."""
    xp = graph.xp
    rng = xp.random.default_rng(seed)
    return rng.integers(0, num_parts, size=graph.num_vertices, dtype=np.int64).astype(np.int32)

"""Weakly connected components: union-find hooking over all arcs, then pointer jumping."""
from __future__ import annotations

import numpy as np

from mgraph import ops

from .contract import Primitive


class CC(Primitive):
    """Labels each vertex with the smallest vertex id of its weakly connected component.

    Hooking always puts the larger root under the smaller, so each tree's
    root is its component's smallest id: no relabelling pass is needed.
    """

    name = "cc"
    combine = {"label": "min"}

    def reset(self, source=None):
        self.parent = self.xp.arange(self.num_vertices, dtype=np.int64)
        return self.xp.arange(self.num_vertices, dtype=self.graph.indices.dtype)

    def iterate(self, frontier):
        ops.hook_components(self.graph, self.parent)
        ops.compress(self.parent)
        return frontier[:0]

    def result(self):
        return {"labels": self.parent}

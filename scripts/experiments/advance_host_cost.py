"""Host time of a one-vertex push advance and of a one-GPU superstep of the overhead experiment, in whatever
tree is first on PYTHONPATH (for A/B runs of two trees in one call).

    PYTHONPATH=$TREE python3 scripts/experiments/advance_host_cost.py LABEL    # run from $TREE

Times ops.advance_visit stepping along one path of 2000 edges (a one-vertex
frontier each call), 10,000 lookups of the advance kernel (cupy_ops._kernel),
and mgraph.run of the overhead experiment's PathBFS on one GPU: medians of 5
(lookups: of 3) after a warm-up.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.getcwd(), "scripts"))
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402

import mgraph  # noqa: E402
from mgraph import ops  # noqa: E402
from mgraph.ops import cupy_ops  # noqa: E402
from scaling import PathBFS, paths_graph  # noqa: E402

LENGTH = 2000
g = paths_graph(1, LENGTH, cp)


def advance_us():
    label = cp.full(g.num_vertices, -1, dtype=np.int32)
    pred = cp.full(g.num_vertices, -1, dtype=g.indices.dtype)
    frontier = cp.asarray(np.array([0], dtype=g.indices.dtype))
    label[0] = 0
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for k in range(LENGTH):
        frontier = ops.advance_visit(g, frontier, label, pred, k + 1)
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t) / LENGTH * 1e6


def lookup_us():
    t = time.perf_counter()
    for _ in range(10000):
        cupy_ops._kernel(g, "advance_visit")
    return (time.perf_counter() - t) / 10000 * 1e6


def superstep_us():
    r = mgraph.run(PathBFS, g)
    return 1e6 * r.stats["elapsed_s"] / r.stats["iterations"]


advance_us()
superstep_us()
a = sorted(advance_us() for _ in range(5))
lookups = sorted(lookup_us() for _ in range(3))
steps = sorted(superstep_us() for _ in range(5))
print(f"{sys.argv[1]:>6}: advance {a[2]:.1f} us (min {a[0]:.1f}), kernel lookup {lookups[1]:.2f} us, "
      f"1-GPU PathBFS superstep {steps[2]:.1f} us (min {steps[0]:.1f})")

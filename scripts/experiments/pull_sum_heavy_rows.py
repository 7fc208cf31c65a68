"""PageRank's SpMV (ops.pull_sum) on one GPU with its long rows summed in pieces, against a warp for every row.

R-MAT SCALE's undirected graph (its own reverse) on the GPU; pull_sum timed with CUDA events, median of 9
after a warm-up, for each HEAVY_ROW setting (rows longer than it summed in pieces of that many arcs; "off": a
warp walks every row, as before), with the number of such rows, their share of the arcs, and the largest
difference from the "off" result.

    PYTHONPATH=$PWD python3 scripts/experiments/pull_sum_heavy_rows.py [SCALE]
"""
import sys

import cupy as cp
import numpy as np

import mgraph
from mgraph.ops import cupy_ops

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 26
g = mgraph.load(f"rmat:{scale}", backend="cupy")
x = cp.random.default_rng(0).random(g.num_vertices)
deg = cp.diff(g.indptr)
print(f"R-MAT {scale}: {g.num_vertices:,} vertices, {len(g.indices):,} arcs, largest row {int(deg.max()):,} arcs")


def timed(reps=9):
    cupy_ops.pull_sum(g, x)
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        y = cupy_ops.pull_sum(g, x)
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return sorted(times)[reps // 2], y


print("| HEAVY_ROW | rows above | their arcs | pull_sum ms | largest difference from off |")
print("|---|---|---|---|---|")
base = None
for heavy in (0, 512, 1024, 2048, 4096, 8192, 32768):
    cupy_ops.HEAVY_ROW = heavy or np.iinfo(np.int64).max
    cupy_ops._PER_GRAPH.clear()
    ms, y = timed()
    if base is None:
        base = y
    above = deg > cupy_ops.HEAVY_ROW
    share = float(deg[above].sum()) / len(g.indices)
    print(f"| {heavy or 'off'} | {int(above.sum()):,} | {share:.1%} | {ms:.2f} | {float(cp.abs(y - base).max()):.2e} |")

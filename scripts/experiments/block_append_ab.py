"""Warp- against block-aggregated appends in the push advances: one-GPU primitives, old and new kernels alternately.

The old kernel source (``git show 879a6cc:mgraph/ops/cupy_kernels.py``) is loaded from the file given as the
first argument; each variant is compiled in this process and every primitive timed on the same R-MAT graph,
two sources, median of three runs, with the variants interleaved (old, new, old, new).

    PYTHONPATH=$PWD python3 scripts/experiments/block_append_ab.py OLD_KERNELS.py [SCALE]
"""
import importlib.util
import statistics
import sys

import cupy as cp
import numpy as np

import mgraph
from mgraph import generators
from mgraph.ops import cupy_kernels, cupy_ops

spec = importlib.util.spec_from_file_location("old_kernels", sys.argv[1])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
new_source = cupy_kernels.source
scale = int(sys.argv[2]) if len(sys.argv) > 2 else 24
g = generators.rmat(scale, xp=cp, seed=0)
deg = cp.asnumpy(g.out_degree())
sources = [int(s) for s in np.random.default_rng(1).choice(np.flatnonzero(deg > 0), 2, replace=False)]
RUNS = {
    "BFS": lambda s: mgraph.bfs(g, s),
    "DOBFS": lambda s: mgraph.bfs(g, s, direction="auto"),
    "SSSP": lambda s: mgraph.sssp(g, s),
    "BC": lambda s: mgraph.betweenness_centrality(g, sources=[s]),
    "CC": lambda s: mgraph.connected_components(g),
}
table = {}
for variant in ("old", "new", "old", "new"):
    cupy_kernels.source = old.source if variant == "old" else new_source
    cupy_ops._module.cache_clear()
    for name, fn in RUNS.items():
        for s in sources:
            fn(s)
            ms = statistics.median(fn(s).stats["elapsed_s"] * 1e3 for _ in range(3))
            table.setdefault((name, s), {}).setdefault(variant, []).append(ms)
print(f"R-MAT scale {scale}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
print("| primitive | source | old kernels ms | new kernels ms |")
print("| --- | --- | --- | --- |")
for (name, s), v in table.items():
    print(f"| {name} | {s} | {' / '.join(f'{x:.2f}' for x in v['old'])} | {' / '.join(f'{x:.2f}' for x in v['new'])} |")

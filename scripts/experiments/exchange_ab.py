"""Exchange A/B on 2 GPUs in one process: an older comm module against the current one, interleaved.

The old module is loaded from the file given (``git show REV:mgraph/comm/__init__.py`` for the
Exchange, or ``REV:mgraph/comm/transport.py`` for the transport) and whichever of ``Exchange`` and
``LocalTransport`` it defines is swapped into mgraph.launch.  Each primitive named (default: all) on
2 GPUs, old/new/old/new, median of 3 runs over 2 sources.

    PYTHONPATH=$PWD python3 scripts/experiments/exchange_ab.py OLD_MODULE.py [SCALE] [BFS,SSSP,...]
"""
import importlib.util
import statistics
import sys

import cupy as cp
import numpy as np

import mgraph
from mgraph import generators, launch

spec = importlib.util.spec_from_file_location("mgraph.comm.old_exchange", sys.argv[1])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)
swapped = [name for name in ("Exchange", "LocalTransport") if hasattr(old, name)]
new = {name: getattr(launch, name) for name in swapped}

scale = int(sys.argv[2]) if len(sys.argv) > 2 else 24
g = generators.rmat(scale, xp=cp, seed=0)
deg = cp.asnumpy(g.out_degree())
sources = [int(s) for s in np.random.default_rng(1).choice(np.flatnonzero(deg > 0), 2, replace=False)]
RUNS = {
    "BFS": lambda s: mgraph.bfs(g, s, devices=2),
    "DOBFS": lambda s: mgraph.bfs(g, s, direction="auto", devices=2),
    "SSSP": lambda s: mgraph.sssp(g, s, devices=2),
    "BC": lambda s: mgraph.betweenness_centrality(g, sources=[s], devices=2),
    "CC": lambda s: mgraph.connected_components(g, devices=2),
    "PR (ms/iter)": lambda s: mgraph.pagerank(g, devices=2, max_iter=10, tol=1e-12),
}
if len(sys.argv) > 3:
    RUNS = {name: fn for name, fn in RUNS.items() if name.split()[0] in sys.argv[3].split(",")}
table = {}
for variant in ("old", "new", "old", "new"):
    for name in swapped:
        setattr(launch, name, getattr(old, name) if variant == "old" else new[name])
    for name, fn in RUNS.items():
        per = []
        for s in sources[: 1 if name in ("CC", "PR (ms/iter)") else 2]:
            fn(s)
            stats = [fn(s).stats for _ in range(3)]
            per.append(statistics.median(st["elapsed_s"] * 1e3 / (st["iterations"] if "PR" in name else 1)
                                         for st in stats))
        table.setdefault(name, {}).setdefault(variant, []).append(statistics.median(per))
for name in swapped:
    setattr(launch, name, new[name])

print(f"swapped: {', '.join(swapped)}; R-MAT scale {scale}, 2 GPUs; ms (each cell: median over sources of the median of 3 runs), old / new rounds")
print("| primitive | old | new |")
print("| --- | --- | --- |")
for name, v in table.items():
    print(f"| {name} | {' / '.join(f'{x:.2f}' for x in v['old'])} | {' / '.join(f'{x:.2f}' for x in v['new'])} |")

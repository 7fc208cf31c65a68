"""Batched supersteps vs the fused cooperative kernel on grid 4096^2: a user's level-by-level BFS (one step kernel
per level, counts read per batch) against mgraph.bfs (levels fused), same process, median of 3 after a warm-up."""
import statistics, sys
sys.path.insert(0, "tests")
import numpy as np, mgraph
from test_batches import Hops
g = mgraph.load("grid:4096x4096", backend="cupy")
for name, call in (("hops (batched supersteps)", lambda: mgraph.run(Hops, g, 0, output="device")),
                   ("bfs (fused levels)", lambda: mgraph.bfs(g, 0, output="device"))):
    call()
    rs = [call() for _ in range(3)]
    t = [r.stats["elapsed_s"] * 1e3 for r in rs]
    print(f"{name}: median {statistics.median(t):.2f} ms, runs {[round(x, 2) for x in t]}, supersteps "
          f"{rs[0].stats['supersteps']}, us/level {statistics.median(t) * 1e3 / 8191:.2f}")
h, b = mgraph.run(Hops, g, 0), mgraph.bfs(g, 0)
print("same depths:", bool(np.array_equal(h.hops, b.depth)))

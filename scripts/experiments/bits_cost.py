"""What receiving a broadcast frontier sent as bits costs on one GPU, step by step, against the list it replaces.

Sizes of the 2-GPU direction-optimizing BFS's largest pull step at R-MAT scale 26: a peer's 14 M newly
visited vertices of 67 M, arriving as a 67 M-bit bitmap; this device's own 14 M frontier vertices; local ids
from a 1-hop table.  Each step is timed with CUDA events (GPU) and the host clock around the call, median
of 7 after a warm-up.

    PYTHONPATH=$PWD python3 scripts/experiments/bits_cost.py [VERTICES] [SET]
"""
import sys
import time

import cupy as cp

from mgraph import ops

n = int(sys.argv[1]) if len(sys.argv) > 1 else 67_108_864
count = int(sys.argv[2]) if len(sys.argv) > 2 else 14_000_000
cp.random.seed(0)
perm = cp.random.permutation(n).astype(cp.int32)
peer = cp.sort(perm[:count])  # the peer's vertices (caller ids)
mine = perm[count:2 * count]  # this device's own frontier (here local id = caller id)
bits = ops.bitmap(peer, n)
to_local = cp.arange(n, dtype=cp.int32)
depth = cp.full(n, -1, dtype=cp.int32)
seen = cp.zeros(-(-n // 32), dtype=cp.uint32)
owner = cp.zeros(n, dtype=cp.int32)
level = cp.full(count, 4, dtype=cp.int32)


def timed(name, fn, rows, reps=7, reset=None):
    fn()
    gpu, host = [], []
    for _ in range(reps):
        if reset is not None:
            reset()
        cp.cuda.Device().synchronize()
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        t = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t) * 1e6)
        b.record()
        b.synchronize()
        gpu.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    rows.append((name, sorted(gpu)[reps // 2], sorted(host)[reps // 2]))


def unvisit():
    depth.fill(-1)


rows = []
timed("bitmap (sender: set a bit per frontier vertex)", lambda: ops.bitmap(peer, n), rows)
timed("combine_merge of the bits (min depth, merged after the own frontier)",
      lambda: ops.combine_merge(mine, [(ops.Bits(bits), to_local, [(depth, "min", 4)], [])], seen, owner, 0), rows,
      reset=unvisit)
timed("combine_merge of the same as a list (ids and a level each)",
      lambda: ops.combine_merge(mine, [(peer, to_local, [(depth, "min", level)], [])], seen, owner, 0), rows,
      reset=unvisit)
timed("combine_merge, own frontier only", lambda: ops.combine_merge(mine, [], seen, owner, 0), rows)
# where no vertex can repeat (BFS: every value that arrives is the level the frontier holds) there is no bitmap
timed("the bits without the scratch bitmap", lambda: ops.combine_merge(
    mine, [(ops.Bits(bits), to_local, [(depth, "min", 4)], [])], None, owner, 0), rows, reset=unvisit)
timed("the list without the scratch bitmap", lambda: ops.combine_merge(
    mine, [(peer, to_local, [(depth, "min", level)], [])], None, owner, 0), rows, reset=unvisit)
timed("own frontier only, without the scratch bitmap", lambda: ops.combine_merge(mine, [], None, owner, 0), rows)
print(f"vertices {n}, set bits {count}")
print("| step | GPU us | host us |")
print("| --- | --- | --- |")
for name, g, h in rows:
    print(f"| {name} | {g:.0f} | {h:.0f} |")

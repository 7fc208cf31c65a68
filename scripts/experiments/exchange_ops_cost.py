"""What each step of one superstep's exchange costs on its own (GPU time and host time, one thread, no contention).

Sizes of the 2-GPU BFS's largest level at R-MAT scale 24 (two_gpu_bfs_diag.py): a device's new frontier
of ~6.1 M local vertices out of ~16 M, of which ~2.3 M are proxies owned by the other device.  Each step
runs as the exchange runs it (mgraph.ops), timed with CUDA events and with the host clock around the
call; median of 7 after a warm-up.

    PYTHONPATH=$PWD python3 scripts/experiments/exchange_ops_cost.py [FRONTIER] [LOCAL] [REMOTE_SHARE]
"""
import sys
import time

import cupy as cp

from mgraph import ops
from mgraph.backend import copy_to_device, enable_peer_access

size = int(sys.argv[1]) if len(sys.argv) > 1 else 6_100_000
n = int(sys.argv[2]) if len(sys.argv) > 2 else 16_000_000
remote = float(sys.argv[3]) if len(sys.argv) > 3 else 0.38
two = cp.cuda.runtime.getDeviceCount() > 1
if two:
    enable_peer_access([0, 1])
cp.random.seed(0)
with cp.cuda.Device(0):
    owner = (cp.random.random(n) < remote).astype(cp.int32)  # device 0 owns ~1 - remote of the local vertices
    frontier = cp.random.permutation(n)[:size].astype(cp.int32)
    id_on = cp.random.randint(0, n, size=n).astype(cp.int32)
    depth = cp.full(n, 3, dtype=cp.int32)
    pred = cp.random.randint(0, n, size=n).astype(cp.int32)
    vertex_ids = cp.random.permutation(n).astype(cp.int64)
    seen = cp.zeros(-(-n // 32), dtype=cp.uint32)


def timed(name, fn, rows, reps=7):
    fn()
    gpu, host = [], []
    for _ in range(reps):
        cp.cuda.Device().synchronize()
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        t = time.perf_counter()
        out = fn()
        host.append((time.perf_counter() - t) * 1e6)
        b.record()
        b.synchronize()
        gpu.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    rows.append((name, sorted(gpu)[reps // 2], sorted(host)[reps // 2]))
    return out


rows = []
with cp.cuda.Device(0), cp.cuda.Stream(non_blocking=True):
    counts, packed = timed("split + package (ids, depth, pred in caller ids): 2 passes, 1 read",
                           lambda: ops.split(frontier, owner, 0, 2, [depth, pred], [None, vertex_ids], [None, id_on]),
                           rows)
    ids, (dvals, pvals) = packed[1]
    g2l = vertex_ids.astype(cp.int32)
    received = [(ids, None, [(depth, "min", dvals)], [(pred, pvals, g2l)])]
    timed("combine_merge (min depth, carried pred through to_local, merged into the frontier)",
          lambda: ops.combine_merge(frontier, received, seen, owner, 0), rows)
if two:
    with cp.cuda.Device(1), cp.cuda.Stream(non_blocking=True):
        timed(f"peer copy of 3 arrays ({3 * 4 * ids.shape[0] / 1e6:.0f} MB) to GPU 1",
              lambda: [copy_to_device(x, 1) for x in (ids, dvals, pvals)], rows)
print(f"frontier {size}, local vertices {n}, sent {int(ids.shape[0])}")
print("| step | GPU us | host us |")
print("| --- | --- | --- |")
for name, g, h in rows:
    print(f"| {name} | {g:.0f} | {h:.0f} |")

# Small operations from two threads, one per GPU: what the GIL does to a superstep's ~40 CuPy calls.
# Each "superstep" is 40 tiny elementwise launches and 4 host reads; per-superstep host time alone, then
# with the other GPU's thread doing the same, at the default and at a 20 us switch interval.
if two:
    import threading

    def loop(dev, steps, sink):
        with cp.cuda.Device(dev), cp.cuda.Stream(non_blocking=True):
            x = cp.zeros(1000, dtype=cp.int32)
            t = time.perf_counter()
            for _ in range(steps):
                for k in range(40):
                    x += 1
                    if k % 10 == 9:
                        int(x[0])
            sink.append((time.perf_counter() - t) / steps * 1e6)

    for interval in (5e-3, 2e-5):
        sys.setswitchinterval(interval)
        alone = []
        loop(0, 300, alone)
        alone.clear()
        loop(0, 300, alone)
        both = []
        threads = [threading.Thread(target=loop, args=(d, 300, both)) for d in (0, 1)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(f"switch interval {interval * 1e6:.0f} us: 40 launches + 4 reads: alone {alone[0]:.0f} us, "
              f"two threads on two GPUs {max(both):.0f} us per superstep")
    sys.setswitchinterval(5e-3)

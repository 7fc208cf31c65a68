"""What one small CuPy operation costs the host: the floor under a superstep of a tiny frontier.

    PYTHONPATH=$PWD python3 scripts/experiments/small_op_cost.py [REPS]

Times (cupyx.profiler.benchmark: host time per call, and the device time) the
operations a superstep of a one-vertex frontier is made of, each on arrays of
a few entries: allocation, fill, a RawKernel launch, an ElementwiseKernel, a
fancy-index gather, a cumulative sum, a one-number read to the host, and the
library's own split (ops.split) and advance (ops.advance_visit) on a path.
"""
import sys

import cupy as cp
import numpy as np
from cupyx.profiler import benchmark

import mgraph
from mgraph import ops


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    a = cp.arange(8, dtype=np.int32)
    idx = cp.asarray([3], dtype=np.int32)
    table = cp.arange(1 << 20, dtype=np.int32)
    g = mgraph.Graph.from_edges(np.arange(999), np.arange(1, 1000), num_vertices=1000, directed=True).to("cupy")
    label = cp.full(1000, -1, dtype=np.int32)
    pred = cp.full(1000, -1, dtype=np.int32)
    noop = cp.RawKernel(r'extern "C" __global__ void noop(int* a) { if (threadIdx.x == 1000) a[0] = 1; }', "noop")
    offs = cp.zeros(2, dtype=np.int64)
    owner = cp.zeros(1000, dtype=np.int32)
    cases = {
        "cp.empty(1)": lambda: cp.empty(1, dtype=np.uint64),
        "cp.zeros(2)": lambda: cp.zeros(2, dtype=np.uint64),
        "RawKernel launch": lambda: noop((1,), (32,), (a,)),
        "ElementwiseKernel (translate)": lambda: ops.translate(idx, table),
        "fancy index table[idx]": lambda: table[idx],
        "cp.cumsum(2 entries)": lambda: cp.cumsum(offs, out=offs),
        "int(a[0]) (device to host)": lambda: int(a[0]),
        "a.get() (8 entries)": lambda: a.get(),
        "ops.split(1 own vertex, 2 devices)": lambda: ops.split(idx, owner, 0, 2, [label, pred], [None, None]),
        "ops.advance_visit(1 vertex)": lambda: ops.advance_visit(g, idx, label, pred, 1),
    }
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {reps} calls each")
    print("| operation | host us per call | device us per call |")
    print("|---|---|---|")
    for name, fn in cases.items():
        r = benchmark(fn, n_repeat=reps, n_warmup=20)
        print(f"| {name} | {1e6 * np.median(r.cpu_times):.1f} | {1e6 * np.median(r.gpu_times[0]):.1f} |", flush=True)


if __name__ == "__main__":
    main()

"""Experiment (not for the tree): host cost of one step-kernel launch, CuPy's RawKernel call against the driver
with pre-made 8-byte argument slots, on the overhead experiment's path graph."""
import sys, time
sys.path.insert(0, "scripts")
import numpy as np, cupy as cp
import mgraph
from mgraph import ops
from mgraph.ops import cupy_levels, queue
from scaling import PathBFS, paths_graph, path_partitioner
g = paths_graph(1, 1000, cp)
run = dict(backend="cupy", devices=1, seed=0, partitioner=path_partitioner(1000))
r = mgraph.run(PathBFS, g, **run)
print("us/superstep", round(r.stats["elapsed_s"] / r.stats["supersteps"] * 1e6, 2))
# the step kernel of the visit functor, from the last run's registry
key = next(iter(cupy_levels._FUNCTORS))
gr = g  # a whole graph on one device
idx = np.dtype(gr.indices.dtype)
facts = cupy_levels._step_facts(gr)
idx, device, degree, arrays = facts
kernel, most = cupy_levels._step_kernel(key, idx, device)
front = cp.zeros(1, dtype=idx); out = cp.empty(2, dtype=idx)
counts = cp.zeros(64, dtype=cp.uint64)
depth = cp.full(gr.num_vertices, -1, dtype=cp.int32); pred = cp.full(gr.num_vertices, -1, dtype=idx)
f = cupy_levels._FUNCTORS[key]
print("functor", f.name, [p.c() for p in f.params])
args = (depth, pred, np.int32(5))[:len(f.params)]
nc = cp.zeros(1, dtype=cp.uint64)
def cupy_launch():
    kernel((1,), (256,), arrays + (front, np.int64(0), nc, np.int64(0), np.int32(0), out, counts, np.int64(3)) + args)
fixed = [a.data.ptr if isinstance(a, cp.ndarray) else int(a) for a in arrays] + [0] * (8 + len(args))
slots = np.array(fixed, dtype=np.int64)
params = slots.ctypes.data + 8 * np.arange(len(fixed), dtype=np.uint64)
stream = cp.cuda.get_current_stream()
def driver_launch():
    slots[4:12] = (front.data.ptr, 0, nc.data.ptr, 0, 0, out.data.ptr, counts.data.ptr, 3)
    slots[12] = depth.data.ptr; slots[13] = pred.data.ptr; slots[14] = 5
    cp.cuda.driver.launchKernel(kernel.kernel.ptr, 1, 1, 1, 256, 1, 1, 0, stream.ptr, params.ctypes.data, 0)
def empty():
    cp.empty(1001, dtype=idx)
for name, fn in (("cupy launch", cupy_launch), ("driver launch", driver_launch), ("cp.empty", empty),
                 ("cupy launch", cupy_launch), ("driver launch", driver_launch)):
    for _ in range(1000):
        fn()
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(20000):
        fn()
    dt = time.perf_counter() - t
    cp.cuda.Device().synchronize()
    print(f"{name}: {dt / 20000 * 1e6:.2f} us per call (host)")

"""The GPU's :func:`mgraph.ops.advance_levels`: one persistent cooperative kernel runs level after level.

Every warp takes a frontier vertex at a time (grid-stride) and its lanes run
the functor's body over the vertex's arcs, 32 at a time; a warp's emitted
vertices are appended with one atomic, and their out-degrees are added up on
the way so that the grid knows, after its sync, how many arcs the next level
holds.  All threads read the same counts after each grid sync, so they take
the same decision to go on or stop without the host.  A thread's first task,
before any level, is the input frontier's arcs: a frontier larger than the
bound is refused (``levels`` 0) and the caller runs the load-balanced advance.

The grid is as large as can be resident at once (a cooperative launch
requires it); the kernel is compiled per functor, id type and device.
"""
from __future__ import annotations

import weakref
from functools import lru_cache

import cupy as cp
import numpy as np

from mgraph.ops import cuda, cupy_kernels
from mgraph.ops.levels import Levels, fusable, max_degree
from mgraph.ops.queue import Queue, word

BLOCK = cuda.BLOCK

LEVELS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// state: [0], [1] the output counts of even / odd levels; [2] levels run; [3] the last level's count;
// [4] vertices emitted over all levels; [5], [6] the out-arcs of even / odd levels' outputs; [7] the input's arcs
extern "C" __global__ void __launch_bounds__(BLOCK) levels_{name}(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const double* __restrict__ weights, int has_weights,
    const idx_t* __restrict__ frontier, i64 n_front, idx_t* __restrict__ buf_a, idx_t* __restrict__ buf_b,
    i64 limit, int max_levels, int level0, u64* __restrict__ state,
    double do_a, i64 rule_n, i64 rule_arcs, i64 visited0{params})
{{
    cg::grid_group grid = cg::this_grid();
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    {{  // the input frontier's arcs: a larger frontier is the load-balanced advance's
        unsigned long long arcs = 0;
        for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < n_front; k += (i64)gridDim.x * blockDim.x) {{
            const idx_t u = frontier[k];
            arcs += (u64)(indptr[u + 1] - indptr[u]);
        }}
        for (int d = 16; d > 0; d >>= 1) arcs += __shfl_down_sync(0xffffffffu, arcs, d);
        if (lane == 0 && arcs) atomicAdd(&state[7], (u64)arcs);
    }}
    grid.sync();
    if ((i64)*(volatile u64*)&state[7] > limit) return;  // levels stays 0
    const idx_t* in = frontier;
    idx_t* out = buf_a;
    i64 n = n_front;
    u64 emitted = 0;
    i64 visited = visited0;
    for (int it = 0;; ++it) {{
        const int {level} = level0 + it;
        u64* count = &state[it & 1];
        u64* out_arcs = &state[5 + (it & 1)];
        for (i64 k = warp; k < n; k += warps) {{  // warp-uniform: every lane takes the same vertex
            const idx_t u = in[k];
            const i64 beg = indptr[u], end = indptr[u + 1];
            for (i64 base = beg; base < end; base += 32) {{
                const i64 e = base + lane;
                bool emit = false;
                idx_t v = 0;
                if (e < end) {{
                    v = indices[e];
                    const double w = has_weights ? weights[e] : 1.0;
                    (void)w;
{body}
                }}
                const unsigned hits = __ballot_sync(0xffffffffu, emit);
                if (hits) {{
                    const int leader = __ffs(hits) - 1;
                    u64 at = 0;
                    if (lane == leader) at = atomicAdd(count, (u64)__popc(hits));
                    at = __shfl_sync(0xffffffffu, at, leader);
                    unsigned long long deg = 0;
                    if (emit) {{
                        out[at + __popc(hits & ((1u << lane) - 1u))] = v;
                        deg = (u64)(indptr[v + 1] - indptr[v]);
                    }}
                    for (int d = 16; d > 0; d >>= 1) deg += __shfl_down_sync(0xffffffffu, deg, d);
                    if (lane == 0 && deg) atomicAdd(out_arcs, (u64)deg);
                }}
            }}
        }}
        grid.sync();
        const i64 m = (i64)*(volatile u64*)count;
        const i64 next_arcs = (i64)*(volatile u64*)out_arcs;
        emitted += (u64)m;
        visited += m;
        bool to_pull = false;  // PullRule.pulls_after: where a direction-optimizing traversal would pull next
        if (do_a > 0.0) {{
            const double forward = (double)m * (double)rule_arcs / (double)rule_n;
            const double backward = (double)(rule_n - visited) * (double)rule_n / (double)(visited > 1 ? visited : 1);
            to_pull = forward > backward * do_a;
        }}
        if (m == 0 || it + 1 >= max_levels || next_arcs > limit || to_pull) {{
            if (blockIdx.x == 0 && threadIdx.x == 0) {{ state[2] = it + 1; state[3] = m; state[4] = emitted; }}
            return;
        }}
        if (blockIdx.x == 0 && threadIdx.x == 0) {{  // the next level's counters: last read before the previous sync
            state[(it + 1) & 1] = 0;
            state[5 + ((it + 1) & 1)] = 0;
        }}
        in = out;
        out = (out == buf_a) ? buf_b : buf_a;
        n = m;
        grid.sync();
    }}
}}
"""


# One level of a push advance whose frontier's length is a device word (a Queue's), the fused kernel's level without
# the grid syncs: a warp per frontier vertex, grid-stride, the count read on the device, so that the host launches
# it with no read.  Its output's count is another device word.
STEP = r"""
extern "C" __global__ void __launch_bounds__(BLOCK) step_{name}(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const double* __restrict__ weights, int has_weights,
    const idx_t* __restrict__ frontier, i64 n_front, const u64* __restrict__ in_counts, i64 in_at, int counted,
    idx_t* __restrict__ out, u64* __restrict__ out_counts, i64 out_at{params})
{{
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 n = counted ? (i64)in_counts[in_at] : n_front;
    u64* out_count = out_counts + out_at;
    for (i64 k = warp; k < n; k += warps) {{  // warp-uniform: every lane takes the same vertex
        const idx_t u = frontier[k];
        const i64 beg = indptr[u], end = indptr[u + 1];
        for (i64 base = beg; base < end; base += 32) {{
            const i64 e = base + lane;
            bool emit = false;
            idx_t v = 0;
            if (e < end) {{
                v = indices[e];
                const double w = has_weights ? weights[e] : 1.0;
                (void)w;
{body}
            }}
            const unsigned hits = __ballot_sync(0xffffffffu, emit);
            if (hits) {{
                const int leader = __ffs(hits) - 1;
                u64 at = 0;
                if (lane == leader) at = atomicAdd(out_count, (u64)__popc(hits));
                at = __shfl_sync(0xffffffffu, at, leader);
                if (emit) out[at + __popc(hits & ((1u << lane) - 1u))] = v;
            }}
        }}
    }}
}}
"""
STEP_BLOCKS_PER_SM = 8  # the step kernel's grid at most: grid-stride beyond (its length is not known when launched)


def source(idx_ctype: str, functor, level_name: str) -> str:
    params = "".join(", " + p.c() for p in functor.params if p.name != level_name)
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {cupy_kernels.ITEMS}\n#define BLOCK {BLOCK}\n"
            + cupy_kernels.PRELUDE
            + LEVELS.format(name=functor.name, params=params, body=functor.cuda, level=level_name))


_FUNCTORS = {}  # functor key -> functor (the compile cache is keyed by the functor's source)


@lru_cache(maxsize=None)
def _kernel(key, level_name, idx_dtype, device_id):
    """The kernel and the largest grid that can be resident at once (a cooperative launch needs it)."""
    functor = _FUNCTORS[key]
    with cp.cuda.Device(device_id):
        module = cp.RawModule(code=source(cuda.ID_CTYPES[np.dtype(idx_dtype)], functor, level_name),
                              options=cuda.OPTIONS, enable_cooperative_groups=True)
        kernel = module.get_function("levels_" + functor.name)
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, BLOCK, 0)
        if per_sm < 1:
            raise RuntimeError(f"levels_{functor.name}: no block of {BLOCK} threads fits on a multiprocessor")
        sms = cp.cuda.Device(device_id).attributes["MultiProcessorCount"]
        return kernel, per_sm * sms


_BUFFERS = {}  # (device, dtype) -> the two level buffers, grown to the largest graph seen


def _buffers(n, dtype, device_id):
    key = (device_id, np.dtype(dtype))
    bufs = _BUFFERS.get(key)
    if bufs is None or bufs[0].shape[0] < n:
        bufs = _BUFFERS[key] = (cp.empty(max(n, 1), dtype=dtype), cp.empty(max(n, 1), dtype=dtype))
    return bufs


def advance_levels(graph, frontier, functor, args, level_at, limit, max_levels, advance, rule=None):
    """As :func:`mgraph.ops.levels.advance_levels`, with the levels in one cooperative launch and one read."""
    n_front = int(frontier.shape[0])
    level_param = functor.params[level_at]
    if max_levels <= 1 or not 0 < n_front <= limit or not fusable(graph):
        out = advance(graph, frontier, functor, args)
        return Levels(out, 1, int(out.shape[0]))
    idx = graph.indices.dtype
    device = graph.indptr.device.id
    _FUNCTORS.setdefault(functor.key, functor)
    kernel, grid = _kernel(functor.key, level_param.name, np.dtype(idx), device)
    buf_a, buf_b = _buffers(graph.num_vertices, idx, device)
    state = cuda.counters(device, 8)
    has_w = graph.weights is not None
    rest = tuple(a for j, a in enumerate(args) if j != level_at)
    kernel((grid,), (BLOCK,), (graph.indptr, graph.indices, graph.weights if has_w else cuda.dummy(np.float64),
                               np.int32(has_w), frontier.astype(idx, copy=False), np.int64(n_front), buf_a, buf_b,
                               np.int64(limit), np.int32(min(max_levels, 2**31 - 1)), np.int32(args[level_at]),
                               state, np.float64(0.0 if rule is None else rule.do_a),
                               np.int64(1 if rule is None else rule.n), np.int64(1 if rule is None else rule.arcs),
                               np.int64(0 if rule is None else rule.visited)) + rest)
    _, _, levels, count, emitted, _, _, _ = cuda.read_words(state, 8)
    if levels == 0:  # the input's arcs were over the bound
        out = advance(graph, frontier, functor, args)
        return Levels(out, 1, int(out.shape[0]))
    last = buf_a if levels % 2 == 1 else buf_b
    return Levels(last[:count].copy(), levels, emitted)


def step_source(idx_ctype: str, functor) -> str:
    params = "".join(", " + p.c() for p in functor.params)
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {cupy_kernels.ITEMS}\n#define BLOCK {BLOCK}\n"
            + cupy_kernels.PRELUDE + STEP.format(name=functor.name, params=params, body=functor.cuda))


@lru_cache(maxsize=None)
def _step_kernel(key, idx_dtype, device_id):
    """The step kernel and its largest grid."""
    functor = _FUNCTORS[key]
    with cp.cuda.Device(device_id):
        module = cp.RawModule(code=step_source(cuda.ID_CTYPES[np.dtype(idx_dtype)], functor), options=cuda.OPTIONS)
        sms = cp.cuda.Device(device_id).attributes["MultiProcessorCount"]
        return module.get_function("step_" + functor.name), sms * STEP_BLOCKS_PER_SM


def advance_queue(graph, frontier, functor, args, advance):
    """As :func:`mgraph.ops.levels.advance_queue`: on a graph whose levels may fuse, one launch of the step kernel
    that reads the input's length on the device and counts its output there (a Queue, nothing read); else the
    load-balanced ``advance`` of the frontier's entries."""
    facts = _STEP_FACTS.get(graph)
    if facts is None:
        facts = _STEP_FACTS[graph] = _step_facts(graph)
    if facts is False:
        return advance(graph, frontier.array() if isinstance(frontier, Queue) else frontier, functor, args)
    idx, device, degree, arrays = facts
    if isinstance(frontier, Queue):
        front, cap, n_front = frontier.buffer, frontier.capacity, frontier._n
        in_counts, in_at, counted = frontier.counts, frontier.at, int(n_front is None)
    else:
        front, cap = frontier.astype(idx, copy=False), int(frontier.shape[0])
        n_front, in_counts, in_at, counted = cap, _NO_COUNTS[device], 0, 0
    out_cap = min(graph.num_vertices, cap * degree)
    out = cp.empty(out_cap, dtype=idx)
    if not out_cap or n_front == 0:
        return Queue(out, None, 0, 0)
    counts, at = word(cp, device)
    kernel, most = _step_kernel(functor.key, idx, device) if functor.key in _FUNCTORS else _register(functor, idx,
                                                                                                    device)
    kernel((min(most, -(-cap // (BLOCK // 32))),), (BLOCK,),
           arrays + (front, np.int64(n_front or 0), in_counts, np.int64(in_at), np.int32(counted), out, counts,
                     np.int64(at)) + tuple(args))
    return Queue(out, counts, at)


_STEP_FACTS = weakref.WeakKeyDictionary()  # graph -> what every step launch on it needs (False: levels do not fuse)
_NO_COUNTS = {}  # device -> a placeholder for the input's count words where the host knows its length


def _step_facts(graph):
    if not fusable(graph):
        return False
    idx, device = np.dtype(graph.indices.dtype), graph.indptr.device.id
    _NO_COUNTS.setdefault(device, cuda.dummy(np.uint64))
    has_w = graph.weights is not None
    arrays = (graph.indptr, graph.indices, graph.weights if has_w else cuda.dummy(np.float64), np.int32(has_w))
    return idx, device, max_degree(graph), arrays


def _register(functor, idx, device):
    _FUNCTORS.setdefault(functor.key, functor)
    return _step_kernel(functor.key, idx, device)

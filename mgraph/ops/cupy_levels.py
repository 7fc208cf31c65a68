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
from mgraph.ops.levels import DIRECTIONS_HUB, PUSH_MOST, Levels, fusable, max_degree
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
    return cuda.cooperative(source(cuda.ID_CTYPES[np.dtype(idx_dtype)], functor, level_name),
                            "levels_" + functor.name, device_id)


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


# A direction-optimizing traversal's levels in one cooperative kernel (ops.visit_levels on one GPU, "auto"): each
# level takes the direction Direction.choose would give it, from counts every thread reads after a grid sync.  A push
# level gives each frontier vertex a warp, except hubs (more than hub_degree arcs), whose arcs the whole grid takes
# after a sync as one run of positions; a pull level has each unvisited vertex look for its first in-neighbour in
# the frontier, held as bits.  Arrays the kernel writes are read without __restrict__ (no read-only loads of them).
#
# In a level that may emit many vertices (any pull, a push of more than CHUNK_ABOVE arcs) a warp appends into slots
# it reserves CHUNK at a time: one counter that every warp hits at every emission serialises (a level emitting 7 M
# vertices spent 1.5 ms in that counter's atomics), so the level's output holds gaps (-1) where warps left slots of
# their last chunk unused, and the next level skips them.  A small level's warps take exact slots, leaving no gaps.
# The counts are added up per warp in registers and once per block and level.
DIRECTIONS_OPS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ bool in_bits(const unsigned* bits, i64 v) {
    return (bits[v >> 5] >> (v & 31)) & 1u;
}

// largest k in [lo, hi] with at[k] <= i (at non-decreasing, written by this kernel)
__device__ __forceinline__ i64 last_at_most(const i64* at, i64 lo, i64 hi, i64 i) {
    while (lo < hi) {
        const i64 mid = (lo + hi + 1) >> 1;
        if (at[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// A warp's appends: the slots it holds (pos, left) and what it emitted this level.  Appending reads nothing of the
// emitted vertices: their out-arcs matter only where the next level pushes, and are counted then (count_arcs), so
// that a level emitting millions of vertices into a pull pays no random read of a row per vertex.
struct Appender {
    u64 pos;
    unsigned left;
    unsigned emitted;
};

// Every lane of the warp calls it (warp-uniform).  Where the level is not `chunked` (its frontier has few arcs) the
// warp takes exactly its hits' slots, one atomic per 32 entries, and leaves no gaps.
__device__ __forceinline__ void warp_append(Appender& a, bool emit, idx_t v, int lane, idx_t* out, u64* slots,
                                            bool chunked) {
    const unsigned hits = __ballot_sync(0xffffffffu, emit);
    if (!hits) return;
    const unsigned n = __popc(hits);
    const unsigned rank = __popc(hits & ((1u << lane) - 1u));
    u64 at = a.pos + rank;
    if (!chunked) {
        u64 base = 0;
        if (lane == 0) base = atomicAdd(slots, (u64)n);
        at = __shfl_sync(0xffffffffu, base, 0) + rank;
    } else if (n > a.left) {  // a new chunk; the hits past the old one's end go there
        u64 base = 0;
        if (lane == 0) base = atomicAdd(slots, (u64)CHUNK);
        base = __shfl_sync(0xffffffffu, base, 0);
        if (rank >= a.left) at = base + (rank - a.left);
        a.pos = base + (n - a.left);
        a.left = CHUNK - (n - a.left);
    } else {
        a.pos += n;
        a.left -= n;
    }
    a.emitted += n;
    if (emit) out[at] = v;
}

// Adds the block's threads' `x` into the word at `to_x` and their `y` into `to_y`, one atomic each per block.  Every
// thread of the block calls it.
__device__ __forceinline__ void block_add(u64 x, u64 y, u64* to_x, u64* to_y) {
    __shared__ u64 s_sums[2][BLOCK / 32];
    for (int d = 16; d > 0; d >>= 1) {
        x += __shfl_down_sync(0xffffffffu, x, d);
        y += __shfl_down_sync(0xffffffffu, y, d);
    }
    const int w = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) { s_sums[0][w] = x; s_sums[1][w] = y; }
    __syncthreads();
    if (threadIdx.x < 2) {
        u64 sum = 0;
        for (int k = 0; k < BLOCK / 32; ++k) sum += s_sums[threadIdx.x][k];
        if (sum) atomicAdd(threadIdx.x == 0 ? to_x : to_y, sum);
    }
    __syncthreads();  // read before the block's next call writes
}

// A warp's level ends: its unused slots marked as gaps; the block's count added to the level's, one atomic per
// block (a counter every warp hits once per level costs a superstep's worth on a long-diameter graph).  Every
// thread of the block calls it.
__device__ __forceinline__ void block_flush(Appender& a, int lane, idx_t* out, u64* emitted) {
    for (unsigned j = lane; j < a.left; j += 32) out[a.pos + j] = (idx_t)-1;
    block_add(lane == 0 ? (u64)a.emitted : 0ull, 0ull, emitted, emitted);
    a.pos = a.left = a.emitted = 0;
}

// The out-arcs of a level's output (`slots` entries, gaps -1): all of them into `arcs`, those of vertices of at most
// hub_degree arcs (what a push gives warps) into `light`.  Every thread of the grid calls it.
__device__ __forceinline__ void count_arcs(const i64* __restrict__ indptr, const idx_t* out, i64 slots,
                                           i64 hub_degree, u64* light, u64* arcs) {
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 threads = (i64)gridDim.x * blockDim.x;
    u64 l = 0, r = 0;
    for (i64 k = tid; k < slots; k += threads) {
        const i64 v = (i64)out[k];
        if (v < 0) continue;
        const i64 d = indptr[v + 1] - indptr[v];
        r += (u64)d;
        if (d <= hub_degree) l += (u64)d;
    }
    block_add(l, r, light, arcs);
}

// An unvisited vertex's first in-neighbour among the frontier's bits, from its row [beg, end) (-1: none).
__device__ __forceinline__ i64 first_in_bits(const idx_t* __restrict__ rindices, const unsigned* bits, i64 beg,
                                             i64 end) {
    for (i64 e = beg; e < end; ++e) {
        const idx_t u = rindices[e];
        if (in_bits(bits, u)) return u;
    }
    return -1;
}

// Pull: each unvisited vertex takes its first in-neighbour among the bits; a lane takes PULL_WAYS vertices 32
// apart per trip (warp-uniform trips), their labels and rows read before any row is walked, so that each lane has
// that many chains of reads in flight (a pull is bound by those chains, label -> row -> first arc -> bit, not by
// its arcs); the rest of a row is walked only where its first arc is not in the frontier.
// BITS (the levels across GPUs): the vertices found are also the next frontier's bits (`next_bits`: a warp's 32
// vertices are one word, stored whole where any was found), so that a pull after a pull needs no pass over the
// frontier to set them.
template <bool BITS>
__device__ __forceinline__ Appender pull_level(const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices,
                                               int* label, idx_t* pred, const unsigned* bits, i64 n, int level,
                                               idx_t* out, u64* slots, bool chunked, Appender a,
                                               unsigned* next_bits) {
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 base = warp * 32 * PULL_WAYS; base < n; base += warps * 32 * PULL_WAYS) {
        int l[PULL_WAYS];
        i64 b[PULL_WAYS], e[PULL_WAYS], u[PULL_WAYS];
#pragma unroll
        for (int w = 0; w < PULL_WAYS; ++w) {
            const i64 v = base + 32 * w + lane;
            l[w] = v < n ? label[v] : 0;
            b[w] = v < n ? rindptr[v] : 0;
            e[w] = v < n ? rindptr[v + 1] : 0;
        }
#pragma unroll
        for (int w = 0; w < PULL_WAYS; ++w) u[w] = l[w] == -1 && b[w] < e[w] ? (i64)rindices[b[w]] : -1;
#pragma unroll
        for (int w = 0; w < PULL_WAYS; ++w)  // most found or not: the first arcs checked together, then the rest
            if (u[w] >= 0 && !in_bits(bits, u[w])) u[w] = first_in_bits(rindices, bits, b[w] + 1, e[w]);
#pragma unroll
        for (int w = 0; w < PULL_WAYS; ++w) {
            const i64 v = base + 32 * w + lane;
            if (u[w] >= 0) { label[v] = level; pred[v] = (idx_t)u[w]; }
            if (BITS) {
                const unsigned hits = __ballot_sync(0xffffffffu, u[w] >= 0);
                if (lane == 0 && hits) next_bits[(base + 32 * w) >> 5] = hits;  // base is a multiple of 32
            }
            warp_append(a, u[w] >= 0, (idx_t)v, lane, out, slots, chunked);
        }
    }
    return a;
}

// One frontier vertex's push by the whole warp (warp-uniform): a hub's arcs are set aside for hub_level.
__device__ __forceinline__ void push_vertex(Appender& a, idx_t u, int lane, const i64* __restrict__ indptr,
                                            const idx_t* __restrict__ indices, int* label, idx_t* pred, int level,
                                            idx_t* out, u64* slots, idx_t* hub_v, i64* hub_at, u64* hubs,
                                            i64 hub_degree, bool chunked) {
    const i64 beg = indptr[u], end = indptr[u + 1];
    if (end - beg > hub_degree) {  // a hub: its arcs go to the whole grid, after a sync
        if (lane == 0) {
            const u64 slot = atomicAdd(hubs, (1ull << 40) | (u64)(end - beg));
            hub_v[slot >> 40] = u;
            hub_at[slot >> 40] = (i64)(slot & ((1ull << 40) - 1ull));
        }
        return;
    }
    for (i64 e0 = beg; e0 < end; e0 += 32) {
        const i64 e = e0 + lane;
        bool emit = false;
        idx_t v = 0;
        if (e < end) {
            v = indices[e];
            if (label[v] == -1 && atomicCAS(&label[v], -1, level) == -1) { pred[v] = u; emit = true; }
        }
        warp_append(a, emit, v, lane, out, slots, chunked);
    }
}

// Push: a warp per frontier vertex.  A frontier with gaps (the output of a chunked level) is read 32 entries at a
// time and the warp takes their vertices in turn, so that a gap costs a lane's read, not a warp's trip.
__device__ __forceinline__ Appender push_level(const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
                                            int* label, idx_t* pred, const idx_t* in, i64 in_slots, bool gaps,
                                            int level, idx_t* out, u64* slots, idx_t* hub_v, i64* hub_at,
                                            u64* hubs, i64 hub_degree, bool chunked, Appender a) {
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    if (!gaps) {
        for (i64 k = warp; k < in_slots; k += warps)
            push_vertex(a, in[k], lane, indptr, indices, label, pred, level, out, slots, hub_v, hub_at, hubs,
                        hub_degree, chunked);
        return a;
    }
    for (i64 base = warp * 32; base < in_slots; base += warps * 32) {
        const idx_t mine = base + lane < in_slots ? in[base + lane] : (idx_t)-1;
        unsigned todo = __ballot_sync(0xffffffffu, mine >= 0);
        while (todo) {  // warp-uniform: every lane takes the same vertex
            const int j = __ffs(todo) - 1;
            todo &= todo - 1u;
            push_vertex(a, __shfl_sync(0xffffffffu, mine, j), lane, indptr, indices, label, pred, level, out, slots,
                        hub_v, hub_at, hubs, hub_degree, chunked);
        }
    }
    return a;
}

// The hubs' arcs as one run of positions, HUB_RUN consecutive ones to a warp (warp-uniform trips).
__device__ __forceinline__ Appender hub_level(const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
                                           int* label, idx_t* pred, int level, idx_t* out, u64* slots,
                                           const idx_t* hub_v, const i64* hub_at, i64 n_hubs, i64 hub_arcs,
                                           bool chunked, Appender a) {
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 run = warp * HUB_RUN; run < hub_arcs; run += warps * HUB_RUN) {
        i64 h = last_at_most(hub_at, 0, n_hubs - 1, run);  // the run's first hub, found once
        const i64 run_end = run + HUB_RUN < hub_arcs ? run + HUB_RUN : hub_arcs;
        for (i64 e0 = run; e0 < run_end; e0 += 32) {
            const i64 at = e0 + lane;
            bool emit = false;
            idx_t v = 0;
            if (at < run_end) {
                while (h + 1 < n_hubs && hub_at[h + 1] <= at) ++h;  // lanes move on to the next hubs
                const idx_t u = hub_v[h];
                v = indices[indptr[u] + (at - hub_at[h])];
                if (label[v] == -1 && atomicCAS(&label[v], -1, level) == -1) { pred[v] = u; emit = true; }
            }
            warp_append(a, emit, v, lane, out, slots, chunked);
        }
    }
    return a;
}

// Direction's rule: whether the level of a frontier of m vertices pulls, `visited` counting it
__device__ __forceinline__ bool rule_pulls(i64 m, i64 visited, i64 rule_n, i64 rule_arcs, double do_a, double do_b,
                                           bool pulling, bool switched) {
    const double forward = (double)m * (double)rule_arcs / (double)rule_n;
    const double backward = (double)(rule_n - visited) * (double)rule_n / (double)(visited > 1 ? visited : 1);
    if (!pulling && !switched && forward > backward * do_a) return true;
    if (pulling && forward < backward * do_b) return false;
    return pulling;
}

"""

# the kernel of one GPU; the operators above also serve the levels across GPUs (mgraph.comm.cupy_directions)
DIRECTIONS = DIRECTIONS_OPS + r"""
// state, per level parity p (0 even, 1 odd): [0 + p] slots used (vertices and gaps), [5 + p] light arcs, [12 + p]
// vertices emitted, [16 + p] the level's hubs: their count (bits 40 and up) and arcs (below), taken by one atomic,
// [18 + p] the out-arcs of the vertices emitted (both arc counts only where the next level pushes); [2] levels run;
// [3] the last level's slots; [4] vertices emitted over all levels; [7] visited at the end; [9] pulling at the end;
// [10] the first level that pulled, plus one (0: none); [11] the first that pushed after pulling, plus one; [14] the
// last level's vertices.  Level `it` zeroes the words of parity it + 1 after its first sync, when every thread has
// read them (in level it - 1) and none writes them before its last sync: so a level ends with one sync (and one
// more where the next level pushes, after its arcs are counted).
extern "C" __global__ void __launch_bounds__(BLOCK, DIRECTIONS_MIN_BLOCKS) visit_directions(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices,
    int* label, idx_t* pred, const idx_t* frontier, i64 n_front, idx_t* buf_a, idx_t* buf_b,
    unsigned* bits, idx_t* hub_v, i64* hub_at, i64 hub_degree, i64 limit, int max_levels, int level0,
    u64* state, i64 n, i64 rule_n, i64 rule_arcs, i64 visited0, int pulling0, int switched0, double do_a,
    double do_b)
{
    cg::grid_group grid = cg::this_grid();
    const int lane = threadIdx.x & 31;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 threads = (i64)gridDim.x * blockDim.x;
    const u64 HUB_ARCS = (1ull << 40) - 1ull;
    const i64 words = (n + 31) >> 5;
    const idx_t* in = frontier;
    idx_t* out = buf_a;
    i64 m = n_front, in_slots = n_front, in_arcs = 0, visited = visited0;
    bool pulling = pulling0 != 0, switched = switched0 != 0;
    int first_pull = 0, first_push = 0;
    u64 emitted = 0;
    Appender a = {0, 0, 0};
    for (int it = 0;; ++it) {
        const int level = level0 + it, p = it & 1, q = p ^ 1;
        visited += m;
        const bool pulls = rule_pulls(m, visited, rule_n, rule_arcs, do_a, do_b, pulling, switched);
        if (pulls && !pulling) { first_pull = it + 1; switched = true; }
        if (!pulls && pulling) first_push = it + 1;
        pulling = pulls;
        const bool chunked = pulling || in_arcs > CHUNK_ABOVE;  // a level that may emit many vertices
        u64* slots = &state[p];
        if (pulling) {
            for (i64 k = tid; k < words; k += threads) bits[k] = 0u;
            grid.sync();
            if (tid == 0) { state[q] = 0; state[5 + q] = 0; state[12 + q] = 0; state[16 + q] = 0; state[18 + q] = 0; }
            for (i64 k = tid; k < in_slots; k += threads) {
                const i64 u = (i64)in[k];
                if (u >= 0) atomicOr(&bits[u >> 5], 1u << (u & 31));
            }
            grid.sync();
            a = pull_level<false>(rindptr, rindices, label, pred, bits, n, level, out, slots, chunked, a, nullptr);
        } else {
            a = push_level(indptr, indices, label, pred, in, in_slots, in_slots > m, level, out, slots, hub_v,
                           hub_at, &state[16 + p], hub_degree, chunked, a);
            grid.sync();
            if (tid == 0) { state[q] = 0; state[5 + q] = 0; state[12 + q] = 0; state[16 + q] = 0; state[18 + q] = 0; }
            const u64 hubs = *(volatile u64*)&state[16 + p];
            if (hubs)
                a = hub_level(indptr, indices, label, pred, level, out, slots, hub_v, hub_at, (i64)(hubs >> 40),
                              (i64)(hubs & HUB_ARCS), chunked, a);
        }
        block_flush(a, lane, out, &state[12 + p]);
        grid.sync();  // the level's appends, gaps and count are in
        const i64 next = (i64)*(volatile u64*)&state[12 + p];
        const i64 next_slots = (i64)*(volatile u64*)slots;
        emitted += (u64)next;
        bool stop = next == 0 || it + 1 >= max_levels;
        if (!stop && !rule_pulls(next, visited + next, rule_n, rule_arcs, do_a, do_b, pulling, switched)) {
            // the next level pushes: its arcs size its appends, and a push of more light arcs than limit, or of more
            // vertices than the hubs' word counts, is the load-balanced advance's, from the host
            count_arcs(indptr, out, next_slots, hub_degree, &state[5 + p], &state[18 + p]);
            grid.sync();
            in_arcs = (i64)*(volatile u64*)&state[18 + p];
            stop = (i64)*(volatile u64*)&state[5 + p] > limit || next >= PUSH_MOST;
        }
        if (stop) {
            if (tid == 0) {
                state[2] = it + 1; state[3] = next_slots; state[4] = emitted; state[7] = visited; state[9] = pulling;
                state[10] = first_pull; state[11] = first_push; state[14] = next;
            }
            return;
        }
        in = out;
        out = (out == buf_a) ? buf_b : buf_a;
        m = next;
        in_slots = next_slots;
    }
}
"""


# blocks per multiprocessor the registers must allow: a pull wants reads in flight, while every block adds to each
# grid sync's cost (R-MAT 24 DOBFS was fastest at 6 of 4, 6 and 8)
DIRECTIONS_MIN_BLOCKS = 6
CHUNK = 256  # output slots a warp reserves at a time, in a level that may emit many vertices
CHUNK_ABOVE = 1 << 16  # arcs: a push level whose frontier has more reserves chunks (a pull level always)
PULL_WAYS = 2  # vertices a lane takes per trip of a pull level
HUB_RUN = 128  # a warp's consecutive positions among a level's hubs' arcs: one search for the run's first hub


@lru_cache(maxsize=None)
def _directions_kernel(idx_dtype, device_id):
    """The direction-optimizing levels kernel and the largest grid that can be resident at once."""
    defines = {"IDX_T": cuda.ID_CTYPES[np.dtype(idx_dtype)], "ITEMS": cupy_kernels.ITEMS, "BLOCK": BLOCK,
               "DIRECTIONS_MIN_BLOCKS": DIRECTIONS_MIN_BLOCKS, "CHUNK": CHUNK, "CHUNK_ABOVE": CHUNK_ABOVE,
               "PUSH_MOST": f"{PUSH_MOST}ll", "PULL_WAYS": PULL_WAYS, "HUB_RUN": HUB_RUN}
    source = ("".join(f"#define {name} {value}\n" for name, value in defines.items())
              + cupy_kernels.PRELUDE + DIRECTIONS)
    return cuda.cooperative(source, "visit_directions", device_id)


_HUB_COUNT = weakref.WeakKeyDictionary()  # graph -> its vertices of more than DIRECTIONS_HUB out-arcs
_KEPT = {}  # (device, dtype, what) -> an array kept between calls, grown to the largest size asked


def _kept(device_id, dtype, what, size):
    key = (device_id, np.dtype(dtype), what)
    a = _KEPT.get(key)
    if a is None or a.shape[0] < size:
        a = _KEPT[key] = cp.empty(max(size, 1), dtype=dtype)
    return a


def visit_directions(graph, rgraph, frontier, label, pred, level, policy, limit, max_levels):
    """As :func:`mgraph.ops.levels.visit_directions` (its twin) with the push and pull visits, the levels in one
    cooperative launch and one read; ``rgraph`` is ``graph.reverse()``."""
    idx = np.dtype(graph.indices.dtype)
    device = graph.indptr.device.id
    n = graph.num_vertices
    kernel, grid = _directions_kernel(idx, device)
    room = n + grid * (BLOCK // 32) * CHUNK  # a level's vertices and the gaps its warps may leave
    buf_a, buf_b = _kept(device, idx, "a", room), _kept(device, idx, "b", room)
    hubs = _HUB_COUNT.get(graph)
    if hubs is None:
        hubs = _HUB_COUNT[graph] = int((graph.out_degree() > DIRECTIONS_HUB).sum()) if n else 0
    state = cuda.counters(device, 20)
    kernel((grid,), (BLOCK,), (graph.indptr, graph.indices, rgraph.indptr, rgraph.indices, label, pred,
                               frontier.astype(idx, copy=False), np.int64(frontier.shape[0]), buf_a, buf_b,
                               _kept(device, np.uint32, "bits", -(-n // 32)), _kept(device, idx, "hubs", hubs),
                               _kept(device, np.int64, "hub_at", hubs), np.int64(DIRECTIONS_HUB), np.int64(limit),
                               np.int32(min(max_levels, 2**31 - 1)), np.int32(level), state, np.int64(n),
                               np.int64(policy.num_vertices), np.int64(policy.num_arcs), np.int64(policy.visited),
                               np.int32(policy.pulling), np.int32(policy.switched), np.float64(policy.do_a),
                               np.float64(policy.do_b)))
    words = cuda.read_words(state, 20)
    levels, slots, emitted, visited, first_pull, first_push, count = (words[2], words[3], words[4], words[7],
                                                                      words[10], words[11], words[14])
    policy.took_switching(levels, first_pull, first_push, visited)
    last = (buf_a if levels % 2 == 1 else buf_b)[:slots]
    return Levels(last.copy() if slots == count else last[last >= 0], levels, emitted)

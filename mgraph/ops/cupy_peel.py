"""Core numbers of a whole graph on one GPU: every level of the peeling in one cooperative kernel.

The frontier program of :class:`mgraph.primitives.kcore.KCore` is a superstep per cascade round, each a scan of
every remaining vertex and a handful of host reads; where one GPU holds
the whole graph nothing needs to leave the device between rounds.  The kernel keeps the remaining vertices in a
list it compacts once per level, and per level:

1. drops from the list the vertices removed by the last cascade and finds the smallest remaining degree, k;
2. removes every remaining vertex of degree k (core number k): the level's first frontier;
3. cascades: each frontier vertex's arcs (out and, on a directed graph, in) take one from each remaining
   neighbour's degree; the decrement that takes a degree from k + 1 to k is the only one that can, so the thread
   that makes it removes that neighbour (core number k) and appends it to the next frontier, once.

A warp walks each frontier vertex's arcs; a vertex of more than ``HUB`` arcs is walked by a whole block instead.
Grid syncs separate the steps, and every thread reads the same counts after each, so all take the same decision to
go on.  The host launches once and reads one block of words.  Its NumPy twin is
:func:`mgraph.ops.peel.core_numbers`.
"""
from __future__ import annotations

from functools import lru_cache

import cupy as cp
import numpy as np

from mgraph.ops import cuda, cupy_kernels

BLOCK = cuda.BLOCK
HUB = 1024  # arcs: a frontier vertex with more is walked by a block (a warp would take its row alone)

PEEL = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// a warp's appends of `v` where `take`: one atomic per warp
__device__ __forceinline__ void warp_append(bool take, idx_t v, idx_t* __restrict__ out, u64* __restrict__ count) {
    const unsigned hits = __ballot_sync(0xffffffffu, take);  // every lane calls it: the trips are warp-uniform
    if (!hits) return;
    const int lane = threadIdx.x & 31, leader = __ffs(hits) - 1;
    u64 at = 0;
    if (lane == leader) at = atomicAdd(count, (u64)__popc(hits));
    at = __shfl_sync(0xffffffffu, at, leader);
    if (take) out[at + __popc(hits & ((1u << lane) - 1u))] = v;
}

// one arc from a removed vertex to v at level k: v loses a neighbour; the loss that takes it to k removes it
__device__ __forceinline__ bool lose(idx_t v, int k, int* __restrict__ deg, long long* __restrict__ core) {
    if (core[v] >= 0) return false;
    if (atomicSub(&deg[v], 1) != k + 1) return false;
    core[v] = k;
    return true;
}

// state: [0] the remaining list's length; [1] its next length; [2], [3] the frontier counts of even / odd rounds;
// [4] the smallest remaining degree (atomicMin; the host sets it to the largest word); [5] levels; [6] rounds
extern "C" __global__ void __launch_bounds__(BLOCK) peel(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices, int directed, i64 n,
    int* __restrict__ deg, long long* __restrict__ core, idx_t* __restrict__ rem_a, idx_t* __restrict__ rem_b,
    idx_t* __restrict__ f_a, idx_t* __restrict__ f_b, u64* __restrict__ state)
{
    cg::grid_group grid = cg::this_grid();
    const int lane = threadIdx.x & 31;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x, threads = (i64)gridDim.x * blockDim.x;
    const i64 warp = tid >> 5, warps = threads >> 5;
    const bool first_thread = blockIdx.x == 0 && threadIdx.x == 0;
    const idx_t* rem = nullptr;  // the remaining vertices: all of them at first, then a list
    idx_t* next_rem = rem_a;
    i64 n_rem = n;
    int rounds = 0, levels = 0;
    for (;;) {
        // 1. the remaining list without the vertices the last cascade removed, and its smallest degree
        unsigned int low = 0xffffffffu;
        for (i64 base = tid - lane; base < n_rem; base += threads) {  // warp-uniform trips, for the appends
            const i64 j = base + lane;
            bool keep = false;
            idx_t v = 0;
            if (j < n_rem) {
                v = rem ? rem[j] : (idx_t)j;
                keep = core[v] < 0;
                if (keep) low = min(low, (unsigned int)deg[v]);
            }
            warp_append(keep, v, next_rem, &state[1]);
        }
        for (int d = 16; d > 0; d >>= 1) low = min(low, __shfl_down_sync(0xffffffffu, low, d));
        if (lane == 0 && low != 0xffffffffu) atomicMin(&state[4], (u64)low);
        grid.sync();
        n_rem = (i64)*(volatile u64*)&state[1];
        const int k = (int)*(volatile u64*)&state[4];
        if (n_rem == 0) break;
        rem = next_rem;
        next_rem = (next_rem == rem_a) ? rem_b : rem_a;
        ++levels;
        // 2. the level's first frontier: the remaining vertices of degree k
        u64* count = &state[2 + (rounds & 1)];
        for (i64 base = tid - lane; base < n_rem; base += threads) {
            const i64 j = base + lane;
            bool take = false;
            idx_t v = 0;
            if (j < n_rem) {
                v = rem[j];
                take = deg[v] <= k;
                if (take) core[v] = k;
            }
            warp_append(take, v, f_a, count);
        }
        grid.sync();
        if (first_thread) { state[1] = 0; state[4] = ~0ull; }  // read before the sync above, next written after
        // 3. the cascade, a round per grid sync
        const idx_t* in = f_a;
        idx_t* out = f_b;
        for (;;) {
            const i64 m = (i64)*(volatile u64*)count;
            if (m == 0) break;
            ++rounds;
            count = &state[2 + (rounds & 1)];
            for (int side = 0; side <= directed; ++side) {
                const i64* ptr = side ? rindptr : indptr;
                const idx_t* idx = side ? rindices : indices;
                for (i64 f = warp; f < m; f += warps) {  // a warp per frontier vertex of at most HUB arcs
                    const idx_t u = in[f];
                    const i64 beg = ptr[u], end = ptr[u + 1];
                    if (end - beg > HUB) continue;
                    for (i64 e = beg + lane; e - lane < end; e += 32) {
                        bool take = false;
                        idx_t v = 0;
                        if (e < end) { v = idx[e]; take = lose(v, k, deg, core); }
                        warp_append(take, v, out, count);
                    }
                }
                for (i64 f = blockIdx.x; f < m; f += gridDim.x) {  // a block per larger one
                    const idx_t u = in[f];
                    const i64 beg = ptr[u], end = ptr[u + 1];
                    if (end - beg <= HUB) continue;
                    for (i64 e = beg + threadIdx.x; e - threadIdx.x < end; e += blockDim.x) {
                        bool take = false;
                        idx_t v = 0;
                        if (e < end) { v = idx[e]; take = lose(v, k, deg, core); }
                        warp_append(take, v, out, count);
                    }
                }
            }
            grid.sync();
            // the count just filled is read after this sync; the other one (read before it) is the next round's
            if (first_thread) state[2 + ((rounds + 1) & 1)] = 0;
            const idx_t* t = in;
            in = out;
            out = (idx_t*)t;
            grid.sync();
        }
        // the level's last count (zero) stays as it is: the next level's first frontier counts into it
    }
    if (first_thread) { state[5] = (u64)levels; state[6] = (u64)rounds; }
}
"""


@lru_cache(maxsize=None)
def _kernel(idx_dtype, device_id):
    """The peeling kernel and the largest grid that can be resident at once (a cooperative launch needs it)."""
    defines = {"IDX_T": cuda.ID_CTYPES[np.dtype(idx_dtype)], "ITEMS": cupy_kernels.ITEMS, "BLOCK": BLOCK, "HUB": HUB}
    source = "".join(f"#define {k} {v}\n" for k, v in defines.items()) + cupy_kernels.PRELUDE + PEEL
    return cuda.cooperative(source, "peel", device_id)


def core_numbers(graph, stats=None):
    """Every vertex's core number (int64) of a whole graph on its GPU, as :func:`mgraph.ops.peel.core_numbers`;
    ``stats`` (a dict), where given, gets the levels and cascade rounds the kernel ran."""
    n = graph.num_vertices
    core = cp.full(n, -1, dtype=np.int64)
    if n == 0:
        if stats is not None:
            stats["levels"], stats["rounds"] = 0, 0
        return core
    rgraph = graph.reverse() if graph.directed else graph
    deg = graph.out_degree().astype(np.int32)
    if graph.directed:
        deg += rgraph.out_degree().astype(np.int32)
    idx = np.dtype(graph.indices.dtype)
    device = graph.indptr.device.id
    kernel, grid = _kernel(idx, device)
    lists = [cp.empty(n, dtype=idx) for _ in range(4)]
    state = cp.zeros(8, dtype=np.uint64)
    state[4] = np.uint64(2**64 - 1)
    kernel((grid,), (BLOCK,), (graph.indptr, graph.indices, rgraph.indptr, rgraph.indices, np.int32(graph.directed),
                               np.int64(n), deg, core, *lists, state))
    if stats is not None:
        words = cuda.read_words(state, 8)
        stats["levels"], stats["rounds"] = words[5], words[6]
    return core

"""ops.pair_totals on the GPU: one kernel puts every entry into an open addressing hash table, one gathers its pairs.

The NumPy twin (``segments.pair_totals``) places the keys by rounds of
linear probing written as array operations; on a GPU each round was several
launches and a read of how many entries were left, most of a round of
Louvain's local moving.  Here one thread per entry probes until its key is in
a slot (claimed by ``atomicCAS``) and adds its weight there (``atomicAdd`` of
a double), and the slots claimed are appended to a list as they are claimed,
so that the gather visits the pairs alone, not the whole table.  The host
reads one word: how many pairs.

A slot is two 8-byte words, the key plus one (0: empty, so that one memset
clears the table) and the sum's bits, side by side so that the key compared
and the sum added share a cache sector.  The table has a power of two of at
least twice the pairs' slots, so it is at most half full and a probe's wrap
is a mask.  How many pairs there are is not known before the table is
filled; on a large call (``BOUND_ENTRIES``) one pass counts the runs of
equal pairs among consecutive entries, at least the pairs (a vertex's arcs
lie side by side, and on Louvain's later rounds many of its neighbours share
a community): sized from the entries alone, R-MAT 24's table was 16 GiB.
Rows and keys are read as they come, int32 or int64 (an int64 copy of
int32 ids was 16 bytes an entry more), and an unweighted call reads no
weights (each entry adds 1.0).
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from mgraph.ops import cuda, segments
from mgraph.ops.cuda import BLOCK
from mgraph.ops.cupy_kernels import PRELUDE

PAIR_ITEMS = 8  # entries per thread of pair_insert: one append of claimed slots per block of BLOCK * PAIR_ITEMS
RUN_ITEMS = 16  # consecutive sorted entries per thread of run_sums
BOUND_ENTRIES = 1 << 26  # a call of this many entries (a table of 2 GiB or more) sizes it from the runs of equal pairs,
# at the cost of one more read

PAIRS = r"""
// splitmix64's finaliser, the NumPy twin's mix: a key's first slot
__device__ __forceinline__ u64 pair_mix(u64 x) {
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return x;
}

// Entry i adds w[i] (1.0 where not `weighted`) to the slot of its key rows[i] * span + keys[i] in `table` (mask + 1 slots of two words: the
// key + 1, 0 while the slot is empty, and the sum's bits), found by linear probing from the key's hash.  The
// entries of a warp that share a key (a vertex's arcs into one community lie side by side) first add their
// weights across the warp, in lane order, and the lowest of them probes and adds the sum: one atomic per key and
// warp where a hub's arcs into one community would otherwise queue on one address.  A slot's key is written once,
// by the atomicCAS that claims it, and never changes, so a plain read that finds a key is exact and one that finds
// the slot empty is settled by the CAS.  The slots claimed are appended to `claimed` (count[0] of them, one
// atomic per block); the table is at most half full, so every probe ends.  PAIR_ITEMS entries per thread, blockDim
// apart: a warp's 32 lanes take 32 consecutive entries.  Every thread of a block reaches block_append.
extern "C" __global__ void __launch_bounds__(PAIR_BLOCK)
pair_insert(const idx_t* __restrict__ rows, const idx_t* __restrict__ keys, const double* __restrict__ w,
            int weighted, i64 n, i64 span, u64* __restrict__ table, u64 mask, i64* __restrict__ claimed,
            u64* __restrict__ count) {
    const int lane = threadIdx.x & 31;
    i64 got[PAIR_ITEMS];
    unsigned hits = 0;
#pragma unroll
    for (int item = 0; item < PAIR_ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * PAIR_ITEMS + item) * blockDim.x + threadIdx.x;
        got[item] = 0;
        const bool valid = i < n;
        const u64 tag = valid ? (u64)((i64)rows[i] * span + (i64)keys[i]) + 1ull : 0ull;  // 0: no entry
        const double x = valid ? (weighted ? w[i] : 1.0) : 0.0;
        const unsigned peers = __match_any_sync(0xffffffffu, tag);
        double sum = x;
        if (!__all_sync(0xffffffffu, peers == (1u << lane))) {  // some lanes share a key
            sum = 0.0;
            for (int j = 0; j < 32; ++j) {
                const double y = __shfl_sync(0xffffffffu, x, j);
                if ((peers >> j) & 1u) sum += y;
            }
        }
        if (valid && lane == __ffs(peers) - 1) {
            u64 at = pair_mix(tag - 1ull) & mask;
            while (true) {
                u64 seen = __ldcg(&table[2 * at]);
                if (seen == 0ull) {
                    seen = atomicCAS(&table[2 * at], 0ull, tag);
                    if (seen == 0ull) {  // claimed here
                        seen = tag;
                        got[item] = (i64)at;
                        hits |= 1u << item;
                    }
                }
                if (seen == tag) {
                    atomicAdd((double*)&table[2 * at + 1], sum);
                    break;
                }
                at = (at + 1ull) & mask;
            }
        }
    }
    block_append(got, hits, claimed, count);
}

// Entries sorted by pair, pair[i] entry i's (0, 1, ...): each pair's sum of w into total (zeroed).  A thread adds
// RUN_ITEMS consecutive entries, one atomic per pair it ends; the pair it is in at its end, which may go on in the
// next threads, is added across the warp's lanes on that pair first.  One atomic per entry (scatter-add) queued a
// large pair's entries on its one address: a coarse Louvain level's few pairs of hundreds of millions of arcs.
extern "C" __global__ void __launch_bounds__(PAIR_BLOCK)
run_sums(const i64* __restrict__ pair, const double* __restrict__ w, i64 n, double* __restrict__ total) {
    const int lane = threadIdx.x & 31;
    const i64 first = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * RUN_ITEMS;
    i64 cur = -1;
    double acc = 0.0;
    for (int k = 0; k < RUN_ITEMS; ++k) {
        const i64 i = first + k;
        if (i >= n) break;
        const i64 p = pair[i];
        if (p != cur) {
            if (cur >= 0) atomicAdd(&total[cur], acc);
            cur = p;
            acc = 0.0;
        }
        acc += w[i];
    }
    const unsigned peers = __match_any_sync(0xffffffffu, cur);
    double sum = 0.0;
    for (int j = 0; j < 32; ++j) {
        const double y = __shfl_sync(0xffffffffu, acc, j);
        if ((peers >> j) & 1u) sum += y;
    }
    if (cur >= 0 && lane == __ffs(peers) - 1) atomicAdd(&total[cur], sum);
}

// Pair j of the `count` claimed slots: its row, key and sum
extern "C" __global__ void pair_gather(const i64* __restrict__ claimed, i64 count, const u64* __restrict__ table,
                                       i64 span, i64* __restrict__ rows, i64* __restrict__ keys,
                                       double* __restrict__ sums) {
    const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    const i64 at = claimed[j];
    const i64 key = (i64)(table[2 * at] - 1ull);
    const i64 row = key / span;
    rows[j] = row;
    keys[j] = key - row * span;
    sums[j] = __longlong_as_double((long long)table[2 * at + 1]);
}
"""


def source(idx_ctype: str) -> str:
    """The module's CUDA source (the prelude's ``idx_t`` as ``idx_ctype``: the insert's rows and keys)."""
    return (f"#define IDX_T {idx_ctype}\n#define PAIR_ITEMS {PAIR_ITEMS}\n#define PAIR_BLOCK {BLOCK}\n"
            f"#define RUN_ITEMS {RUN_ITEMS}\n"
            + PRELUDE + PAIRS)


_function = cuda.kernel_lookup(source)  # (id dtype, device, name) -> a kernel of this module


def _kernel(device_id, name, dtype=np.int64):
    return _function(np.dtype(dtype), device_id, name)


def pair_totals(rows, keys, weights, span):
    """ops.pair_totals on CuPy arrays (its docstring has the rules): the pairs in the order their slots were
    claimed, which varies from run to run, and each pair's sum by atomic adds."""
    n = rows.shape[0]
    if n == 0:
        return cp.zeros(0, dtype=np.int64), cp.zeros(0, dtype=np.int64), cp.zeros(0, dtype=np.float64)
    device = rows.device.id
    ids = np.int32 if rows.dtype == np.int32 and keys.dtype == np.int32 else np.int64  # else both as int64
    rows = cp.ascontiguousarray(rows.astype(ids, copy=False))
    keys = cp.ascontiguousarray(keys.astype(ids, copy=False))
    weighted = weights is not None
    weights = cp.ascontiguousarray(weights.astype(np.float64, copy=False)) if weighted else cuda.dummy(np.float64)
    bound = segments.pair_bound(cp, rows, keys, BOUND_ENTRIES)
    size = segments.table_slots(bound)
    table = cp.zeros(2 * size, dtype=np.uint64)  # one memset: every key word 0 (empty), every sum 0.0
    claimed = cp.empty(bound, dtype=np.int64)  # one entry per pair
    count = cuda.counters(device, 1)
    _kernel(device, "pair_insert", ids)(cuda.blocks(n, BLOCK * PAIR_ITEMS), (BLOCK,),
                                        (rows, keys, weights, np.int32(weighted), np.int64(n), np.int64(span), table,
                                         np.uint64(size - 1), claimed, count))
    m = cuda.read_word(count)
    out_rows, out_keys = cp.empty(m, dtype=np.int64), cp.empty(m, dtype=np.int64)
    sums = cp.empty(m, dtype=np.float64)
    if m:
        _kernel(device, "pair_gather")(cuda.blocks(m), (BLOCK,),
                                       (claimed, np.int64(m), table, np.int64(span), out_rows, out_keys, sums))
    return out_rows, out_keys, sums


def run_sums(pair, w, count):
    """The sum of ``w`` over each pair's entries, the entries sorted by pair (``pair``: 0, 1, ... ``count`` - 1,
    int64, each entry's): ops.pair_sums' sums after its sort, the same to rounding."""
    total = cp.zeros(count, dtype=np.float64)
    n = pair.shape[0]
    if n:
        _kernel(pair.device.id, "run_sums")(cuda.blocks(n, BLOCK * RUN_ITEMS), (BLOCK,),
                                            (cp.ascontiguousarray(pair.astype(np.int64, copy=False)),
                                             cp.ascontiguousarray(w), np.int64(n), total))
    return total

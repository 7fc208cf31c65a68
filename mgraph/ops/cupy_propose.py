"""ops.best_moves on one GPU holding a whole undirected graph: Louvain's proposal in one pass over the rows' arcs.

The array operations (:func:`mgraph.ops.propose.best_moves`) take a
compaction of the scored rows' arcs, a global hash table of their
(vertex, community) pairs, a scatter-add for each vertex's weight to its own
community and two scatters for its best: every one a pass with atomics
over all the arcs or pairs, most of a round of Louvain's local moving.  Here
each row's pairs are summed where its arcs are read, in shared memory, and
its best is a reduction in registers: one read of each arc and its
neighbour's community, one write per row.

* A row of at most ``WARP_DEG`` arcs gets one warp (:data:`WARP_ROWS` warps
  a block).  Each 32-arc chunk's communities are grouped by
  ``__match_any_sync`` and summed in lane order by the lowest lane of each;
  a row of one chunk keeps those sums in registers, a longer one merges them
  into the warp's open addressing table of ``2 * WARP_DEG`` slots in shared
  memory.  The warp kernel also writes the outputs of every row outside
  ``look`` (no pair: -1, -inf, 0.0).
* A row of more arcs gets a block, whose warps take its chunks in turn and
  add into one table of the block's (``atomicCAS`` claims a slot,
  ``atomicAdd`` adds): ``MID_SLOTS`` slots for rows of up to half as many
  arcs, else a table as large as the device's opt-in shared memory allows
  (16,384 slots of 12 bytes on an H100 with int32 labels) for rows of up to
  three quarters as many, fewer slots being probed more in shared memory
  than hub rows cost elsewhere.
* Rows of more arcs still (the hubs of a power-law graph, 10^5 arcs and
  more) take the array operations on their own arcs, listed once per graph:
  a round's hub arcs, a few percent of R-MAT's, in the global table.

Every score rounds the operations of the NumPy twin in its order (products,
quotient and difference rounded one at a time, no fused multiply-add), and
ties go to the smallest label, so on an unweighted graph (sums of 1.0,
exact in any order) the outputs are the twin's bits.  On a weighted one the
sums of a pair's weights are added in another order.  The rows of each tier
are found once per graph (its degrees do not change within a Louvain
level); a round then launches without a host read, bar the hub rows' table.
"""
from __future__ import annotations

import weakref

import cupy as cp
import numpy as np

from mgraph.ops import cuda, propose, segments
from mgraph.ops.cupy_kernels import PRELUDE

WARP_DEG = 128  # arcs: a row of at most this many takes one warp (a table of 2 * WARP_DEG slots where over 32)
WARP_ROWS = 4  # warps (rows) per block of the warp kernel: 12 KiB of tables with int32 labels
MID_SLOTS = 2048  # slots of the mid rows' block table (24 KiB with int32 labels): rows of up to MID_SLOTS / 2 arcs
MID_BLOCK = 256  # threads per block of the mid rows
BIG_BLOCK = 1024  # threads per block of the large rows, one block per multiprocessor at most
BIG_FILL = 0.75  # a large row's arcs fill at most this share of its table's slots
STATIC_SMEM = 1024  # bytes the block kernel's own shared variables may take beside the dynamic table

PROPOSE = r"""
typedef LAB_T lab_t;
#define FULL 0xffffffffu
#define EMPTY ((lab_t)-1)
#define NO_KEY 0x7fffffffffffffffll
#define NEG_INF __longlong_as_double(0xfff0000000000000ll)

// The NumPy twin's score, w - gamma * (k * K * 2) / S, every operation rounded on its own (no contraction)
__device__ __forceinline__ double pair_score(double w, double ko, double total, double res, double scale) {
    const double terms = __dmul_rn(__dmul_rn(ko, total), 2.0);
    return __dsub_rn(w, __ddiv_rn(__dmul_rn(res, terms), scale));
}

// (s, k) replaces (bs, bk): a higher score, or the same score and a smaller label (-0.0 == 0.0, as the twin's)
__device__ __forceinline__ void take_best(double s, i64 k, double& bs, i64& bk) {
    if (s > bs || (s == bs && k < bk)) { bs = s; bk = k; }
}

// every lane ends with the warp's best (the order is total: labels differ, or both are NO_KEY at -inf)
__device__ __forceinline__ void warp_best(double& bs, i64& bk) {
    for (int d = 16; d > 0; d >>= 1) {
        const double s = __shfl_xor_sync(FULL, bs, d);
        const i64 k = __shfl_xor_sync(FULL, bk, d);
        take_best(s, k, bs, bk);
    }
}

// One 32-arc chunk of a row from arc e0 (< end): each lane's arc's community and weight, then per community
// present the lowest lane of its arcs holds their sum, added in lane order (as the pair table's insert adds a
// warp's entries).  Every lane calls it; returns whether this lane holds a sum (key, sum).
__device__ __forceinline__ bool chunk_sums(i64 e0, i64 end, const idx_t* __restrict__ indices,
                                           const double* __restrict__ w, int weighted,
                                           const lab_t* __restrict__ c, i64& key, double& sum) {
    const int lane = threadIdx.x & 31;
    const i64 e = e0 + lane;
    const bool valid = e < end;
    key = valid ? (i64)c[indices[e]] : (i64)-1;
    const double x = valid ? (weighted ? w[e] : 1.0) : 0.0;
    const unsigned peers = __match_any_sync(FULL, key);
    sum = x;
    if (!__all_sync(FULL, peers == (1u << lane))) {  // some lanes share a community
        sum = 0.0;
        for (int j = 0; j < 32; ++j) {
            const double y = __shfl_sync(FULL, x, j);
            if ((peers >> j) & 1u) sum += y;
        }
    }
    return valid && lane == __ffs(peers) - 1;
}

__device__ __forceinline__ unsigned slot_of(i64 key, unsigned mask) {
    return (unsigned)(((unsigned long long)key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

__device__ __forceinline__ lab_t claim_cas(lab_t* at, lab_t key) {
    if (sizeof(lab_t) == 4) return (lab_t)atomicCAS((int*)at, (int)EMPTY, (int)key);
    return (lab_t)atomicCAS((unsigned long long*)at, (unsigned long long)(long long)EMPTY,
                            (unsigned long long)(long long)key);
}

// The slot of `key` in a shared table of mask + 1 slots (claimed where it is not there yet); the table never
// fills, so the probe ends.  A slot's key is written once, by the CAS that claims it.
__device__ __forceinline__ unsigned find_slot(lab_t* keys, unsigned mask, lab_t key) {
    unsigned at = slot_of((i64)key, mask);
    while (true) {
        lab_t seen = ((volatile lab_t*)keys)[at];
        if (seen == EMPTY) {
            seen = claim_cas(&keys[at], key);
            if (seen == EMPTY) return at;
        }
        if (seen == key) return at;
        at = (at + 1u) & mask;
    }
}

// A pair (key, sum) of row u (community cu) into the row's best and its weight to its own community
__device__ __forceinline__ void score_pair(i64 key, double sum, i64 cu, double ko, const double* __restrict__ total,
                                           double res, double scale, double& bs, i64& bk, double& stay,
                                           bool& has_stay) {
    if (key == cu) { stay = sum; has_stay = true; return; }
    take_best(pair_score(sum, ko, total[key], res, scale), key, bs, bk);
}

__device__ __forceinline__ void put_row(i64 u, double bs, i64 bk, double stay, i64* __restrict__ target,
                                        double* __restrict__ best, double* __restrict__ w_stay) {
    const bool none = bk == NO_KEY;
    target[u] = none ? -1 : bk;
    best[u] = none ? NEG_INF : __dadd_rn(bs, 0.0);  // -0.0 as 0.0
    w_stay[u] = stay;
}

// A warp per row: rows of at most WARP_DEG arcs in `look` (or every row: has_look 0) scored; every row outside
// `look` given no pair; the others (more arcs) left to the block kernel and the hub rows' array operations.
extern "C" __global__ void __launch_bounds__(WARP_ROWS * 32)
propose_warp(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ w,
             int weighted, const lab_t* __restrict__ c, const double* __restrict__ k_out,
             const double* __restrict__ total, const bool* __restrict__ look, int has_look, double res,
             double scale, i64 nv, i64* __restrict__ target, double* __restrict__ best,
             double* __restrict__ w_stay) {
    __shared__ lab_t s_keys[WARP_ROWS][2 * WARP_DEG];
    __shared__ double s_sums[WARP_ROWS][2 * WARP_DEG];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const i64 u = (i64)blockIdx.x * WARP_ROWS + wid;
    if (u >= nv) return;  // warp-uniform from here on
    if (has_look && !look[u]) {
        if (lane == 0) put_row(u, 0.0, NO_KEY, 0.0, target, best, w_stay);
        return;
    }
    const i64 begin = indptr[u], end = indptr[u + 1];
    if (end - begin > WARP_DEG) return;
    const i64 cu = (i64)c[u];
    const double ko = k_out[u];
    double bs = NEG_INF, stay = 0.0;
    i64 bk = NO_KEY;
    bool has_stay = false;
    if (end - begin <= 32) {  // one chunk: its sums are the row's pairs
        i64 key;
        double sum;
        if (begin < end && chunk_sums(begin, end, indices, w, weighted, c, key, sum))
            score_pair(key, sum, cu, ko, total, res, scale, bs, bk, stay, has_stay);
    } else {
        lab_t* keys = s_keys[wid];
        double* sums = s_sums[wid];
        for (int s = lane; s < 2 * WARP_DEG; s += 32) { keys[s] = EMPTY; sums[s] = 0.0; }
        __syncwarp();
        for (i64 e0 = begin; e0 < end; e0 += 32) {
            i64 key;
            double sum;
            if (chunk_sums(e0, end, indices, w, weighted, c, key, sum)) {
                const unsigned at = find_slot(keys, 2 * WARP_DEG - 1, (lab_t)key);
                sums[at] += sum;  // one lane a community in a chunk; chunks one after another
            }
            __syncwarp();
        }
        for (int s = lane; s < 2 * WARP_DEG; s += 32) {
            const lab_t key = keys[s];
            if (key != EMPTY) score_pair((i64)key, sums[s], cu, ko, total, res, scale, bs, bk, stay, has_stay);
        }
    }
    warp_best(bs, bk);
    const unsigned own = __ballot_sync(FULL, has_stay);
    stay = own ? __shfl_sync(FULL, stay, __ffs(own) - 1) : 0.0;
    if (lane == 0) put_row(u, bs, bk, stay, target, best, w_stay);
}

// A block per row of `rows` (count of them) in `look`: its warps take its 32-arc chunks in turn and add their sums
// into one table of `slots` (a power of two, more than the row's arcs) in dynamic shared memory, the sums' doubles
// first, then the keys.
extern "C" __global__ void
propose_block(const i64* __restrict__ rows, unsigned slots, const i64* __restrict__ indptr,
              const idx_t* __restrict__ indices, const double* __restrict__ w, int weighted,
              const lab_t* __restrict__ c, const double* __restrict__ k_out, const double* __restrict__ total,
              const bool* __restrict__ look, int has_look, double res, double scale, i64* __restrict__ target,
              double* __restrict__ best, double* __restrict__ w_stay) {
    extern __shared__ double s_table[];
    __shared__ double s_best[32], s_stay;
    __shared__ i64 s_key[32];
    double* sums = s_table;
    lab_t* keys = (lab_t*)(s_table + slots);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const i64 u = rows[blockIdx.x];
    if (has_look && !look[u]) return;  // the warp kernel gave it no pair
    const i64 begin = indptr[u], end = indptr[u + 1];
    for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) { keys[s] = EMPTY; sums[s] = 0.0; }
    if (threadIdx.x == 0) s_stay = 0.0;
    __syncthreads();
    for (i64 e0 = begin + 32 * (i64)wid; e0 < end; e0 += 32 * (i64)warps) {
        i64 key;
        double sum;
        if (chunk_sums(e0, end, indices, w, weighted, c, key, sum))
            atomicAdd(&sums[find_slot(keys, slots - 1u, (lab_t)key)], sum);
    }
    __syncthreads();
    const i64 cu = (i64)c[u];
    const double ko = k_out[u];
    double bs = NEG_INF, stay = 0.0;
    i64 bk = NO_KEY;
    bool has_stay = false;
    for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
        const lab_t key = keys[s];
        if (key != EMPTY) score_pair((i64)key, sums[s], cu, ko, total, res, scale, bs, bk, stay, has_stay);
    }
    if (has_stay) s_stay = stay;  // one slot holds the row's own community
    warp_best(bs, bk);
    if (lane == 0) { s_best[wid] = bs; s_key[wid] = bk; }
    __syncthreads();
    if (wid == 0) {
        bs = lane < warps ? s_best[lane] : NEG_INF;
        bk = lane < warps ? s_key[lane] : NO_KEY;
        warp_best(bs, bk);
        if (lane == 0) put_row(u, bs, bk, s_stay, target, best, w_stay);
    }
}

// The hub rows' pairs (row i among the hubs, community, weight), as the array operations' score_pairs takes them
// but without their scatters onto a hub's one slot, every pair of a row queueing on one address: a pair's score
// as an ordered integer (propose.ordered), LOW for the row's own community, whose weight is the row's w_stay.
#define LOW ((i64)0x8000000000000000ll)
#define HIGH ((i64)0x7fffffffffffffffll)
__device__ __forceinline__ i64 ordered_bits(double s) {
    const i64 b = __double_as_longlong(__dadd_rn(s, 0.0));
    return b ^ ((b >> 63) & 0x7fffffffffffffffll);
}

template <typename R, typename K>
__device__ __forceinline__ i64 hub_pair(const R* rows, const K* keys, const double* w, int weighted, i64 i, i64 n,
                                        const i64* cu, const double* ko, const double* total, double res,
                                        double scale, i64& r, i64& key, double& x) {
    r = -1; key = -1; x = 0.0;
    if (i >= n) return LOW;
    r = (i64)rows[i]; key = (i64)keys[i]; x = weighted ? w[i] : 1.0;
    if (key == cu[r]) return LOW;
    return ordered_bits(pair_score(x, ko[r], total[key], res, scale));
}

// Pass 1: each hub's highest ordered score among its other communities' pairs (top, LOW where none) and its weight
// to its own community (w_stay, zeroed before: a row has one such pair at most, so the sum is that pair's bits)
template <typename R, typename K>
__device__ void hub_top(const R* rows, const K* keys, const double* w, int weighted, i64 n, const i64* cu,
                        const double* ko, const double* total, double res, double scale, i64* top,
                        double* w_stay) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 r, key;
    double x;
    const i64 bits = hub_pair(rows, keys, w, weighted, i, n, cu, ko, total, res, scale, r, key, x);
    if (r >= 0 && key == cu[r]) atomicAdd(&w_stay[r], x);
    const unsigned peers = __match_any_sync(FULL, r);
    const i64 m = warp_combine(bits, peers, WarpMax());
    if (r >= 0 && (threadIdx.x & 31) == __ffs(peers) - 1 && m != LOW)
        atomicMax((long long*)&top[r], (long long)m);
}

// Pass 2: each hub's smallest community among the pairs at its top score (pick, HIGH where none)
template <typename R, typename K>
__device__ void hub_pick(const R* rows, const K* keys, const double* w, int weighted, i64 n, const i64* cu,
                         const double* ko, const double* total, double res, double scale, const i64* top,
                         i64* pick) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 r, key;
    double x;
    const i64 bits = hub_pair(rows, keys, w, weighted, i, n, cu, ko, total, res, scale, r, key, x);
    const i64 cand = (r >= 0 && bits != LOW && bits == top[r]) ? key : HIGH;
    const unsigned peers = __match_any_sync(FULL, r);
    const i64 m = warp_combine(cand, peers, WarpMin());
    if (r >= 0 && (threadIdx.x & 31) == __ffs(peers) - 1 && m != HIGH)
        atomicMin((long long*)&pick[r], (long long)m);
}

#define HUB_ARGS const double* __restrict__ w, int weighted, i64 n, const i64* __restrict__ cu, \
    const double* __restrict__ ko, const double* __restrict__ total, double res, double scale
// the pairs from the hub arcs' table (int64 rows and keys), and the arcs themselves on a round whose every pair is
// one arc (int32 hub rows, the labels' keys)
extern "C" __global__ void hub_top_pairs(const i64* rows, const i64* keys, HUB_ARGS, i64* top, double* w_stay) {
    hub_top(rows, keys, w, weighted, n, cu, ko, total, res, scale, top, w_stay);
}
extern "C" __global__ void hub_top_arcs(const int* rows, const lab_t* keys, HUB_ARGS, i64* top, double* w_stay) {
    hub_top(rows, keys, w, weighted, n, cu, ko, total, res, scale, top, w_stay);
}
extern "C" __global__ void hub_pick_pairs(const i64* rows, const i64* keys, HUB_ARGS, const i64* top, i64* pick) {
    hub_pick(rows, keys, w, weighted, n, cu, ko, total, res, scale, top, pick);
}
extern "C" __global__ void hub_pick_arcs(const int* rows, const lab_t* keys, HUB_ARGS, const i64* top, i64* pick) {
    hub_pick(rows, keys, w, weighted, n, cu, ko, total, res, scale, top, pick);
}
"""


def source(idx_ctype: str, lab_ctype: str) -> str:
    """The module's CUDA source: the prelude's ``idx_t`` (the graph's indices) as ``idx_ctype``, the labels'
    ``lab_t`` as ``lab_ctype``."""
    return (f"#define IDX_T {idx_ctype}\n#define LAB_T {lab_ctype}\n"
            f"#define WARP_DEG {WARP_DEG}\n#define WARP_ROWS {WARP_ROWS}\n" + PRELUDE + PROPOSE)


_function = cuda.kernel_lookup(source)  # ((id dtype, label dtype), device, name) -> a kernel of this module


class Plan:
    """A graph's rows by tier, found once (its degrees are fixed): the mid and large rows (a block each, with
    their table sizes) and the hubs, with their arcs listed (each arc's hub, target and weight)."""

    def __init__(self, graph, label_bytes):
        xp = cp
        self.indptr = cp.ascontiguousarray(graph.indptr.astype(np.int64, copy=False))
        deg = self.indptr[1:] - self.indptr[:-1]
        optin = cp.cuda.Device().attributes.get("MaxSharedMemoryPerBlockOptin", 48 * 1024)
        slot = 8 + label_bytes
        big = MID_SLOTS
        while 2 * big * slot + STATIC_SMEM <= optin:
            big *= 2
        self.mid_slots, self.big_slots = MID_SLOTS, big
        self.mid_deg, self.big_deg = MID_SLOTS // 2, int(big * BIG_FILL)
        if self.big_deg <= self.mid_deg:  # no larger table fits: the mid table takes no more rows than that
            self.big_slots = 0
            self.big_deg = self.mid_deg
        self.mid = xp.flatnonzero((deg > WARP_DEG) & (deg <= self.mid_deg))
        self.big = xp.flatnonzero((deg > self.mid_deg) & (deg <= self.big_deg))
        self.hubs = xp.flatnonzero(deg > self.big_deg)
        self.hub_row = self.hub_dst = self.hub_w = None
        if self.hubs.shape[0]:
            k, at = segments.expand_rows(xp, self.indptr, self.hubs)
            self.hub_row = k.astype(np.int32)  # each hub has over a thousand arcs: far fewer than 2**31 hubs
            self.hub_dst = graph.indices[at]
            self.hub_w = None if graph.weights is None else graph.weights[at].astype(np.float64)
            del k, at


_PLANS = weakref.WeakKeyDictionary()  # graph -> (label bytes, Plan)


def plan_of(graph, label_bytes):
    """The graph's :class:`Plan` for labels of ``label_bytes``, made on its first call (host reads) and kept while
    the graph lives."""
    kept = _PLANS.get(graph)
    if kept is None or kept[0] != label_bytes:
        kept = _PLANS[graph] = (label_bytes, Plan(graph, label_bytes))
    return kept[1]


def best_moves(graph, community, k_out, totals, resolution, scale, look, distinct, pair_totals):
    """ops.best_moves on a whole undirected graph on one GPU (its docstring has the rules); ``pair_totals`` is
    ops.pair_totals, for the hub rows."""
    nv = graph.num_vertices
    c = cp.ascontiguousarray(community)
    lab = np.dtype(c.dtype)
    if lab not in cuda.ID_CTYPES:
        c = c.astype(np.int64)
        lab = np.dtype(np.int64)
    plan = plan_of(graph, lab.itemsize)
    idx = np.dtype(graph.indices.dtype)
    device = c.device.id
    target = cp.empty(nv, dtype=np.int64)
    best = cp.empty(nv)
    w_stay = cp.empty(nv)
    if nv == 0:
        return target, best, w_stay
    weighted = graph.weights is not None
    w = cp.ascontiguousarray(graph.weights.astype(np.float64, copy=False)) if weighted else cuda.dummy(np.float64)
    k_out = cp.ascontiguousarray(k_out.astype(np.float64, copy=False))
    totals = cp.ascontiguousarray(totals.astype(np.float64, copy=False))
    has_look = look is not None
    mask = cp.ascontiguousarray(look.astype(np.bool_, copy=False)) if has_look else cuda.dummy(np.bool_)
    common = (w, np.int32(weighted), c, k_out, totals, mask, np.int32(has_look), np.float64(resolution),
              np.float64(scale))
    _function((idx, lab), device, "propose_warp")(cuda.blocks(nv, WARP_ROWS), (32 * WARP_ROWS,),
                                              (plan.indptr, graph.indices, *common, np.int64(nv), target, best,
                                               w_stay))
    block = _function((idx, lab), device, "propose_block")
    tail = (plan.indptr, graph.indices, *common, target, best, w_stay)
    for rows, slots, threads in ((plan.mid, plan.mid_slots, MID_BLOCK), (plan.big, plan.big_slots, BIG_BLOCK)):
        if rows.shape[0]:
            smem = slots * (8 + lab.itemsize)
            if smem > 48 * 1024 and block.max_dynamic_shared_size_bytes < smem:
                block.max_dynamic_shared_size_bytes = smem
            block((int(rows.shape[0]),), (threads,), (rows, np.uint32(slots), *tail), shared_mem=smem)
    if plan.hubs.shape[0]:
        _hub_rows(plan, c, k_out, totals, resolution, scale, look, distinct, target, best, w_stay, pair_totals)
    return target, best, w_stay


def _hub_rows(plan, c, k_out, totals, resolution, scale, look, distinct, target, best, w_stay, pair_totals):
    """The hub rows' outputs from their listed arcs (all of them, whether in ``look`` or not: no compaction to wait
    for; a hub outside ``look`` then gets no pair): the pairs from ``pair_totals`` (on a round whose every pair is
    one arc, the arcs), then two passes over them (``hub_top``, ``hub_pick``) where the array operations
    (``propose.score_pairs``, the NumPy twin) scatter every pair of a hub onto its one slot: the same outputs,
    bit for bit."""
    hubs = plan.hubs
    nh = hubs.shape[0]
    keys = c[plan.hub_dst]
    if look is None and distinct:  # every pair is one arc
        rows, weights, kind = plan.hub_row, plan.hub_w, "arcs"
    else:
        rows, keys, weights = pair_totals(plan.hub_row, keys, plan.hub_w, totals.shape[0])
        kind = "pairs"
    n = rows.shape[0]
    weighted = weights is not None
    top = cp.full(nh, np.iinfo(np.int64).min, dtype=np.int64)
    pick = cp.full(nh, np.iinfo(np.int64).max, dtype=np.int64)
    stay = cp.zeros(nh)
    if n:
        args = (rows, keys, weights if weighted else cuda.dummy(np.float64), np.int32(weighted), np.int64(n),
                c[hubs].astype(np.int64), k_out[hubs], totals, np.float64(resolution), np.float64(scale))
        device = c.device.id
        idx, lab = np.dtype(plan.hub_dst.dtype), np.dtype(c.dtype)
        _function((idx, lab), device, "hub_top_" + kind)(cuda.blocks(n), (cuda.BLOCK,), (*args, top, stay))
        _function((idx, lab), device, "hub_pick_" + kind)(cuda.blocks(n), (cuda.BLOCK,), (*args, top, pick))
    none = pick == np.iinfo(np.int64).max
    t, b = cp.where(none, -1, pick), cp.where(none, -np.inf, propose.unordered(top))
    if look is not None:  # rows not scored: no pair, as score_pairs gives them
        scored = look[hubs]
        t, b, stay = cp.where(scored, t, -1), cp.where(scored, b, -np.inf), cp.where(scored, stay, 0.0)
    target[hubs], best[hubs], w_stay[hubs] = t, b, stay

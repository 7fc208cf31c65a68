"""A direction-optimizing traversal's levels across the GPUs in one persistent cooperative kernel per GPU: the
GPUs' form of :meth:`mgraph.comm.peer.NumpyLink.visit_directions`.

On one GPU such a traversal runs every level in one kernel (:mod:`mgraph.ops.cupy_levels`); on several, each level
through the host is a superstep of split, package, push and combine, and a power-law graph's ten levels cost more
on two GPUs than the whole traversal on one.  Here each GPU runs the levels of its part with the same push and pull
operators as the one-GPU kernel, and the devices meet on the devices:

1. every level begins with the devices' agreement on the whole frontier's size (a post to every peer and a wait
   for theirs, :func:`agree` of :mod:`mgraph.comm.cupy_peer`), so every device takes the direction the policy's
   rule gives that size, and all stop together when the frontiers are empty everywhere;
2. a push level claims the frontier's out-neighbours here, copies of peers' vertices included; then the claimed
   copies go to their owners' inboxes (the owner's id and the predecessor's caller id, as the visit kernels write
   them) and leave gaps in the output; after a second agreement each owner claims what arrived;
3. a pull level needs the frontier's bits at every vertex here, copies included: each device's bitmap holds its
   own frontier vertices' bits (set by the pull of the level before, or from the frontier's list); after a second
   agreement each device reads, for each of its copies, the bit of its owner's bitmap (the copies of one peer's
   vertices are a block in the peer's order, so a warp's 32 copies are one word here and a few words there), and
   pulls its own unvisited vertices.

The host launches one kernel per device and reads a block of words when it ends.  Copies are not kept current
(a copy's label is set only by a push here): a copy claimed again after its owner's pull reached it is sent, and
its owner drops it, as the host's exchange does.

A call first reads the peers' memory it may touch (inboxes, bitmaps, mail), a large page apart, with the whole grid
at once: the first access to each page of a peer's memory in a call stalls its warp far longer than the access
(about 0.1 ms on two H200s, docs/perf-notes.md), and a level that waited on it waited for all the devices.

This module holds the kernel's text and its buffers; :class:`mgraph.comm.cupy_peer.CupyLink` compiles it with the
posts' operators and launches it.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from mgraph.ops.levels import DIRECTIONS_HUB

WORDS = 18  # the kernel's own state words (see its comment; the last one never written)
TRACE_LEVELS = 32  # levels a trace stamps (Room.trace)
MERGE_WAYS = 4  # words of copies' bits a warp reads from their owners per trip
TOUCH = 1 << 21  # bytes between two reads of the peers' memory at a call's start (a large page)
HUB_COUNT_BITS = 24  # a level's hubs are counted in the bits of their word above the arcs' 40

PEER_DIRECTIONS = r"""
// Where `trace` is not null, thread 0 stamps each level's steps there (the GPU's clock, ns): [it * 8 + j], j = 0 its
// start, 1 its size agreed, then a pull's bits cleared, set, agreed, merged, and its pull done (2..6), or a push's
// arcs counted, push done, hubs done, copies sent, agreed, and arrivals claimed (2..7); [8 * TRACE_LEVELS + it] 1
// where the level pulled; [9 * TRACE_LEVELS] when block 0 started and [+ 1] when every block had read the peers'
// pages (a grid sync: traces only).  A profile sets Room.trace and reads it after a call.
#define MARK(j) if (trace && tid == 0 && it < TRACE_LEVELS) { \
    u64 t_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_)); trace[it * 8 + (j)] = t_; }
// dstate, per level parity q (0 even, 1 odd): [q] slots used in the level's output (vertices and gaps), [2 + q] own
// vertices in the next frontier, [4 + q] the level's hubs: their count (bits 40 and up) and arcs (below), [6 + q] a
// push level's input arcs, [8 + q] what a push claimed, copies included; a level zeroes the other parity's words
// after its first grid sync, when every thread has read them (at the end of the level before).  At the end: [10]
// levels run, [11] the last frontier's own vertices, [12] its slots, [13] own vertices emitted over the levels, [14]
// vertices visited (the policy's count), [15] the first level that pulled, plus one (0: none), [16] the first that
// pushed after pulling, plus one.  The link's state holds the posts' words, the inbox counts and a failure, as for
// the visit kernels.
extern "C" __global__ void __launch_bounds__(BLOCK, DIRECTIONS_MIN_BLOCKS) peer_directions(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices,
    int* label, idx_t* pred, const idx_t* frontier, i64 n_front, idx_t* buf_a, idx_t* buf_b,
    unsigned* bits, i64 words, const u64* __restrict__ peer_bits, const i64* __restrict__ peer_words,
    const i64* __restrict__ copies_lo, const i64* __restrict__ copies_n, const i64* __restrict__ out_cap, idx_t* hub_v, i64* hub_at, i64 hub_degree, int max_levels, int level0,
    u64* dstate, i64 own_below, const int* __restrict__ owner, const u64* __restrict__ id_on,
    const i64* __restrict__ caller, const idx_t* __restrict__ g2l, const u64* __restrict__ out_ids,
    const u64* __restrict__ out_preds, const u64* __restrict__ peer_mail, u64* mail,
    const u64* __restrict__ in_ids, const u64* __restrict__ in_preds, u64* state, u64 tag0,
    const volatile int* abort_flag, u64 wait_ns, int carry, int p, int me,
    i64 rule_n, i64 rule_arcs, i64 visited0, int pulling0, int switched0, double do_a, double do_b, u64* trace)
{
    cg::grid_group grid = cg::this_grid();
    if (*(volatile u64*)&state[STICKY]) return;  // a failure in an earlier call of this phase: the host raises it
    const int lane = threadIdx.x & 31;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 threads = (i64)gridDim.x * blockDim.x;
    const i64 warp = tid >> 5;
    const i64 warps = threads >> 5;
    const u64 HUB_ARCS = (1ull << 40) - 1ull;
    u64* sent = state + HEAD;
    u64* claimed = state + HEAD + p;
    // per block: how far each peer had written into this GPU's inbox when its entries were last claimed, and now
    __shared__ u64 s_read[MAX_PEERS], s_posted[MAX_PEERS], s_total, s_arcs;
    __shared__ int s_failed;
    if (threadIdx.x < MAX_PEERS)
        s_read[threadIdx.x] = s_posted[threadIdx.x] = threadIdx.x < p ? claimed[threadIdx.x] : 0;
    __syncthreads();
    const idx_t* in = frontier;
    idx_t* out = buf_a;
    i64 m = n_front, in_slots = n_front, visited = visited0;
    bool pulling = pulling0 != 0, switched = switched0 != 0;
    bool pulled = false;  // whether the level before pulled in this call (its pull set this level's bits)
    int first_pull = 0, first_push = 0;
    u64 emitted = 0, tag = tag0;
    Appender a = {0, 0, 0};
    u64 t_start = 0;
    if (trace) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_start));
    {  // the peers' memory this call may touch, read a large page apart by the whole grid at once (the module's doc)
        unsigned seen = 0;
        for (int j = 0; j < p; ++j) {
            if (j == me) continue;
            const i64 spans[4] = {(i64)out_ids[j], out_cap[j] * (i64)sizeof(idx_t), (i64)out_preds[j], out_cap[j] * 8};
            for (int r = 0; r < 4; r += 2)
                for (i64 off = tid * TOUCH; off < spans[r + 1]; off += threads * TOUCH)
                    seen += *(const volatile unsigned char*)(spans[r] + off);
            for (i64 off = tid * TOUCH; off < 2 * peer_words[j] * 4; off += threads * TOUCH)
                seen += *(const volatile unsigned char*)(peer_bits[j] + off);
            if (tid == 0) seen += *(const volatile unsigned char*)peer_mail[j];
        }
        if (seen == 0xffffffffu) dstate[WORDS_USED] = seen;  // never: keeps the reads
    }
    if (trace) {  // when block 0 started, and when every block had read the peers' pages
        grid.sync();
        u64 t_;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));
        if (tid == 0) { trace[9 * TRACE_LEVELS] = t_start; trace[9 * TRACE_LEVELS + 1] = t_; }
    }
    for (int it = 0;; ++it) {
        const int level = level0 + it, q = it & 1, z = q ^ 1;
        MARK(0);
        // the whole frontier's size, the same on every device: the same direction everywhere, or the end
        agree(++tag, tid, peer_mail, mail, state, sent, m, 0, p, me, level, it, abort_flag, wait_ns, s_posted,
              s_total, s_arcs, s_failed);
        if (s_failed) return;  // every block sees it: the host raises
        MARK(1);
        const i64 total = (i64)s_total;
        if (total == 0 || it >= max_levels) {
            if (tid == 0) {
                dstate[10] = (u64)it; dstate[11] = (u64)m; dstate[12] = (u64)in_slots; dstate[13] = emitted;
                dstate[14] = (u64)visited; dstate[15] = (u64)first_pull; dstate[16] = (u64)first_push;
                state[9] = tag - tag0;
            }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_read[threadIdx.x];
            return;
        }
        visited += total;
        const bool pulls = rule_pulls(total, visited, rule_n, rule_arcs, do_a, do_b, pulling, switched);
        if (pulls && !pulling) { first_pull = it + 1; switched = true; }
        if (!pulls && pulling) first_push = it + 1;
        pulling = pulls;
        if (trace && tid == 0 && it < TRACE_LEVELS) trace[8 * TRACE_LEVELS + it] = pulling;
        u64* slots = &dstate[q];
        if (pulling) {
            // two bitmaps over this GPU's vertices, by level parity: this level's frontier (set from its list where
            // the level before pushed or none ran, else by that level's pull) and the next one's, which this level's
            // pull sets.  Those cleared here were last read before this level's agreement (by the peers too, whose
            // copies' bits are read from these).
            unsigned* cur = bits + q * words;
            unsigned* nxt = bits + z * words;
            const bool from_list = !pulled;
            for (i64 k = tid; k < words; k += threads) {
                nxt[k] = 0u;
                if (from_list) cur[k] = 0u;
            }
            grid.sync();
            MARK(2);
            if (tid == 0) for (int w = 0; w < 10; w += 2) dstate[w + z] = 0;
            if (from_list) {
                for (i64 k = tid; k < in_slots; k += threads) {
                    const i64 u = (i64)in[k];
                    if (u >= 0) atomicOr(&cur[u >> 5], 1u << (u & 31));
                }
                grid.sync();
            }
            MARK(3);
            agree(++tag, tid, peer_mail, mail, state, sent, m, 0, p, me, level, it, abort_flag, wait_ns, s_posted,
                  s_total, s_arcs, s_failed);
            if (s_failed) return;
            MARK(4);
            // the copies' bits: each copy's owner's bit, read from the owner's bitmap of this level (the copies of a
            // peer's vertices are one block here, in the peer's order: a warp's 32 are one word of this bitmap).  A
            // warp takes MERGE_WAYS words per trip, their reads over the link issued together: each is a chain of
            // two reads, the second across the link, and the chains in flight set the pace.
            for (int j = 0; j < p; ++j) {
                if (j == me || copies_n[j] == 0) continue;
                const volatile unsigned* theirs = (const volatile unsigned*)peer_bits[j] + q * peer_words[j];
                const idx_t* there = (const idx_t*)id_on[j];
                const i64 lo = copies_lo[j], hi = copies_lo[j] + copies_n[j], last = (hi - 1) >> 5;
                for (i64 k0 = (lo >> 5) + warp * MERGE_WAYS; k0 <= last; k0 += warps * MERGE_WAYS) {  // warp-uniform
                    i64 u[MERGE_WAYS];
                    unsigned x[MERGE_WAYS];
#pragma unroll
                    for (int w = 0; w < MERGE_WAYS; ++w) {
                        const i64 c = 32 * (k0 + w) + lane;
                        u[w] = c >= lo && c < hi ? (i64)there[c] : -1;
                    }
#pragma unroll
                    for (int w = 0; w < MERGE_WAYS; ++w) x[w] = u[w] >= 0 ? theirs[u[w] >> 5] : 0u;
#pragma unroll
                    for (int w = 0; w < MERGE_WAYS; ++w) {
                        const unsigned word = __ballot_sync(0xffffffffu, u[w] >= 0 && ((x[w] >> (u[w] & 31)) & 1u));
                        if (lane == 0 && word) atomicOr(&cur[k0 + w], word);  // the block's end words are shared
                    }
                }
            }
            grid.sync();
            MARK(5);
            a = pull_level<true>(rindptr, rindices, label, pred, cur, own_below, level, out, slots, true, a, nxt);
            block_flush(a, lane, out, &dstate[2 + q]);
        } else {
            u64 arcs = 0;  // the frontier's arcs: a push of many appends in chunks
            for (i64 k = tid; k < in_slots; k += threads) {
                const i64 u = (i64)in[k];
                if (u >= 0) arcs += (u64)(indptr[u + 1] - indptr[u]);
            }
            block_add(arcs, 0ull, &dstate[6 + q], &dstate[6 + q]);
            grid.sync();
            MARK(2);
            if (tid == 0) for (int w = 0; w < 10; w += 2) dstate[w + z] = 0;
            const bool chunked = (i64)*(volatile u64*)&dstate[6 + q] > CHUNK_ABOVE;
            a = push_level(indptr, indices, label, pred, in, in_slots, in_slots > m, level, out, slots, hub_v, hub_at,
                           &dstate[4 + q], hub_degree, chunked, a);
            grid.sync();
            MARK(3);
            const u64 hubs = *(volatile u64*)&dstate[4 + q];
            if (hubs)
                a = hub_level(indptr, indices, label, pred, level, out, slots, hub_v, hub_at, (i64)(hubs >> 40),
                              (i64)(hubs & HUB_ARCS), chunked, a);
            block_flush(a, lane, out, &dstate[8 + q]);
            grid.sync();
            MARK(4);
            // the copies claimed go to their owners' inboxes, each leaving a gap; the own vertices are counted
            const i64 filled = (i64)*(volatile u64*)slots;
            bool wrote = false;  // into a peer's inbox: one system-wide fence per thread that did
            u64 own = 0;
            for (i64 base = warp * 32; base < filled; base += warps * 32) {  // warp-uniform trips
                const i64 j = base + lane;
                const i64 v = j < filled ? (i64)out[j] : -1;
                const bool copy = v >= own_below;
                if (copy) out[j] = (idx_t)-1;
                own += (u64)(v >= 0 && !copy);
                warp_send(copy, copy ? pred[v] : (idx_t)0, (idx_t)v, lane, owner, id_on, caller, out_ids, out_preds,
                          sent, carry, wrote);
            }
            block_add(own, 0ull, &dstate[2 + q], &dstate[2 + q]);
            // the entries reach the peers before the post that follows the sync: one system-wide fence per block
            // that wrote (fences are cumulative), not one per thread
            if (__syncthreads_or(wrote) && threadIdx.x == 0) __threadfence_system();
            grid.sync();
            MARK(5);
            agree(++tag, tid, peer_mail, mail, state, sent, m, 0, p, me, level, it, abort_flag, wait_ns, s_posted,
                  s_total, s_arcs, s_failed);
            if (s_failed) return;
            MARK(6);
            i64 arriving = 0;
            for (int k = 0; k < p; ++k)
                if (k != me) arriving += (i64)(s_posted[k] - s_read[k]);
            const bool many = arriving > CHUNK_ABOVE;
            for (int k = 0; k < p; ++k) {  // claim what arrived, as the exchange's combine would
                if (k == me) continue;
                const i64 lo = (i64)s_read[k], hi = (i64)s_posted[k];
                const volatile idx_t* ids = (const volatile idx_t*)in_ids[k];
                const volatile i64* preds = (const volatile i64*)in_preds[k];
                for (i64 base = lo + warp * 32; base < hi; base += warps * 32) {  // warp-uniform trips
                    const i64 j = base + lane;
                    idx_t v = 0;
                    const bool won = j < hi && claim_entry(ids, preds, j, label, pred, g2l, carry, level, v);
                    warp_append(a, won, v, lane, out, slots, many);
                }
            }
            block_flush(a, lane, out, &dstate[2 + q]);
            if (threadIdx.x < p) s_read[threadIdx.x] = s_posted[threadIdx.x];  // the block's threads are past it
        }
        grid.sync();  // the level's output, its gaps and its count are in
        if (pulling) { MARK(6); } else { MARK(7); }
        m = (i64)*(volatile u64*)&dstate[2 + q];
        in_slots = (i64)*(volatile u64*)slots;
        emitted += (u64)m;
        in = out;
        out = (out == buf_a) ? buf_b : buf_a;
        pulled = pulling;
    }
}
"""


def hub_degree(part) -> int:
    """The out-degree above which a push level spreads a vertex's arcs over the whole grid: DIRECTIONS_HUB, or more
    where the part has so many vertices above it that a level's count of them would not fit its bits."""
    deg = part.out_degree()[: part.own_below]
    most = (1 << HUB_COUNT_BITS) - 1
    if int((deg > DIRECTIONS_HUB).sum()) <= most:
        return DIRECTIONS_HUB
    return max(DIRECTIONS_HUB, int(cp.sort(deg)[-most]))


class Room:
    """What a link needs on its GPU for direction-optimizing levels: two bitmaps over the part's vertices by level
    parity (an allocation of its own: the peers read their copies' bits there, through an IPC handle between ranks),
    the blocks of copies of each peer's vertices, the hubs a push level sets aside, and the words the kernel
    leaves."""

    def __init__(self, part, d, p, allocate, sends):
        """``allocate(n, dtype)``: an allocation of its own; ``sends[k]``: the inbox entries this part may write
        on peer k (the pages a call reads first)."""
        self.words = max(-(-part.num_vertices // 32), 1)
        self.out_cap = cp.array(sends, dtype=np.int64)
        self.bits = allocate(2 * self.words, np.uint32)
        self.copies_lo, self.copies_n = [0] * p, [0] * p
        for k in range(p):
            if k != d:  # proxies come grouped by owner, each owner's in its order
                self.copies_lo[k] = part.copies_of(k)
                self.copies_n[k] = (part.copies_of(k + 1) if k + 1 < p else part.num_vertices) - self.copies_lo[k]
        self.hub_degree = hub_degree(part)
        hubs = max(int((part.out_degree()[: part.own_below] > self.hub_degree).sum()), 1)
        idx = np.dtype(part.indices.dtype)
        self.hub_v, self.hub_at = cp.empty(hubs, dtype=idx), cp.empty(hubs, dtype=np.int64)
        self.dstate = cp.zeros(WORDS, dtype=np.uint64)
        self.tables = None
        self.trace = None  # where set (TRACE_LEVELS * 9 + 2 words), the kernel stamps its levels' steps there

    def exported(self):
        return cp.cuda.runtime.ipcGetMemHandle(self.bits.data.ptr)

    def table(self, peer_bits, peer_words):
        """The kernel's tables: the peers' bitmaps (``peer_bits[k]``, pointers) and their halves' words, and the
        blocks of copies here."""
        if self.tables is None:
            self.tables = (cp.array(peer_bits, dtype=np.uint64),
                           *(cp.array(t, dtype=np.int64) for t in (peer_words, self.copies_lo, self.copies_n)))
        return self.tables

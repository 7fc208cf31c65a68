"""The GPUs' form of :mod:`mgraph.comm.peer`: a visit's levels across the GPUs of this process in one persistent
cooperative kernel per GPU, the inboxes and posts in each GPU's memory written by its peers over NVLink (or
PCIe) through peer access.

Per level, on each GPU: a warp per frontier vertex runs the visit's claim over its arcs; an own vertex claimed
joins the next frontier (a warp's claims appended with one atomic), a copy of a peer's vertex claimed goes to the
peer's inbox (a slot taken with an atomic on this GPU's count for that peer, the entry written into the peer's
memory, then a system-wide fence).  Then the devices' barrier: on a graph without hubs a grid sync and the
agreement are one wait (each block arrives on a counter; the last to arrive posts to every peer how far this GPU
has written into its inbox, the frontier it advanced and the next one's size, waits for every peer's post of the
same level and opens a gate, a word of this GPU's, that the other blocks wait for: one waiter on the words the
peers write, since a thousand blocks spinning there slowed the peers' writes tenfold), and the next level's warps
claim what arrived as they advance, the sender having marked each vertex it delivers so that no warp claims it a
level too deep first.  A level's cost on a long-diameter graph is its barriers, so one per level, not two grid
syncs and a wait.  On a graph with hubs (few levels, some of 10^5 copies to claim) each level agrees on its
frontier first, and claims what arrived between two grid syncs.  The waiting thread also watches a word in
pinned host memory that the host sets when a device of the run fails, so that no kernel waits for a peer that
will never post, and gives up with an error after WAIT_S seconds without a post (a fault of the protocol is an
error naming the level, not a hang).  The GPUs of one process reach each other through peer access; MPI ranks
of one node through CUDA IPC handles (:class:`RankLevels`).
"""
from __future__ import annotations

import time
from functools import lru_cache

import cupy as cp
import cupyx
import numpy as np

from mgraph.backend import to_host
from mgraph.ops import cuda, cupy_kernels, cupy_levels
from mgraph.ops import levels as fusing
from mgraph.ops.levels import Levels
from mgraph.ops.queue import Queue, plain, word
from mgraph.comm import cupy_directions
from mgraph.comm.peer import Link, PeerAborted

BLOCK = cuda.BLOCK
HEAD = 32  # state words before the per-peer counts: see the kernel's comment
HUBS = 13  # the state word of a level's hubs (see the kernel's comment)
ARRIVED, ARRIVED_ARCS, ARRIVALS, TOTALS = 16, 19, 22, 23  # the light kernel's words (see the kernel's comment)
STICKY = 26  # the first state word a call leaves as it was (a failure, kept until the phase ends)
SENT_SEEN = 28  # the light kernel's entries written at the last barrier, kept through the phase
MAIL = 8  # words of a post
NO_LIMIT = 1 << 62  # a call's bound on its frontiers' arcs where there is none
HUB_RUN = 128  # a warp's consecutive positions among a level's hubs' arcs: one search for the run's first hub
MAX_PEERS = 64  # devices a link joins at most (each block keeps a word per peer in shared memory)
# the kernel's grid: at most this many blocks per multiprocessor (None: as many as fit).  Its levels are small
# (a long-diameter graph's wavefronts) and every grid sync and gate costs in proportion to the blocks.
BLOCKS_PER_SM = 2
POLL_S = 20e-6  # seconds between two looks at whether fused levels have ended
WAIT_S = 60.0  # seconds a device waits for a peer's post of a level before it gives up with an error
# a link's allocations refused: CuPy's pool, or cudaMalloc itself for an allocation of its own (_own_allocation)
ALLOCATION_ERRORS = (cp.cuda.memory.OutOfMemoryError, cp.cuda.runtime.CUDARuntimeError)

PEER_OPS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// state: [0], [1], [2] this GPU's next-frontier count of levels it % 3 == 0, 1, 2 (three, so that a level's
// counter is zeroed two levels ahead, with no grid sync of its own); [3] levels run; [4] the last frontier's count;
// [5] vertices of the whole graph's frontiers after the first and before the last; [6], [7], [8] the out-arcs of
// the next frontiers, as [0..2]; [9] barriers passed; [10] 1 where a peer failed, 2 where a peer's post did not
// come within wait_ns (then [3] is the level it waited at); [11] the input frontier's arcs;
// [12] the gate: the tag of the last barrier whose posts have all arrived; [HUBS] the level's hubs set aside: their
// count (bits 40 and up) and arcs (below), taken by one atomic;
// the light kernel's: [ARRIVED + it % 3] the peers' entries claimed here at level it and [ARRIVED_ARCS + it % 3]
// their out-arcs; [ARRIVALS] blocks arrived at this call's barriers; [TOTALS + 0, 1, 2] the last barrier's sums
// over the devices: the frontier advanced, its arcs, and the next frontier (claimed here or sent);
// [STICKY] [10]'s failure, kept from call to call (a call after it returns at once: the host reads it when a batch
// of one-level calls ends) and [STICKY + 1] the level it came at; [SENT_SEEN] the entries this GPU had written
// into all inboxes at the last barrier; the words from STICKY on are zeroed when a phase begins, the others at
// every call.
// [HEAD + k]: entries written into peer k's inbox in this phase, [HEAD + p + k]: entries of peer k's inbox claimed
// here in this phase (the inboxes fill up within a phase, never wrap: each copy is claimed once in a traversal).
// mail (this GPU's memory, written by the peers): [(k * 2 + parity) * MAIL + j]: k's post at a barrier whose tag
// has that parity: j = 0 the tag, 1 its inbox entries written here, 2 the size and 3 the arcs of its frontier, 4 (the
// light kernel) its next frontier's vertices plus the entries it wrote at the level.  The parity is the tag's, which
// grows across calls, so that one-level calls alternate the slots too.
// n_word: where not null, the input frontier's length in device memory (a Queue's count word), read here;
// first_count: where not null, the first level's output count (the output Queue's word), else state[0].
// gated (a graph with hubs): each level first agrees on its frontier's size and arcs (a barrier of its own), and
// none is advanced here whose arcs exceed `limit`: the load-balanced advance takes it (at the first level: nothing
// ran, levels 0).  Then a frontier vertex of more than hub_degree arcs is a hub, whose arcs the whole grid takes.

// The visit's claim of arc u -> v: 1 where v is this GPU's own (it joins the next frontier), 2 where v is a copy of a
// peer's vertex (it goes to that peer's inbox: warp_send or send_marked), 0 where v was visited already.
__device__ __forceinline__ int visit_arc(idx_t u, idx_t v, int level, int* label, idx_t* pred, i64 own_below)
{
    if (label[v] != -1 || atomicCAS(&label[v], -1, level) != -1) return 0;
    pred[v] = u;
    return (i64)v < own_below ? 1 : 2;
}

// The light kernel's claim: as visit_arc, except that an own vertex a peer claimed at the level before (marked with
// the barrier that delivered it, `due`) is left to that entry, which this level's warps claim with the level before.
__device__ __forceinline__ int light_arc(idx_t u, idx_t v, int level, int* label, idx_t* pred, i64 own_below,
                                         const u64* pending, u64 due)
{
    if (label[v] != -1) return 0;
    if ((i64)v < own_below && ((const volatile u64*)pending)[v] == due) return 0;
    if (atomicCAS(&label[v], -1, level) != -1) return 0;
    pred[v] = u;
    return (i64)v < own_below ? 1 : 2;
}

// Entry j of a peer's inbox claimed as the exchange's combine would: an unvisited vertex takes the level and, where
// carried, its predecessor in local ids.  Whether it was claimed here; `v` is the entry's vertex.
__device__ __forceinline__ bool claim_entry(const volatile idx_t* ids, const volatile i64* preds, i64 j, int* label,
                                            idx_t* pred, const idx_t* __restrict__ g2l, int carry, int level, idx_t& v)
{
    v = ids[j];
    if (label[v] != -1 || atomicCAS(&label[v], -1, level) != -1) return false;
    if (carry) pred[v] = g2l[preds[j]];
    return true;
}

// A claimed copy written into its owner's inbox by its own thread: a slot from the owner's counter (a light graph's
// level claims few copies, and a warp's round of votes costs more than their atomics), and the vertex marked in the
// owner's `pending` with the barrier that delivers it (light_arc).
__device__ __forceinline__ void send_marked(idx_t u, idx_t v, const int* __restrict__ owner,
                                            const u64* __restrict__ id_on, const i64* __restrict__ caller,
                                            const u64* __restrict__ out_ids, const u64* __restrict__ out_preds,
                                            const u64* __restrict__ peer_pending, u64 due, u64* sent, int carry,
                                            bool& wrote)
{
    const int k = owner[v];
    const idx_t there = ((const idx_t*)id_on[k])[v];
    const u64 slot = atomicAdd(&sent[k], 1ull);
    ((volatile u64*)peer_pending[k])[there] = due;
    ((idx_t*)out_ids[k])[slot] = there;
    if (carry) ((i64*)out_preds[k])[slot] = caller[u];
    wrote = true;
}

// A warp's claimed copies (warp-uniform call: every lane passes whether its v is one) written into their owners'
// inboxes, in the owners' ids, with their predecessors' caller ids: one slot-taking atomic per owner among them, not
// one per copy (a level that claims 10^5 copies would otherwise queue them all on the one counter of each peer).
__device__ __forceinline__ void warp_send(bool copy, idx_t u, idx_t v, int lane, const int* __restrict__ owner,
                                          const u64* __restrict__ id_on, const i64* __restrict__ caller,
                                          const u64* __restrict__ out_ids, const u64* __restrict__ out_preds,
                                          u64* sent, int carry, bool& wrote)
{
    unsigned todo = __ballot_sync(0xffffffffu, copy);
    if (!todo) return;
    const int k = copy ? owner[v] : -1;
    while (todo) {  // warp-uniform: a round per owner among the warp's copies
        const int leader = __ffs(todo) - 1;
        const int to = __shfl_sync(0xffffffffu, k, leader);
        const unsigned group = __ballot_sync(0xffffffffu, copy && k == to);
        u64 base = 0;
        if (lane == leader) base = atomicAdd(&sent[to], (u64)__popc(group));
        base = __shfl_sync(0xffffffffu, base, leader);
        if (copy && k == to) {
            const u64 slot = base + __popc(group & ((1u << lane) - 1u));
            ((idx_t*)out_ids[to])[slot] = ((const idx_t*)id_on[to])[v];
            if (carry) ((i64*)out_preds[to])[slot] = caller[u];
            wrote = true;
        }
        todo &= ~group;
    }
}

// A warp's claimed own vertices (warp-uniform call: every lane passes its `mine`) appended to the next frontier with
// one atomic, their out-arcs added to the next frontier's.
__device__ __forceinline__ void warp_emit(bool mine, idx_t v, int lane, u64* count, idx_t* out, u64* out_arcs,
                                          const i64* __restrict__ indptr)
{
    const unsigned hits = __ballot_sync(0xffffffffu, mine);
    if (!hits) return;
    const int leader = __ffs(hits) - 1;
    u64 at = 0;
    if (lane == leader) at = atomicAdd(count, (u64)__popc(hits));
    at = __shfl_sync(0xffffffffu, at, leader);
    unsigned long long deg = 0;
    if (mine) {
        out[at + __popc(hits & ((1u << lane) - 1u))] = v;
        deg = (u64)(indptr[v + 1] - indptr[v]);
    }
    for (int d = 16; d > 0; d >>= 1) deg += __shfl_down_sync(0xffffffffu, deg, d);
    if (lane == 0 && deg) atomicAdd(out_arcs, (u64)deg);
}

// Thread 0 of the block that posts: waits for every peer's post of `tag` in this GPU's mail, watching the host's
// abort word and the clock (a peer that never posts, a fault of this protocol, is an error, not a hang); records a
// failure in the state.  Returns the failure (0: every post came).
__device__ __forceinline__ int await_posts(u64 tag, u64* mail, u64* state, int p, int me, int level, int it,
                                          const volatile int* abort_flag, u64 wait_ns)
{
    const int par = (int)(tag & 1);
    int failed = 0;
    u64 start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (int k = 0; k < p && !failed; ++k) {
        if (k == me) continue;
        volatile u64* box = (volatile u64*)(mail + (k * 2 + par) * MAIL);
        for (unsigned spins = 1; box[0] != tag; ++spins) {
            if ((spins & 1023u) == 0) {
                if (*abort_flag) { failed = 1; break; }
                u64 now;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
                if (now - start > wait_ns) { failed = 2; state[3] = (u64)it; break; }
            }
        }
    }
    state[10] = (u64)failed;
    if (failed) { state[STICKY] = (u64)failed; state[STICKY + 1] = (u64)level; }
    return failed;
}

// The gated kernel's barrier `tag`: thread 0 posts to every peer how far this GPU has written into its inbox and its
// frontier's size and arcs, waits for every peer's post of the tag and opens the gate (a word of this GPU's) that
// each block's thread 0 waits for before it reads the posts (one waiter on the words the peers write: a thousand
// blocks spinning there slowed the peers' writes tenfold).  Every thread of the grid calls it, after a grid sync; on
// return the block's shared words hold the posts and the totals (this GPU's included), or s_failed.
__device__ __forceinline__ void agree(u64 tag, i64 tid, const u64* __restrict__ peer_mail, u64* mail, u64* state,
                      const u64* sent, i64 n, i64 arcs, int p, int me, int level, int it,
                      const volatile int* abort_flag, u64 wait_ns,
                      u64* s_posted, u64& s_total, u64& s_arcs, int& s_failed)
{
    const int par = (int)(tag & 1);
    if (tid == 0) {
        __threadfence_system();
        for (int k = 0; k < p; ++k) {
            if (k == me) continue;
            volatile u64* box = (volatile u64*)((u64*)peer_mail[k] + (me * 2 + par) * MAIL);
            box[1] = sent[k];
            box[2] = (u64)n;
            box[3] = (u64)arcs;
            __threadfence_system();
            box[0] = tag;
        }
        await_posts(tag, mail, state, p, me, level, it, abort_flag, wait_ns);
        __threadfence();
        *(volatile u64*)&state[12] = tag;
    }
    if (threadIdx.x == 0) {
        while (*(volatile u64*)&state[12] != tag) { }
        __threadfence();
        u64 total = (u64)n, total_arcs = (u64)arcs;
        const int failed = (int)*(volatile u64*)&state[10];
        for (int k = 0; k < p && !failed; ++k) {
            if (k == me) continue;
            volatile u64* box = (volatile u64*)(mail + (k * 2 + par) * MAIL);
            s_posted[k] = box[1];
            total += box[2];
            total_arcs += box[3];
        }
        s_total = total;
        s_arcs = total_arcs;
        s_failed = failed;
    }
    __syncthreads();
}

// The light kernel's barrier after a level: a grid sync and the devices' agreement in one wait.  Each block arrives
// on this GPU's counter once its writes are in (fenced system-wide where it wrote into a peer's memory) and its count
// of the entries it claimed added (`s_arrived`: one atomic per block, not one per entry on one word); the block
// that arrives last (the `arrivals`-th in this call) posts to every peer how far this GPU has written into its inbox,
// the frontier it advanced (`n` of its own and the entries it claimed, with their arcs) and its next frontier (the
// vertices claimed here and the entries sent at the level), waits for every peer's post of the tag, leaves the sums
// in the state and opens the gate that the other blocks' first threads wait for.  On return the block's s_read holds
// how far each peer had written at the barrier before, s_posted how far at this one, s_totals the sums, or s_failed.
__device__ __forceinline__ void level_barrier(u64 tag, u64 arrivals, const u64* __restrict__ peer_mail, u64* mail,
                      u64* state, const u64* sent, i64 n, i64 arcs, u64* arrived, u64* arrived_arcs,
                      const u64* count, int p, int me, int level, int it, const volatile int* abort_flag,
                      u64 wait_ns, bool wrote, u64* s_arrived, u64* s_read, u64* s_posted, u64* s_totals,
                      int& s_failed)
{
    const int par = (int)(tag & 1);
    const int block_wrote = __syncthreads_or(wrote);
    if (threadIdx.x == 0) {
        if (s_arrived[0]) {  // the entries the block claimed at the level, and their arcs: one atomic each per block
            atomicAdd(arrived, s_arrived[0]);
            atomicAdd(arrived_arcs, s_arrived[1]);
            s_arrived[0] = s_arrived[1] = 0;
        }
        // the block's writes, those into peers' memory system-wide (one fence for the block: fences are cumulative)
        if (block_wrote) __threadfence_system(); else __threadfence();
        if (atomicAdd(&state[ARRIVALS], 1ull) + 1 == arrivals) {  // every block's writes are in
            __threadfence();
            const u64 n_adv = (u64)n + *(const volatile u64*)arrived;
            const u64 arcs_adv = (u64)arcs + *(const volatile u64*)arrived_arcs;
            u64 sent_all = 0;
            for (int k = 0; k < p; ++k)
                if (k != me) sent_all += *(const volatile u64*)&sent[k];
            const u64 next = *(const volatile u64*)count + (sent_all - state[SENT_SEEN]);
            state[SENT_SEEN] = sent_all;
            for (int k = 0; k < p; ++k) {
                if (k == me) continue;
                volatile u64* box = (volatile u64*)((u64*)peer_mail[k] + (me * 2 + par) * MAIL);
                box[1] = *(const volatile u64*)&sent[k];
                box[2] = n_adv;
                box[3] = arcs_adv;
                box[4] = next;
                __threadfence_system();
                box[0] = tag;
            }
            u64 t_adv = n_adv, t_arcs = arcs_adv, t_next = next;
            if (!await_posts(tag, mail, state, p, me, level, it, abort_flag, wait_ns)) {
                for (int k = 0; k < p; ++k) {
                    if (k == me) continue;
                    volatile u64* box = (volatile u64*)(mail + (k * 2 + par) * MAIL);
                    t_adv += box[2];
                    t_arcs += box[3];
                    t_next += box[4];
                }
            }
            state[TOTALS] = t_adv;
            state[TOTALS + 1] = t_arcs;
            state[TOTALS + 2] = t_next;
            __threadfence();
            *(volatile u64*)&state[12] = tag;
        } else {
            while (*(volatile u64*)&state[12] != tag) { }
        }
        __threadfence();
        s_failed = (int)*(volatile u64*)&state[10];
        for (int k = 0; k < p; ++k) {
            s_read[k] = s_posted[k];
            if (k != me && !s_failed) s_posted[k] = ((volatile u64*)(mail + (k * 2 + par) * MAIL))[1];
        }
        for (int j = 0; j < 3; ++j) s_totals[j] = *(volatile u64*)&state[TOTALS + j];
    }
    __syncthreads();
}

"""

# the bodies of the visit kernels; the operators above also serve the direction-optimizing levels
# (mgraph.comm.cupy_directions)
PEER_VISIT = PEER_OPS + r"""
// The visit kernels' parameters, the bodies' and the kernels' (their order: CupyLink._slots)
#define VISIT_PARAMS \
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices, \
    const idx_t* __restrict__ frontier, i64 n_given, const u64* __restrict__ n_word, u64* first_count, \
    idx_t* __restrict__ buf_a, idx_t* __restrict__ buf_b, \
    int* __restrict__ label, idx_t* __restrict__ pred, int level0, int max_levels, i64 limit, i64 own_below, \
    const int* __restrict__ owner, const u64* __restrict__ id_on, const i64* __restrict__ caller, \
    const idx_t* __restrict__ g2l, const u64* __restrict__ out_ids, const u64* __restrict__ out_preds, \
    const u64* __restrict__ peer_mail, u64* mail, const u64* __restrict__ in_ids, \
    const u64* __restrict__ in_preds, u64* __restrict__ state, u64 tag0, const volatile int* abort_flag, \
    u64 wait_ns, int carry, int p, int me
#define VISIT_ARGS indptr, indices, frontier, n_given, n_word, first_count, buf_a, buf_b, label, pred, level0, \
    max_levels, limit, own_below, owner, id_on, caller, g2l, out_ids, out_preds, peer_mail, mail, in_ids, in_preds, \
    state, tag0, abort_flag, wait_ns, carry, p, me

// A graph with hubs: each level first agrees on its frontier (gated), its hubs' arcs go to the whole grid, and what
// arrived is claimed after a second barrier.
__device__ __forceinline__ void hubs_body(
    VISIT_PARAMS, i64 hub_degree, idx_t* __restrict__ hub_v, i64* __restrict__ hub_at)
{
    cg::grid_group grid = cg::this_grid();
    if (*(volatile u64*)&state[STICKY]) return;  // a failure in an earlier call of this phase: the host raises it
    const i64 n_front = n_word ? (i64)*n_word : n_given;
    const int lane = threadIdx.x & 31;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 threads = (i64)gridDim.x * blockDim.x;
    const i64 warp = tid >> 5;
    const i64 warps = threads >> 5;
    const u64 HUB_ARCS = (1ull << 40) - 1ull;
    u64* sent = state + HEAD;
    u64* claimed = state + HEAD + p;
    // per block: what each peer had posted at the last barrier (what this block has claimed of its inbox) and now
    __shared__ u64 s_read[MAX_PEERS], s_posted[MAX_PEERS], s_total, s_arcs;
    __shared__ int s_failed;
    if (threadIdx.x < MAX_PEERS) s_read[threadIdx.x] = threadIdx.x < p ? claimed[threadIdx.x] : 0;
    {
        unsigned long long arcs = 0;
        for (i64 k = tid; k < n_front; k += threads) {
            const idx_t u = frontier[k];
            arcs += (u64)(indptr[u + 1] - indptr[u]);
        }
        for (int d = 16; d > 0; d >>= 1) arcs += __shfl_down_sync(0xffffffffu, arcs, d);
        if (lane == 0 && arcs) atomicAdd(&state[11], (u64)arcs);
    }
    grid.sync();
    const idx_t* in = frontier;
    idx_t* out = buf_a;
    i64 n = n_front;
    i64 in_arcs = (i64)*(volatile u64*)&state[11];
    u64 prior = 0;
    u64 tag = tag0;
    for (int it = 0;; ++it) {
        const int level = level0 + it;
        u64* count = (it == 0 && first_count) ? first_count : &state[it % 3];
        u64* out_arcs = &state[6 + it % 3];
        // agree on the frontier before advancing it: empty everywhere, or the load-balanced advance's
        agree(++tag, tid, peer_mail, mail, state, sent, n, in_arcs, p, me, level, it, abort_flag, wait_ns,
              s_posted, s_total, s_arcs, s_failed);
        if (s_failed) return;
        if (s_total == 0 || (i64)s_arcs > limit) {
            if (tid == 0) { state[3] = it; state[4] = n; state[5] = prior; state[9] = tag - tag0; }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_read[threadIdx.x];
            return;
        }
        bool wrote = false;  // into a peer's inbox: one system-wide fence after the level, not one per entry
        for (i64 k = warp; k < n; k += warps) {  // warp-uniform: every lane takes the same vertex
            const idx_t u = in[k];
            const i64 beg = indptr[u], end = indptr[u + 1];
            if (end - beg > hub_degree) {  // a hub: its arcs go to the whole grid, after a sync
                if (lane == 0) {
                    const u64 slot = atomicAdd(&state[HUBS], (1ull << 40) | (u64)(end - beg));
                    hub_v[slot >> 40] = u;
                    hub_at[slot >> 40] = (i64)(slot & HUB_ARCS);
                }
                continue;
            }
            for (i64 base = beg; base < end; base += 32) {
                const i64 e = base + lane;
                int got = 0;
                idx_t v = 0;
                if (e < end) {
                    v = indices[e];
                    got = visit_arc(u, v, level, label, pred, own_below);
                }
                warp_emit(got == 1, v, lane, count, out, out_arcs, indptr);
                warp_send(got == 2, u, v, lane, owner, id_on, caller, out_ids, out_preds, sent, carry, wrote);
            }
        }
        {  // the hubs' arcs as one run of positions, HUB_RUN consecutive ones to a warp
            grid.sync();
            const u64 hubs = *(volatile u64*)&state[HUBS];
            const i64 n_hubs = (i64)(hubs >> 40), hub_arcs = (i64)(hubs & HUB_ARCS);
            for (i64 run = warp * HUB_RUN; run < hub_arcs; run += warps * HUB_RUN) {
                i64 h = lb_search(hub_at, 0, n_hubs - 1, run);  // the run's first hub, found once
                const i64 run_end = run + HUB_RUN < hub_arcs ? run + HUB_RUN : hub_arcs;
                for (i64 e0 = run; e0 < run_end; e0 += 32) {  // warp-uniform trips
                    const i64 at = e0 + lane;
                    int got = 0;
                    idx_t u = 0, v = 0;
                    if (at < run_end) {
                        while (h + 1 < n_hubs && hub_at[h + 1] <= at) ++h;  // lanes move on to the next hubs
                        u = hub_v[h];
                        v = indices[indptr[u] + (at - hub_at[h])];
                        got = visit_arc(u, v, level, label, pred, own_below);
                    }
                    warp_emit(got == 1, v, lane, count, out, out_arcs, indptr);
                    warp_send(got == 2, u, v, lane, owner, id_on, caller, out_ids, out_preds, sent, carry, wrote);
                }
            }
        }
        if (wrote) __threadfence_system();  // the entries reach the peer before the post that follows the sync
        grid.sync();
        if (tid == 0) state[HUBS] = 0;  // read by none after that sync; appended to after the next ones
        agree(++tag, tid, peer_mail, mail, state, sent, n, in_arcs, p, me, level, it, abort_flag, wait_ns,
              s_posted, s_total, s_arcs, s_failed);
        if (s_failed) return;  // every block sees it: the host raises
        const i64 total = (i64)s_total;
        if (it > 0 && total == 0) {  // the frontier just advanced was empty everywhere (nothing was sent either)
            if (tid == 0) { state[3] = it; state[4] = 0; state[5] = prior; state[9] = tag - tag0; }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_read[threadIdx.x];
            return;
        }
        if (it > 0) prior += (u64)total;
        for (int k = 0; k < p; ++k) {  // claim what arrived (up to a level's worth), one atomic per warp (warp_emit)
            if (k == me) continue;
            const i64 lo = (i64)s_read[k], hi = (i64)s_posted[k];
            const volatile idx_t* ids = (const volatile idx_t*)in_ids[k];
            const volatile i64* preds = (const volatile i64*)in_preds[k];
            for (i64 base = lo + warp * 32; base < hi; base += warps * 32) {  // warp-uniform trips
                const i64 j = base + lane;
                idx_t v = 0;
                const bool mine = j < hi && claim_entry(ids, preds, j, label, pred, g2l, carry, level, v);
                warp_emit(mine, v, lane, count, out, out_arcs, indptr);
            }
        }
        grid.sync();
        const i64 m = (i64)*(volatile u64*)count;
        const i64 next_arcs = (i64)*(volatile u64*)out_arcs;
        if (threadIdx.x < p) s_read[threadIdx.x] = s_posted[threadIdx.x];  // every thread of the block is past it
        if (it + 1 >= max_levels) {
            if (tid == 0) { state[3] = it + 1; state[4] = m; state[5] = prior; state[9] = tag - tag0; }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_read[threadIdx.x];
            return;
        }
        if (tid == 0) {  // the counters of level it + 2: last read at level it - 1, before this level's syncs
            state[(it + 2) % 3] = 0;
            state[6 + (it + 2) % 3] = 0;
        }
        in = out;
        out = (out == buf_a) ? buf_b : buf_a;
        n = m;
        in_arcs = next_arcs;
    }
}

// A graph without hubs (a long-diameter graph's wavefronts of a few hundred vertices): one barrier per level
// (level_barrier).  The entries a peer wrote at a level are claimed, with that level, by the warps of the next one,
// which advance those they claim at once, beside the frontier of the vertices claimed here; an own vertex that an
// entry delivers is marked in `pending` by its sender, so that no warp of the next level claims it one level too
// deep before its entry is claimed.  A call that ends with entries delivered (its last level, or a frontier over
// `limit` arcs) claims them into its output first, as the exchange's combine would.
__device__ __forceinline__ void light_body(
    VISIT_PARAMS, const u64* __restrict__ peer_pending, const u64* pending)
{
    cg::grid_group grid = cg::this_grid();
    if (*(volatile u64*)&state[STICKY]) return;  // a failure in an earlier call of this phase: the host raises it
    const i64 n_front = n_word ? (i64)*n_word : n_given;
    const int lane = threadIdx.x & 31;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 threads = (i64)gridDim.x * blockDim.x;
    const i64 warp = tid >> 5;
    const i64 warps = threads >> 5;
    u64* sent = state + HEAD;
    u64* claimed = state + HEAD + p;
    // per block: how far each peer had written into this GPU's inbox at the barrier before the last, and at the last
    __shared__ u64 s_read[MAX_PEERS], s_posted[MAX_PEERS], s_totals[3], s_arrived[2];
    __shared__ int s_failed;
    if (threadIdx.x < MAX_PEERS) s_read[threadIdx.x] = s_posted[threadIdx.x] = threadIdx.x < p ? claimed[threadIdx.x] : 0;
    if (threadIdx.x < 2) s_arrived[threadIdx.x] = 0;
    i64 in_arcs = 0;  // the input's arcs, for the bound on the frontiers (no bound: a one-level call, none needed)
    if (limit < NO_LIMIT) {
        unsigned long long arcs = 0;
        for (i64 k = tid; k < n_front; k += threads) {
            const idx_t u = frontier[k];
            arcs += (u64)(indptr[u + 1] - indptr[u]);
        }
        for (int d = 16; d > 0; d >>= 1) arcs += __shfl_down_sync(0xffffffffu, arcs, d);
        if (lane == 0 && arcs) atomicAdd(&state[11], (u64)arcs);
        grid.sync();
        in_arcs = (i64)*(volatile u64*)&state[11];
    }
    __syncthreads();
    const idx_t* in = frontier;
    idx_t* out = buf_a;
    i64 n = n_front;
    i64 entries = 0;  // delivered at the last barrier, claimed at this level (none at a call's first)
    u64 prior = 0;
    u64 tag = tag0;
    for (int it = 0;; ++it) {
        const int level = level0 + it;
        u64* count = (it == 0 && first_count) ? first_count : &state[it % 3];
        u64* out_arcs = &state[6 + it % 3];
        u64* arrived = &state[ARRIVED + it % 3];
        u64* arrived_arcs = &state[ARRIVED_ARCS + it % 3];
        bool wrote = false;  // into a peer's memory: one system-wide fence per block after the level (level_barrier)
        for (i64 k = warp; k < n + entries; k += warps) {  // warp-uniform: every lane takes the same vertex
            idx_t u;
            if (k < n) {
                u = in[k];
            } else {  // an entry: claimed with the level it was reached at, then advanced with the frontier
                i64 j = k - n;
                int from = 0;
                for (; from < p; ++from) {
                    if (from == me) continue;
                    const i64 got = (i64)(s_posted[from] - s_read[from]);
                    if (j < got) break;
                    j -= got;
                }
                j += (i64)s_read[from];
                int won = 0;
                idx_t v = 0;
                if (lane == 0) {
                    v = ((const volatile idx_t*)in_ids[from])[j];
                    if (label[v] == -1 && atomicCAS(&label[v], -1, level - 1) == -1) {
                        if (carry) pred[v] = g2l[((const volatile i64*)in_preds[from])[j]];
                        won = 1;
                        atomicAdd(&s_arrived[0], 1ull);
                        atomicAdd(&s_arrived[1], (u64)(indptr[v + 1] - indptr[v]));
                    }
                }
                if (!__shfl_sync(0xffffffffu, won, 0)) continue;
                u = __shfl_sync(0xffffffffu, v, 0);
            }
            const i64 beg = indptr[u], end = indptr[u + 1];
            for (i64 base = beg; base < end; base += 32) {
                const i64 e = base + lane;
                int got = 0;
                idx_t v = 0;
                if (e < end) {
                    v = indices[e];
                    got = light_arc(u, v, level, label, pred, own_below, pending, tag);
                    if (got == 2)
                        send_marked(u, v, owner, id_on, caller, out_ids, out_preds, peer_pending, tag + 1, sent,
                                    carry, wrote);
                }
                warp_emit(got == 1, v, lane, count, out, out_arcs, indptr);
            }
        }
        level_barrier(++tag, (u64)(it + 1) * gridDim.x, peer_mail, mail, state, sent, n, in_arcs, arrived,
                      arrived_arcs, count, p, me, level, it, abort_flag, wait_ns, wrote, s_arrived, s_read, s_posted,
                      s_totals, s_failed);
        if (s_failed) return;  // every block sees it: the host raises
        if (it > 0) prior += s_totals[0];
        // the traversal has ended where nothing was claimed or sent anywhere at this level, or where this level had
        // nothing to advance anywhere (the entries sent at the last one were claimed there already): not a level
        const bool empty = it > 0 && s_totals[0] == 0;
        if (empty || s_totals[2] == 0) {
            if (tid == 0) { state[3] = empty ? it : it + 1; state[4] = 0; state[5] = prior; state[9] = tag - tag0; }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_posted[threadIdx.x];
            return;
        }
        if (it + 1 >= max_levels || (i64)s_totals[1] > limit) {  // the frontier goes back to the host, with its entries
            for (int k = 0; k < p; ++k) {
                if (k == me) continue;
                const volatile idx_t* ids = (const volatile idx_t*)in_ids[k];
                const volatile i64* preds = (const volatile i64*)in_preds[k];
                for (i64 j = (i64)s_read[k] + tid; j < (i64)s_posted[k]; j += threads) {
                    idx_t v;
                    if (claim_entry(ids, preds, j, label, pred, g2l, carry, level, v)) out[atomicAdd(count, 1ull)] = v;
                }
            }
            grid.sync();
            if (tid == 0) {
                state[3] = it + 1; state[4] = *(volatile u64*)count; state[5] = prior; state[9] = tag - tag0;
            }
            if (blockIdx.x == 0 && threadIdx.x < p) claimed[threadIdx.x] = s_posted[threadIdx.x];
            return;
        }
        if (tid == 0) {  // level it + 2's words: last read after the barrier before this one, by blocks now past it
            const int z = (it + 2) % 3;
            state[z] = 0;
            state[6 + z] = 0;
            state[ARRIVED + z] = 0;
            state[ARRIVED_ARCS + z] = 0;
        }
        entries = 0;
        for (int k = 0; k < p; ++k)
            if (k != me) entries += (i64)(s_posted[k] - s_read[k]);
        n = (i64)*(volatile u64*)count;
        in_arcs = (i64)*(volatile u64*)out_arcs;
        in = out;
        out = (out == buf_a) ? buf_b : buf_a;
    }
}

// A light graph's levels (no hubs) and a gated link's (a graph with hubs)
extern "C" __global__ void __launch_bounds__(BLOCK) peer_visit(
    VISIT_PARAMS, const u64* __restrict__ peer_pending, const u64* pending)
{
    light_body(VISIT_ARGS, peer_pending, pending);
}
extern "C" __global__ void __launch_bounds__(BLOCK) peer_visit_hubs(
    VISIT_PARAMS, i64 hub_degree, idx_t* __restrict__ hub_v, i64* __restrict__ hub_at)
{
    hubs_body(VISIT_ARGS, hub_degree, hub_v, hub_at);
}
"""


def _own_allocation(n, dtype):
    """``n`` entries of ``dtype`` (one at least) in an allocation of their own, not a piece of CuPy's pool: an IPC
    handle names a whole allocation, so a peer process opening it must find the array at its start."""
    dtype = np.dtype(dtype)
    mem = cp.cuda.memory.Memory(max(int(n), 1) * dtype.itemsize)
    return cp.ndarray((max(int(n), 1),), dtype, cp.cuda.MemoryPointer(mem, 0))


def reachable(devices) -> bool:
    """Whether every pair of ``devices`` can reach each other's memory (peer access)."""
    rt = cp.cuda.runtime
    ids = sorted(set(devices))
    return len(ids) == len(devices) and all(rt.deviceCanAccessPeer(a, b) for a in ids for b in ids if a != b)


def source(idx_ctype: str) -> str:
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {cupy_kernels.ITEMS}\n#define BLOCK {BLOCK}\n"
            f"#define HEAD {HEAD}\n#define STICKY {STICKY}\n#define MAX_PEERS {MAX_PEERS}\n#define HUBS {HUBS}\n"
            f"#define HUB_RUN {HUB_RUN}\n#define ARRIVED {ARRIVED}\n#define ARRIVED_ARCS {ARRIVED_ARCS}\n"
            f"#define ARRIVALS {ARRIVALS}\n#define TOTALS {TOTALS}\n#define SENT_SEEN {SENT_SEEN}\n#define MAIL {MAIL}\n"
            f"#define NO_LIMIT {NO_LIMIT}ll\n"
            + cupy_kernels.PRELUDE + PEER_VISIT)


@lru_cache(maxsize=None)
def _kernel(idx_dtype, device_id, name="peer_visit"):
    """The kernel and the largest grid that can be resident at once (a cooperative launch needs it)."""
    return cuda.cooperative(source(cuda.ID_CTYPES[np.dtype(idx_dtype)]), name, device_id)


def _grid(idx_dtype, device_id, gated=False):
    """The kernel and its grid; a gated link's (a graph with hubs) on as many blocks as fit: its few levels may each
    claim up to GATED_ARCS arcs, which want every warp that fits, and its grid syncs are few."""
    kernel, most = _kernel(idx_dtype, device_id, "peer_visit_hubs" if gated else "peer_visit")
    if BLOCKS_PER_SM is None or gated:
        return kernel, most
    return kernel, min(most, BLOCKS_PER_SM * cp.cuda.Device(device_id).attributes["MultiProcessorCount"])


@lru_cache(maxsize=None)
def _directions_kernel(idx_dtype, device_id):
    """The direction-optimizing levels' kernel (mgraph.comm.cupy_directions: the one-GPU kernel's push and pull
    operators, and the posts' above) and the largest grid that can be resident at once."""
    defines = {"IDX_T": cuda.ID_CTYPES[np.dtype(idx_dtype)], "ITEMS": cupy_kernels.ITEMS, "BLOCK": BLOCK,
               "HEAD": HEAD, "STICKY": STICKY, "MAX_PEERS": MAX_PEERS, "MAIL": MAIL, "ARRIVALS": ARRIVALS,
               "TOTALS": TOTALS, "SENT_SEEN": SENT_SEEN, "DIRECTIONS_MIN_BLOCKS": cupy_levels.DIRECTIONS_MIN_BLOCKS,
               "CHUNK": cupy_levels.CHUNK, "CHUNK_ABOVE": cupy_levels.CHUNK_ABOVE, "PULL_WAYS": cupy_levels.PULL_WAYS,
               "HUB_RUN": cupy_levels.HUB_RUN, "TRACE_LEVELS": cupy_directions.TRACE_LEVELS,
               "MERGE_WAYS": cupy_directions.MERGE_WAYS, "TOUCH": cupy_directions.TOUCH,
               "WORDS_USED": cupy_directions.WORDS - 1}
    source = ("".join(f"#define {name} {value}\n" for name, value in defines.items()) + cupy_kernels.PRELUDE
              + cupy_levels.DIRECTIONS_OPS + PEER_OPS + cupy_directions.PEER_DIRECTIONS)
    return cuda.cooperative(source, "peer_directions", device_id)


class CupyLink(Link):
    """Device ``d``'s end on a GPU: its inboxes (one per peer, sized by the copies the peer has of its vertices),
    its mail, and the tables of its peers' pointers the kernel writes through."""

    @staticmethod
    def shared(peers):
        flag = cupyx.zeros_pinned(1, dtype=np.int32)  # set by the host when a device fails; read by every kernel
        return {"abort": flag, "links": []}

    def __init__(self, peers, d, part, shared):
        super().__init__(peers, d, part)
        p, idx = peers.p, np.dtype(part.indices.dtype)
        self.shared, self.idx = shared, idx
        self.device = part.indptr.device.id
        self.in_ids = [_own_allocation(peers.capacity[k][d], idx) if k != d else None for k in range(p)]
        self.in_preds = [_own_allocation(peers.capacity[k][d], np.int64) if k != d else None for k in range(p)]
        self.mail = _own_allocation(p * 2 * MAIL, np.uint64)
        self.mail.fill(0)
        self.state = cp.zeros(HEAD + 2 * p, dtype=np.uint64)
        self.tag = 0  # levels' tags so far: every device passes as many barriers, so all hold the same
        self.caller = part.caller_ids.astype(np.int64, copy=False)
        self.g2l = part.global_to_local.astype(idx, copy=False)  # the id type: a caller-sized table, not copied
        self.owner = part.owner.astype(np.int32, copy=False)
        self._id_on = [part.id_on[k].astype(idx, copy=False) if k != d else None for k in range(p)]
        self.id_on = cp.array([0 if k == d else self._id_on[k].data.ptr for k in range(p)], dtype=np.uint64)
        self.words = cupyx.empty_pinned(HEAD + p, dtype=np.int64)
        self.room = None  # a direction-optimizing traversal's buffers (mgraph.comm.cupy_directions), where one may run
        slots = part.num_vertices
        if getattr(peers, "directions", False):
            self.room = cupy_directions.Room(part, d, p, _own_allocation, [peers.capacity[d][k] for k in range(p)])
            _, grid = _directions_kernel(idx, self.device)
            # a level's output: each local vertex once, and the gaps two appends' chunks may leave
            slots += 2 * grid * (BLOCK // 32) * cupy_levels.CHUNK
        self.runs_directions = self.room is not None
        self.bufs = (cp.empty(max(slots, 1), dtype=idx), cp.empty(max(slots, 1), dtype=idx))
        self.hub_v = self.hub_at = None  # a level's hubs, set aside for the whole grid: at most every hub of the part
        self.hub_degree = NO_LIMIT
        self.pending = None  # the light kernel's: per own vertex, the barrier that last delivered it from a peer
        if not self.gated:
            self.pending = _own_allocation(part.own_below, np.uint64)
            self.pending.fill(np.iinfo(np.uint64).max)  # no barrier's tag: tags count up from 0
        else:
            self.hub_degree = fusing.FUSE_DEGREE
            hubs = max(int((part.out_degree() > self.hub_degree).sum()), 1)
            self.hub_v, self.hub_at = cp.empty(hubs, dtype=idx), cp.empty(hubs, dtype=np.int64)
        shared["links"].append(self)
        self._tables = self._fixed = None
        self._sent = 0  # inbox entries this device had written in this phase when the state was last read

    def exported(self):
        """What a peer in another process needs to write here: IPC handles of this device's inbox from each peer
        (ids, predecessors), of its mail, of its marks of pending vertices (a light link's, else None) and of its
        frontier's bits with their words per level (a direction-optimizing traversal's, else None)."""
        get = cp.cuda.runtime.ipcGetMemHandle
        return ([None if a is None else get(a.data.ptr) for a in self.in_ids],
                [None if a is None else get(a.data.ptr) for a in self.in_preds], get(self.mail.data.ptr),
                None if self.pending is None else get(self.pending.data.ptr),
                None if self.room is None else (self.room.exported(), self.room.words))

    def peer_bits(self):
        """Pointers to each peer's frontier bits and their words per level (a direction-optimizing traversal's)."""
        me, p = self.d, self.peers.p
        if "remote" in self.shared:
            got = [(0, 0) if k == me else self.shared["remote"][k][4] for k in range(p)]
        else:
            links = sorted(self.shared["links"], key=lambda link: link.d)
            got = [(0, 0) if k == me else (links[k].room.bits.data.ptr, links[k].room.words) for k in range(p)]
        return [b for b, _ in got], [w for _, w in got]

    def visit_directions(self, frontier, label, pred, level, policy, max_levels):
        """As :meth:`mgraph.comm.peer.NumpyLink.visit_directions`, in one cooperative launch and one read
        (mgraph.comm.cupy_directions)."""
        sub, room = self.part, self.room
        f = cp.asarray(frontier)
        f = f[f < sub.own_below].astype(self.idx, copy=False)  # a broadcast frontier holds copies: each is its owner's
        kern, grid = _directions_kernel(self.idx, self.device)
        rev = sub.reverse()
        out_ids, out_preds, peer_mail, in_ids, in_preds, _ = self._peer_tables()
        peer_bits, peer_words, copies_lo, copies_n = room.table(*self.peer_bits())
        stream = cp.cuda.get_current_stream()
        cp.cuda.runtime.memsetAsync(self.state.data.ptr, 0, STICKY * self.state.itemsize, stream.ptr)
        room.dstate.fill(0)
        buf_a, buf_b = self.bufs
        kern((grid,), (BLOCK,), (
            sub.indptr, sub.indices, rev.indptr, rev.indices, label, pred, f, np.int64(f.shape[0]), buf_a, buf_b,
            room.bits, np.int64(room.words), peer_bits, peer_words, copies_lo, copies_n, room.out_cap,
            room.hub_v, room.hub_at, np.int64(room.hub_degree), np.int32(min(max_levels, 2**31 - 1)), np.int32(level),
            room.dstate, np.int64(sub.own_below), self.owner, self.id_on, self.caller, self.g2l, out_ids, out_preds,
            peer_mail, self.mail, in_ids, in_preds, self.state, np.uint64(self.tag),
            np.uint64(self.shared["abort"].ctypes.data), np.uint64(int(WAIT_S * 1e9)),
            np.int32(self.pred_name is not None), np.int32(self.peers.p), np.int32(self.d), np.int64(policy.num_vertices), np.int64(policy.num_arcs), np.int64(policy.visited),
            np.int32(policy.pulling), np.int32(policy.switched), np.float64(policy.do_a), np.float64(policy.do_b),
            room.trace if room.trace is not None else np.uint64(0)))
        words = self._read_state()
        got = cuda.read_words(room.dstate, cupy_directions.WORDS)
        levels, count, slots, emitted, visited, first_pull, first_push = got[10:17]
        error = self._failure(words, level + levels)
        if error is not None:
            raise error
        self.tag += words[9]
        policy.took_switching(levels, first_pull, first_push, visited)
        self.levels_run += levels
        self._account(words)
        self.calls += 1
        last = f if levels == 0 else (buf_a if levels % 2 == 1 else buf_b)
        last = last[:slots]
        return Levels(last.copy() if slots == count else last[last >= 0], levels, emitted)

    def _peer_tables(self):
        """The pointers into the peers' memory: made on first use, once every device's link exists (threads), or
        from the handles the peers' processes exported (``shared["remote"]``: per peer, its inbox from this device
        (ids, predecessors), its mail and its marks, opened here)."""
        if self._tables is None:
            me, p = self.d, self.peers.p
            if "remote" in self.shared:
                remote = self.shared["remote"]
                out_ids = [0 if k == me else remote[k][0] for k in range(p)]
                out_preds = [0 if k == me else remote[k][1] for k in range(p)]
                peer_mail = [0 if k == me else remote[k][2] for k in range(p)]
                peer_pending = [0 if k == me else remote[k][3] for k in range(p)]
            else:
                links = sorted(self.shared["links"], key=lambda link: link.d)
                out_ids = [0 if k == me else links[k].in_ids[me].data.ptr for k in range(p)]
                out_preds = [0 if k == me else links[k].in_preds[me].data.ptr for k in range(p)]
                peer_mail = [0 if k == me else links[k].mail.data.ptr for k in range(p)]
                peer_pending = [0 if k == me or links[k].pending is None else links[k].pending.data.ptr
                                for k in range(p)]
            in_ids = [0 if k == me else self.in_ids[k].data.ptr for k in range(p)]
            in_preds = [0 if k == me else self.in_preds[k].data.ptr for k in range(p)]
            self._tables = tuple(cp.array(t, dtype=np.uint64) for t in (out_ids, out_preds, peer_mail, in_ids,
                                                                         in_preds, peer_pending))
        return self._tables

    def abort(self):
        self.shared["abort"][0] = 1

    def release(self):
        super().release()
        cp.cuda.Device(self.device).synchronize()  # a kernel that saw the abort word may still be returning
        self.in_ids = self.in_preds = self.mail = self.state = self.bufs = self.id_on = self._id_on = None
        self.hub_v = self.hub_at = self.pending = self.room = None
        self.words = self._tables = self._fixed = None
        self.shared = {"abort": self.shared["abort"]}  # not the other links: each releases its own

    def restart(self):
        """A phase begins: its inboxes fill from their start again (the last phase's kernels have ended: the
        enactor's agreement that ended it read their results)."""
        super().restart()
        cp.cuda.runtime.memsetAsync(self.state.data.ptr, 0, self.state.nbytes, cp.cuda.get_current_stream().ptr)
        self._sent = 0

    def _account(self, words):
        """Inbox bytes written since the state was last read, from the phase's counts in ``words``."""
        sent = sum(words[HEAD + k] for k in range(self.peers.p) if k != self.d)
        entry = self.idx.itemsize + (8 if self.pred_name is not None else 0)
        self.bytes += entry * (sent - self._sent)
        self._sent = sent

    def _failure(self, words, level):
        """The error of a call that failed (``words[10]``, or a failure kept from an earlier call), or None."""
        failed = words[10] or words[STICKY]
        if failed == 2:
            at = words[STICKY + 1] if words[STICKY] else level
            return RuntimeError(f"device {self.d}: no post from a peer device within {WAIT_S:g} s at level {at} of "
                                f"the levels run across the devices (peer_levels=False runs every level through "
                                f"the host)")
        if failed:
            return PeerAborted(f"device {self.d}: a peer device failed during fused levels")
        return None

    def visit(self, frontier, label, pred, level):
        """As :meth:`mgraph.comm.peer.NumpyLink.visit`: one cooperative launch, no read; ``frontier`` may be a
        Queue whose length is on the device (the kernel reads it there).  The output alternates between the two
        buffers, so that it never overwrites its input."""
        n, n_word = 0, 0
        if isinstance(frontier, Queue) and frontier.dtype == self.idx:  # the last visit's output, most often
            f = frontier.buffer
            if frontier.known:
                n = len(frontier)
            else:
                n_word = frontier.counts.data.ptr + 8 * frontier.at
        else:
            f = plain(frontier).astype(self.idx, copy=False)
            n = int(f.shape[0])
        out, other = self.bufs if f is not self.bufs[0] else self.bufs[::-1]
        counts, at = word(cp, self.device)
        self._launch(f, n, n_word, counts.data.ptr + 8 * at, out, other, label, pred, level, 1, NO_LIMIT)
        self.tag += 1  # a one-level call passes one barrier
        self.levels_run += 1
        self.calls += 1
        self.exchanged = Queue(out, counts, at)
        return self.exchanged

    def check(self):
        """After a batch of :meth:`visit` calls (their counts read, so the kernels have ended): raise a failure
        one of them met; account the bytes they wrote."""
        words = self._read_state()
        error = self._failure(words, None)
        if error is not None:
            raise error
        self._account(words)

    def _launch(self, f, n, n_word, first_count, buf_a, buf_b, label, pred, level, max_levels, limit):
        """One cooperative launch through the driver, its arguments in slots made at the link's first launch (the
        kernel's parameters in order, 8 bytes each: an int parameter reads the low half) of which only a call's own
        are set here: a one-level call's launch is most of its superstep's host time, and CuPy's packing of 33
        arguments took most of that."""
        kernel, grid = _grid(self.idx, self.device, self.gated)
        stream = cp.cuda.get_current_stream()
        cp.cuda.runtime.memsetAsync(self.state.data.ptr, 0, STICKY * self.state.itemsize, stream.ptr)
        slots, params = self._slots()
        slots[2:13] = (f.data.ptr, n, n_word, first_count, buf_a.data.ptr, buf_b.data.ptr, label.data.ptr,
                       pred.data.ptr, level, min(max_levels, 2**31 - 1), min(limit, NO_LIMIT))
        slots[25] = self.tag
        slots[28] = self.pred_name is not None
        cp.cuda.driver.launchCooperativeKernel(kernel.kernel.ptr, grid, 1, 1, BLOCK, 1, 1, 0, stream.ptr,
                                               params.ctypes.data)

    def _slots(self):
        """The kernel's arguments as 8-byte slots, those that stay from call to call set (VISIT_PARAMS' order, then
        the light or the gated kernel's own), and the array of the slots' addresses a launch passes."""
        if self._fixed is None:
            sub = self.part
            out_ids, out_preds, peer_mail, in_ids, in_preds, peer_pending = self._peer_tables()
            fixed = [sub.indptr.data.ptr, sub.indices.data.ptr] + [0] * 11 + [
                sub.own_below, self.owner.data.ptr, self.id_on.data.ptr, self.caller.data.ptr, self.g2l.data.ptr,
                out_ids.data.ptr, out_preds.data.ptr, peer_mail.data.ptr, self.mail.data.ptr, in_ids.data.ptr,
                in_preds.data.ptr, self.state.data.ptr, 0, self.shared["abort"].ctypes.data, int(WAIT_S * 1e9), 0,
                self.peers.p, self.d]
            if self.gated:
                fixed += [self.hub_degree, self.hub_v.data.ptr, self.hub_at.data.ptr]
            else:
                fixed += [peer_pending.data.ptr, self.pending.data.ptr]
            slots = np.array(fixed, dtype=np.int64)
            params = slots.ctypes.data + 8 * np.arange(len(fixed), dtype=np.uint64)
            self._fixed = (slots, params)
        return self._fixed

    def _read_state(self):
        """The state's first words, once the kernel has ended.  The host polls an event and sleeps between polls
        instead of synchronising the stream, so that this thread never holds the interpreter while its kernel
        waits for a peer whose thread has yet to launch its own."""
        stream = cp.cuda.get_current_stream()
        cp.cuda.runtime.memcpyAsync(self.words.ctypes.data, self.state.data.ptr, self.words.nbytes,
                                    cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        done = cp.cuda.Event(disable_timing=True)
        done.record(stream)
        while not done.done:
            time.sleep(POLL_S)
        return self.words.tolist()

    def visit_levels(self, frontier, label, pred, level, limit, max_levels):
        """As :meth:`mgraph.comm.peer.NumpyLink.visit_levels`, in one cooperative launch and one read (None where a
        gated link found the frontier's arcs over ``limit``)."""
        if self.left_to_host(level, None):
            return None
        f = plain(frontier).astype(self.idx, copy=False)
        buf_a, buf_b = self.bufs
        self._launch(f, int(f.shape[0]), 0, 0, buf_a, buf_b, label, pred, level, max_levels, limit)
        words = self._read_state()
        levels, count, prior, barriers = words[3], words[4], words[5], words[9]
        error = self._failure(words, level + levels)
        if error is not None:
            raise error
        self.tag += barriers
        self.left_to_host(level, levels)
        if not levels:
            return None
        self.levels_run += levels
        self._account(words)
        self.calls += 1
        last = buf_a if levels % 2 == 1 else buf_b
        return Levels(last[:count].copy(), levels, prior + count)


class RankLevels:
    """The link of this MPI rank's GPU to the GPUs of the other ranks of its node, with the same kernel as worker
    threads: each rank allocates its inboxes and mail, exports them as CUDA IPC handles over MPI, and opens the
    peers' (peer access enabled as they open).  A rank that fails ends the job (mgraph.group.fail_job), so
    nothing here waits for a dead peer: its process is gone with its kernel."""

    def __init__(self, part, backend, group, gated=False, directions=False):
        self.p, me = group.size, group.rank
        self.gated = gated  # the run's graph has hubs (mgraph.comm.peer.has_hubs), alike on every rank
        self.directions = directions  # the run's primitive may be a direction-optimizing traversal, alike too
        with backend.context():  # this part's copies of each one's vertices, counted on the device: a power-law
            # part's copies are millions, and copying their owners out to count them took longer than a traversal
            row = to_host(cp.bincount(part.owner[part.own_below:], minlength=self.p)).tolist()
        rows = group.allgather(row)
        self.capacity = [[0 if s == d else int(rows[s][d]) for d in range(self.p)] for s in range(self.p)]
        self.parts, self.group, self.backend = [part], group, backend
        self._opened = []
        link, mine, failed = None, None, None
        with backend.context():
            shared = CupyLink.shared(self)
            try:  # a part that fills its GPU leaves no room for the link: then every rank takes the host's path
                link = CupyLink(self, me, part, shared)
                mine = link.exported()
            except ALLOCATION_ERRORS as e:
                failed = f"rank {me}: {e}"
            handles = group.allgather(mine)
            remote = {}
            if failed is None and all(h is not None for h in handles):
                try:
                    for k in range(self.p):
                        if k != me:
                            ids, preds, mail, pending, bits = handles[k]
                            remote[k] = (self._open(ids[me]), self._open(preds[me]), self._open(mail),
                                         0 if pending is None else self._open(pending),
                                         (0, 0) if bits is None else (self._open(bits[0]), bits[1]))
                except cp.cuda.runtime.CUDARuntimeError as e:  # IPC refused here (a container, a driver setting)
                    failed = f"rank {me}: {e}"
            shared["remote"] = remote
        self.links = [link] if link is not None else []
        refused = [f for f in group.allgather(failed) if f]
        self.ok = not refused  # else every rank takes the host's path
        if refused:
            self.close()

    def _open(self, handle):
        ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
        self._opened.append(ptr)
        return ptr

    def attach(self):
        self.parts[0].levels_link = self.links[0]

    def detach(self):
        self.parts[0].levels_link = None

    def abort(self):
        self.links[0].abort()

    def close(self):
        """Close the peers' memory this rank opened; collective, so that no rank frees what another still
        maps."""
        with self.backend.context():
            cp.cuda.runtime.deviceSynchronize()
            for ptr in self._opened:
                cp.cuda.runtime.ipcCloseMemHandle(ptr)
            for link in self.links:
                link.release()
        self._opened = []
        self.group.barrier()

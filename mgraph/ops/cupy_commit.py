"""ops.unsettled_rows, ops.inside_change and ops.commit_sums on one GPU holding a whole undirected graph: a pass over the CSR rows.

Louvain's round reads every arc twice more beside its proposal: which vertices
to score again (a vertex with a neighbour that moved) and, for each proposer,
its arc weight to its target and to its own community with the proposals of
higher priority taken as made.  As array operations (the NumPy twins in
:mod:`mgraph.ops.propose`) each is a pass over all the arcs with a scatter
per arc, and the second a compaction of the proposers' arcs first, which
makes the GPU wait to learn how many there are.  Here each row is read
where it lies, by a group of ``GROUP`` lanes:

* :func:`unsettled_rows`: a row stops at its first moved neighbour (a vote
  of the group per ``GROUP`` arcs), and the rows already in the mask (moved,
  or proposing) read no arc; one byte written per row, no atomics.
* :func:`inside_change`: a row whose vertex did not move reads no arc;
  a moved one's terms are added in the block, one atomic per block.
* :func:`commit_sums`: a row that does not propose reads no arc; a
  proposer's row is summed in the group: on an unweighted graph as counts
  (ballots), on a weighted one in CSR order, each lane's ``GROUP`` weights
  added one after another by every lane from 0.0, as the CPU's bincount
  adds them, so the group's sums are the twin's bits on either.

Rows of more than ``ROW_DEG`` arcs (a power-law graph's hubs, up to 10^5 and
more) would hold one group for long: the group kernel writes what it knows
of them without their arcs (the mask of the vertex itself; zero sums), and
a second launch splits their arcs into pieces of ``PIECE`` arcs listed once
per graph, a block a piece, each piece adding its sums into its row's with
one atomic per output (a hub row's sums are then a weighted graph's in
another order; an unweighted graph's counts are exact in any).
"""
from __future__ import annotations

import weakref

import cupy as cp
import numpy as np

from mgraph.ops import cuda
from mgraph.ops.cupy_kernels import PRELUDE

GROUP = 8  # lanes per row of the group kernels (a power of two up to 32)
ROW_DEG = 256  # arcs: a row of more is split into pieces (ROW_DEG / GROUP steps of a group at most)
PIECE = 1024  # arcs per piece of a long row, one block each
BLOCK = 256  # threads per block of every kernel here

KERNELS = r"""
typedef LAB_T lab_t;
#define FULL 0xffffffffu

// the group's lanes within the warp: GROUP lanes from a multiple of GROUP
__device__ __forceinline__ unsigned group_mask() {
    if (GROUP == 32) return FULL;
    return ((1u << GROUP) - 1u) << ((threadIdx.x & 31) & ~(GROUP - 1));
}

// A group per row: look[u] = moved[u] or priority[u] >= 0 or a neighbour moved, for rows of at most ROW_DEG arcs;
// the longer rows get the first two here and their arcs in unsettled_pieces.
extern "C" __global__ void __launch_bounds__(BLOCK)
unsettled_rows(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const bool* __restrict__ moved,
               const i64* __restrict__ priority, i64 nv, bool* __restrict__ look) {
    const int lane = threadIdx.x & (GROUP - 1);
    const unsigned mask = group_mask();
    const i64 u = ((i64)blockIdx.x * BLOCK + threadIdx.x) / GROUP;
    if (u >= nv) return;  // group-uniform from here on
    bool hit = moved[u] || priority[u] >= 0;
    const i64 begin = indptr[u], end = indptr[u + 1];
    if (!hit && end - begin <= ROW_DEG) {
        for (i64 e0 = begin; e0 < end; e0 += GROUP) {
            const i64 e = e0 + lane;
            if (__any_sync(mask, e < end && moved[indices[e]])) { hit = true; break; }
        }
    }
    if (lane == 0) look[u] = hit;
}

// A block per piece (row, first arc) of the rows of more than ROW_DEG arcs: any moved neighbour sets the row's
// mask (every writer writes true); a row already in the mask reads nothing.
extern "C" __global__ void __launch_bounds__(BLOCK)
unsettled_pieces(const i64* __restrict__ piece_row, const i64* __restrict__ piece_begin,
                 const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const bool* __restrict__ moved,
                 bool* __restrict__ look) {
    const i64 u = piece_row[blockIdx.x];
    if (((volatile bool*)look)[u]) return;
    const i64 begin = piece_begin[blockIdx.x];
    const i64 end = min(begin + (i64)PIECE, indptr[u + 1]);
    for (i64 e = begin + threadIdx.x; e < end; e += BLOCK) {
        if (moved[indices[e]]) { look[u] = true; return; }
    }
}

// One arc (u, v) of a proposer u at priority pu: where v is taken to be (its target when it proposes at a priority
// at least u's, else its community), whether that is u's target, u's community, and whether v was first.
__device__ __forceinline__ void commit_arc(i64 v, i64 pu, i64 tu, i64 cu, const i64* __restrict__ p,
                                           const lab_t* __restrict__ t, const lab_t* __restrict__ c, bool& to,
                                           bool& stay, bool& first) {
    first = p[v] >= pu;
    const i64 there = first ? (i64)t[v] : (i64)c[v];
    to = there == tu;
    stay = there == cu;
}

// A group per row: for a proposer u (p[u] >= 0) of at most ROW_DEG arcs, w_to[u] and w_stay[u] (the weights of its
// arcs whose other end is taken to be in u's target, in u's community) and blocked[u] (some neighbour proposes at a
// priority at least u's; written where has_blocked); zeros for the other rows, whose long proposers'
// arcs commit_pieces adds.  Weighted: each lane adds the group's GROUP weights in lane order, chunk after chunk,
// from 0.0 (the arcs in CSR order, as a sequential sum); unweighted: counts.
extern "C" __global__ void __launch_bounds__(BLOCK)
commit_rows(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ w,
            int weighted, const i64* __restrict__ p, const lab_t* __restrict__ t, const lab_t* __restrict__ c,
            i64 nv, double* __restrict__ w_to, double* __restrict__ w_stay, bool* __restrict__ blocked,
            int has_blocked) {
    const int lane = threadIdx.x & (GROUP - 1);
    const unsigned mask = group_mask();
    const i64 u = ((i64)blockIdx.x * BLOCK + threadIdx.x) / GROUP;
    if (u >= nv) return;  // group-uniform from here on
    const i64 pu = p[u];
    const i64 begin = indptr[u], end = indptr[u + 1];
    double to = 0.0, stay = 0.0;
    bool any_first = false;
    if (pu >= 0 && end - begin <= ROW_DEG) {
        const i64 tu = (i64)t[u], cu = (i64)c[u];
        int n_to = 0, n_stay = 0;
        for (i64 e0 = begin; e0 < end; e0 += GROUP) {
            const i64 e = e0 + lane;
            bool m_to = false, m_stay = false, first = false;
            if (e < end) commit_arc((i64)indices[e], pu, tu, cu, p, t, c, m_to, m_stay, first);
            any_first |= first;
            if (weighted) {
                const double x = e < end ? w[e] : 0.0;
                const double x_to = m_to ? x : 0.0, x_stay = m_stay ? x : 0.0;
                for (int j = 0; j < GROUP; ++j) {
                    to += __shfl_sync(mask, x_to, j, GROUP);
                    stay += __shfl_sync(mask, x_stay, j, GROUP);
                }
            } else {
                n_to += __popc(__ballot_sync(mask, m_to) & mask);
                n_stay += __popc(__ballot_sync(mask, m_stay) & mask);
            }
        }
        if (!weighted) { to = (double)n_to; stay = (double)n_stay; }
        any_first = __any_sync(mask, any_first);
    }
    if (lane == 0) {
        w_to[u] = to;
        w_stay[u] = stay;
        if (has_blocked) blocked[u] = any_first;
    }
}

// A block per piece of a row of more than ROW_DEG arcs whose vertex proposes: the piece's sums (counts where
// unweighted) reduced in the block and added to its row's with one atomic each; blocked set where a neighbour is
// first.
extern "C" __global__ void __launch_bounds__(BLOCK)
commit_pieces(const i64* __restrict__ piece_row, const i64* __restrict__ piece_begin, const i64* __restrict__ indptr,
              const idx_t* __restrict__ indices, const double* __restrict__ w, int weighted,
              const i64* __restrict__ p, const lab_t* __restrict__ t, const lab_t* __restrict__ c,
              double* __restrict__ w_to, double* __restrict__ w_stay, bool* __restrict__ blocked, int has_blocked) {
    __shared__ double s_to[BLOCK / 32], s_stay[BLOCK / 32];
    __shared__ int s_first[BLOCK / 32];
    const i64 u = piece_row[blockIdx.x];
    const i64 pu = p[u];
    if (pu < 0) return;  // block-uniform
    const i64 tu = (i64)t[u], cu = (i64)c[u];
    const i64 begin = piece_begin[blockIdx.x];
    const i64 end = min(begin + (i64)PIECE, indptr[u + 1]);
    double to = 0.0, stay = 0.0;
    int any_first = 0;
    for (i64 e = begin + threadIdx.x; e < end; e += BLOCK) {
        bool m_to, m_stay, first;
        commit_arc((i64)indices[e], pu, tu, cu, p, t, c, m_to, m_stay, first);
        const double x = weighted ? w[e] : 1.0;
        if (m_to) to += x;
        if (m_stay) stay += x;
        any_first |= (int)first;
    }
    for (int d = 16; d > 0; d >>= 1) {
        to += __shfl_xor_sync(FULL, to, d);
        stay += __shfl_xor_sync(FULL, stay, d);
        any_first |= __shfl_xor_sync(FULL, any_first, d);
    }
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { s_to[wid] = to; s_stay[wid] = stay; s_first[wid] = any_first; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < BLOCK / 32; ++k) { to += s_to[k]; stay += s_stay[k]; any_first |= s_first[k]; }
        if (to != 0.0) atomicAdd(&w_to[u], to);
        if (stay != 0.0) atomicAdd(&w_stay[u], stay);
        if (has_blocked && any_first) blocked[u] = true;
    }
}
// Louvain's inside weight change over the arcs of the vertices that moved: an arc (u, v) of a moved u adds
// w * ((c[u] == c[v]) - (old[u] == old[v])), twice where v stayed (the reverse arc, which v's row does not count).
// Each thread's share added across the block, one atomic per block into `total`.
__device__ __forceinline__ double inside_arc(i64 e, const idx_t* __restrict__ indices, const double* __restrict__ w,
                                             int weighted, i64 cu, i64 ou, const lab_t* __restrict__ c,
                                             const lab_t* __restrict__ old, const bool* __restrict__ moved) {
    const i64 v = (i64)indices[e];
    double change = (double)((i64)c[v] == cu) - (double)((i64)old[v] == ou);
    if (weighted) change = w[e] * change;
    return moved[v] ? change : change * 2.0;
}

// every thread of the block calls it
__device__ __forceinline__ void block_add(double x, double* __restrict__ total) {
    __shared__ double s_part[BLOCK / 32];
    for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(FULL, x, d);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) s_part[wid] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < BLOCK / 32; ++k) x += s_part[k];
        if (x != 0.0) atomicAdd(total, x);
    }
}

// A group per row of a moved vertex of at most ROW_DEG arcs (the longer ones in inside_pieces)
extern "C" __global__ void __launch_bounds__(BLOCK)
inside_rows(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ w,
            int weighted, const bool* __restrict__ moved, const lab_t* __restrict__ c,
            const lab_t* __restrict__ old, i64 nv, double* __restrict__ total) {
    const int lane = threadIdx.x & (GROUP - 1);
    const i64 u = ((i64)blockIdx.x * BLOCK + threadIdx.x) / GROUP;
    double acc = 0.0;
    if (u < nv && moved[u]) {
        const i64 begin = indptr[u], end = indptr[u + 1];
        if (end - begin <= ROW_DEG) {
            const i64 cu = (i64)c[u], ou = (i64)old[u];
            for (i64 e = begin + lane; e < end; e += GROUP) acc += inside_arc(e, indices, w, weighted, cu, ou, c, old,
                                                                              moved);
        }
    }
    block_add(acc, total);
}

// A block per piece of a row of more than ROW_DEG arcs whose vertex moved
extern "C" __global__ void __launch_bounds__(BLOCK)
inside_pieces(const i64* __restrict__ piece_row, const i64* __restrict__ piece_begin, const i64* __restrict__ indptr,
              const idx_t* __restrict__ indices, const double* __restrict__ w, int weighted,
              const bool* __restrict__ moved, const lab_t* __restrict__ c, const lab_t* __restrict__ old,
              double* __restrict__ total) {
    const i64 u = piece_row[blockIdx.x];
    if (!moved[u]) return;  // block-uniform
    const i64 cu = (i64)c[u], ou = (i64)old[u];
    const i64 begin = piece_begin[blockIdx.x];
    const i64 end = min(begin + (i64)PIECE, indptr[u + 1]);
    double acc = 0.0;
    for (i64 e = begin + threadIdx.x; e < end; e += BLOCK) acc += inside_arc(e, indices, w, weighted, cu, ou, c, old,
                                                                             moved);
    block_add(acc, total);
}
"""


def source(idx_ctype: str, lab_ctype: str) -> str:
    """The module's CUDA source: the prelude's ``idx_t`` (the graph's indices) as ``idx_ctype``, the labels'
    ``lab_t`` as ``lab_ctype``."""
    return (f"#define IDX_T {idx_ctype}\n#define LAB_T {lab_ctype}\n#define GROUP {GROUP}\n#define ROW_DEG {ROW_DEG}\n"
            f"#define PIECE {PIECE}\n#define BLOCK {BLOCK}\n" + PRELUDE + KERNELS)


_function = cuda.kernel_lookup(source)  # ((id dtype, label dtype), device, name) -> a kernel of this module


class Pieces:
    """A graph's rows of more than ``ROW_DEG`` arcs cut into pieces of ``PIECE`` arcs (each piece's row and first
    arc), found once: its degrees are fixed."""

    def __init__(self, graph):
        self.indptr = cp.ascontiguousarray(graph.indptr.astype(np.int64, copy=False))
        deg = self.indptr[1:] - self.indptr[:-1]
        long = cp.flatnonzero(deg > ROW_DEG)
        count = -(-deg[long] // PIECE)
        offs = cp.zeros(long.shape[0] + 1, dtype=np.int64)
        cp.cumsum(count, out=offs[1:])
        total = int(offs[-1])
        pos = cp.arange(total, dtype=np.int64)
        k = cp.searchsorted(offs, pos, side="right") - 1
        self.row = long[k]
        self.begin = self.indptr[self.row] + (pos - offs[k]) * PIECE
        del pos, k


_PIECES = weakref.WeakKeyDictionary()  # graph -> Pieces


def pieces_of(graph):
    """The graph's :class:`Pieces`, made on its first call (a host read) and kept while the graph lives."""
    kept = _PIECES.get(graph)
    if kept is None:
        kept = _PIECES[graph] = Pieces(graph)
    return kept


def _labels(*arrays):
    """The label arrays contiguous in one dtype the kernels take (int32 or int64)."""
    dt = np.result_type(*(a.dtype for a in arrays))
    if dt not in cuda.ID_CTYPES:
        dt = np.dtype(np.int64)
    return [cp.ascontiguousarray(a.astype(dt, copy=False)) for a in arrays], np.dtype(dt)


def unsettled_rows(graph, moved, priority):
    """ops.unsettled_rows on a whole undirected graph on one GPU (its docstring has the rules)."""
    nv = graph.num_vertices
    look = cp.empty(nv, dtype=np.bool_)
    if nv == 0:
        return look
    pieces = pieces_of(graph)
    idx = np.dtype(graph.indices.dtype)
    device = look.device.id
    moved = cp.ascontiguousarray(moved.astype(np.bool_, copy=False))
    priority = cp.ascontiguousarray(priority.astype(np.int64, copy=False))
    lab = np.dtype(np.int32)  # the module's labels are unused here
    _function((idx, lab), device, "unsettled_rows")(cuda.blocks(nv * GROUP, BLOCK), (BLOCK,),
                                                (pieces.indptr, graph.indices, moved, priority, np.int64(nv), look))
    if pieces.row.shape[0]:
        _function((idx, lab), device, "unsettled_pieces")((int(pieces.row.shape[0]),), (BLOCK,),
                                                      (pieces.row, pieces.begin, pieces.indptr, graph.indices, moved,
                                                       look))
    return look


def commit_sums(graph, priority, target, community, blocked=False):
    """ops.commit_sums on a whole undirected graph on one GPU (its docstring has the rules)."""
    nv = graph.num_vertices
    w_to, w_stay = cp.empty(nv), cp.empty(nv)
    held = cp.empty(nv, dtype=np.bool_) if blocked else None
    if nv == 0:
        return w_to, w_stay, held
    pieces = pieces_of(graph)
    idx = np.dtype(graph.indices.dtype)
    (t, c), lab = _labels(target, community)
    device = w_to.device.id
    p = cp.ascontiguousarray(priority.astype(np.int64, copy=False))
    weighted = graph.weights is not None
    w = cp.ascontiguousarray(graph.weights.astype(np.float64, copy=False)) if weighted else cuda.dummy(np.float64)
    out = (w_to, w_stay, held if blocked else cuda.dummy(np.bool_), np.int32(blocked))
    _function((idx, lab), device, "commit_rows")(cuda.blocks(nv * GROUP, BLOCK), (BLOCK,),
                                             (pieces.indptr, graph.indices, w, np.int32(weighted), p, t, c,
                                              np.int64(nv), *out))
    if pieces.row.shape[0]:
        _function((idx, lab), device, "commit_pieces")((int(pieces.row.shape[0]),), (BLOCK,),
                                                   (pieces.row, pieces.begin, pieces.indptr, graph.indices, w,
                                                    np.int32(weighted), p, t, c, *out))
    return w_to, w_stay, held


def inside_change(graph, moved, community, old):
    """ops.inside_change on a whole undirected graph on one GPU (its docstring has the rules): a 0-d array."""
    total = cp.zeros((), dtype=np.float64)
    nv = graph.num_vertices
    if nv == 0:
        return total
    pieces = pieces_of(graph)
    idx = np.dtype(graph.indices.dtype)
    (c, o), lab = _labels(community, old)
    device = total.device.id
    moved = cp.ascontiguousarray(moved.astype(np.bool_, copy=False))
    weighted = graph.weights is not None
    w = cp.ascontiguousarray(graph.weights.astype(np.float64, copy=False)) if weighted else cuda.dummy(np.float64)
    _function((idx, lab), device, "inside_rows")(cuda.blocks(nv * GROUP, BLOCK), (BLOCK,),
                                                 (pieces.indptr, graph.indices, w, np.int32(weighted), moved, c, o,
                                                  np.int64(nv), total))
    if pieces.row.shape[0]:
        _function((idx, lab), device, "inside_pieces")((int(pieces.row.shape[0]),), (BLOCK,),
                                                       (pieces.row, pieces.begin, pieces.indptr, graph.indices, w,
                                                        np.int32(weighted), moved, c, o, total))
    return total

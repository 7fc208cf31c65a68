"""CUDA source of the operators' kernels, compiled by :mod:`.cupy_ops` once per vertex-id type.

Every push advance is one load-balanced kernel (Gunrock's LB, Merrill's
"scan + search"): thread i takes the i-th arc of the frontier's neighbour
lists, found by a binary search in the exclusive scan of frontier degrees that
the block first narrows to its own range.  The functor that follows (visit,
relax, count paths, ...) is fused into the same kernel and appends its output
vertices with one atomic per block (``block_append``), so an advance+filter is one launch.

The exchange's kernels (split, pack, merge: :mod:`mgraph.comm.cupy_kernels`)
compile in modules of their own on top of the same :data:`PRELUDE`.
"""

from mgraph.ops.functors import BUILTIN

ITEMS = 8  # arcs per thread in a push advance
SCAN_ITEMS = 4  # frontier vertices per thread in frontier_offsets_small
SCAN_BLOCK = 1024  # its one block: frontiers of up to SCAN_ITEMS * SCAN_BLOCK vertices
PULL_UNROLL = 4  # strides of a row whose gathers a lane of pull_sum issues before it adds (lane_arc_sum)
CHUNK_UNROLL = 4  # the same for a lane of pull_sum_chunks, in a heavy row's pieces
PULL_BLOCK = 256  # threads per block of pull_sum's launches (cuda.BLOCK)
# pull_sum's blocks resident per SM that ptxas must allow (__launch_bounds__), by id type: the unrolled gathers
# took 34 / 44 registers, which would cost a quarter / three eighths of the warps; 8 blocks fit 32 registers
# without spills for int ids, 6 fit 40 for long long ids (7 spill)
PULL_MIN_BLOCKS = {"int": 8, "long long": 6}
ADVANCE_BLOCK = 256  # threads per block of a push advance (cuda.BLOCK)
# the built-in advances' blocks resident per SM (__launch_bounds__): 32 registers for int ids, 40 for long long,
# what they took before the tile starts added a live value; at 34 the Brandes backward step lost a quarter
# of its warps (docs/perf-notes.md).  A user's functor gets no minimum: its body may need more registers.
ADVANCE_MIN_BLOCKS = {"int": 8, "long long": 6}

PRELUDE = r"""
typedef IDX_T idx_t;
typedef long long i64;
typedef unsigned long long u64;

// largest k in [lo, hi] with offs[k] <= i  (offs is non-decreasing)
__device__ __forceinline__ i64 lb_search(const i64* __restrict__ offs, i64 lo, i64 hi, i64 i) {
    while (lo < hi) {
        i64 mid = (lo + hi + 1) >> 1;
        if (offs[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// Append, for every thread of the block, the values vals[j] whose bit j of `hits` is set, to out[], with one
// atomic per block: a warp scan of the per-thread counts, the warps' totals scanned in shared memory, and
// thread 0 reserving the block's range.  A counter every thread of a grid hits once per warp serialises
// millions of same-address atomics, which run one after another: a merge or an advance emitting millions
// of vertices would wait on that one counter (docs/perf-notes.md).
// Every thread of the block must call it (it synchronises the block).
template <typename T, int N>
__device__ __forceinline__ void block_append(const T (&vals)[N], unsigned hits, T* __restrict__ out,
                                             u64* __restrict__ count) {
    __shared__ u64 s_warp[32];
    __shared__ u64 s_base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n = __popc(hits);
    int x = n;  // inclusive scan over the warp
    for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    __syncthreads();  // a previous call's readers are done with s_warp
    if (lane == 31) s_warp[warp] = (u64)x;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 sum = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) { const u64 c = s_warp[w]; s_warp[w] = sum; sum += c; }
        s_base = sum ? atomicAdd(count, sum) : 0;
    }
    __syncthreads();
    u64 pos = s_base + s_warp[warp] + (u64)(x - n);
#pragma unroll
    for (int j = 0; j < N; ++j)
        if ((hits >> j) & 1u) out[pos++] = vals[j];
}

// *total += the sum of x over the block, one atomic per block (every thread must call it)
__device__ __forceinline__ void block_add(unsigned x, u64* __restrict__ total) {
    __shared__ u64 s_sum;
    for (int d = 16; d > 0; d >>= 1) x += __shfl_down_sync(0xffffffffu, x, d);
    __syncthreads();
    if (threadIdx.x == 0) s_sum = 0;
    __syncthreads();
    if ((threadIdx.x & 31) == 0 && x) atomicAdd(&s_sum, (u64)x);
    __syncthreads();
    if (threadIdx.x == 0 && s_sum) atomicAdd(total, s_sum);
}

__device__ __forceinline__ i64 find_root(i64* parent, i64 x) {
    i64 p = parent[x];
    while (p != x) {
        i64 gp = parent[p];
        if (gp != p) parent[x] = gp;  // path halving; parents only ever decrease, so races are benign
        x = p;
        p = gp;
    }
    return x;
}

// union-find: hook the larger of the two roots of u and v under the smaller, lock-free (a failed CAS means the
// root moved: chase both again), so every root ends as the smallest id of its tree
__device__ __forceinline__ void hook_pair(i64* parent, i64 u, i64 v) {
    i64 ru = find_root(parent, u), rv = find_root(parent, v);
    while (ru != rv) {
        if (ru > rv) { i64 t = ru; ru = rv; rv = t; }
        const i64 old = (i64)atomicCAS((u64*)&parent[rv], (u64)rv, (u64)ru);
        if (old == rv) break;
        ru = find_root(parent, ru);
        rv = find_root(parent, old);
    }
}

__device__ __forceinline__ bool bit_is_set(const unsigned* __restrict__ bits, i64 v) {
    return (bits[v >> 5] >> (v & 31)) & 1u;
}

// v combined by op over the lanes of `peers` (this lane among them, every lane of the warp calling): a butterfly
// where the whole warp is one group, else in lane order.  The lanes whose entries land on one slot (grouped by
// __match_any_sync) combine before one of them does the atomic: atomics on one address run one after another.
template <typename T, typename Op>
__device__ __forceinline__ T warp_combine(T v, unsigned peers, Op op) {
    if (peers == 0xffffffffu) {
        for (int d = 16; d > 0; d >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, d));
        return v;
    }
    T acc = v;
    bool first = true;
    for (int j = 0; j < 32; ++j) {
        const T y = __shfl_sync(0xffffffffu, v, j);
        if ((peers >> j) & 1u) { acc = first ? y : op(acc, y); first = false; }
    }
    return acc;
}
struct WarpAdd { __device__ double operator()(double a, double b) const { return a + b; } };
struct WarpMax { __device__ i64 operator()(i64 a, i64 b) const { return a > b ? a : b; } };
struct WarpMin { __device__ i64 operator()(i64 a, i64 b) const { return a < b ? a : b; } };
"""

# One push advance: frontier (or all vertices when has_frontier == 0) -> functor -> appended output.
# A block takes a tile of blockDim * ITEMS consecutive arcs: the two searches that bound the tile cost
# a chain of dependent loads, so a tile several times the block amortises them (and each thread's own
# search starts from its previous vertex).  The frontier's arcs (offs[n_front]) are read here: the host
# may size the grid from a bound without reading them, and the blocks past the last tile return.
ADVANCE = r"""
extern "C" __global__ void {bounds} advance_{name}(
    const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
    const double* __restrict__ weights, int has_weights,
    const idx_t* __restrict__ frontier, int has_frontier, const i64* __restrict__ offs,
    const i64* __restrict__ starts, i64 n_front, idx_t* __restrict__ out, u64* __restrict__ out_count{params})
{{
    __shared__ i64 s_lo, s_hi;
    const i64 tile = (i64)blockDim.x * ITEMS;
    const i64 first = (i64)blockIdx.x * tile;
    const i64 total = offs[n_front];
    if (first >= total) return;
    i64 k, k_hi;
    if (starts != nullptr) {{  // the tiles' first entries, searched by tile_starts beforehand
        k = starts[blockIdx.x];
        k_hi = starts[blockIdx.x + 1];
    }} else {{
        if (threadIdx.x == 0) s_lo = lb_search(offs, 0, n_front - 1, first);
        if (threadIdx.x == 1) s_hi = lb_search(offs, 0, n_front - 1, min(first + tile, total) - 1);
        __syncthreads();
        k = s_lo;
        k_hi = s_hi;
    }}
{declare}
    for (int item = 0; item < ITEMS; ++item) {{
        const i64 i = first + (i64)item * blockDim.x + threadIdx.x;
        bool emit = false;
        idx_t v = 0;
        if (i < total) {{
            k = lb_search(offs, k, k_hi, i);
            const idx_t u = has_frontier ? frontier[k] : (idx_t)k;
            const i64 e = indptr[u] + (i - offs[k]);
            v = indices[e];
            const double w = has_weights ? weights[e] : 1.0;
            (void)w;
{body}
        }}
{collect}
    }}
{finish}
}}
"""

# The built-in functors' bodies (mgraph.ops.functors), compiled together into the one shared module
FUNCTORS = {f.name: (f.signature, f.cuda) for f in BUILTIN.values()}

OTHERS = r"""
// For each pair (a[k], b[k]), how many column ids their rows share (rows sorted): the shorter row's ids are
// looked up in the longer by binary search, each search starting where the previous one ended.
extern "C" __global__ void intersect_count(const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
                                           const idx_t* __restrict__ a, const idx_t* __restrict__ b, i64 n,
                                           long long* __restrict__ out) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    i64 xs = indptr[a[k]], xe = indptr[a[k] + 1], ys = indptr[b[k]], ye = indptr[b[k] + 1];
    if (xe - xs > ye - ys) { i64 t = xs; xs = ys; ys = t; t = xe; xe = ye; ye = t; }
    long long c = 0;
    i64 lo = ys;
    for (i64 e = xs; e < xe && lo < ye; ++e) {
        const idx_t want = indices[e];
        i64 l = lo, h = ye;
        while (l < h) { const i64 m = (l + h) >> 1; if (indices[m] < want) l = m + 1; else h = m; }
        if (l < ye && indices[l] == want) { ++c; lo = l + 1; } else lo = l;
    }
    out[k] = c;
}

// The smallest and largest of n ids (out[0], out[1]), by one block: the contract's bounds check of a small
// frontier in one launch and one read, where two library reductions, a stack and a read cost several times
// the superstep of a one-vertex frontier (docs/perf-notes.md).
extern "C" __global__ void id_range(const idx_t* __restrict__ ids, i64 n, i64* __restrict__ out) {
    __shared__ i64 s_lo[32], s_hi[32];
    const i64 biggest = 0x7fffffffffffffffLL, smallest = -0x7fffffffffffffffLL - 1;
    i64 lo = biggest, hi = smallest;
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
        const i64 v = (i64)ids[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const i64 a = __shfl_down_sync(0xffffffffu, lo, o), b = __shfl_down_sync(0xffffffffu, hi, o);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    if (lane == 0) { s_lo[warp] = lo; s_hi[warp] = hi; }
    __syncthreads();
    if (warp == 0) {
        lo = lane < warps ? s_lo[lane] : biggest;
        hi = lane < warps ? s_hi[lane] : smallest;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const i64 a = __shfl_down_sync(0xffffffffu, lo, o), b = __shfl_down_sync(0xffffffffu, hi, o);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
        if (lane == 0) { out[0] = lo; out[1] = hi; }
    }
}

// The frontier entry holding the first arc of each tile of a push advance (starts[b] for tile b, and
// starts[n_tiles] = n_front - 1, the bound of the last tile's searches): one thread per tile.  A large
// advance's blocks otherwise each began with two binary searches over the frontier's offsets, a chain of
// dependent loads that every warp of the block waited for at a barrier (docs/perf-notes.md).
extern "C" __global__ void tile_starts(const i64* __restrict__ offs, i64 n_front, i64 tile, i64 n_tiles,
                                       i64* __restrict__ starts) {
    const i64 b = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b > n_tiles) return;
    const i64 total = offs[n_front];
    starts[b] = b == n_tiles || b * tile >= total ? n_front - 1 : lb_search(offs, 0, n_front - 1, b * tile);
}

extern "C" __global__ void frontier_degrees(const i64* __restrict__ indptr, const idx_t* __restrict__ frontier,
                                            i64 n_front, i64* __restrict__ offs) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k == 0) offs[0] = 0;
    if (k < n_front) { const idx_t u = frontier[k]; offs[k + 1] = indptr[u + 1] - indptr[u]; }
}

// The same offsets for a frontier of at most blockDim.x * SCAN_ITEMS vertices, scanned in one block, with the
// advance's output counter zeroed: one launch where the degrees, a library scan and a fill took several
// (a superstep of a small frontier is bound by launches, docs/perf-notes.md).
extern "C" __global__ void frontier_offsets_small(const i64* __restrict__ indptr, const idx_t* __restrict__ frontier,
                                                  i64 n_front, i64* __restrict__ offs, u64* __restrict__ count) {
    __shared__ i64 s_warp[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    i64 deg[SCAN_ITEMS], sum = 0;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const i64 k = (i64)threadIdx.x * SCAN_ITEMS + j;
        deg[j] = 0;
        if (k < n_front) { const idx_t u = frontier[k]; deg[j] = indptr[u + 1] - indptr[u]; }
        sum += deg[j];
    }
    i64 x = sum;  // inclusive scan over the warp
    for (int d = 1; d < 32; d <<= 1) {
        const i64 y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    if (warp == 0) {  // inclusive scan of the warps' totals
        i64 w = lane < (int)(blockDim.x >> 5) ? s_warp[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const i64 y = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w += y;
        }
        s_warp[lane] = w;
    }
    __syncthreads();
    i64 at = (warp ? s_warp[warp - 1] : 0) + x - sum;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        const i64 k = (i64)threadIdx.x * SCAN_ITEMS + j;
        if (k < n_front) { at += deg[j]; offs[k + 1] = at; }
    }
    if (threadIdx.x == 0) { offs[0] = 0; count[0] = 0; }
}

// SSSP's tree in one pass, where every weight is positive: each reached row v without a predecessor takes the
// in-neighbour u of its first tight in-arc (dist[u] + w == dist[v]).  A warp per row strides its in-arcs and
// stops at the first stride holding a tight arc, taking its lowest lane: the first tight arc of the row, the
// same every run.  Positive weights make dist fall strictly along every tight arc, so the predecessors form a
// tree rooted at the source (the last relaxation of each vertex was along one of these arcs).
extern "C" __global__ void tight_predecessors(const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices,
                                              const double* __restrict__ rweights, int has_weights,
                                              const double* __restrict__ dist, idx_t* __restrict__ pred, i64 n) {
    const i64 v = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (v >= n) return;  // whole warps leave together
    const double dv = dist[v];
    if (!(dv < __longlong_as_double(0x7ff0000000000000LL)) || pred[v] != (idx_t)-1) return;  // unreached (inf), or set
    const i64 begin = rindptr[v], end = rindptr[v + 1];
    for (i64 e0 = begin; e0 < end; e0 += 32) {
        const i64 e = e0 + lane;
        bool tight = false;
        idx_t u = 0;
        if (e < end) {
            u = rindices[e];
            tight = dist[u] + (has_weights ? rweights[e] : 1.0) == dv;
        }
        const unsigned hits = __ballot_sync(0xffffffffu, tight);
        if (hits) {
            if (lane == __ffs(hits) - 1) pred[v] = u;
            return;
        }
    }
}

// bottom-up BFS: each unvisited vertex takes its first in-neighbour in the frontier, then stops
extern "C" __global__ void visit_pull(const i64* __restrict__ rindptr, const idx_t* __restrict__ rindices,
                                      int* __restrict__ label, idx_t* __restrict__ pred, int level,
                                      const unsigned* __restrict__ bits, i64 n,
                                      idx_t* __restrict__ out, u64* __restrict__ out_count) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool emit = false;
    if (v < n && label[v] == -1) {
        const i64 end = rindptr[v + 1];
        for (i64 e = rindptr[v]; e < end; ++e) {
            const idx_t u = rindices[e];
            if (bit_is_set(bits, u)) { label[v] = level; pred[v] = u; emit = true; break; }
        }
    }
    const idx_t got[1] = {(idx_t)v};
    block_append(got, emit ? 1u : 0u, out, out_count);
}

// bit v of each vertex v, or with a table bit table[v] - base where table[v] is not -1
extern "C" __global__ void set_bits(const idx_t* __restrict__ vertices, i64 count, const idx_t* __restrict__ table,
                                    i64 base, unsigned* __restrict__ bits) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    i64 v = vertices[k];
    if (table != nullptr) {
        v = table[v];
        if (v < 0) return;
        v -= base;
    }
    atomicOr(&bits[v >> 5], 1u << (v & 31));
}

// A warp's lanes' values added up (lane 0 gets the sum)
__device__ __forceinline__ double warp_sum(double s) {
    for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
    return s;
}

// A block's threads' values added up in a fixed order (thread 0 gets the sum): each warp's by shuffles, then the
// warps' sums in warp order.  Every thread of the block must call it; blockDim.x is a multiple of 32.
__device__ __forceinline__ double block_sum(double s) {
    __shared__ double s_part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    s = warp_sum(s);
    if (lane == 0) s_part[warp] = s;
    __syncthreads();
    s = 0.0;
    if (warp == 0) {
        if (lane < (int)(blockDim.x >> 5)) s = s_part[lane];
        s = warp_sum(s);
    }
    return s;
}

// One lane's share of a row's sum of x[u] * w: the arcs begin + lane, + width, + 2 width, ... below end, added in
// that order.  UNROLL strides at a time: the lane issues their index loads, then their x loads (each a likely
// miss), then adds, so that UNROLL gathers are in flight where a plain loop waited on one at a time.  A stride
// past the end adds an exact 0, so the sum is the plain loop's, the same every run.
template <int UNROLL, typename X>
__device__ __forceinline__ double lane_arc_sum(const idx_t* __restrict__ indices, const double* __restrict__ weights,
                                               int has_weights, const X* __restrict__ x, i64 begin, i64 end,
                                               int lane, int width) {
    double s = 0.0;
    for (i64 e = begin + lane; e < end; e += (i64)UNROLL * width) {
        idx_t u[UNROLL];
        double v[UNROLL];
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) {
            const i64 f = e + (i64)j * width;
            u[j] = f < end ? indices[f] : (idx_t)0;
        }
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) v[j] = e + (i64)j * width < end ? (double)x[u[j]] : 0.0;
        if (has_weights) {
#pragma unroll
            for (int j = 0; j < UNROLL; ++j) {
                const i64 f = e + (i64)j * width;
                if (f < end) v[j] *= weights[f];
            }
        }
#pragma unroll
        for (int j = 0; j < UNROLL; ++j) s += v[j];
    }
    return s;
}

// The sum of x[u] * w over the arcs [begin, end), a warp's lanes striding them (coalesced); lane 0 gets it
template <typename X>
__device__ __forceinline__ double warp_arc_sum(const idx_t* __restrict__ indices, const double* __restrict__ weights,
                                               int has_weights, const X* __restrict__ x, i64 begin, i64 end) {
    return warp_sum(lane_arc_sum<CHUNK_UNROLL>(indices, weights, has_weights, x, begin, end, threadIdx.x & 31, 32));
}

// pull_sum's epilogue: scale * s + shift, shift read from the device where shift_at is not null (a value the
// host has not read, PageRank's dangling mass).  Rounded after the product and after the sum (no fused
// multiply-add), as the NumPy twin computes it.
__device__ __forceinline__ double scale_shift(double s, double scale, const double* __restrict__ shift_at,
                                              double shift) {
    return __dadd_rn(__dmul_rn(scale, s), shift_at != nullptr ? *shift_at : shift);
}

// PageRank's SpMV, y[row] = scale * (sum of x[u] * w over the row's arcs) + shift: a group of 2^lanes_log2 lanes
// per row, sized by the mean degree, since a warp per row leaves most lanes idle on a power-law graph's many
// short rows.  The group strides the row (coalesced) and sums by shuffles within its width; every lane reaches
// the shuffles (a lane past the last row adds 0), as __shfl_down_sync requires.  A row of more than `heavy` arcs
// (heavy > 0) is skipped here: one group would walk an R-MAT hub's ~10^6 arcs alone, long after the rest of the
// grid, and only on the part that owns it; pull_sum_chunks and pull_sum_heavy sum those rows in fixed-size
// pieces instead (the same order every run).
// X is the type of x: double, or float for PageRank's float32 shares (half the bytes gathered; each term is
// widened and summed in double).
template <typename X>
__device__ __forceinline__ void
pull_rows(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ weights,
          int has_weights, const X* __restrict__ x, double* __restrict__ y, i64 n, i64 heavy, int lanes_log2,
          double scale, const double* __restrict__ shift_at, double shift) {
    const int width = 1 << lanes_log2, lane = threadIdx.x & (width - 1);
    const i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> lanes_log2;
    bool mine = row < n;
    i64 begin = 0, end = 0;
    if (mine) {
        begin = indptr[row];
        end = indptr[row + 1];
        mine = !(heavy > 0 && end - begin > heavy);
    }
    double s = mine ? lane_arc_sum<PULL_UNROLL>(indices, weights, has_weights, x, begin, end, lane, width) : 0.0;
    for (int d = width >> 1; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d, width);
    if (mine && lane == 0) y[row] = scale_shift(s, scale, shift_at, shift);
}

extern "C" __global__ void __launch_bounds__(PULL_BLOCK, PULL_MIN_BLOCKS)
pull_sum(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ weights,
         int has_weights, const double* __restrict__ x, double* __restrict__ y, i64 n, i64 heavy, int lanes_log2,
         double scale, const double* __restrict__ shift_at, double shift) {
    pull_rows(indptr, indices, weights, has_weights, x, y, n, heavy, lanes_log2, scale, shift_at, shift);
}

extern "C" __global__ void __launch_bounds__(PULL_BLOCK, PULL_MIN_BLOCKS)
pull_sum_f32(const i64* __restrict__ indptr, const idx_t* __restrict__ indices, const double* __restrict__ weights,
             int has_weights, const float* __restrict__ x, double* __restrict__ y, i64 n, i64 heavy, int lanes_log2,
             double scale, const double* __restrict__ shift_at, double shift) {
    pull_rows(indptr, indices, weights, has_weights, x, y, n, heavy, lanes_log2, scale, shift_at, shift);
}

// A warp per piece [begin[c], end[c]) of a heavy row's arcs: its sum in partial[c].
template <typename X>
__device__ __forceinline__ void chunk_sums(const idx_t* __restrict__ indices, const double* __restrict__ weights,
                                           int has_weights, const X* __restrict__ x, const i64* __restrict__ begin,
                                           const i64* __restrict__ end, double* __restrict__ partial, i64 n) {
    const i64 c = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (c >= n) return;
    const double s = warp_arc_sum(indices, weights, has_weights, x, begin[c], end[c]);
    if ((threadIdx.x & 31) == 0) partial[c] = s;
}

extern "C" __global__ void pull_sum_chunks(const idx_t* __restrict__ indices, const double* __restrict__ weights,
                                           int has_weights, const double* __restrict__ x,
                                           const i64* __restrict__ begin, const i64* __restrict__ end,
                                           double* __restrict__ partial, i64 n) {
    chunk_sums(indices, weights, has_weights, x, begin, end, partial, n);
}

extern "C" __global__ void pull_sum_chunks_f32(const idx_t* __restrict__ indices, const double* __restrict__ weights,
                                               int has_weights, const float* __restrict__ x,
                                               const i64* __restrict__ begin, const i64* __restrict__ end,
                                               double* __restrict__ partial, i64 n) {
    chunk_sums(indices, weights, has_weights, x, begin, end, partial, n);
}

// A warp per heavy row rows[h]: scale * (the sum of its pieces' partial[first[h] .. first[h + 1])) + shift.
extern "C" __global__ void pull_sum_heavy(const i64* __restrict__ rows, const i64* __restrict__ first,
                                          const double* __restrict__ partial, double* __restrict__ y, i64 n,
                                          double scale, const double* __restrict__ shift_at, double shift) {
    const i64 h = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (h >= n) return;
    double s = 0.0;
    for (i64 c = first[h] + (threadIdx.x & 31); c < first[h + 1]; c += 32) s += partial[c];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) y[rows[h]] = scale_shift(s, scale, shift_at, shift);
}

// l1_distance's first pass: partial[block] = the sum of |a[i] - b[i]| over the block's i < n.  Thread t of the
// grid takes i = t, t + stride, t + 2 stride, ... (stride: the grid's threads) in that order, four at a time so
// that eight loads are in flight; the host sizes the grid from n alone, so the order is the same every run.
extern "C" __global__ void l1_partial(const double* __restrict__ a, const double* __restrict__ b, i64 n,
                                      double* __restrict__ partial) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const double a0 = a[i], a1 = a[i + stride], a2 = a[i + 2 * stride], a3 = a[i + 3 * stride];
        const double b0 = b[i], b1 = b[i + stride], b2 = b[i + 2 * stride], b3 = b[i + 3 * stride];
        s += fabs(a0 - b0);
        s += fabs(a1 - b1);
        s += fabs(a2 - b2);
        s += fabs(a3 - b3);
    }
    for (; i < n; i += stride) s += fabs(a[i] - b[i]);
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// l1_distance's second pass: out[0] = the sum of partial[0, n), one block, in a fixed order.
extern "C" __global__ void sum_partials(const double* __restrict__ partial, i64 n, double* __restrict__ out) {
    double s = 0.0;
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) s += partial[i];
    s = block_sum(s);
    if (threadIdx.x == 0) out[0] = s;
}

// how many of ids[0, n) device `me` owns: ids below own_below where own vertices are a prefix of the numbering
// (own_below >= 0), else by owner[]; ITEMS entries per thread, blockDim apart, one atomic per block
extern "C" __global__ void count_own(const idx_t* __restrict__ ids, i64 n, const int* __restrict__ owner, int me,
                                     i64 own_below, u64* __restrict__ count) {
    unsigned own = 0;
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;
        if (i < n) {
            const idx_t v = ids[i];
            own += own_below >= 0 ? v < own_below : owner[v] == me;
        }
    }
    block_add(own, count);
}

// out[seg[i]] = min(out[seg[i]], val[i]), out starting as a copy of its initial values: the smallest label
// of each union-find tree.  Reading before the atomic skips it for all but the few values that lower the
// minimum, so a giant component does not serialise every vertex on its root's address.
extern "C" __global__ void segment_min(const i64* __restrict__ seg, const i64* __restrict__ val, i64 n,
                                      i64* __restrict__ out) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && val[i] < out[seg[i]]) atomicMin((long long*)&out[seg[i]], (long long)val[i]);
}

// CC's spread, first pass: each tree's minimum (tree_min at its root) lowered by the labels of the vertices `ids`
// (every vertex where has_ids is 0), read before the atomic as segment_min does; *lowered set where any was.
extern "C" __global__ void tree_lower(const i64* __restrict__ parent, const i64* __restrict__ label,
                                      const idx_t* __restrict__ ids, int has_ids, i64 n,
                                      i64* __restrict__ tree_min, u64* lowered) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool low = false;
    if (i < n) {
        const i64 v = has_ids ? (i64)ids[i] : i;
        const i64 r = parent[v], l = label[v];
        low = l < tree_min[r];
        if (low) atomicMin((long long*)&tree_min[r], (long long)l);
    }
    // one store per warp, and none once set: every thread that lowers writing one word would queue on it
    if (__ballot_sync(0xffffffffu, low) && (threadIdx.x & 31) == 0 && *(volatile u64*)lowered == 0) *lowered = 1;
}

// Second pass: every vertex whose tree's minimum is below its label takes it and, where `emit`, is appended to out
// (a whole graph's spread has no output: no other device holds its vertices).  After a spread every tree's labels
// are its minimum, so where the first pass of the next (`since` 1) lowered no minimum no label is above its tree's:
// the blocks return at once (a superstep after the last change costs a launch).
extern "C" __global__ void tree_spread(const i64* __restrict__ parent, i64* __restrict__ label,
                                       const i64* __restrict__ tree_min, i64 n, idx_t* __restrict__ out,
                                       u64* __restrict__ out_count, const u64* __restrict__ lowered, int since,
                                       int emit) {
    if (since && *lowered == 0) return;  // the same for every thread of the block, before its syncs
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool dropped = false;
    if (v < n) {
        const i64 m = tree_min[parent[v]];
        if (m < label[v]) { label[v] = m; dropped = true; }
    }
    if (!emit) return;  // the same for every thread of the launch, before block_append's syncs
    const idx_t got[1] = {(idx_t)v};
    block_append(got, dropped ? 1u : 0u, out, out_count);
}

// Sampled union-find (Afforest): a group of 2^lanes_log2 lanes per row u hooks u with the arcs at positions
// [lo, hi) of its row (hi < 0: to its end), skipping the rows marked in `skipped` (not null): the largest
// tree's, whose arcs to other trees are hooked from their other end.  The marks are taken before the launch,
// since a row may join that tree while this kernel hooks.  Most rows of a power-law graph are then either
// skipped or hook one or two arcs, where hooking every arc chased both roots of each.
extern "C" __global__ void hook_rows(const i64* __restrict__ indptr, const idx_t* __restrict__ indices,
                                     i64* __restrict__ parent, i64 n, i64 lo, i64 hi,
                                     const bool* __restrict__ skipped, int lanes_log2) {
    const i64 row = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> lanes_log2;
    if (row >= n || (skipped != nullptr && skipped[row])) return;
    const i64 start = indptr[row], stop = indptr[row + 1];
    const i64 end = hi < 0 ? stop : min(stop, start + hi);
    for (i64 e = start + lo + (threadIdx.x & ((1 << lanes_log2) - 1)); e < end; e += (i64)1 << lanes_log2)
        hook_pair(parent, row, (i64)indices[e]);
}

// a read-only chase: path halving here could overwrite another thread's final root with an ancestor
extern "C" __global__ void compress(i64* __restrict__ parent, i64 n) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    i64 r = parent[v];
    for (i64 p = parent[r]; p != r; p = parent[r]) r = p;
    parent[v] = r;
}
"""


# How an emitting advance collects its output: each thread keeps its tile's hits in registers (the item loop
# unrolled, so got[] is indexed statically) and the block appends them at once.  Functors that never emit
# skip this, but keep a warp reconvergence point per item: without one, the lanes of a warp chasing union-find
# parents (CC's hooks) drift apart over the items and the warp runs their divergent paths one by one.
EMITTING = {
    "declare": "    idx_t got[ITEMS];\n    unsigned hits = 0;\n#pragma unroll",
    "collect": "        got[item] = v;\n        if (emit) hits |= 1u << item;",
    "finish": "    block_append(got, hits, out, out_count);",
}
SILENT = {"declare": "", "collect": "        (void)emit;\n        __syncwarp();", "finish": ""}
NEVER_EMIT = tuple(name for name, f in BUILTIN.items() if not f.emits)


def source(idx_ctype: str) -> str:
    """The whole module for one vertex-id C type ("int" or "long long")."""
    bounds = f"__launch_bounds__({ADVANCE_BLOCK}, {ADVANCE_MIN_BLOCKS[idx_ctype]})"
    advances = "".join(ADVANCE.format(name=name, params=params, body=body, bounds=bounds,
                                      **(SILENT if name in NEVER_EMIT else EMITTING))
                       for name, (params, body) in FUNCTORS.items())
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {ITEMS}\n#define SCAN_ITEMS {SCAN_ITEMS}\n"
            f"#define PULL_UNROLL {PULL_UNROLL}\n#define CHUNK_UNROLL {CHUNK_UNROLL}\n#define PULL_BLOCK {PULL_BLOCK}\n"
            f"#define PULL_MIN_BLOCKS {PULL_MIN_BLOCKS[idx_ctype]}\n" + PRELUDE + advances + OTHERS)


def functor_source(idx_ctype: str, functor) -> str:
    """A module of one user functor's advance (``advance_<name>``), with the prelude's helpers."""
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {ITEMS}\n" + PRELUDE
            + ADVANCE.format(name=functor.name, params=functor.signature, body=functor.cuda,
                             bounds=f"__launch_bounds__({ADVANCE_BLOCK})", **(EMITTING if functor.emits else SILENT)))

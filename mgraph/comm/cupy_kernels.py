"""The exchange's kernels on the GPU: CUDA sources and their launches, same signatures as
:mod:`mgraph.comm.numpy_kernels`.

Three kinds of module, each compiled once per vertex-id type and device (NVRTC
also caches on disk): the fixed kernels (:data:`EXCHANGE`: the split's two
passes, the merge's frontier append, the marks' clearing, the selection of
mapped vertices), the pack and one-tile split_pack per list of value arrays'
item sizes (:func:`pack_source`), and the receive per package layout
(:func:`receive_source`).  All build on the operators' :data:`PRELUDE`
(``block_append``, ``block_add``) and count and read through
:mod:`mgraph.ops.cuda`'s per-thread counters and pinned words, shared with the
operators.  The GPU's order within a package and within a merge's output is any.
"""
from __future__ import annotations

from functools import lru_cache

import cupy as cp
import numpy as np

from mgraph.ops import cuda
from mgraph.ops.cuda import BLOCK
from mgraph.ops.cupy_kernels import ITEMS, PRELUDE
from mgraph.ops.cupy_ops import translate
from mgraph.ops.numpy_ops import Bits

SPLIT_BLOCK = 256  # threads of split_pack's one block (cuda.BLOCK): frontiers of up to ITEMS x this
assert BLOCK == SPLIT_BLOCK  # split_pack's shared arrays hold one launch block's tile
SPLIT_ONE_TILE = BLOCK * ITEMS  # vertices: the split of at most this many is one fused launch

# The exchange's fixed kernels, one module per vertex-id type (:func:`source`)
EXCHANGE = r"""
// frontier merge: append the kept entries of src whose bit in `seen` was clear, once each, setting it.  The
// bitmap is |V|/8 bytes and stays in L2, where an int mark per vertex sent every atomic to DRAM.  With
// `test` == 0 (a part known to hold each vertex once: the device's own frontier) the bits are only set; with
// `seen` null (no vertex can repeat) nothing is marked.
// count[1] counts the appended vertices device `me` owns: ids below own_below where own vertices are a
// prefix of the numbering (own_below >= 0), else by owner[].  ITEMS entries per thread, blockDim apart, so a
// block appends a tile of blockDim * ITEMS with one atomic per counter.
extern "C" __global__ void append_unique(const idx_t* __restrict__ src, const bool* __restrict__ keep, i64 n,
                                         unsigned* __restrict__ seen, int test, const int* __restrict__ owner,
                                         int me, i64 own_below, idx_t* __restrict__ out, u64* __restrict__ count) {
    idx_t got[ITEMS];
    unsigned hits = 0, own = 0;
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;
        got[item] = 0;
        if (i < n && (keep == nullptr || keep[i])) {
            const idx_t v = src[i];
            const unsigned bit = 1u << (v & 31);
            got[item] = v;
            bool fresh = true;
            if (seen == nullptr) {}  // no vertex can repeat: nothing to mark
            else if (test) fresh = !(atomicOr(&seen[v >> 5], bit) & bit);
            else atomicOr(&seen[v >> 5], bit);
            if (fresh) {
                hits |= 1u << item;
                own += own_below >= 0 ? v < own_below : owner[v] == me;
            }
        }
    }
    block_add(own, &count[1]);
    block_append(got, hits, out, count);
}

// the entries of vertices[0, n) (those below `below` where it is >= 0) whose table entry is not -1 (own vertices
// a peer keeps copies of), appended to out[] in any order; ITEMS entries per thread, blockDim apart, one atomic
// per block
extern "C" __global__ void select_mapped(const idx_t* __restrict__ vertices, i64 n, i64 below,
                                         const idx_t* __restrict__ table, idx_t* __restrict__ out,
                                         u64* __restrict__ count) {
    idx_t got[ITEMS];
    unsigned hits = 0;
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;
        got[item] = 0;
        if (i < n) {
            got[item] = vertices[i];
            if ((below < 0 || got[item] < below) && table[got[item]] >= 0) hits |= 1u << item;
        }
    }
    block_append(got, hits, out, count);
}

// after a merge: clear the words of `seen` holding its output's bits (every set bit is one of them)
extern "C" __global__ void clear_bits(const idx_t* __restrict__ vertices, i64 n, unsigned* __restrict__ seen) {
    const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) seen[vertices[k] >> 5] = 0u;
}

// The split's first two passes, ITEMS entries per thread, blockDim apart.  split_count: each frontier vertex's
// owner into dest[] and how many each device owns (one atomic per block and device).  split_order: the entry
// indices of every device but `me`, grouped by device in device order (one atomic per block and device).
extern "C" __global__ void split_count(const idx_t* __restrict__ front, i64 n, const int* __restrict__ owner, int nb,
                                       int* __restrict__ dest, u64* __restrict__ counts) {
    int d[ITEMS];
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;
        d[item] = -1;
        if (i < n) { d[item] = owner[front[i]]; dest[i] = d[item]; }
    }
    for (int b = 0; b < nb; ++b) {
        unsigned c = 0;
#pragma unroll
        for (int item = 0; item < ITEMS; ++item) c += d[item] == b;
        block_add(c, &counts[b]);
    }
}

extern "C" __global__ void split_order(const int* __restrict__ dest, i64 n, int me, int nb,
                                       const u64* __restrict__ counts, u64* __restrict__ cursor,
                                       idx_t* __restrict__ order) {
    int d[ITEMS];
    idx_t got[ITEMS];
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {
        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;
        d[item] = i < n ? dest[i] : -1;
        got[item] = (idx_t)i;
    }
    u64 start = 0;
    for (int b = 0; b < nb; ++b) {
        if (b == me) continue;
        unsigned hits = 0;
#pragma unroll
        for (int item = 0; item < ITEMS; ++item) hits |= (d[item] == b ? 1u : 0u) << item;
        block_append(got, hits, order + start, &cursor[b]);
        start += counts[b];
    }
}
"""

# The package gather, for one list of value arrays: output entry `at` takes frontier entry order[at] (at itself
# where order is null), vertex v: its id on the receiver (out_ids, where not null: id_on[dest], a table of
# pointers, or v itself where id_on is null) and each array at v, copied as words of its item size (any dtype),
# or for a vertex-valued one (an integer array with a table) through its table, -1 kept, to caller ids.  One
# thread per output entry, so every write is coalesced.
PACK = r"""
extern "C" __global__ void pack(const idx_t* __restrict__ front, const idx_t* __restrict__ order,
                                const int* __restrict__ dest, i64 n, const u64* __restrict__ id_on,
                                idx_t* __restrict__ out_ids{params}) {{
    const i64 at = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (at >= n) return;
    const i64 i = order != nullptr ? (i64)order[at] : at;
    const i64 v = (i64)front[i];
    if (out_ids != nullptr) out_ids[at] = id_on != nullptr ? ((const idx_t*)id_on[dest[i]])[v] : (idx_t)v;
{body}}}
"""
# The split and package of a frontier of one tile (n <= ITEMS x SPLIT_BLOCK, one block), fused: each entry's owner,
# the count per device into counts[0, nb) (stores, no zeroing needed), the entries owned by devices other than `me`
# grouped by device in device order in shared memory (block_append, as split_order does), then one thread per
# package entry writing it as the pack kernel does.  Selective supersteps with small frontiers send every
# superstep; the three launches (count, order, pack) and the host read between them were most of such a
# superstep's split (docs/perf-notes.md).
SPLIT_PACK = r"""
extern "C" __global__ void split_pack(const idx_t* __restrict__ front, i64 n, const int* __restrict__ owner,
                                      int me, int nb, const u64* __restrict__ id_on, u64* __restrict__ counts,
                                      idx_t* __restrict__ out_ids{params}) {{
    __shared__ idx_t s_order[ITEMS * SPLIT_BLOCK];
    __shared__ int s_dest[ITEMS * SPLIT_BLOCK];
    __shared__ u64 s_cursor, s_own;
    int d[ITEMS];
    idx_t got[ITEMS];
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {{
        const i64 i = (i64)item * blockDim.x + threadIdx.x;
        d[item] = i < n ? owner[front[i]] : -1;
        if (i < n) s_dest[i] = d[item];
        got[item] = (idx_t)i;
    }}
    if (threadIdx.x == 0) {{ s_cursor = 0; s_own = 0; }}
    __syncthreads();
    u64 before = 0;
    for (int b = 0; b < nb; ++b) {{
        unsigned hits = 0;
#pragma unroll
        for (int item = 0; item < ITEMS; ++item) hits |= (d[item] == b ? 1u : 0u) << item;
        if (b == me) block_add(__popc(hits), &s_own);
        else block_append(got, hits, s_order, &s_cursor);
        __syncthreads();
        const u64 after = b == me ? before : s_cursor;
        if (threadIdx.x == 0) counts[b] = b == me ? s_own : after - before;
        before = after;
    }}
    for (i64 at = threadIdx.x; at < (i64)before; at += blockDim.x) {{
        const i64 i = (i64)s_order[at];
        const i64 v = (i64)front[i];
        out_ids[at] = id_on != nullptr ? ((const idx_t*)id_on[s_dest[i]])[v] : (idx_t)v;
{body}    }}
}}
"""
PACK_PARAMS = ", const {t}* __restrict__ in{j}, const long long* __restrict__ table{j}, {t}* __restrict__ out{j}"
PACK_COPY = "    out{j}[at] = in{j}[v];\n"
PACK_TRANSLATE = "    {{ const {t} x = in{j}[v]; out{j}[at] = table{j} != nullptr && x >= 0 ? ({t})table{j}[x] : x; }}\n"
WORDS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
SIGNED = {1: "signed char", 2: "short", 4: "int", 8: "long long"}


# The receive side of a hop, one package per launch: each entry's vertex (its id here, or mapped through
# to_local: -1 = not on this device) has every field combined into its array; where one changed (every entry
# when all fields are sums), the carried arrays take their values (through their tables) and the vertex joins
# the merge's output unless its bit in `seen` was already set (by the frontier or an earlier package; no `seen`:
# no vertex can repeat).  Ids of a package are unique and packages are launched one after another, so plain
# stores suffice.  One pass where a translate, a kernel per field, a mask, a translate and a store per carried
# array, and a merge took five to eight launches (docs/perf-notes.md).  A field may have one value for every entry
# (a kernel argument: a value the primitive implies, not sent).  A package sent as bits has an entry per bit
# (n = 32 x its words), those of set bits combined (bit i: id base + i), and one value per field for all.
RECEIVE = r"""
template <typename T> __device__ __forceinline__ bool lower(T x, T y) {{ return x < y; }}
// signed ids and levels: -1 (unreached) orders above every value
template <> __device__ __forceinline__ bool lower<int>(int x, int y) {{ return (unsigned)x < (unsigned)y; }}
template <> __device__ __forceinline__ bool lower<long long>(long long x, long long y) {{
    return (unsigned long long)x < (unsigned long long)y;
}}

extern "C" __global__ void receive(const {entries}* __restrict__ ids, const idx_t* __restrict__ to_local, i64 n,
                                   i64 base, unsigned* __restrict__ seen, const int* __restrict__ owner, int me,
                                   i64 own_below, idx_t* __restrict__ out, u64* __restrict__ count{params}) {{
    idx_t got[ITEMS];
    unsigned hits = 0, own = 0;
#pragma unroll
    for (int item = 0; item < ITEMS; ++item) {{
        got[item] = 0;
{entry}        if (to_local != nullptr && v >= 0) v = to_local[v];
        if (v < 0) continue;
        bool changed = {every};
{fields}        if (!changed) continue;
{carried}        const unsigned bit = 1u << (v & 31);
        if (seen != nullptr && (atomicOr(&seen[v >> 5], bit) & bit)) continue;
        got[item] = v;
        hits |= 1u << item;
        own += own_below >= 0 ? v < own_below : owner[v] == me;
    }}
    block_add(own, &count[1]);
    block_append(got, hits, out, count);
}}
"""
RECEIVE_IDS = {  # ITEMS entries per thread, blockDim apart
    "entries": "idx_t",
    "entry": "        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;\n"
             "        if (i >= n) continue;\n"
             "        idx_t v = ids[i];\n",
}
RECEIVE_BITS = {  # entry i is bit i % 32 of word i / 32, so a warp's lanes take one word's bits (coalesced ids)
    "entries": "unsigned",
    "entry": "        const i64 i = ((i64)blockIdx.x * ITEMS + item) * blockDim.x + threadIdx.x;\n"
             "        if (i >= n || !((ids[i >> 5] >> (i & 31)) & 1u)) continue;\n"
             "        idx_t v = (idx_t)(base + i);\n",
}
RECEIVE_FIELD = ", {t}* __restrict__ a{j}, {x}"
RECEIVE_VALUES = "const {t}* __restrict__ x{j}"
RECEIVE_CARRIED = ", {t}* __restrict__ c{j}, const {t}* __restrict__ y{j}, const idx_t* __restrict__ table{j}"
RECEIVE_OPS = {
    "min": "        if (lower(x{j}{at}, a{j}[v])) {{ a{j}[v] = x{j}{at}; changed = true; }}\n",
    "max": "        if (lower(a{j}[v], x{j}{at})) {{ a{j}[v] = x{j}{at}; changed = true; }}\n",
    "assign": "        if (a{j}[v] != x{j}{at}) {{ a{j}[v] = x{j}{at}; changed = true; }}\n",
    "sum": "        a{j}[v] += x{j}{at};\n",
}
RECEIVE_STORE = ("        {{ const {t} y = y{j}[i]; c{j}[v] = table{j} != nullptr && y >= 0 ? ({t})table{j}[y] : y; }}\n")
CTYPES = {"f8": "double", "f4": "float", "i8": "long long", "i4": "int", "i2": "short", "i1": "signed char",
          "u8": "unsigned long long", "u4": "unsigned int", "u2": "unsigned short", "u1": "unsigned char",
          "b1": "bool"}


def receive_source(idx_ctype: str, fields, carried, bits=False) -> str:
    """The receive kernel for ``fields`` as (C type, op, one value for all entries) and ``carried`` arrays as C
    types; with ``bits`` for a package of bits (no carried arrays, one value per field)."""
    if bits and (carried or not all(one for _, _, one in fields)):
        raise ValueError("a package sent as bits carries no values")
    params = [RECEIVE_FIELD.format(t=t, j=j, x=(f"{t} x{j}" if one else RECEIVE_VALUES.format(t=t, j=j)))
              for j, (t, _, one) in enumerate(fields)]
    params += [RECEIVE_CARRIED.format(t=t, j=j) for j, t in enumerate(carried)]
    body = "".join(RECEIVE_OPS[op].format(j=j, at="" if one else "[i]") for j, (_, op, one) in enumerate(fields))
    store = "".join(RECEIVE_STORE.format(t=t, j=j) for j, t in enumerate(carried))
    every = "true" if all(op == "sum" for _, op, _ in fields) else "false"
    kernel = RECEIVE.format(params="".join(params), fields=body, carried=store, every=every,
                            **(RECEIVE_BITS if bits else RECEIVE_IDS))
    return f"#define IDX_T {idx_ctype}\n#define ITEMS {ITEMS}\n" + PRELUDE + kernel


def pack_source(idx_ctype: str, fields) -> str:
    """The pack and one-tile split_pack kernels for value arrays given as (item size, is an integer id array) pairs."""
    types, params, body = [], [], []
    for j, (size, translated) in enumerate(fields):
        if translated:
            t = SIGNED[size]
        elif size in WORDS:
            t = WORDS[size]
        else:  # any other item size: a struct of its bytes
            t = f"word{j}"
            types.append(f"struct __align__({size & -size if size & -size <= 16 else 16}) {t} "
                         f"{{ unsigned char b[{size}]; }};\n")
        params.append(PACK_PARAMS.format(t=t, j=j))
        body.append((PACK_TRANSLATE if translated else PACK_COPY).format(t=t, j=j))
    kernels = PACK.format(params="".join(params), body="".join(body))
    kernels += SPLIT_PACK.format(params="".join(params), body="".join("    " + b for b in body))
    return (f"#define IDX_T {idx_ctype}\n#define ITEMS {ITEMS}\n#define SPLIT_BLOCK {SPLIT_BLOCK}\n" + PRELUDE
            + "".join(types) + kernels)


def source(idx_ctype: str) -> str:
    """The module of the fixed kernels (:data:`EXCHANGE`) for one vertex-id C type ("int" or "long long")."""
    return f"#define IDX_T {idx_ctype}\n#define ITEMS {ITEMS}\n" + PRELUDE + EXCHANGE


_function = cuda.kernel_lookup(source)  # (id dtype, device, name) -> a kernel of the fixed kernels' module


@lru_cache(maxsize=None)
def _receive_kernel(idx_dtype, fields, carried, bits, device_id):
    with cp.cuda.Device(device_id):
        return cp.RawModule(code=receive_source(cuda.ID_CTYPES[np.dtype(idx_dtype)], fields, carried, bits),
                            options=cuda.OPTIONS).get_function("receive")


def _ctype(dtype):
    key = np.dtype(dtype).str[1:]
    if key not in CTYPES:
        raise TypeError(f"a combined or carried array of dtype {np.dtype(dtype)} is not supported on the GPU")
    return CTYPES[key]


def combine_merge(frontier, received, seen, owner, me, own_below=None, marked=False, keep=False):
    idx = np.dtype(frontier.dtype)
    total = int(frontier.shape[0]) + sum(32 * int(ids.words.shape[0]) if isinstance(ids, Bits)
                                         else int(ids.shape[0]) for ids, *_ in received)
    if seen is not None:
        total = min(total, 32 * int(seen.shape[0]))  # each vertex once
    out = cp.empty(max(total, 1), dtype=idx)
    device = frontier.device.id
    count = cuda.counters(device, 2)
    below = np.int64(-1 if own_below is None else own_below)
    owner = np.intp(0) if owner is None else owner
    tail = (np.intp(0) if seen is None else seen, owner, np.int32(me), below, out, count)
    n = int(frontier.shape[0])
    if n:  # the frontier holds each vertex once: its bits are only set (or copied, set already where `marked`)
        _function(idx, device, "append_unique")(cuda.blocks(n, BLOCK * ITEMS), (BLOCK,),
                                                (frontier, np.intp(0), np.int64(n), np.intp(0) if marked else tail[0],
                                                 np.int32(0)) + tail[1:])
    for ids, to_local, fields, carried in received:
        bits = isinstance(ids, Bits)
        base = np.int64(ids.base if bits else 0)
        ids = ids.words if bits else cp.ascontiguousarray(ids.astype(idx, copy=False))
        n = int(ids.shape[0]) * (32 if bits else 1)
        if not n:
            continue
        args, ones = (), tuple(np.ndim(values) == 0 for _, _, values in fields)
        for (array, _, values), one in zip(fields, ones):
            args += (array, array.dtype.type(values) if one else
                     cp.ascontiguousarray(values.astype(array.dtype, copy=False)))
        for array, values, table in carried:
            args += (array, cp.ascontiguousarray(values.astype(array.dtype, copy=False)),
                     np.intp(0) if table is None else table.astype(idx, copy=False))
        layout = (tuple((_ctype(a.dtype), op, one) for (a, op, _), one in zip(fields, ones)),
                  tuple(_ctype(a.dtype) for a, _, _ in carried))
        fn = _receive_kernel(idx, *layout, bits, device)
        fn(cuda.blocks(n, BLOCK * ITEMS), (BLOCK,),
           (ids, np.intp(0) if to_local is None else to_local.astype(idx, copy=False), np.int64(n), base) + tail + args)
    n_out, own = cuda.read_words(count, 2)
    if seen is not None and not keep:
        unmark(out[:n_out], seen)
    return out[:n_out], own


def unmark(vertices, seen):
    n = int(vertices.shape[0])
    if 8 * n > seen.shape[0]:  # a scattered 4-byte store costs a 32-byte sector: sweep the whole bitmap
        seen.fill(0)
    elif n:
        fn = _function(vertices.dtype, vertices.device.id, "clear_bits")
        fn(cuda.blocks(n), (BLOCK,), (vertices, np.int64(n), seen))


@lru_cache(maxsize=None)
def _pack_module(idx_dtype, fields, device_id):
    with cp.cuda.Device(device_id):
        return cp.RawModule(code=pack_source(cuda.ID_CTYPES[np.dtype(idx_dtype)], fields),
                            options=cuda.OPTIONS)


@lru_cache(maxsize=None)
def _pack_kernel(idx_dtype, fields, device_id, name="pack"):
    return _pack_module(idx_dtype, fields, device_id).get_function(name)


def _pack_args(values, tables, outs):
    """The pack kernels' key for ``values`` (item size, is vertex-valued) and their launch arguments (each array,
    its table or null, its output in ``outs``)."""
    fields = tuple((int(v.dtype.itemsize), t is not None) for v, t in zip(values, tables))
    args = ()
    for v, t, o in zip(values, tables, outs):
        args += (cp.ascontiguousarray(v), np.intp(0) if t is None else t, o)
    return fields, args


def _pack(vertices, order, dest, n_out, id_on, out_ids, values, tables):
    """Launch the pack kernel (PACK) for one list of value arrays; their fresh outputs.  ``order``,
    ``dest``, ``id_on`` and ``out_ids`` may be None (a plain gather)."""
    outs = [cp.empty(n_out, dtype=v.dtype) for v in values]
    if n_out and (values or out_ids is not None):
        fields, args = _pack_args(values, tables, outs)
        order, dest, id_on, out_ids = (np.intp(0) if a is None else a for a in (order, dest, id_on, out_ids))
        fn = _pack_kernel(np.dtype(vertices.dtype), fields, vertices.device.id)
        fn(cuda.blocks(n_out), (BLOCK,), (vertices, order, dest, np.int64(n_out), id_on, out_ids) + args)
    return outs


@lru_cache(maxsize=64)
def _pointers(ptrs, device_id):
    """A device array of the given addresses (the split's id tables, one per device): kept, built once."""
    with cp.cuda.Device(device_id):
        return cp.asarray(np.array(ptrs, dtype=np.uint64))


def select_mapped(vertices, table, below=None):
    n = int(vertices.shape[0])
    if n == 0:
        return vertices[:0], table[:0]
    vertices = cp.ascontiguousarray(vertices)
    out = cp.empty(n, dtype=vertices.dtype)
    count = cuda.counters(vertices.device.id, 1)
    _function(np.dtype(vertices.dtype), vertices.device.id, "select_mapped")(
        cuda.blocks(n, BLOCK * ITEMS), (BLOCK,),
        (vertices, np.int64(n), np.int64(-1 if below is None else below), table.astype(vertices.dtype, copy=False),
         out, count))
    kept = out[: cuda.read_word(count)]
    return kept, translate(kept, table)


def split(vertices, owner, me, num_parts, values, tables, id_on=None):
    n = int(vertices.shape[0])
    if n == 0:
        return [0] * num_parts, {}
    vertices = cp.ascontiguousarray(vertices)
    idx = np.dtype(vertices.dtype)
    device = vertices.device.id
    table = None
    if id_on is not None:
        table = _pointers(tuple(0 if a is None else a.data.ptr for a in id_on), device)
    if n <= SPLIT_ONE_TILE:
        return _split_one_tile(vertices, owner, me, num_parts, values, tables, table)
    counters = cuda.counters(device, 2 * num_parts)  # counts, then the order pass's cursors
    dest = cp.empty(n, dtype=np.int32)
    tiles = cuda.blocks(n, BLOCK * ITEMS)
    _function(idx, device, "split_count")(tiles, (BLOCK,), (vertices, np.int64(n), owner, np.int32(num_parts),
                                                            dest, counters))
    counts = cuda.read_words(counters, num_parts)
    remote = n - counts[me]
    if remote == 0:
        return counts, {}
    order = cp.empty(remote, dtype=idx)
    _function(idx, device, "split_order")(tiles, (BLOCK,), (dest, np.int64(n), np.int32(me), np.int32(num_parts),
                                                            counters, counters[num_parts:], order))
    ids = cp.empty(remote, dtype=idx)
    return counts, _packages(counts, me, ids, _pack(vertices, order, dest, remote, table, ids, values, tables))


def _split_one_tile(vertices, owner, me, num_parts, values, tables, table):
    """:func:`split` of at most SPLIT_ONE_TILE vertices: one launch (SPLIT_PACK) and one read.  Its
    packages are slices of outputs of SPLIT_ONE_TILE entries, allocated before the counts are known; where every
    vertex is this device's own nothing was written to them, and the thread keeps them for its next such split."""
    n, idx, device = int(vertices.shape[0]), np.dtype(vertices.dtype), vertices.device.id
    spare = getattr(cuda.THREAD, "split_spare", None)
    if spare is None:
        spare = cuda.THREAD.split_spare = {}
    key = (device, idx, tuple(np.dtype(v.dtype) for v in values))
    buffers = spare.pop(key, None)
    if buffers is None:
        buffers = (cp.empty(SPLIT_ONE_TILE, dtype=idx), [cp.empty(SPLIT_ONE_TILE, dtype=v.dtype) for v in values])
    ids, outs = buffers
    fields, args = _pack_args(values, tables, outs)
    counters = cuda.counters(device, num_parts, zeroed=False)  # the kernel stores every count
    _pack_kernel(idx, fields, device, "split_pack")(
        (1,), (BLOCK,), (vertices, np.int64(n), owner, np.int32(me), np.int32(num_parts),
                         np.intp(0) if table is None else table, counters, ids) + args)
    counts = cuda.read_words(counters, num_parts)
    if counts[me] == n:
        spare[key] = buffers
    return counts, _packages(counts, me, ids, outs)


def _packages(counts, me, ids, outs):
    """{k: (ids, values)} for every peer k that gets some: the slices of the packed outputs, grouped by device in
    device order, ``me``'s own left out."""
    out, start = {}, 0
    for k, c in enumerate(counts):
        if c and k != me:
            out[k] = (ids[start:start + c], [o[start:start + c] for o in outs])
            start += c
    return out


def gather(vertices, values, tables):
    n = int(vertices.shape[0])
    return _pack(cp.ascontiguousarray(vertices), None, None, n, None, None, values, tables)


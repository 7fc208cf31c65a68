"""CuPy operators: RawKernels from :mod:`.cupy_kernels`, same signatures as :mod:`.numpy_ops`.

Per push advance the host reads the output count, and the frontier's arc count
only where a bound on it is large; everything else stays on the device.  The
plumbing they share with the exchange's kernels (compiled modules, launch
sizes, pinned host words, kept counters) is :mod:`.cuda`'s.
"""
from __future__ import annotations

import weakref
from functools import lru_cache

import cupy as cp
import numpy as np

from mgraph.ops import cuda, cupy_kernels, cupy_levels, levels, numpy_ops
from mgraph.ops.cuda import BLOCK

assert BLOCK == cupy_kernels.PULL_BLOCK == cupy_kernels.ADVANCE_BLOCK  # the kernels' __launch_bounds__
UNVISITED = -1
HEAVY_ROW = 2048  # arcs: pull_sum's warp per row skips longer rows, which are summed in pieces of this size
READ_ABOVE = 1 << 22  # arcs: a push advance whose bound is larger reads its exact count to size the launch
SLACK = 1 << 20  # vertex ids: an advance's output is copied out of its buffer where that wastes more
STARTS_ABOVE = 2048  # tiles: a push advance of more (several waves of blocks) searches their first entries first
RANGE_ONE_BLOCK = 1 << 18  # ids: id_range's one-block kernel up to this many (a few us), library reductions above
_PER_GRAPH = weakref.WeakKeyDictionary()  # graph -> {name: a host fact about it, built once while the graph lives}

_function = cuda.kernel_lookup(cupy_kernels.source)  # (id dtype, device, name) -> a kernel of the operators' module


def _kernel(graph, name):
    return _function(np.dtype(graph.indices.dtype), graph.indptr.device.id, name)


def _per_graph(graph, name, build):
    """``build(graph)``, computed on first use and kept while the graph lives (a host read each)."""
    facts = _PER_GRAPH.setdefault(graph, {})
    if name not in facts:
        facts[name] = build(graph)
    return facts[name]



def _small_scratch(device_id):
    """A small advance's offsets (room for SCAN_ITEMS * SCAN_BLOCK frontier vertices) and output counter, kept per
    thread and device: two allocations less per small superstep.  An advance's kernels are done with them when
    it returns (it read the count), or else precede, on the same stream, whatever uses them next; where this
    thread has moved to another stream since, the last one is waited for first."""
    kept = getattr(cuda.THREAD, "scratch", None)
    if kept is None:
        kept = cuda.THREAD.scratch = {}
    stream = cp.cuda.get_current_stream()
    entry = kept.get(device_id)
    if entry is None:
        entry = kept[device_id] = [cp.empty(cupy_kernels.SCAN_ITEMS * cupy_kernels.SCAN_BLOCK + 1, dtype=np.int64),
                                   cp.empty(1, dtype=np.uint64), stream]
    elif entry[2].ptr != stream.ptr:
        entry[2].synchronize()
        entry[2] = stream
    return entry[0], entry[1]


def _tile_starts(graph, offs, n_front, n_tiles):
    """Each tile's first frontier entry (cupy_kernels' tile_starts), and n_front - 1 after the last."""
    starts = cp.empty(n_tiles + 1, dtype=np.int64)
    _kernel(graph, "tile_starts")(cuda.blocks(n_tiles + 1), (BLOCK,), (offs, np.int64(n_front),
                                                                      np.int64(BLOCK * cupy_kernels.ITEMS),
                                                                      np.int64(n_tiles), starts))
    return starts


def _advance(name, graph, frontier, params, emits=True, kernel=None):
    """Run one fused advance over ``frontier`` (None: every vertex); the emitted vertices when ``emits``.

    The frontier's arcs are counted on the device.  Where a bound on them (the
    frontier's size times the graph's largest degree) is at most READ_ABOVE the
    grid and the output are sized from it, so a small advance is launches and no
    wait (the blocks past the last arc return at once); a larger advance reads
    the count, one wait beside its work, and launches no idle blocks.
    """
    idx = graph.indices.dtype
    if frontier is None:
        offs, bound, n_front, front = graph.indptr, graph.num_arcs, graph.num_vertices, cuda.dummy(idx)
        count = cp.zeros(1, dtype=np.uint64)
    else:
        n_front = len(frontier)
        if n_front == 0:
            return frontier
        if n_front <= cupy_kernels.SCAN_ITEMS * cupy_kernels.SCAN_BLOCK:
            offs, count = _small_scratch(graph.indptr.device.id)
            _kernel(graph, "frontier_offsets_small")((1,), (cupy_kernels.SCAN_BLOCK,),
                                                     (graph.indptr, frontier, np.int64(n_front), offs, count))
        else:
            offs = cp.empty(n_front + 1, dtype=np.int64)
            count = cp.zeros(1, dtype=np.uint64)
            _kernel(graph, "frontier_degrees")(cuda.blocks(n_front), (BLOCK,),
                                               (graph.indptr, frontier, np.int64(n_front), offs))
            cp.cumsum(offs, out=offs)
        bound = min(graph.num_arcs, n_front * levels.max_degree(graph))
        if bound > READ_ABOVE:
            bound = cuda.read_word(offs, n_front)
        front = frontier
    if bound == 0:
        return cp.empty(0, dtype=idx)
    out = cp.empty(min(bound, graph.num_vertices) if emits else 1, dtype=idx)
    has_w = graph.weights is not None
    tiles = cuda.blocks(bound, BLOCK * cupy_kernels.ITEMS)
    starts = None if tiles[0] <= STARTS_ABOVE else _tile_starts(graph, offs, n_front, tiles[0])
    args = (graph.indptr, graph.indices, graph.weights if has_w else cuda.dummy(np.float64), np.int32(has_w),
            front, np.int32(frontier is not None), offs, np.intp(0) if starts is None else starts,
            np.int64(n_front), out, count) + params
    (kernel or _kernel(graph, "advance_" + name))(tiles, (BLOCK,), args)
    if not emits:
        return None
    n = cuda.read_word(count)
    return out[:n] if out.shape[0] - n <= SLACK else out[:n].copy()  # a frontier kept (BC's) keeps its base


@lru_cache(maxsize=None)
def _functor_kernel(key, idx_dtype, device_id):
    """A user functor's advance kernel, compiled once per functor source, id type and device (NVRTC also caches
    on disk)."""
    name, signature, body, emits = key
    functor = _FUNCTORS[key]
    with cp.cuda.Device(device_id):
        module = cp.RawModule(code=cupy_kernels.functor_source(cuda.ID_CTYPES[np.dtype(idx_dtype)], functor),
                              options=cuda.OPTIONS)
        return module.get_function("advance_" + name)


_FUNCTORS = {}  # functor key -> a functor with that source (the compile cache is keyed by source, not object)


def advance(graph, frontier, functor, args):
    """ops.advance on the GPU: a built-in functor runs its kernel of the shared module, a user's its own."""
    kernel = None
    if not (functor.builtin and cupy_kernels.BUILTIN.get(functor.name) is functor):
        _FUNCTORS.setdefault(functor.key, functor)
        kernel = _functor_kernel(functor.key, np.dtype(graph.indices.dtype), graph.indptr.device.id)
    if frontier is not None and frontier.dtype != graph.indices.dtype:
        frontier = frontier.astype(graph.indices.dtype)
    out = _advance(functor.name, graph, frontier, args, emits=functor.emits, kernel=kernel)
    return out if functor.emits else None


advance_queue = cupy_levels.advance_queue  # a push advance that keeps its output's count on the device


def id_range(ids):
    n = ids.shape[0]
    if n > RANGE_ONE_BLOCK or np.dtype(ids.dtype) not in cuda.ID_CTYPES:
        lo, hi = cp.stack([ids.min(), ids.max()]).get()
        return int(lo), int(hi)
    out = cuda.counters(ids.device.id, 2, zeroed=False)  # the kernel writes both words
    _function(np.dtype(ids.dtype), ids.device.id, "id_range")((1,), (1024,), (ids, np.int64(n), out))
    lo, hi = cuda.read_words(out, 2)
    return lo, hi


def intersect_count(graph, a, b):
    n = a.shape[0]
    out = cp.empty(n, dtype=np.int64)
    if n:
        idx = graph.indices.dtype
        _kernel(graph, "intersect_count")(cuda.blocks(n), (BLOCK,),
                                          (graph.indptr, graph.indices, a.astype(idx, copy=False),
                                           b.astype(idx, copy=False), np.int64(n), out))
    return out


def advance_visit(graph, frontier, label, pred, level, dist=None):
    if dist is None:
        return _advance("visit", graph, frontier, (label, pred, np.int32(level)))
    return _advance("visit_tight", graph, frontier, (label, pred, np.int32(level), dist))


def advance_visit_pull(rgraph, label, pred, level, frontier_bits):
    n = rgraph.arc_rows  # a part's proxies have no in-arcs: no thread for them
    out = cp.empty(max(n, 1), dtype=rgraph.indices.dtype)
    count = cp.zeros(1, dtype=np.uint64)
    _kernel(rgraph, "visit_pull")(cuda.blocks(n), (BLOCK,), (rgraph.indptr, rgraph.indices, label, pred,
                                                              np.int32(level), frontier_bits, np.int64(n), out, count))
    return out[: cuda.read_word(count)]


def tight_predecessors(rgraph, dist, pred):
    n = rgraph.arc_rows  # a part's proxies have no in-arcs: their predecessors are their owners'
    if n:
        has_w = rgraph.weights is not None
        w = rgraph.weights if has_w else cuda.dummy(np.float64)
        _kernel(rgraph, "tight_predecessors")(cuda.blocks(n * 32), (BLOCK,), (rgraph.indptr, rgraph.indices, w,
                                                                               np.int32(has_w), dist, pred,
                                                                               np.int64(n)))


def advance_relax(graph, frontier, dist, marks, stamp):
    return _advance("relax", graph, frontier, (dist, marks, np.int32(stamp)))


def advance_count_paths(graph, frontier, label, sigma, level):
    return _advance("count_paths", graph, frontier, (label, sigma, np.int32(level)))


def advance_dependency(graph, frontier, label, sigma, delta, level):
    _advance("dependency", graph, frontier, (label, sigma, delta, np.int32(level)), emits=False)


def _shift_args(shift):
    """pull_sum's shift as kernel arguments: (its device address, 0.0) for a 0-d array, which is never read to the
    host, or (null, the number)."""
    if isinstance(shift, cp.ndarray):
        return shift.astype(np.float64, copy=False).reshape(()), np.float64(0.0)
    return np.intp(0), np.float64(shift)


def pull_sum(rgraph, x, scale=1.0, shift=0.0):
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    n = rgraph.arc_rows  # rows that may hold arcs; the rest (a part's proxies) sum to 0, so take the shift alone
    y = cp.empty(rgraph.num_vertices, dtype=np.float64)
    if n < rgraph.num_vertices:
        y[n:] = shift
    scale = np.float64(scale)
    shift_at, shift = _shift_args(shift)
    has_w = np.int32(rgraph.weights is not None)
    hot = _per_graph(rgraph, "hot_columns", _hot_columns)
    if hot is None:
        indices, w = rgraph.indices, rgraph.weights
    else:
        indices, w, x = hot[1], hot[2], x[hot[0]]
    w = w if has_w else cuda.dummy(np.float64)
    lanes = _per_graph(rgraph, "pull_lanes", _pull_lanes)
    suffix = "_f32" if x.dtype == np.float32 else ""  # float32 shares: half the bytes gathered, summed in float64
    _kernel(rgraph, "pull_sum" + suffix)(cuda.blocks(n << lanes), (BLOCK,), (rgraph.indptr, indices, w, has_w, x, y,
                                                                   np.int64(n), np.int64(HEAVY_ROW), np.int32(lanes),
                                                                   scale, shift_at, shift))
    rows, first, begin, end = _per_graph(rgraph, "heavy_rows", _heavy_rows)
    if len(rows):
        partial = cp.empty(len(begin), dtype=np.float64)
        _kernel(rgraph, "pull_sum_chunks" + suffix)(cuda.blocks(len(begin) * 32), (BLOCK,),
                                           (indices, w, has_w, x, begin, end, partial, np.int64(len(begin))))
        _kernel(rgraph, "pull_sum_heavy")(cuda.blocks(len(rows) * 32), (BLOCK,),
                                          (rows, first, partial, y, np.int64(len(rows)), scale, shift_at, shift))
    return y


def prepare_pull(rgraph):
    for name, build in (("hot_columns", _hot_columns), ("pull_lanes", _pull_lanes), ("heavy_rows", _heavy_rows)):
        _per_graph(rgraph, name, build)


L1_BLOCKS = 1024  # most blocks of l1_distance's first pass; one block then adds their partial sums
L1_ITEMS = 4  # fewest entries per thread of that pass


def l1_distance(a, b, count=None):
    n = int(a.shape[0] if count is None else count)
    a, b = (cp.ascontiguousarray(v[:n].astype(np.float64, copy=False)) for v in (a, b))
    out = cp.empty((), dtype=np.float64)
    blocks = min(L1_BLOCKS, max(1, -(-n // (BLOCK * L1_ITEMS))))  # from n alone: the same order every run
    partial = out if blocks == 1 else cp.empty(blocks, dtype=np.float64)
    device = a.device.id
    _function(np.int32, device, "l1_partial")((blocks,), (BLOCK,), (a, b, np.int64(n), partial))
    if blocks > 1:
        _function(np.int32, device, "sum_partials")((1,), (BLOCK,), (partial, np.int64(blocks), out))
    return out


def _pull_lanes(rgraph):
    """log2 of pull_sum's lanes per row: the power of two nearest a quarter of the mean row length, 2 to 32
    lanes.  On a power-law graph most rows are far shorter than the mean, so a group of a quarter of it keeps
    more lanes busy than one of the mean; the long rows take a few more strides."""
    rows = max(rgraph.arc_rows, 1)
    quarter = max(rgraph.num_arcs / rows / 4, 1.0)
    return int(min(5, max(1, round(np.log2(quarter)))))


HOT_COLUMNS_SPARE = 2  # the relabelled ids are built only where the free memory is this many times what is kept
SORT_STEP = 1 << 26  # arcs (whole rows) whose ids _hot_columns sorts at once: bounds the memory of the sort
SORT_BYTES = 48  # bytes per arc a sort step holds at most: row ranks, keys, the sort's copy, order and scratch


def _hot_columns(rgraph):
    """(order, indices relabelled by order, weights permuted with them or None) where the pull reads x in order
    of how often each x is read, or None where there is no room for a second copy of the ids (and weights).

    The pull's cost is its gathers of x by column id, random over a vector larger than L2 on a big graph.
    On a power-law graph most arcs point at few columns; renumbering the columns by how often they are read
    (hubs first) packs those hot values into few cache lines, which then stay in L2 (GraphCage's observation,
    in its cheapest form).  Each row's arcs are then sorted by their new ids (the weights moved with them):
    the lanes of a group reading consecutive arcs of a row read nearby hot ids, which share 32-byte sectors,
    where in the old order each lane's gather landed on a sector of its own.  A row thus adds its terms in
    another order than the graph's, which changes sums in the last bits (the NumPy twin's within rounding);
    the layout is built once per graph, so every run adds them in the same order.  Each pull gathers x into
    the new order first (one pass over the vector).  Rows are sorted SORT_STEP arcs at a time (a row longer
    than that alone), so the build holds about SORT_BYTES per arc of one step besides what it keeps.
    """
    m = rgraph.num_arcs
    n = rgraph.num_vertices
    if m == 0 or n < (1 << 16):  # a vector this small fits in L2 as it is
        return None
    idx = rgraph.indices.dtype
    kept = rgraph.indices.nbytes + n * idx.itemsize + (0 if rgraph.weights is None else 8 * m)
    build = 24 * n + SORT_BYTES * min(m, SORT_STEP)  # the read counts and their sort, then one sort step
    free, _ = cp.cuda.runtime.memGetInfo()
    if free + cp.get_default_memory_pool().free_bytes() < HOT_COLUMNS_SPARE * kept + build:
        return None
    indptr = rgraph.indptr[:rgraph.arc_rows + 1]
    end = int(indptr[-1])
    reads = cp.bincount(rgraph.indices[:end], minlength=n)
    order = cp.argsort(-reads).astype(idx)
    del reads
    position = cp.empty(n, dtype=idx)
    position[order] = cp.arange(n, dtype=idx)
    indices = position[rgraph.indices]
    del position
    weights = None if rgraph.weights is None else rgraph.weights.astype(np.float64, copy=True)
    r0 = lo = 0
    while lo < end:
        step_end = cp.asarray([lo + SORT_STEP], dtype=np.int64)
        r1 = int(cp.searchsorted(indptr, step_end, side="right")[0]) - 1  # the last row end within the step
        r1 = max(r1, r0 + 1)  # a row longer than a step: alone
        hi = int(indptr[r1])
        _sort_rows(indices, weights, indptr[r0:r1] - lo, lo, hi, n)
        r0, lo = r1, hi
    return order, indices, weights


def _sort_rows(indices, weights, starts, lo, hi, n):
    """Sort each row's ids of ``indices[lo:hi]`` (whole rows, starting at ``starts`` from lo) ascending, in place,
    moving ``weights`` (None: none) with them: one sort of (the row's rank in the step, id) keys."""
    c = hi - lo
    if c == 0:
        return
    first = cp.zeros(c + 1, dtype=np.int8)  # 1 where a row starts (an empty row's start is the next row's)
    first[starts] = 1
    key = cp.cumsum(first[:c], dtype=np.int64)  # each arc's row rank in the step, from 1: below c + 1
    del first
    key *= n
    key += indices[lo:hi]
    if weights is None:
        key.sort()
        key %= n
        indices[lo:hi] = key.astype(indices.dtype, copy=False)
    else:
        perm = cp.argsort(key)
        del key
        indices[lo:hi] = indices[lo:hi][perm]
        weights[lo:hi] = weights[lo:hi][perm]


def _heavy_rows(rgraph):
    """pull_sum's rows of more than HEAVY_ROW arcs, cut in pieces of HEAVY_ROW: (rows, the first piece of each and
    the number of pieces at the end, each piece's first arc, its end), on the device."""
    indptr = rgraph.indptr[:rgraph.arc_rows + 1]
    rows = cp.flatnonzero(cp.diff(indptr) > HEAVY_ROW)
    starts, ends = cp.asnumpy(indptr[rows]), cp.asnumpy(indptr[rows + 1])
    pieces = -(-(ends - starts) // HEAVY_ROW)
    first = np.concatenate(([0], np.cumsum(pieces)))
    begin = np.repeat(starts, pieces) + HEAVY_ROW * (np.arange(first[-1]) - np.repeat(first[:-1], pieces))
    end = np.minimum(begin + HEAVY_ROW, np.repeat(ends, pieces))
    return (rows, *(cp.asarray(a, dtype=np.int64) for a in (first, begin, end)))


def unvisited(n, dtype):
    out = cp.empty(n, dtype=dtype)
    if out.nbytes:
        out.data.memset_async(0xFF, out.nbytes)  # on the current stream, as the kernels that read it
    return out


_C_TYPES = {"i": {4: "int", 8: "long long"}, "u": {1: "unsigned char", 4: "unsigned", 8: "unsigned long long"},
            "f": {4: "float", 8: "double"}, "b": {1: "bool"}}


@lru_cache(maxsize=None)
def _start_kernel(dtypes, idx_dtype, device_id):
    """One thread writing each array's value at the source and the frontier's one entry, for these arrays' dtypes."""
    ctype = [_C_TYPES[d.kind][d.itemsize] for d in dtypes]
    params = "".join(f"{c}* a{k}, {c} v{k}, " for k, c in enumerate(ctype))
    body = "".join(f"a{k}[s] = v{k}; " for k in range(len(ctype)))
    idx = cuda.ID_CTYPES[idx_dtype]
    source = f'extern "C" __global__ void start_at({params}{idx}* out, long long s) {{ {body}out[0] = ({idx})s; }}'
    with cp.cuda.Device(device_id):
        return cp.RawKernel(source, "start_at", options=cuda.OPTIONS)


def start_at(idx_dtype, source, writes):
    out = cp.empty(1, dtype=idx_dtype)
    args = []
    for array, value in writes:
        args += [array, array.dtype.type(value)]
    kernel = _start_kernel(tuple(a.dtype for a, _ in writes), np.dtype(idx_dtype), out.device.id)
    kernel((1,), (1,), (*args, out, np.int64(source)))
    return out


def hook_components(graph, parent, pairs_below=None, arcs=None, skip=None):
    if arcs is None and skip is None:
        _advance("hook", graph, None, (parent, np.int64(pairs_below or 0)), emits=False)
        return
    lo, hi = arcs if arcs is not None else (0, None)
    n = graph.arc_rows
    lanes = 0 if hi is not None and hi - lo <= 2 else 3  # a thread per row for a sample, else 8 lanes per row
    _kernel(graph, "hook_rows")(cuda.blocks(n << lanes), (BLOCK,),
                                (graph.indptr, graph.indices, parent, np.int64(n), np.int64(lo),
                                 np.int64(-1 if hi is None else hi),
                                 np.intp(0) if skip is None else parent[:n] == skip, np.int32(lanes)))


def compress(parent):
    n = parent.shape[0]
    fn = _function(np.int32, parent.device.id, "compress")
    fn(cuda.blocks(n), (BLOCK,), (parent, np.int64(n)))


def bitmap(vertices, num_vertices, table=None, base=0):
    bits = cp.zeros(-(-num_vertices // 32), dtype=np.uint32)
    if len(vertices):
        fn = _function(vertices.dtype, vertices.device.id, "set_bits")
        table = np.intp(0) if table is None else table.astype(vertices.dtype, copy=False)
        fn(cuda.blocks(len(vertices)), (BLOCK,), (vertices, np.int64(len(vertices)), table, np.int64(base), bits))
    return bits


def segment_min(seg, values, initial):
    out = initial.astype(np.int64, copy=True)
    n = seg.shape[0]
    if n:
        fn = _function(np.int32, seg.device.id, "segment_min")
        fn(cuda.blocks(n), (BLOCK,), (seg, values, np.int64(n), out))
    return out


def tree_spread(parent, label, tree_min, lowered, id_dtype, emit):
    n = parent.shape[0]
    device = parent.device.id
    idx = np.dtype(id_dtype)
    m = n if lowered is None else lowered.shape[0]
    if not m:
        return cp.empty(0, dtype=idx)  # nothing lowered: no label is above its tree's minimum
    words = cuda.counters(device, 2)  # the output's count, and whether the first pass lowered a minimum
    ids = cuda.dummy(idx) if lowered is None else cp.ascontiguousarray(lowered.astype(idx, copy=False))
    _function(idx, device, "tree_lower")(cuda.blocks(m), (BLOCK,), (parent, label, ids, np.int32(lowered is not None),
                                                                 np.int64(m), tree_min, words[1:]))
    out = cp.empty(max(n, 1) if emit else 1, dtype=idx)
    _function(idx, device, "tree_spread")(cuda.blocks(n), (BLOCK,), (parent, label, tree_min, np.int64(n), out,
                                                                    words, words[1:], np.int32(lowered is not None),
                                                                    np.int32(emit)))
    return out[: cuda.read_word(words)] if emit else out[:0]


_translate = cp.ElementwiseKernel("I ids, raw J table", "I out", "out = ids >= 0 ? (I)table[ids] : (I)-1",
                                  "mgraph_translate")


def translate(ids, table):
    return _translate(ids, table) if ids.shape[0] else ids.copy()


def count_own(ids, owner, me, own_below=None):
    n = int(ids.shape[0])
    if n == 0:
        return 0
    ids = cp.ascontiguousarray(ids)
    count = cuda.counters(ids.device.id, 1)
    _function(np.dtype(ids.dtype), ids.device.id, "count_own")(
        cuda.blocks(n, BLOCK * cupy_kernels.ITEMS), (BLOCK,),
        (ids, np.int64(n), cuda.dummy(np.int32) if owner is None else owner, np.int32(me),
         np.int64(-1 if own_below is None else own_below), count))
    return cuda.read_word(count)


bit_test = numpy_ops.bit_test  # plain array arithmetic: the same code serves both modules

"""Compiled CPU operators: the CPU backend's advances, neighbour-reduce, intersection and union-find as numba loops.

Each function has the signature and the result of its namesake in
:mod:`mgraph.ops.numpy_ops`, the NumPy twins, which stay the reference: a
run selects one or the other (:func:`configure`, or the environment variable
``MGRAPH_CPU_KERNELS=numba|numpy``; numba by default), and the tests compare
the two.  Where a twin sorts, masks and gathers every arc of a frontier into
temporary arrays, a kernel here walks the frontier's rows once.

Every result is the twins' to the bit (sums add in the twins' order, the
emitted vertices come once each in increasing order), but for two freedoms
that the operators' contracts leave, as the GPU's kernels do:

* a push visit (``advance_visit``) on several threads claims a vertex reached
  from two frontier vertices by whichever thread writes last, where the twin
  takes the first arc in frontier order.  Labels agree; the predecessors are
  another valid BFS tree (Graph500's rules);
* ``hook_components`` leaves a forest whose roots are the twin's; after
  :func:`compress` (flat, as the twin leaves it) ``parent`` is the twin's;
* a visit's fused levels (``advance_levels``) expand each level in the order
  its vertices were claimed, as a queue BFS does, where the twins' loop
  expands each level sorted: labels and the last level's output agree, the
  predecessors are another valid BFS tree.

Threads: kernels whose iterations write disjoint entries (pulls over rows, a
visit whose only conflicting writes store the same label, intersections,
pointer jumping) and union-find (linking by compare-and-swap) run over ranges
of the frontier or rows balanced by arcs, each range writing its own output
buffer (a visit of many arcs marks its claims in a byte per vertex instead,
read off by the threads in vertex order); relaxation, path counting,
dependencies and a user's functor run on one thread in the twins' order.  The thread count is :func:`configure`'s
``threads``, else ``NUMBA_NUM_THREADS`` where set, else the cores this process
may use divided among the MPI ranks of its node, so that ``mpiexec -n P`` CPU
ranks do not oversubscribe the cores; a run's ``threads`` option overrides it
for the run, and a run of P devices in worker threads divides it among them
(:func:`threads`).  Calls smaller than ``PARALLEL_ARCS`` run on one thread.

Names this module does not define (the id maps' translate and count_own, bitmaps) are the
NumPy twins': ``mgraph.ops._impl`` hands NumPy arrays here and every
operator is found.  The kernels are compiled on first use and cached on disk
(numba's ``cache=True``, beside this file or in ``NUMBA_CACHE_DIR``).
"""
from __future__ import annotations

import os
import threading
import weakref

# OpenMP's threads (numba's "omp" layer) spin between parallel regions by default; on cores shared with other
# processes a spinning thread takes the core from the one with work, and every fork-join waits for it (PageRank
# at R-MAT 14 on two threads: 191 ms spinning, 9.7 passive; docs/perf-notes.md).  Sleep instead, unless the user
# says otherwise; read when the OpenMP runtime loads, so before numba's first parallel call.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange, types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

from mgraph import group  # noqa: E402
from mgraph.backend import cpu_share  # noqa: E402
from mgraph.ops import functors, numpy_ops, segments  # noqa: E402
from mgraph.ops import levels as lv  # noqa: E402

UNVISITED = -1
KERNELS = ("numba", "numpy")
PARALLEL_ARCS = 1 << 16  # arcs (or pairs, rows): smaller calls run on one thread, where a fork-join costs more
CHUNKS_PER_THREAD = 8  # ranges per thread: a range of hub rows does not hold up the others for long
# a parallel push visit whose frontier has at least n / MARK_SCAN out-arcs (or vertices) marks its claims in a byte
# per vertex, read off by the threads: two passes over n bytes, less than the level's own reads (advance_visit)
MARK_SCAN = 16
# frontier vertices: a parallel push visit of a longer frontier never sums its arcs on one thread: where it marks, its
# ranges are _BLOCKS_PER_RANGE times as many, of equal positions; else the threads count its arcs in such blocks
PARALLEL_FRONTIER = 1 << 16
_BLOCKS_PER_RANGE = 8
_GALLOP = 4  # intersect_count searches the longer row by doubling steps where it is this many times the shorter
_MARK_PAIRS = 16  # intersect_count of at least n / this many pairs groups them and marks rows in a bitmap of n

_settings = {"kernels": None, "threads": None}  # None: from the environment
_KEEP = object()
_from_environment = []  # MGRAPH_CPU_KERNELS as read
_lock = threading.Lock()  # parallel calls from several threads of a process, where numba's layer is not thread-safe
_DRIVERS = weakref.WeakKeyDictionary()  # user functor -> its compiled scalar body's advance


# ---- settings -----------------------------------------------------------------------------------------------

def configure(kernels=_KEEP, threads=_KEEP):
    """Select the CPU kernels (``"numba"`` or ``"numpy"``, the twins; None: ``MGRAPH_CPU_KERNELS``, else numba) and
    the number of threads they use (None: the default, :func:`default_threads`); a setting not passed stays.
    Returns the previous settings as a dict: ``configure(**old)`` restores them."""
    old = dict(_settings)
    if kernels is not _KEEP and kernels is not None and kernels not in KERNELS:
        raise ValueError(f"CPU kernels must be one of {', '.join(KERNELS)} (or None), got {kernels!r}")
    if threads is not _KEEP and threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive integer (or None: the default), got {threads!r}")
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads={threads} is more than numba's pool of {numba.config.NUMBA_NUM_THREADS} "
                             "(NUMBA_NUM_THREADS, set before Python starts, enlarges it)")
        threads = int(threads)
    if kernels is not _KEEP:
        _settings["kernels"] = kernels
        _from_environment.clear()
    if threads is not _KEEP:
        _settings["threads"] = threads
    return old


def selected() -> bool:
    """Whether NumPy arrays go to these kernels (else to the NumPy twins).  ``MGRAPH_CPU_KERNELS`` is read at the
    first call, and again after ``configure(kernels=None)``."""
    kernels = _settings["kernels"]
    if kernels is None:
        if not _from_environment:
            kernels = os.environ.get("MGRAPH_CPU_KERNELS") or "numba"
            if kernels not in KERNELS:
                raise ValueError(f"MGRAPH_CPU_KERNELS must be one of {', '.join(KERNELS)}, got {kernels!r}")
            _from_environment.append(kernels)
        kernels = _from_environment[0]
    return kernels == "numba"


def _local_ranks() -> int:
    """The MPI ranks on this node (1 outside MPI): from the launcher's environment, else from the communicator."""
    if group.launched_size() <= 1:
        return 1
    for name in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"):  # MPICH's Hydra, Open MPI
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    w = group.world()
    return 1 if w is None else w.local_size


def default_threads() -> int:
    """``NUMBA_NUM_THREADS`` where set; else the cores this process may use where that is fewer than the machine's
    (a launcher or ``taskset`` bound it to its share); else the machine's cores divided among the MPI ranks of its
    node.  At least one, at most numba's pool."""
    pool = numba.config.NUMBA_NUM_THREADS
    if os.environ.get("NUMBA_NUM_THREADS"):
        return pool
    total = os.cpu_count() or 1
    try:
        allowed = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        allowed = total
    share = allowed if allowed < total else total // _local_ranks()
    return max(1, min(pool, share))


def threads() -> int:
    """The number of threads the parallel kernels use in the calling thread: inside a run, the run's ``threads``
    option (else :func:`configure`'s, else :func:`default_threads`) divided among the run's worker threads in this
    process (``devices=P``: P threads share the cores, each taking threads // P, at least one), so that P workers
    with their kernels' threads do not oversubscribe the cores; outside a run :func:`configure`'s, else the
    default."""
    share = cpu_share()
    base = _settings["threads"] or default_threads()
    if share is None:
        return base
    total, workers = share
    return max(1, min((total or base) // workers, numba.config.NUMBA_NUM_THREADS))


def _parallel(work: int) -> int:
    """The threads for a call over ``work`` arcs (or rows, pairs): 1 where small; sets numba's count for this
    thread (numba keeps one per calling thread)."""
    t = threads() if work >= PARALLEL_ARCS else 1
    if t > 1 and numba.get_num_threads() != t:
        numba.set_num_threads(t)
    return t


def _run_parallel(kernel, *args):
    """``kernel(*args)``, a prange kernel over ranges, handed to the threads one range at a time (numba's default
    gives each thread an equal block of them, which a range of hubs would hold up); serialised across the threads
    of this process where numba's threading layer is its workqueue, which does not take concurrent calls."""
    with numba.parallel_chunksize(1):
        if _thread_safe():
            return kernel(*args)
        with _lock:
            return kernel(*args)


_SAFE = []


def _thread_safe() -> bool:
    """Whether numba's threading layer takes parallel calls from several threads at once (tbb, omp)."""
    if not _SAFE:
        with _lock:
            if not _SAFE:
                _warm(np.zeros(2))  # the layer is chosen at the first parallel call
                _SAFE.append(numba.threading_layer() in ("tbb", "omp"))
    return _SAFE[0]


@njit(parallel=True, cache=True)
def _warm(a):
    for i in prange(a.shape[0]):
        a[i] += 1.0


# ---- shared pieces ------------------------------------------------------------------------------------------

@njit(cache=True)
def _degree_sum(indptr, frontier):
    total = 0
    for i in range(frontier.shape[0]):
        u = frontier[i]
        total += indptr[u + 1] - indptr[u]
    return total


@njit(cache=True)
def _balanced(indptr, rows, has_rows, nrows, parts):
    """Bounds of ``parts`` ranges of positions 0..nrows - 1 (of ``rows``, or of the rows themselves) holding about
    equal arcs (a row counts one more, so that empty rows spread too), and each range's first arc offset."""
    pre = np.empty(nrows + 1, np.int64)
    pre[0] = 0
    for i in range(nrows):
        r = rows[i] if has_rows else i
        pre[i + 1] = pre[i] + indptr[r + 1] - indptr[r]
    bounds = np.empty(parts + 1, np.int64)
    total = pre[nrows] + nrows
    for c in range(parts + 1):
        # the first position i with pre[i] + i >= total * c / parts
        want = total * c // parts
        lo, hi = 0, nrows
        while lo < hi:
            mid = (lo + hi) // 2
            if pre[mid] + mid < want:
                lo = mid + 1
            else:
                hi = mid
        bounds[c] = lo
    bounds[parts] = nrows
    offsets = np.empty(parts + 1, np.int64)
    for c in range(parts + 1):
        offsets[c] = pre[bounds[c]]
    return bounds, offsets


_ROW_BOUNDS = {}  # id(indptr) -> (a weak reference to it, {(rows, parts): _balanced's bounds over its first rows})


def _row_bounds(indptr, nrows, parts):
    """_balanced's bounds over the first ``nrows`` rows themselves, kept per CSR offsets array (a graph's offsets
    never change): a pull or a hook of every row asks for the same ranges every iteration, and the prefix sum
    over every row is serial work that a second thread would otherwise wait for."""
    key = id(indptr)
    got = _ROW_BOUNDS.get(key)
    if got is None or got[0]() is not indptr:
        if len(_ROW_BOUNDS) >= 64:  # graphs of many sizes in one process: keep the last few
            _ROW_BOUNDS.clear()
        got = _ROW_BOUNDS[key] = (weakref.ref(indptr), {})
    bounds = got[1].get((nrows, parts))
    if bounds is None:
        bounds = got[1][(nrows, parts)] = _balanced(indptr, indptr, False, nrows, parts)[0]
    return bounds


def _bit_index_table():
    """For a word with one bit set, its bit's index at ((word * _DE_BRUIJN) >> 58): the de Bruijn sequence's six-bit
    windows are all distinct."""
    table = np.zeros(64, np.int64)
    for i in range(64):
        table[(((1 << i) * int(_DE_BRUIJN)) & (2 ** 64 - 1)) >> 58] = i
    return table


_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_INDEX = _bit_index_table()


@njit(cache=True)
def _sorted_ids(out, k, words, summary):
    res = np.empty(k, out.dtype)
    return res[:_sorted_into(out, k, words, summary, res)]


@njit(cache=True)
def _sorted_into(out, k, words, summary, res):
    """The distinct vertex ids of ``out[:k]`` in increasing order: set as bits of ``words`` (a bitmap of the
    vertices) and of ``summary`` (a bit per word), then read off in order, a summary bit at a time, each word cleared
    as it is read, so that both are all zero again.  O(k + n / 4096), where a sort of k would cost k log k.
    ``_sorted_into`` writes them to ``res`` and returns how many there are."""
    one = np.uint64(1)
    for i in range(k):
        v = out[i]
        w = v >> 6
        words[w] |= one << np.uint64(v & 63)
        summary[w >> 6] |= one << np.uint64(w & 63)
    j = 0
    for s in range(summary.shape[0]):
        x = summary[s]
        if not x:
            continue
        summary[s] = 0
        while x:
            low = x & (~x + one)
            x ^= low
            w = (s << 6) + _BIT_INDEX[(low * _DE_BRUIJN) >> np.uint64(58)]
            y = words[w]
            words[w] = 0
            while y:
                bit = y & (~y + one)
                y ^= bit
                res[j] = (w << 6) + _BIT_INDEX[(bit * _DE_BRUIJN) >> np.uint64(58)]
                j += 1
    return j


_local = threading.local()


def _bits(n):
    """This thread's scratch bitmaps for :func:`_sorted_ids` over n vertices (kept all zero between calls)."""
    cache = getattr(_local, "bits", None)
    if cache is None:
        cache = _local.bits = {}
    got = cache.get(n)
    if got is None:
        if len(cache) >= 8:  # graphs of many sizes in one thread: keep the last few
            cache.clear()
        words = np.zeros((n >> 6) + 1, np.uint64)
        got = cache[n] = (words, np.zeros((words.shape[0] >> 6) + 1, np.uint64))
    return got


@njit(cache=True)
def _gather_chunks(out, offsets, counts):
    """Move each range's ``counts[c]`` outputs, written from ``offsets[c]``, together; how many there are."""
    k = 0
    for c in range(counts.shape[0]):
        start = offsets[c]
        for i in range(counts[c]):
            out[k + i] = out[start + i]
        k += counts[c]
    return k


def _frontier(graph, frontier):
    """The frontier as an array (every vertex where None)."""
    if frontier is None:
        return np.arange(graph.num_vertices, dtype=graph.indices.dtype)
    return frontier


def _weights(graph):
    """(weights, has_weights): an empty array stands for an unweighted graph, so each kernel compiles once."""
    if graph.weights is None:
        return _NO_WEIGHTS, False
    return graph.weights, True


_NO_WEIGHTS = np.zeros(0, dtype=np.float64)


# ---- push visits: BFS, the SSSP tree ------------------------------------------------------------------------

@njit(cache=True)
def _visit_range(indptr, indices, weights, has_w, frontier, lo, hi, label, pred, level, dist, tight, out, k, marks,
                 tally, shift):
    """Claim each unvisited out-neighbour of frontier[lo:hi] (along tight arcs only where ``tight``) in arc order;
    the claimed ids go to out[k:], and the new k is returned.  With ``marks`` (not empty) a claim sets its vertex's
    byte there instead and counts one in tally[v >> shift], its block of vertices (the calling thread's tally)."""
    mark = marks.shape[0] > 0
    for i in range(lo, hi):
        u = frontier[i]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if label[v] != UNVISITED:
                continue
            if tight:
                w = weights[e] if has_w else 1.0
                if dist[u] + w != dist[v]:
                    continue
            label[v] = level
            pred[v] = u
            if mark:
                marks[v] = 1
                tally[v >> shift] += 1
            else:
                out[k] = v
            k += 1
    return k


_NO_MARKS = np.zeros(0, dtype=np.uint8)


@njit(cache=True)
def _visit(indptr, indices, weights, has_w, frontier, label, pred, level, dist, tight, total, words, summary):
    out = np.empty(min(total, label.shape[0]), indices.dtype)
    k = _visit_range(indptr, indices, weights, has_w, frontier, 0, frontier.shape[0], label, pred, level, dist,
                     tight, out, 0, np.zeros(0, np.uint8), np.zeros(0, np.int64), 0)
    return _sorted_ids(out, k, words, summary)


@njit(parallel=True, cache=True)
def _visit_ranges(indptr, indices, weights, has_w, frontier, label, pred, level, dist, tight, bounds, offsets, out,
                  counts, marks, tallies, shift):
    for c in prange(counts.shape[0]):
        counts[c] = _visit_range(indptr, indices, weights, has_w, frontier, bounds[c], bounds[c + 1], label, pred,
                                 level, dist, tight, out, offsets[c], marks, tallies[numba.get_thread_id()],
                                 shift) - offsets[c]


@njit(cache=True)
def _finish_ranges(out, offsets, counts, words, summary):
    k = _gather_chunks(out, offsets, counts)
    return _sorted_ids(out, k, words, summary)


@njit(parallel=True, cache=True)
def _take_marks(marks, shift, offsets, res, taken):
    """Each block of 2**shift vertices writes its marked ids, in order, from offsets[b] and clears their marks."""
    n = marks.shape[0]
    for b in prange(taken.shape[0]):
        k = offsets[b]
        for v in range(b << shift, min(n, (b + 1) << shift)):
            if marks[v]:
                marks[v] = 0
                res[k] = v
                k += 1
        taken[b] = k - offsets[b]


def _ids_scratch(size, dtype):
    """This thread's scratch of at least ``size`` ids, kept between calls: a fresh array the size of the graph
    on every pull level is a fresh mapping past a few MB, whose page faults cost more than the level (the caller
    copies out what it keeps)."""
    got = getattr(_local, "ids", None)
    if got is None or got.shape[0] < max(size, 1) or got.dtype != dtype:
        got = _local.ids = np.empty(max(size, 1), dtype)
    return got[:max(size, 1)]


def _marks(n):
    """This thread's scratch bytes, one per vertex, for a visit's claims (kept all zero between calls)."""
    got = getattr(_local, "marks", None)
    if got is None or got.shape[0] != n:
        got = _local.marks = np.zeros(n, np.uint8)
    return got


def _mark_blocks(n, t):
    """The shift of the blocks of vertices whose claims a visit tallies and reads off: about CHUNKS_PER_THREAD per
    thread, each a whole number of 64-byte lines of marks, so that no two threads clear one line."""
    return max(6, (max(n // (t * CHUNKS_PER_THREAD), 1) - 1).bit_length())


def _collect_marks(marks, shift, counts, dtype):
    """The marked vertices in increasing order, each once, read off by the threads a block of 2**shift vertices at a
    time; the marks are cleared.  ``counts``: the claims tallied per block, where a vertex that two threads claimed
    at once counts twice, so that a block may take fewer: the gaps close after."""
    offsets = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    res = np.empty(int(offsets[-1]), dtype)
    taken = np.empty(counts.shape[0], np.int64)
    _run_parallel(_take_marks, marks, shift, offsets, res, taken)
    if int(taken.sum()) < res.shape[0]:
        res = res[:_gather_chunks(res, offsets, taken)]
    return res


@njit(parallel=True, cache=True)
def _block_arcs(indptr, frontier, sums):
    """The out-arcs of each of len(sums) equal blocks of frontier positions."""
    m, blocks = frontier.shape[0], sums.shape[0]
    for b in prange(blocks):
        s = 0
        for i in range(m * b // blocks, m * (b + 1) // blocks):
            u = frontier[i]
            s += indptr[u + 1] - indptr[u]
        sums[b] = s


@njit(cache=True)
def _group_blocks(sums, m, parts):
    """_balanced's bounds and first arc offsets for ``parts`` ranges of m frontier positions, made of whole blocks
    (``sums``: each block's arcs, as :func:`_block_arcs` counts them) of about equal arcs, a row counting one more;
    offsets[parts] is the frontier's arcs."""
    blocks = sums.shape[0]
    work = np.empty(blocks + 1, np.int64)
    arcs = np.empty(blocks + 1, np.int64)
    work[0] = arcs[0] = 0
    for b in range(blocks):
        arcs[b + 1] = arcs[b] + sums[b]
        work[b + 1] = work[b] + sums[b] + m * (b + 1) // blocks - m * b // blocks
    bounds = np.empty(parts + 1, np.int64)
    offsets = np.empty(parts + 1, np.int64)
    j = 0
    for c in range(parts + 1):
        want = work[blocks] * c // parts
        while j < blocks and work[j] < want:
            j += 1
        bounds[c] = m * j // blocks
        offsets[c] = arcs[j]
    return bounds, offsets


def advance_visit(graph, frontier, label, pred, level, dist=None):
    """Push: label every unvisited out-neighbour ``level`` and its predecessor; return them once each, in increasing
    order.  With ``dist``, only tight arcs (dist[u] + w == dist[v]) are followed: the SSSP tree walk.

    On several threads a level either marks its claims in a byte per vertex, read off by the threads in vertex
    order (where n is at most MARK_SCAN times its frontier's arcs, or vertices: the two passes over n bytes cost
    less than the level), or writes each range's claims to its own part of one buffer of the level's arcs, sorted
    after through a bitmap.  Marks need neither that buffer, fresh memory in every large level (page faults, huge
    pages zeroed), nor the serial sort.  Each parallel region costs a wake-up of the other threads, on a shared
    machine as long as a time slice, so a level runs as few as it can: a long frontier that marks is split into
    many equal ranges of positions, taken one at a time, rather than counting its arcs first."""
    frontier = _frontier(graph, frontier)
    weights, has_w = _weights(graph)
    tight = dist is not None
    if dist is None:
        dist = _NO_WEIGHTS
    n, m = graph.num_vertices, frontier.shape[0]
    if m >= PARALLEL_FRONTIER and threads() > 1:
        t = _parallel(m)
        if n <= MARK_SCAN * m:
            parts = t * CHUNKS_PER_THREAD * _BLOCKS_PER_RANGE
            bounds = np.arange(parts + 1, dtype=np.int64) * m // parts
            return _visit_marks(graph, frontier, label, pred, level, dist, tight, weights, has_w, bounds, t)
        sums = np.empty(t * CHUNKS_PER_THREAD * _BLOCKS_PER_RANGE, np.int64)
        _run_parallel(_block_arcs, graph.indptr, frontier, sums)
        bounds, offsets = _group_blocks(sums, m, t * CHUNKS_PER_THREAD)
        total = int(offsets[-1])
    else:
        total = _degree_sum(graph.indptr, frontier)
        t = _parallel(total)
        if t == 1:
            return _visit(graph.indptr, graph.indices, weights, has_w, frontier, label, pred, level, dist, tight,
                          total, *_bits(n))
        bounds, offsets = _balanced(graph.indptr, frontier, True, m, t * CHUNKS_PER_THREAD)
        if n <= MARK_SCAN * total:
            return _visit_marks(graph, frontier, label, pred, level, dist, tight, weights, has_w, bounds, t)
    counts = np.zeros(bounds.shape[0] - 1, np.int64)
    out = np.empty(max(total, 1), graph.indices.dtype)
    _run_parallel(_visit_ranges, graph.indptr, graph.indices, weights, has_w, frontier, label, pred, level, dist,
                  tight, bounds, offsets, out, counts, _NO_MARKS, np.zeros((t, 0), np.int64), 0)
    return _finish_ranges(out, offsets, counts, *_bits(n))


def _visit_marks(graph, frontier, label, pred, level, dist, tight, weights, has_w, bounds, t):
    """advance_visit's claims as marks over the ranges ``bounds`` of the frontier, on ``t`` threads."""
    n = graph.num_vertices
    marks, shift = _marks(n), _mark_blocks(n, t)
    ranges, blocks = bounds.shape[0] - 1, ((n - 1) >> shift) + 1 if n else 0
    # each thread's tally in a row of its own, a line apart from the next one's
    tallies = np.zeros((t, (blocks + 7) // 8 * 8 + 8), np.int64)
    _run_parallel(_visit_ranges, graph.indptr, graph.indices, weights, has_w, frontier, label, pred, level, dist,
                  tight, bounds, np.zeros(ranges, np.int64), graph.indices[:0], np.zeros(ranges, np.int64), marks,
                  tallies, shift)
    return _collect_marks(marks, shift, tallies[:, :blocks].sum(axis=0), graph.indices.dtype)


# ---- pull visit and the SSSP tree's pull ----------------------------------------------------------------------

@njit(cache=True)
def _visit_pull_range(indptr, indices, label, pred, level, bits, lo, hi, out, k):
    """Each unvisited row v in lo..hi - 1 takes its first in-neighbour set in ``bits``; claimed rows go to out[k:]."""
    for v in range(lo, hi):
        if label[v] != UNVISITED:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if (bits[u >> 5] >> (u & 31)) & 1:
                label[v] = level
                pred[v] = u
                out[k] = v
                k += 1
                break
    return k


@njit(cache=True)
def _visit_pull(indptr, indices, label, pred, level, bits, rows):
    out = np.empty(rows, indices.dtype)
    k = _visit_pull_range(indptr, indices, label, pred, level, bits, 0, rows, out, 0)
    return out[:k].copy()


@njit(parallel=True, cache=True)
def _visit_pull_ranges(indptr, indices, label, pred, level, bits, bounds, out, counts):
    for c in prange(counts.shape[0]):
        counts[c] = _visit_pull_range(indptr, indices, label, pred, level, bits, bounds[c], bounds[c + 1], out,
                                      bounds[c]) - bounds[c]


@njit(cache=True)
def _pull_output(out, bounds, counts):
    k = _gather_chunks(out, bounds, counts)
    return out[:k].copy()


def advance_visit_pull(rgraph, label, pred, level, frontier_bits):
    """Pull with early exit: each unvisited vertex (of the rows that may hold arcs) takes its first in-neighbour in
    the frontier; the claimed vertices in increasing order."""
    rows = rgraph.arc_rows
    bits = frontier_bits.view(np.uint32)
    t = _parallel(int(rgraph.indptr[rows]))
    if t == 1:
        return _visit_pull(rgraph.indptr, rgraph.indices, label, pred, level, bits, rows)
    bounds = _row_bounds(rgraph.indptr, rows, t * CHUNKS_PER_THREAD)
    out = _ids_scratch(rows, rgraph.indices.dtype)
    counts = np.zeros(bounds.shape[0] - 1, np.int64)
    _run_parallel(_visit_pull_ranges, rgraph.indptr, rgraph.indices, label, pred, level, bits, bounds, out, counts)
    return _pull_output(out, bounds, counts)


@njit(cache=True)
def _tight_range(indptr, indices, weights, has_w, dist, pred, lo, hi):
    for v in range(lo, hi):
        if pred[v] != UNVISITED or not np.isfinite(dist[v]):
            continue
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            w = weights[e] if has_w else 1.0
            if dist[u] + w == dist[v]:
                pred[v] = u
                break


@njit(parallel=True, cache=True)
def _tight_ranges(indptr, indices, weights, has_w, dist, pred, bounds):
    for c in prange(bounds.shape[0] - 1):
        _tight_range(indptr, indices, weights, has_w, dist, pred, bounds[c], bounds[c + 1])


def tight_predecessors(rgraph, dist, pred):
    """Each reached row v (of those that may hold arcs) whose pred is -1 takes the in-neighbour of its first tight
    in-arc (dist[u] + w == dist[v]), in row order."""
    rows = rgraph.arc_rows
    weights, has_w = _weights(rgraph)
    t = _parallel(int(rgraph.indptr[rows]))
    if t == 1:
        _tight_range(rgraph.indptr, rgraph.indices, weights, has_w, dist, pred, 0, rows)
        return
    bounds = _row_bounds(rgraph.indptr, rows, t * CHUNKS_PER_THREAD)
    _run_parallel(_tight_ranges, rgraph.indptr, rgraph.indices, weights, has_w, dist, pred, bounds)


# ---- relaxation, path counting, dependencies: one thread, the twins' order ------------------------------------

@njit(cache=True)
def _relax(indptr, indices, weights, has_w, frontier, dist, marks, stamp, words, summary):
    """dist[v] = min(dist[v], dist[u] + w) with dist[u] as it was when the call started (as the twin gathers it);
    each improved vertex once."""
    nf = frontier.shape[0]
    start = np.empty(nf, np.float64)
    for i in range(nf):
        start[i] = dist[frontier[i]]
    out = np.empty(min(_degree_sum(indptr, frontier), dist.shape[0]), indices.dtype)
    k = 0
    for i in range(nf):
        u = frontier[i]
        du = start[i]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = du + (weights[e] if has_w else 1.0)
            if nd < dist[v]:
                dist[v] = nd
                if marks[v] != stamp:
                    marks[v] = stamp
                    out[k] = v
                    k += 1
    return _sorted_ids(out, k, words, summary)


def advance_relax(graph, frontier, dist, marks, stamp):
    """Push: dist[v] = min(dist[v], dist[u] + w); return the improved vertices once each (marked ``stamp``, which
    must be new to ``marks``), in increasing order."""
    weights, has_w = _weights(graph)
    return _relax(graph.indptr, graph.indices, weights, has_w, _frontier(graph, frontier), dist, marks, stamp,
                  *_bits(graph.num_vertices))


@njit(cache=True)
def _count_paths(indptr, indices, frontier, label, sigma, level, words, summary):
    out = np.empty(min(_degree_sum(indptr, frontier), label.shape[0]), indices.dtype)
    k = 0
    for i in range(frontier.shape[0]):
        u = frontier[i]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            old = label[v]
            if old == UNVISITED:
                label[v] = level
                out[k] = v
                k += 1
            if old == UNVISITED or old == level:
                sigma[v] += sigma[u]
    return _sorted_ids(out, k, words, summary)


def advance_count_paths(graph, frontier, label, sigma, level):
    """Brandes forward step: visit like BFS, and add sigma[u] into every successor on the next level (in arc order,
    as the twin adds)."""
    return _count_paths(graph.indptr, graph.indices, _frontier(graph, frontier), label, sigma, level,
                        *_bits(graph.num_vertices))


@njit(cache=True)
def _dependency(indptr, indices, frontier, label, sigma, delta, level):
    for i in range(frontier.shape[0]):
        u = frontier[i]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if label[v] == level + 1:
                delta[u] += sigma[u] / sigma[v] * (1.0 + delta[v])


def advance_dependency(graph, frontier, label, sigma, delta, level):
    """Brandes backward step: delta[u] += sigma[u] / sigma[v] * (1 + delta[v]) over arcs u->v to ``level + 1``."""
    _dependency(graph.indptr, graph.indices, _frontier(graph, frontier), label, sigma, delta, level)


# ---- atomics: a compare-and-swap and a load that the compiler may not keep in a register ------------------------

def _element_pointer(context, builder, aryty, array, idxty, index):
    ary = context.make_array(aryty)(context, builder, array)
    i = context.cast(builder, index, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [i], wraparound=False)


@intrinsic
def _cas(typingctx, array, index, expected, new):
    """array[index] = new where it holds ``expected``, atomically; returns what it held (== expected: swapped)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(array.dtype, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        aryty, idxty, expty, newty = sig.args
        ptr = _element_pointer(context, builder, aryty, args[0], idxty, args[1])
        swap = builder.cmpxchg(ptr, context.cast(builder, args[2], expty, aryty.dtype),
                               context.cast(builder, args[3], newty, aryty.dtype), "monotonic", "monotonic")
        return builder.extract_value(swap, 0)

    return array.dtype(array, index, expected, new), codegen


@intrinsic
def _load(typingctx, array, index):
    """array[index], read from memory every time (an atomic load): another thread may have changed it."""
    if not (isinstance(array, types.Array) and array.ndim == 1):
        return None

    def codegen(context, builder, sig, args):
        aryty, idxty = sig.args
        ptr = _element_pointer(context, builder, aryty, args[0], idxty, args[1])
        return builder.load_atomic(ptr, "monotonic", context.get_abi_alignment(context.get_data_type(aryty.dtype)))

    return array.dtype(array, index), codegen


@intrinsic
def _store(typingctx, array, index, value):
    """array[index] = value as one atomic store: another thread may read the entry meanwhile."""
    if not (isinstance(array, types.Array) and array.ndim == 1):
        return None

    def codegen(context, builder, sig, args):
        aryty, idxty, valty = sig.args
        ptr = _element_pointer(context, builder, aryty, args[0], idxty, args[1])
        builder.store_atomic(context.cast(builder, args[2], valty, aryty.dtype), ptr, "monotonic",
                             context.get_abi_alignment(context.get_data_type(aryty.dtype)))
        return context.get_dummy_value()

    return types.none(array, index, value), codegen


# ---- union-find -----------------------------------------------------------------------------------------------

@njit(cache=True)
def _root(parent, x):
    """x's root, halving the path on the way (every vertex passed then points at its grandparent: roots stay)."""
    while parent[x] != x:
        up = parent[parent[x]]
        parent[x] = up
        x = up
    return x


@njit(cache=True)
def _compress_range(parent, lo, hi):
    for x in range(lo, hi):
        r = x
        while parent[r] != r:
            r = parent[r]
        parent[x] = r  # another thread walking through x reads r or x's old parent: both lead to r


@njit(parallel=True, cache=True)
def _compress_ranges(parent, parts):
    n = parent.shape[0]
    for c in prange(parts):
        _compress_range(parent, n * c // parts, n * (c + 1) // parts)


def compress(parent):
    """Pointer jumping: every vertex points at its root.  On several threads in small ranges, taken in increasing
    order: a parent is a smaller id, mostly in a range done already, so that walks stay short."""
    n = parent.shape[0]
    t = _parallel(n)
    if t == 1:
        _compress_range(parent, 0, n)
    else:
        _run_parallel(_compress_ranges, parent, max(t * CHUNKS_PER_THREAD, n >> 12))


@njit(cache=True)
def _hook(indptr, indices, rows, has_rows, nrows, parent, pairs_below, lo, hi, has_hi, skip):
    """Union the endpoints of the arcs at positions lo..hi - 1 of each row (to its end where not has_hi), but those
    v < u < pairs_below and the rows u whose parent is ``skip`` (>= 0) when the call starts; the larger root goes
    under the smaller, so that every root is the smallest id of its tree."""
    skipped = np.zeros(nrows if skip >= 0 else 0, np.bool_)
    if skip >= 0:
        for i in range(nrows):
            skipped[i] = parent[rows[i] if has_rows else i] == skip
    for i in range(nrows):
        if skip >= 0 and skipped[i]:
            continue
        u = rows[i] if has_rows else i
        first = indptr[u] + lo
        last = indptr[u + 1]
        if has_hi and indptr[u] + hi < last:
            last = indptr[u] + hi
        for e in range(first, last):
            v = indices[e]
            if v < pairs_below and u > v:
                continue
            a = _root(parent, u)
            b = _root(parent, v)
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b


@njit(cache=True)
def _find(parent, x):
    """x's root, halving the path on the way, while other threads may link and halve too: a vertex that is not a
    root never becomes one again and every value stored is one of its ancestors, so a halving step stores a valid
    parent whatever raced it, and roots are written only by :func:`_link`'s compare-and-swap."""
    while True:
        p = _load(parent, x)
        if p == x:
            return x
        up = _load(parent, p)
        if up != p:
            _store(parent, x, up)
        x = up


@njit(cache=True)
def _link(parent, u, v):
    """Join the trees of u and v, the larger root under the smaller, with a compare-and-swap on the larger root
    (Afforest's link, Sutton et al. 2018, with the paths halved as the one-thread hook halves them): several threads
    may link at once.  Every parent is at most its child, so no cycle forms."""
    a = _find(parent, u)
    b = _find(parent, v)
    while a != b:
        high, low = max(a, b), min(a, b)
        if _cas(parent, high, high, low) == high:
            return
        a = _find(parent, high)
        b = _find(parent, low)


@njit(cache=True)
def _link_range(indptr, indices, rows, has_rows, parent, pairs_below, lo, hi, has_hi, skipped, has_skip, first,
                last):
    for i in range(first, last):
        if has_skip and skipped[i]:
            continue
        u = rows[i] if has_rows else i
        start, end = indptr[u] + lo, indptr[u + 1]
        if has_hi and indptr[u] + hi < end:
            end = indptr[u] + hi
        for e in range(start, end):
            v = indices[e]
            if v < pairs_below and u > v:
                continue
            _link(parent, u, v)


@njit(parallel=True, cache=True)
def _link_ranges(indptr, indices, rows, has_rows, parent, pairs_below, lo, hi, has_hi, skip, skipped, bounds):
    # no array expressions in here: numba would run them as loops of their own, handed out one element at a time
    if skip >= 0:  # the rows of skip's tree when the call starts
        for c in prange(bounds.shape[0] - 1):
            for i in range(bounds[c], bounds[c + 1]):
                skipped[i] = parent[rows[i] if has_rows else i] == skip
    for c in prange(bounds.shape[0] - 1):
        _link_range(indptr, indices, rows, has_rows, parent, pairs_below, lo, hi, has_hi, skipped, skip >= 0,
                     bounds[c], bounds[c + 1])


def _hook_rows(graph, rows, nrows, parent, pairs_below, lo, hi, skip):
    """Hook the arcs lo..hi - 1 (hi None: to the end) of ``nrows`` rows (of ``rows``, else the first ones): one
    thread with path halving, or several linking with compare-and-swap, halving paths too, and then jumping
    pointers, so that the next hooks do not climb long chains (Afforest compresses after each sampled round).
    Whether ``parent`` ends compressed (flat)."""
    has_rows = rows is not None
    rows = rows if has_rows else graph.indptr
    args = (graph.indptr, graph.indices, rows, has_rows)
    work = int(nrows) * (hi - lo) if hi is not None else int(graph.indptr[-1])
    t = _parallel(work)
    if t == 1:
        _hook(*args, nrows, parent, pairs_below, lo, 0 if hi is None else hi, hi is not None, skip)
        return False
    parts = t * CHUNKS_PER_THREAD
    if hi is None:
        bounds = _balanced(graph.indptr, rows, True, nrows, parts)[0] if has_rows else \
            _row_bounds(graph.indptr, nrows, parts)
    else:  # a few arcs per row: rows in equal ranges
        bounds = np.arange(parts + 1, dtype=np.int64) * nrows // parts
    skipped = np.empty(nrows if skip >= 0 else 0, np.bool_)
    _run_parallel(_link_ranges, *args, parent, pairs_below, lo, 0 if hi is None else hi, hi is not None, skip, skipped,
                  bounds)
    compress(parent)
    return True


def hook_components(graph, parent, pairs_below=None, arcs=None, skip=None):
    """Union-find over the arcs (see the twin for ``arcs`` and ``skip``): a forest whose roots are the smallest ids
    of the components those arcs connect, as on the GPU.  After :func:`compress` every vertex points at its root,
    the twin's ``parent`` to the bit (the twin leaves it flat already; its trees' inner shape is no result)."""
    lo, hi = arcs if arcs is not None else (0, None)
    rows = graph.arc_rows if (arcs is not None or skip is not None) else graph.num_vertices
    _hook_rows(graph, None, rows, parent, int(pairs_below or 0), int(lo), None if hi is None else int(hi),
               -1 if skip is None else int(skip))


@njit(cache=True)
def _segment_min(seg, values, out):
    for i in range(seg.shape[0]):
        if values[i] < out[seg[i]]:
            out[seg[i]] = values[i]


def segment_min(seg, values, initial):
    """out = copy of ``initial``; out[seg[i]] = min(out[seg[i]], values[i]) for every i (int64)."""
    out = initial.astype(np.int64, copy=True)
    _segment_min(seg, values.astype(np.int64, copy=False), out)
    return out


def tree_spread(parent, label, tree_min, lowered, id_dtype, emit):
    """ops.tree_spread: the trees' minima lowered through the compiled segment minimum, then numpy_ops' pass."""
    if lowered is None:
        _segment_min(parent, label, tree_min)
    else:
        _segment_min(parent[lowered], label[lowered], tree_min)
    return numpy_ops._spread_down(parent, label, tree_min, id_dtype, emit)


# ---- the generic advance ----------------------------------------------------------------------------------------

def advance(graph, frontier, functor, args):
    """ops.advance on the CPU: a built-in functor's kernel; a user's functor's compiled scalar body (``cpu=``) over
    the frontier's arcs in order, on one thread; else its NumPy twin.  The emitted vertices once each, in
    increasing order (None for a functor that does not emit)."""
    if functors.BUILTIN.get(functor.name) is functor:
        return _BUILTIN[functor.name](graph, frontier, *args)
    if functor.cpu is None:
        return numpy_ops.advance(graph, frontier, functor, args)
    drive = _driver(functor)
    frontier = _frontier(graph, frontier)
    weights, has_w = _weights(graph)
    out = np.empty(min(_degree_sum(graph.indptr, frontier), graph.num_vertices) if functor.emits else 0,
                   graph.indices.dtype)
    k = drive(graph.indptr, graph.indices, weights, has_w, frontier, out, args)
    if not functor.emits:
        return None
    return _sorted_ids(out, k, *_bits(graph.num_vertices))


def _driver(functor):
    """The compiled advance of a user's functor: its scalar body on every arc, in order (compiled once per process
    and argument types)."""
    drive = _DRIVERS.get(functor)
    if drive is None:
        body = njit(functor.cpu)
        emits = functor.emits

        @njit
        def drive_arcs(indptr, indices, weights, has_w, frontier, out, args):
            k = 0
            for i in range(frontier.shape[0]):
                u = np.int64(frontier[i])
                for e in range(indptr[u], indptr[u + 1]):
                    v = np.int64(indices[e])
                    w = weights[e] if has_w else 1.0
                    if emits:
                        if body(u, v, e, w, *args):
                            out[k] = v
                            k += 1
                    else:
                        body(u, v, e, w, *args)
            return k

        def drive(*a):
            try:
                return drive_arcs(*a)
            except numba.core.errors.TypingError as e:
                raise ValueError(f"functor {functor.name}: its cpu body does not compile with numba "
                                 f"(body(u, v, e, w, {', '.join(p.name for p in functor.params)}) on scalars and "
                                 f"NumPy arrays): {e}") from None

        _DRIVERS[functor] = drive
    return drive


def _hook_functor(graph, frontier, parent, pairs_below):
    if frontier is None:
        hook_components(graph, parent, pairs_below)
        return None
    frontier = _frontier(graph, frontier)
    _hook_rows(graph, frontier, frontier.shape[0], parent, int(pairs_below), 0, None, -1)
    return None


_BUILTIN = {
    functors.VISIT.name: lambda g, f, label, pred, level: advance_visit(g, f, label, pred, level),
    functors.VISIT_TIGHT.name: advance_visit,
    functors.RELAX.name: advance_relax,
    functors.COUNT_PATHS.name: advance_count_paths,
    functors.DEPENDENCY.name: advance_dependency,
    functors.HOOK.name: _hook_functor,
}


# ---- pull sum, L1 distance --------------------------------------------------------------------------------------

@njit(cache=True)
def _pull_range(indptr, indices, weights, has_w, x, scale, scaled, shift, shifted, y, lo, hi):
    for v in range(lo, hi):
        acc = 0.0
        if has_w:
            for e in range(indptr[v], indptr[v + 1]):
                acc += x[indices[e]] * weights[e]
        else:
            for e in range(indptr[v], indptr[v + 1]):
                acc += x[indices[e]]
        if scaled:
            acc *= scale
        if shifted:
            acc += shift
        y[v] = acc


@njit(parallel=True, cache=True)
def _pull_ranges(indptr, indices, weights, has_w, x, scale, scaled, shift, shifted, y, bounds):
    for c in prange(bounds.shape[0] - 1):
        _pull_range(indptr, indices, weights, has_w, x, scale, scaled, shift, shifted, y, bounds[c], bounds[c + 1])


def pull_sum(rgraph, x, scale=1.0, shift=0.0):
    """y[v] = scale * (sum of x[u] * w(u, v) over in-arcs u->v, in row order) + shift, float64, the product and the
    sum rounded apart: the twin's bits."""
    if x.dtype != np.float64:
        return numpy_ops.pull_sum(rgraph, x, scale, shift)
    weights, has_w = _weights(rgraph)
    n = rgraph.num_vertices
    y = np.empty(n, np.float64)
    scaled, shifted = bool(scale != 1.0), bool(np.ndim(shift) or shift != 0.0)
    scale, shift = float(scale), float(np.asarray(shift).reshape(-1)[0]) if np.ndim(shift) else float(shift)
    t = _parallel(int(rgraph.indptr[n]))
    if t == 1:
        _pull_range(rgraph.indptr, rgraph.indices, weights, has_w, x, scale, scaled, shift, shifted, y, 0, n)
    else:
        bounds = _row_bounds(rgraph.indptr, n, t * CHUNKS_PER_THREAD)
        _run_parallel(_pull_ranges, rgraph.indptr, rgraph.indices, weights, has_w, x, scale, scaled, shift, shifted,
                      y, bounds)
    return y


@njit(cache=True)
def _pairwise_l1(a, b, lo, n):
    """The sum of |a[i] - b[i]| over lo..lo + n - 1 in NumPy's pairwise order (blocks of 128 on eight
    accumulators, halves above), so that the result is np.sum's to the bit."""
    if n < 8:
        r = 0.0
        for i in range(lo, lo + n):
            r += abs(np.float64(a[i]) - np.float64(b[i]))
        return r
    if n <= 128:
        r0 = abs(np.float64(a[lo]) - np.float64(b[lo]))
        r1 = abs(np.float64(a[lo + 1]) - np.float64(b[lo + 1]))
        r2 = abs(np.float64(a[lo + 2]) - np.float64(b[lo + 2]))
        r3 = abs(np.float64(a[lo + 3]) - np.float64(b[lo + 3]))
        r4 = abs(np.float64(a[lo + 4]) - np.float64(b[lo + 4]))
        r5 = abs(np.float64(a[lo + 5]) - np.float64(b[lo + 5]))
        r6 = abs(np.float64(a[lo + 6]) - np.float64(b[lo + 6]))
        r7 = abs(np.float64(a[lo + 7]) - np.float64(b[lo + 7]))
        i = lo + 8
        end = lo + n - n % 8
        while i < end:
            r0 += abs(np.float64(a[i]) - np.float64(b[i]))
            r1 += abs(np.float64(a[i + 1]) - np.float64(b[i + 1]))
            r2 += abs(np.float64(a[i + 2]) - np.float64(b[i + 2]))
            r3 += abs(np.float64(a[i + 3]) - np.float64(b[i + 3]))
            r4 += abs(np.float64(a[i + 4]) - np.float64(b[i + 4]))
            r5 += abs(np.float64(a[i + 5]) - np.float64(b[i + 5]))
            r6 += abs(np.float64(a[i + 6]) - np.float64(b[i + 6]))
            r7 += abs(np.float64(a[i + 7]) - np.float64(b[i + 7]))
            i += 8
        r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < lo + n:
            r += abs(np.float64(a[i]) - np.float64(b[i]))
            i += 1
        return r
    half = n // 2
    half -= half % 8
    return _pairwise_l1(a, b, lo, half) + _pairwise_l1(a, b, lo + half, n - half)


def l1_distance(a, b, count=None):
    """The sum of |a[i] - b[i]| over i < count (every i where None), float64, as a 0-d array: one pass, in the
    twin's (NumPy's pairwise) order."""
    if a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf" or a.dtype == np.float16 or b.dtype == np.float16:
        return numpy_ops.l1_distance(a, b, count)
    n = a.shape[0] if count is None else int(count)
    return np.asarray(_pairwise_l1(a, b, 0, n), dtype=np.float64)


# ---- neighbour-reduce -------------------------------------------------------------------------------------------

@njit(cache=True)
def _reduce_range(indptr, indices, weights, rows, has_rows, values, op, identity, empty, has_empty, out, lo, hi):
    """op 0 sum, 1 min, 2 max of each listed row's neighbours' values (times the arcs' weights where ``weights`` is
    an array, None otherwise: two compilations, so that integer values stay integers), in the row's order, as the
    twin's unbuffered scatter does it."""
    for i in range(lo, hi):
        r = rows[i] if has_rows else i
        acc = identity
        for e in range(indptr[r], indptr[r + 1]):
            if weights is None:
                x = values[indices[e]]
            else:
                x = values[indices[e]] * weights[e]
            if op == 0:
                acc += x
            elif op == 1:  # np.minimum / np.maximum: a NaN stays, a tie takes the new value
                if not (acc < x or acc != acc):
                    acc = x
            elif not (acc > x or acc != acc):
                acc = x
        if has_empty and indptr[r + 1] == indptr[r]:
            acc = empty
        out[i] = acc


@njit(parallel=True, cache=True)
def _reduce_ranges(indptr, indices, weights, rows, has_rows, values, op, identity, empty, has_empty, out, bounds):
    for c in prange(bounds.shape[0] - 1):
        _reduce_range(indptr, indices, weights, rows, has_rows, values, op, identity, empty, has_empty, out,
                      bounds[c], bounds[c + 1])


@njit(cache=True)
def _mode_range(indptr, indices, rows, has_rows, values, prefer, has_prefer, empty, out, lo, hi, scratch):
    """Per listed row, the most frequent neighbour value; a tie to prefer's entry where it is among the most frequent,
    else to the largest; prefer's entry (or ``empty``) for a row without neighbours."""
    for i in range(lo, hi):
        r = rows[i] if has_rows else i
        d = indptr[r + 1] - indptr[r]
        if d == 0:
            out[i] = prefer[r] if has_prefer else empty
            continue
        buf = scratch[:d]
        for j in range(d):
            buf[j] = values[indices[indptr[r] + j]]
        buf.sort()
        best, best_count, prefer_count = buf[0], 0, 0
        j = 0
        while j < d:
            x = buf[j]
            m = j + 1
            while m < d and buf[m] == x:
                m += 1
            if m - j >= best_count:  # sorted: a tie moves to the larger value
                best, best_count = x, m - j
            if has_prefer and x == prefer[r]:
                prefer_count = m - j
            j = m
        out[i] = prefer[r] if has_prefer and prefer_count == best_count else best


@njit(cache=True)
def _mex_range(indptr, indices, rows, has_rows, values, out, lo, hi, seen):
    """Per listed row, the smallest non-negative integer not among its neighbours' values (a row of d neighbours
    has its mex in 0..d)."""
    for i in range(lo, hi):
        r = rows[i] if has_rows else i
        d = indptr[r + 1] - indptr[r]
        for e in range(indptr[r], indptr[r + 1]):
            x = values[indices[e]]
            if 0 <= x <= d:
                seen[x] = True
        m = 0
        while m < d and seen[m]:
            m += 1
        out[i] = m
        for e in range(indptr[r], indptr[r + 1]):
            x = values[indices[e]]
            if 0 <= x <= d:
                seen[x] = False


@njit(cache=True)
def _max_row(indptr, rows, has_rows, lo, hi):
    d = 0
    for i in range(lo, hi):
        r = rows[i] if has_rows else i
        d = max(d, indptr[r + 1] - indptr[r])
    return d


@njit(cache=True)
def _mode(indptr, indices, rows, has_rows, values, prefer, has_prefer, empty, out, lo, hi):
    scratch = np.empty(_max_row(indptr, rows, has_rows, lo, hi), values.dtype)
    _mode_range(indptr, indices, rows, has_rows, values, prefer, has_prefer, empty, out, lo, hi, scratch)


@njit(cache=True)
def _mex(indptr, indices, rows, has_rows, values, out, lo, hi):
    seen = np.zeros(_max_row(indptr, rows, has_rows, lo, hi) + 1, np.bool_)
    _mex_range(indptr, indices, rows, has_rows, values, out, lo, hi, seen)


@njit(parallel=True, cache=True)
def _mode_ranges(indptr, indices, rows, has_rows, values, prefer, has_prefer, empty, out, bounds):
    for c in prange(bounds.shape[0] - 1):
        _mode(indptr, indices, rows, has_rows, values, prefer, has_prefer, empty, out, bounds[c], bounds[c + 1])


@njit(parallel=True, cache=True)
def _mex_ranges(indptr, indices, rows, has_rows, values, out, bounds):
    for c in prange(bounds.shape[0] - 1):
        _mex(indptr, indices, rows, has_rows, values, out, bounds[c], bounds[c + 1])


_NUMERIC = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                          np.uint64, np.float32, np.float64))


def neighbor_reduce(graph, values, op, rows=None, weighted=False, prefer=None, empty=None):
    """ops.neighbor_reduce over rows (their docstring has the rules), each row's neighbours in order: the twin's
    results (:func:`mgraph.ops.segments.neighbor_reduce`), which also takes the cases compiled here leave (values
    that are not plain numbers, and mode or mex of weighted values)."""
    weighted = bool(weighted and graph.weights is not None)
    if values.dtype not in _NUMERIC or (weighted and op in ("mode", "mex")) \
            or (op == "mode" and values.dtype.kind == "u"):
        return segments.neighbor_reduce(graph, values, op, rows, weighted, prefer, empty)
    has_rows = rows is not None
    listed = rows.astype(np.int64, copy=False) if has_rows else graph.indptr  # indptr: any int64 array will do
    num_rows = listed.shape[0] if has_rows else graph.num_vertices
    weights = graph.weights if weighted else None
    work = int(graph.indptr[-1]) if not has_rows else num_rows * max(1, graph.num_arcs // max(graph.num_vertices, 1))
    t = _parallel(work)
    bounds = None if t == 1 else _balanced(graph.indptr, listed, True, num_rows, t * CHUNKS_PER_THREAD)[0] \
        if has_rows else _row_bounds(graph.indptr, num_rows, t * CHUNKS_PER_THREAD)
    if op == "mode":
        out = np.empty(num_rows, values.dtype)
        has_prefer = prefer is not None
        pref = prefer.astype(values.dtype, copy=False) if has_prefer else values
        fill = values.dtype.type(-1 if empty is None else empty)
        if t == 1:
            _mode(graph.indptr, graph.indices, listed, has_rows, values, pref, has_prefer, fill, out, 0, num_rows)
        else:
            _run_parallel(_mode_ranges, graph.indptr, graph.indices, listed, has_rows, values, pref, has_prefer, fill,
                          out, bounds)
        return out
    if op == "mex":
        out = np.empty(num_rows, np.int64)
        if t == 1:
            _mex(graph.indptr, graph.indices, listed, has_rows, values, out, 0, num_rows)
        else:
            _run_parallel(_mex_ranges, graph.indptr, graph.indices, listed, has_rows, values, out, bounds)
        return out
    dtype = np.result_type(values.dtype, weights.dtype) if weighted else values.dtype
    if op == "sum":
        code, identity = 0, dtype.type(0)
    else:
        info = np.iinfo(dtype) if dtype.kind in "iu" else None
        code = 1 if op == "min" else 2
        identity = dtype.type((info.max if info else np.inf) if op == "min" else (info.min if info else -np.inf))
    has_empty = empty is not None and op != "sum"
    fill = dtype.type(empty) if has_empty else identity
    out = np.empty(num_rows, dtype)
    args = (graph.indptr, graph.indices, weights, listed, has_rows, values, code, identity, fill, has_empty, out)
    if t == 1:
        _reduce_range(*args, 0, num_rows)
    else:
        _run_parallel(_reduce_ranges, *args, bounds)
    return out


# ---- intersection -----------------------------------------------------------------------------------------------

@njit(cache=True)
def _longer(indptr, x, y):
    """(the shorter row, the longer row) of x and y."""
    if indptr[x + 1] - indptr[x] > indptr[y + 1] - indptr[y]:
        return y, x
    return x, y


@njit(cache=True)
def _intersect_range(indptr, indices, a, b, out, lo, hi):
    """Pairs lo..hi - 1 one by one: a merge of the two rows, or where one is much longer, a search of it by doubling
    steps (a cost that grows with the log of the gap passed, not of the row)."""
    for i in range(lo, hi):
        x, y = _longer(indptr, a[i], b[i])
        sx, ex, sy, ey = indptr[x], indptr[x + 1], indptr[y], indptr[y + 1]
        count = 0
        if (ex - sx) * _GALLOP < ey - sy:
            q = sy
            for p in range(sx, ex):
                if q >= ey:
                    break
                want = indices[p]
                if indices[q] < want:
                    below, step = q, 1  # indices[below] < want
                    top = q + 1
                    while top < ey and indices[top] < want:
                        below = top
                        step *= 2
                        top = below + step
                    if top > ey:
                        top = ey
                    q = below + 1
                    while q < top:
                        m = (q + top) >> 1
                        if indices[m] < want:
                            q = m + 1
                        else:
                            top = m
                if q < ey and indices[q] == want:
                    count += 1
                    q += 1
        else:
            p, q = sx, sy
            while p < ex and q < ey:
                s, t = indices[p], indices[q]
                if s < t:
                    p += 1
                elif t < s:
                    q += 1
                else:
                    count += 1
                    p += 1
                    q += 1
        out[i] = count


@njit(cache=True)
def _by_longer_row(indptr, a, b, n):
    """The pairs' positions grouped by their longer row (a counting sort), and the work before each position (the
    shorter rows' lengths, plus one per pair)."""
    m = a.shape[0]
    start = np.zeros(n + 1, np.int64)
    for i in range(m):
        start[_longer(indptr, a[i], b[i])[1] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    order = np.empty(m, np.int64)
    for i in range(m):
        y = _longer(indptr, a[i], b[i])[1]
        order[start[y]] = i
        start[y] += 1
    work = np.empty(m + 1, np.int64)
    work[0] = 0
    for j in range(m):
        x = _longer(indptr, a[order[j]], b[order[j]])[0]
        work[j + 1] = work[j] + 1 + indptr[x + 1] - indptr[x]
    return order, work


@njit(cache=True)
def _intersect_marked(indptr, indices, a, b, order, lo, hi, out, n):
    """Pairs order[lo:hi], grouped by their longer row: that row is marked in a bitmap once for its group, and each
    pair costs its shorter row alone."""
    mark = np.zeros(n, np.bool_)
    marked = -1
    for j in range(lo, hi):
        i = order[j]
        x, y = _longer(indptr, a[i], b[i])
        if y != marked:
            if marked >= 0:
                for e in range(indptr[marked], indptr[marked + 1]):
                    mark[indices[e]] = False
            for e in range(indptr[y], indptr[y + 1]):
                mark[indices[e]] = True
            marked = y
        count = 0
        for p in range(indptr[x], indptr[x + 1]):
            count += mark[indices[p]]
        out[i] = count


@njit(parallel=True, cache=True)
def _intersect_marked_ranges(indptr, indices, a, b, order, bounds, out, n):
    for c in prange(bounds.shape[0] - 1):
        _intersect_marked(indptr, indices, a, b, order, bounds[c], bounds[c + 1], out, n)


@njit(parallel=True, cache=True)
def _intersect_ranges(indptr, indices, a, b, out, parts):
    m = a.shape[0]
    for c in prange(parts):
        _intersect_range(indptr, indices, a, b, out, m * c // parts, m * (c + 1) // parts)


def intersect_count(graph, a, b):
    """For each pair (a[i], b[i]), how many out-neighbours the two share (rows sorted, int64).  Many pairs (a
    triangle count's every arc) go grouped by their longer row, each group's row marked in a bitmap once: the work
    is the shorter rows' lengths.  A few pairs are merged or searched one by one, not paying for a bitmap of
    every vertex."""
    out = np.empty(a.shape[0], np.int64)
    n, m = graph.num_vertices, a.shape[0]
    t = _parallel(m * 16)
    if m * _MARK_PAIRS < n:
        if t == 1:
            _intersect_range(graph.indptr, graph.indices, a, b, out, 0, m)
        else:
            _run_parallel(_intersect_ranges, graph.indptr, graph.indices, a, b, out, t * CHUNKS_PER_THREAD)
        return out
    order, work = _by_longer_row(graph.indptr, a, b, n)
    if t == 1:
        _intersect_marked(graph.indptr, graph.indices, a, b, order, 0, m, out, n)
    else:
        parts = t * CHUNKS_PER_THREAD
        bounds = np.searchsorted(work, np.arange(parts + 1) * (int(work[-1]) // parts + 1))
        bounds[-1] = m
        _run_parallel(_intersect_marked_ranges, graph.indptr, graph.indices, a, b, order, bounds, out, n)
    return out


@njit(cache=True)
def _id_range(ids):
    lo = hi = ids[0]
    for i in range(1, ids.shape[0]):
        x = ids[i]
        if x < lo:
            lo = x
        elif x > hi:
            hi = x
    return lo, hi


def id_range(ids):
    """(ids.min(), ids.max()) as Python ints, in one pass."""
    lo, hi = _id_range(ids)
    return int(lo), int(hi)


# ---- hashed pair totals: Louvain's weight per (vertex, neighbouring community) ----------------------------------

@njit(cache=True)
def _pair_mix(key):
    """segments.mix of one int64 key: splitmix64's finaliser, uint64 throughout (a mixed int operand would make
    numba compute in float64)."""
    x = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xD6E8FEB86659FD93)
    x ^= x >> np.uint64(32)
    return x


@njit(cache=True)
def _pair_totals(rows, keys, weights, span):
    """segments.pair_totals' table, its rounds replayed one entry at a time: the same slot for every key, so the
    same pairs in the same order and the same sums.  A round of the twin lets every entry not yet placed claim
    its next slot where that slot was empty when the round began, and of the claimants of one slot the last in
    entry order wins (NumPy's fancy assignment writes in index order); here the entries claim in entry order,
    each overwriting the claims of this round (``fresh``) but never a key placed before it, and only then are
    the entries whose key holds their slot taken off the list.  The sums add each slot's weights in entry order,
    as the twin's bincount does."""
    m = rows.shape[0]
    size = 2 * m + 1
    usize = np.uint64(size)
    key = np.empty(m, np.int64)
    slot = np.empty(m, np.int64)
    table = np.full(size, -1, np.int64)
    for i in range(m):  # the empty table: every entry claims its first slot, the last claimant of each wins
        k = rows[i] * span + keys[i]
        key[i] = k
        s = np.int64(_pair_mix(k) % usize)
        slot[i] = s
        table[s] = k
    todo = np.empty(m, np.int64)
    left = 0
    for i in range(m):
        if table[slot[i]] != key[i]:
            todo[left] = i
            left += 1
    fresh = np.zeros(size, np.uint8)  # slots claimed in this round: empty when it began, so still claimable
    while left:
        for j in range(left):
            i = todo[j]
            s = slot[i] + 1
            if s == size:
                s = 0
            slot[i] = s
            if table[s] < 0 or fresh[s]:
                table[s] = key[i]
                fresh[s] = 1
        kept = 0
        for j in range(left):
            i = todo[j]
            s = slot[i]
            fresh[s] = 0
            if table[s] != key[i]:
                todo[kept] = i
                kept += 1
        left = kept
    total = np.zeros(size, np.float64)
    for i in range(m):
        total[slot[i]] += weights[i]
    pairs = 0
    for s in range(size):
        if table[s] >= 0:
            pairs += 1
    out_rows = np.empty(pairs, np.int64)
    out_keys = np.empty(pairs, np.int64)
    out_sums = np.empty(pairs, np.float64)
    j = 0
    for s in range(size):
        k = table[s]
        if k >= 0:
            out_rows[j] = k // span
            out_keys[j] = k % span
            out_sums[j] = total[s]
            j += 1
    return out_rows, out_keys, out_sums


_PAIR_DIGIT = 11  # bits per pass of the radix sort of the pairs by their first slot


@njit(cache=True)
def _pair_rows_grouped(rows):
    """Whether every row's entries lie side by side in entry order (rows non-decreasing, as ``ops.arcs`` lists
    them)."""
    for i in range(1, rows.shape[0]):
        if rows[i] < rows[i - 1]:
            return False
    return True


@njit(cache=True)
def _pair_row_order(rows, nrows):
    """The entries grouped by row, in entry order within a row (a stable counting sort)."""
    start = np.zeros(nrows + 1, np.int64)
    for i in range(rows.shape[0]):
        start[rows[i] + 1] += 1
    for r in range(nrows):
        start[r + 1] += start[r]
    order = np.empty(rows.shape[0], np.int64)
    for i in range(rows.shape[0]):
        r = rows[i]
        order[start[r]] = i
        start[r] += 1
    return order


@njit(cache=True)
def _pair_sweep(rows, keys, weights, span, order, has_order, nkeys, scratch, sums):
    """segments.pair_totals' result without its table.  Its rounds place keys thus: in round r every key not yet
    placed claims the slot r past its first (home) slot, a slot empty when the round began goes to one claimant,
    the last in entry order, and all of them come from one home (slot - r); so a slot goes to the nearest home
    (cyclically, at or before it) that still has keys left when the probes reach it, and within a home the key
    whose last entry comes latest goes first.  Walking the slots in order with a stack of the keys waiting (each
    home's pushed as the walk reaches it, its first to place on top) places the same keys in the same slots: the
    top is the nearest home's next key.  Keys that wrap past the table's end wait below every other home's at
    its start, so a first walk finds them and a second walk starts with them.  The pairs come out in slot order,
    each summed in entry order (the twin's bincount).

    Each row's distinct keys are found with a mark per key (``nkeys`` of them): the last row that saw the key
    and the key's pair.  The entries come row by row (``order`` where ``has_order``, else as they are), each
    row's in entry order, so a pair's entries come in entry order too.  ``scratch`` holds 6 m int64, ``sums`` m
    float64."""
    m = rows.shape[0]
    size = 2 * m + 1
    usize = np.uint64(size)
    seen = np.full((nkeys, 2), -1, np.int64)  # per key: the row that saw it last, and its pair there
    prow, pcol = scratch[:m], scratch[m:2 * m]
    total = sums[:m]
    last = scratch[2 * m:3 * m]  # each pair's last entry
    by = scratch[3 * m:4 * m]  # each pair's home and number in one word, sorted below by home
    npairs = 0
    for j in range(m):
        i = order[j] if has_order else j
        r, k = rows[i], keys[i]
        if seen[k, 0] != r:
            seen[k, 0] = r
            seen[k, 1] = npairs
            prow[npairs] = r
            pcol[npairs] = k
            total[npairs] = 0.0 + weights[i]  # the twin's sums start at 0.0 (-0.0 comes out 0.0)
            last[npairs] = i
            by[npairs] = (np.int64(_pair_mix(r * span + k) % usize) << 32) | npairs
            npairs += 1
        else:
            d = seen[k, 1]
            total[d] += weights[i]
            last[d] = i
    # the pairs by home (an LSD radix sort of the words), then each home's by last entry, latest first: the order
    # in which a home's keys place
    other = scratch[4 * m:4 * m + npairs]
    buckets = 1 << _PAIR_DIGIT
    count = np.empty(buckets + 1, np.int64)
    shift = 32
    while (size - 1) >> (shift - 32):
        count[:] = 0
        for q in range(npairs):
            count[((by[q] >> shift) & (buckets - 1)) + 1] += 1
        for b in range(buckets):
            count[b + 1] += count[b]
        for q in range(npairs):
            x = by[q]
            b = (x >> shift) & (buckets - 1)
            other[count[b]] = x
            count[b] += 1
        by, other = other, by
        shift += _PAIR_DIGIT
    low = np.int64(0xFFFFFFFF)
    q = 0
    while q < npairs:
        e = q + 1
        while e < npairs and (by[e] >> 32) == (by[q] >> 32):
            e += 1
        for f in range(q + 1, e):  # an insertion sort: a home seldom has more than one key
            x = by[f]
            g = f
            while g > q and last[by[g - 1] & low] < last[x & low]:
                by[g] = by[g - 1]
                g -= 1
            by[g] = x
        q = e
    # the walks: the first places every key where none wraps past the table's end, else finds those that do for
    # the second, which starts with them; while no key waits, the walk jumps to the next home
    stack = other
    placed = scratch[5 * m:5 * m + npairs]
    depth = 0
    for walk in range(2):
        q = 0
        out = 0
        slot = 0
        while True:
            if depth == 0:
                if q == npairs:
                    break
                slot = max(slot, by[q] >> 32)
            if slot == size:
                break
            start = q
            while q < npairs and (by[q] >> 32) == slot:
                q += 1
            for e in range(q - 1, start - 1, -1):
                stack[depth] = by[e] & low
                depth += 1
            depth -= 1
            placed[out] = stack[depth]
            out += 1
            slot += 1
        if depth == 0:
            break
    out_rows = np.empty(npairs, np.int64)
    out_keys = np.empty(npairs, np.int64)
    out_sums = np.empty(npairs, np.float64)
    for j in range(npairs):
        d = placed[j]
        out_rows[j], out_keys[j], out_sums[j] = prow[d], pcol[d], total[d]
    return out_rows, out_keys, out_sums


_NO_ORDER = np.zeros(0, dtype=np.int64)
_PAIR_SCRATCH_KEPT = 1 << 22  # entries: pair_totals keeps its scratch between calls up to this many (56 bytes each)


def _pair_scratch(m):
    """Scratch for :func:`_pair_sweep` (6 m int64, m float64), this thread's kept between calls where ``m`` is at
    most ``_PAIR_SCRATCH_KEPT``: a round of Louvain calls pair_totals with as many entries as the round before or
    fewer, and fresh arrays of this size are fresh mappings whose page faults cost about a third of the call."""
    if m > _PAIR_SCRATCH_KEPT:
        return np.empty(6 * m, np.int64), np.empty(m, np.float64)
    got = getattr(_local, "pairs", None)
    if got is None or got[1].shape[0] < m:
        got = _local.pairs = (np.empty(6 * m, np.int64), np.empty(m, np.float64))
    return got


def pair_totals(rows, keys, weights, span):
    """ops.pair_totals on NumPy arrays: segments.pair_totals' pairs, in its order, and its sums to the bit.  Where
    the rows and keys are small enough to mark (Louvain's vertices and communities) the slots come from one walk
    over the table's slots instead of its probing rounds (:func:`_pair_sweep` says why they agree), the pairs
    found by row; else the rounds replayed entry by entry (one thread: the order of the claims decides the
    table)."""
    m = rows.shape[0]
    if m == 0:
        return segments.pair_totals(np, rows, keys, weights, span)
    rows, keys = rows.astype(np.int64, copy=False), keys.astype(np.int64, copy=False)
    weights = np.ones(m) if weights is None else weights.astype(np.float64, copy=False)
    bound = 4 * m + (1 << 20)  # marks and row counts of this many entries cost less than the table's rounds
    nkeys = int(keys.max()) + 1
    if nkeys <= bound and m < 1 << 30:  # a pair's home and number fit one int64
        if _pair_rows_grouped(rows):
            return _pair_sweep(rows, keys, weights, np.int64(span), _NO_ORDER, False, nkeys, *_pair_scratch(m))
        nrows = int(rows.max()) + 1
        if nrows <= bound:
            return _pair_sweep(rows, keys, weights, np.int64(span), _pair_row_order(rows, nrows), True, nkeys,
                               *_pair_scratch(m))
    return _pair_totals(rows, keys, weights, np.int64(span))


# ---- the operators compiled nowhere: the twins -----------------------------------------------------------------

bitmap = numpy_ops.bitmap
bit_test = numpy_ops.bit_test
unvisited = numpy_ops.unvisited
start_at = numpy_ops.start_at
prepare_pull = numpy_ops.prepare_pull
Bits = numpy_ops.Bits


def __getattr__(name):
    """What ``mgraph.ops._impl`` may ask for that is not compiled here (the id maps' translate and count_own,
    the bitmap of a frontier, ...): the NumPy twins'."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(numpy_ops, name)


# ---- whole-graph CPU algorithms: where one device holds the whole graph --------------------------------------
# The frontier programs of k-core, triangles and SSSP pay a superstep per peeling level or relaxation round; on a
# CPU holding the whole graph the sequential-efficient algorithms below do the same work in one compiled call.
# The primitives take them through ops.whole_graph_kernel (one device, compiled kernels selected), and keep their
# frontier programs for parts of a larger graph, GPUs and the NumPy twins.

@njit(cache=True)
def _peel_walk(indptr, indices, v, k, deg, queue, nq):
    """v leaves at level k: each neighbour above k loses one, and one that falls to k joins the level's queue."""
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        du = deg[u]
        if du > k:
            du -= 1
            deg[u] = du
            if du == k:
                queue[nq] = u
                nq += 1
    return nq


@njit(cache=True)
def _peel(indptr, indices, rindptr, rindices, both, deg):
    """Core numbers by level-synchronous peeling on one thread (ParK's order, Dasari et al. 2014): at level k the
    remaining vertices of degree k leave, and with them every neighbour their leaving brings down to k; a degree
    never falls below the level, so it ends as the core number.  Each arc reads one neighbour's degree (bucket
    peeling, Batagelj–Zaversnik's, moves it between buckets: four random accesses, 4x slower at R-MAT 18); the
    remaining vertices are scanned once per level, kept compact, and a level with none left is skipped.
    ``both``: a directed graph's degree and neighbours count in-arcs (``rindptr``) too.  ``deg`` (int32 or int64)
    receives the result."""
    n = indptr.shape[0] - 1
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        if both:
            d += rindptr[v + 1] - rindptr[v]
        deg[v] = d
    active = np.empty(n, deg.dtype)
    for v in range(n):
        active[v] = v
    queue = np.empty(n, deg.dtype)
    na = n
    k = 0
    while na > 0:
        nq = 0
        kept = 0
        for i in range(na):  # the level's first leavers; the rest stay, in order
            v = active[i]
            if deg[v] <= k:
                queue[nq] = v
                nq += 1
            else:
                active[kept] = v
                kept += 1
        h = 0
        while h < nq:
            v = queue[h]
            h += 1
            nq = _peel_walk(indptr, indices, v, k, deg, queue, nq)
            if both:
                nq = _peel_walk(rindptr, rindices, v, k, deg, queue, nq)
        na = 0
        low = -1
        for i in range(kept):  # drop those the walks brought down to k; the next level is the least degree left
            v = active[i]
            d = deg[v]
            if d > k:
                active[na] = v
                na += 1
                if low < 0 or d < low:
                    low = d
        k = low
    return deg


@njit(cache=True)
def _iota_range(a, lo, hi):
    for i in range(lo, hi):
        a[i] = i


@njit(parallel=True, cache=True)
def _iota_ranges(a, parts):
    n = a.shape[0]
    for c in prange(parts):
        _iota_range(a, n * c // parts, n * (c + 1) // parts)


def connected_components(graph, sampled, hub):
    """Weakly connected components of a whole graph: each vertex's smallest vertex id in its component (int64), the
    CC primitive's labels (a whole graph's ids are the caller's), by the primitive's own Afforest in compiled calls:
    every vertex its own tree, each row's first ``sampled`` arcs hooked, pointers jumped, then the other arcs (and a
    directed graph's in-arcs) of the rows outside the tree of ``hub`` (None: every row), and pointers jumped.  Hooking puts the larger root under the smaller, so the roots are the answer, with none of the
    labels' spreading that parts of a larger graph need; every step is parallel on several threads."""
    n = graph.num_vertices
    parent = np.empty(n, np.int64)
    t = _parallel(n)
    if t == 1:
        _iota_range(parent, 0, n)
    else:
        _run_parallel(_iota_ranges, parent, t * CHUNKS_PER_THREAD)
    # the sampled arcs of a row in one pass, where Afforest takes a position per round: a row's first arcs share a
    # cache line, which rounds over every row of a large graph would each fetch again
    if not _hook_rows(graph, None, graph.arc_rows, parent, 0, 0, sampled, -1):
        compress(parent)
    skip = int(parent[hub]) if hub is not None else -1
    flat = _hook_rows(graph, None, graph.arc_rows, parent, 0, sampled, None, skip)
    if graph.directed:
        reverse = graph.reverse()
        flat = _hook_rows(reverse, None, reverse.arc_rows, parent, 0, 0, None, skip)
    if not flat:
        compress(parent)
    return parent


def core_numbers(graph):
    """Every vertex's core number (int64) on a whole graph, by sequential level-synchronous peeling:
    ``networkx.core_number`` (a directed graph's degree is in-degree plus out-degree, its neighbours both ways)."""
    n = graph.num_vertices
    r = graph.reverse() if graph.directed else graph
    wide = n >= 2**31 or int(graph.indptr[-1]) * 2 >= 2**31
    deg = np.empty(n, np.int64 if wide else np.int32)
    _peel(graph.indptr, graph.indices, r.indptr, r.indices, graph.directed, deg)
    return deg.astype(np.int64, copy=False)


@njit(cache=True)
def _orient(indptr, indices):
    """The forward arcs: u -> v where (degree, id) of u is below v's, self-loops dropped; rows keep their order."""
    n = indptr.shape[0] - 1
    fptr = np.zeros(n + 1, np.int64)
    for u in range(n):
        du = indptr[u + 1] - indptr[u]
        c = 0
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = indptr[v + 1] - indptr[v]
            if dv > du or (dv == du and v > u):
                c += 1
        fptr[u + 1] = fptr[u] + c
    fidx = np.empty(fptr[n], indices.dtype)
    for u in range(n):
        du = indptr[u + 1] - indptr[u]
        k = fptr[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = indptr[v + 1] - indptr[v]
            if dv > du or (dv == du and v > u):
                fidx[k] = v
                k += 1
    return fptr, fidx


@njit(cache=True)
def _triangles_range(fptr, fidx, lo, hi, tri, mark):
    """Each triangle whose lowest corner (in the forward order) is in lo..hi - 1, found once: mark that corner's
    forward neighbours, walk each one's forward neighbours; every corner of a triangle found counts one."""
    for v in range(lo, hi):
        stamp = v + 1
        for e in range(fptr[v], fptr[v + 1]):
            mark[fidx[e]] = stamp
        for e in range(fptr[v], fptr[v + 1]):
            u = fidx[e]
            for f in range(fptr[u], fptr[u + 1]):
                w = fidx[f]
                if mark[w] == stamp:
                    tri[v] += 1
                    tri[u] += 1
                    tri[w] += 1


@njit(cache=True)
def _triangles(fptr, fidx, n):
    tri = np.zeros(n, np.int64)
    mark = np.zeros(n, np.int64)
    _triangles_range(fptr, fidx, 0, n, tri, mark)
    return tri


@njit(parallel=True, cache=True)
def _triangles_ranges(fptr, fidx, bounds, tris, marks):
    # each thread counts into its own row of tris (numba's thread id), summed after
    for c in prange(bounds.shape[0] - 1):
        t = numba.get_thread_id()
        _triangles_range(fptr, fidx, bounds[c], bounds[c + 1], tris[t], marks[t])


@njit(parallel=True, cache=True)
def _sum_rows(tris, out, parts):
    n = out.shape[0]
    for c in prange(parts):
        for v in range(n * c // parts, n * (c + 1) // parts):
            s = 0
            for t in range(tris.shape[0]):
                s += tris[t, v]
            out[v] = s


@njit(cache=True)
def _forward_work(fptr, fidx):
    """Per vertex, the forward arcs its walk reads (its own and its forward neighbours'), as a prefix sum."""
    n = fptr.shape[0] - 1
    work = np.empty(n + 1, np.int64)
    work[0] = 0
    for v in range(n):
        c = 1 + fptr[v + 1] - fptr[v]
        for e in range(fptr[v], fptr[v + 1]):
            u = fidx[e]
            c += fptr[u + 1] - fptr[u]
        work[v + 1] = work[v] + c
    return work


def triangle_counts(graph):
    """How many triangles each vertex is a corner of (int64) on a whole undirected graph, ``networkx.triangles``
    (self-loops ignored): each edge oriented from the lower to the higher (degree, id), every triangle found once
    from its lowest corner by marking that corner's forward neighbours (Latapy's compact-forward, O(m^1.5)).
    On several threads the vertices go in ranges balanced by the arcs their walks read, each thread counting into
    its own array."""
    if not segments.rows_sorted(graph):  # as ops.intersect_count: a row listing a neighbour twice is refused
        raise ValueError("triangle counting needs each row's neighbours in increasing order; this graph's are not")
    n = graph.num_vertices
    fptr, fidx = _orient(graph.indptr, graph.indices)
    t = _parallel(int(fptr[n]))
    if t == 1:
        return _triangles(fptr, fidx, n)
    work = _forward_work(fptr, fidx)
    parts = t * CHUNKS_PER_THREAD
    bounds = np.searchsorted(work, np.arange(parts + 1) * (int(work[-1]) // parts + 1))
    bounds[0], bounds[-1] = 0, n
    tris = np.zeros((t, n), np.int64)  # numba.get_thread_id() is below get_num_threads(), set to t by _parallel
    marks = np.zeros((t, n), np.int64)
    _run_parallel(_triangles_ranges, fptr, fidx, bounds, tris, marks)
    out = np.empty(n, np.int64)
    _run_parallel(_sum_rows, tris, out, parts)
    return out


@njit(cache=True)
def _sift_up(heap, hpos, dist, i):
    v = heap[i]
    dv = dist[v]
    while i > 0:
        p = (i - 1) >> 1
        u = heap[p]
        if dist[u] <= dv:
            break
        heap[i] = u
        hpos[u] = i
        i = p
    heap[i] = v
    hpos[v] = i


@njit(cache=True)
def _sift_down(heap, hpos, dist, i, size):
    v = heap[i]
    dv = dist[v]
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and dist[heap[c + 1]] < dist[heap[c]]:
            c += 1
        u = heap[c]
        if dist[u] >= dv:
            break
        heap[i] = u
        hpos[u] = i
        i = c
    heap[i] = v
    hpos[v] = i


@njit(cache=True)
def _dijkstra(indptr, indices, weights, has_w, sources, dist):
    """Dijkstra with an indexed binary heap (decrease-key in place) from ``sources`` at their distances in ``dist``:
    every other vertex's entry must be an upper bound that its own out-arcs have already relaxed (inf where
    unreached), as a frontier relaxation leaves it; then no path from a source can improve a vertex below the
    least key queued, so each vertex popped is final.  Returns how many vertices were settled."""
    n = indptr.shape[0] - 1
    heap = np.empty(n, np.int64)
    hpos = np.full(n, -1, np.int64)  # -1: never queued; -2: settled; else the heap index
    size = 0
    for i in range(sources.shape[0]):
        v = sources[i]
        if hpos[v] == -1:
            heap[size] = v
            hpos[v] = size
            size += 1
            _sift_up(heap, hpos, dist, size - 1)
    settled = 0
    while size > 0:
        u = heap[0]
        hpos[u] = -2
        settled += 1
        size -= 1
        if size > 0:
            heap[0] = heap[size]
            hpos[heap[0]] = 0
            _sift_down(heap, hpos, dist, 0, size)
        du = dist[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = du + (weights[e] if has_w else 1.0)
            if nd < dist[v]:
                dist[v] = nd
                p = hpos[v]
                if p == -1:
                    heap[size] = v
                    hpos[v] = size
                    size += 1
                    _sift_up(heap, hpos, dist, size - 1)
                else:  # queued (a settled vertex cannot improve: weights are non-negative)
                    _sift_up(heap, hpos, dist, p)
    return settled


def shortest_distances(graph, sources, dist):
    """Dijkstra on a whole graph with non-negative weights from ``sources`` (a vertex or an array of them) at their
    entries of ``dist`` (float64), in one compiled call on one thread: from one source, ``dist`` inf but 0 there;
    or from a relaxation's frontier, ``dist`` as the relaxation left it (every vertex outside the frontier has
    relaxed its out-arcs).  Every reached vertex ends at its distance; returns how many were settled."""
    weights, has_w = _weights(graph)
    sources = np.atleast_1d(np.asarray(sources)).astype(np.int64, copy=False)
    return int(_dijkstra(graph.indptr, graph.indices, weights, has_w, sources, dist))


# ---- fused levels: a traversal's small levels in one compiled call ----------------------------------------------

@njit(cache=True)
def _claim(indptr, indices, frontier, lo, hi, label, pred, level, queue, tail):
    """Claim each unvisited out-neighbour of frontier[lo:hi] in arc order, appending it to queue[tail:]; the new
    tail."""
    for i in range(lo, hi):
        u = frontier[i]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if label[v] == UNVISITED:
                label[v] = level
                pred[v] = u
                queue[tail] = v
                tail += 1
    return tail


@njit(cache=True)
def _visit_levels(indptr, indices, frontier, label, pred, level, limit, max_levels, max_degree, has_rule, rule_n,
                  rule_arcs, visited, do_a, words, summary):
    """The built-in visit level after level, as mgraph.ops.levels.advance_levels' loop runs it with
    :func:`advance_visit`: the same levels and labels, the last level's output in increasing order; stop after a
    level that emitted nothing, whose output's out-arcs exceed ``limit``, the ``max_levels``-th, or after which the
    pull rule (``has_rule``: levels.PullRule's test on its floats) would switch to pulling.  (output, levels,
    emitted).

    One queue holds every level's claims back to back, as a queue BFS (scipy's) keeps them, and the next level
    expands a level's stretch of the queue in claim order: only the last level is sorted.  So a vertex reached from
    two frontier vertices takes the first in claim order as its predecessor, where the loop, expanding sorted
    frontiers, takes the smaller: another valid BFS tree, the freedom a push visit on several threads takes too."""
    n = label.shape[0]
    queue = np.empty(n, indices.dtype)  # each vertex is claimed once in the whole traversal
    tail = _claim(indptr, indices, frontier, 0, frontier.shape[0], label, pred, level, queue, 0)
    head = 0  # the last level's claims are queue[head:tail]
    levels = 1
    emitted = 0
    while True:
        m = tail - head
        emitted += m
        visited += m
        # the stop test sums the output's out-arcs only where they might exceed the limit
        if m == 0 or levels >= max_levels or (m * max_degree > limit and
                                               _degree_sum(indptr, queue[head:tail]) > limit):
            break
        if has_rule:
            forward = m * rule_arcs / rule_n
            backward = (rule_n - visited) * rule_n / max(visited, 1)
            if forward > backward * do_a:
                break
        level += 1
        end = tail
        tail = _claim(indptr, indices, queue, head, end, label, pred, level, queue, tail)
        head = end
        levels += 1
    cur = queue[head:tail]
    out = np.empty(cur.shape[0], indices.dtype)
    _sorted_into(cur, cur.shape[0], words, summary, out)
    return out, levels, emitted


def advance_levels(graph, frontier, functor, args, level_at, limit, max_levels, rule=None):
    """mgraph.ops.levels.advance_levels for the built-in visit (``functors.VISIT``) in one compiled call: the same
    levels, labels and output as its loop of :func:`advance_visit` on one thread (``Levels``), the predecessors
    another valid BFS tree (:func:`_visit_levels` says why); None
    for any other functor, or where the levels do not fuse (a part of a larger graph, a hub, a frontier past
    ``limit`` arcs): the loop then runs as it does."""
    if functor is not functors.VISIT or not (max_levels > 1 and lv.fusable(graph) and 0 < frontier.shape[0] <= limit
                                             and _degree_sum(graph.indptr, frontier) <= limit):
        return None
    label, pred, level = args
    has_rule = rule is not None
    out, levels, emitted = _visit_levels(
        graph.indptr, graph.indices, frontier, label, pred, int(level), int(limit), int(max_levels),
        lv.max_degree(graph), has_rule, float(rule.n if has_rule else 1), float(rule.arcs if has_rule else 1),
        int(rule.visited if has_rule else 0), float(rule.do_a if has_rule else 0.0), *_bits(graph.num_vertices))
    return lv.Levels(out, int(levels), int(emitted))

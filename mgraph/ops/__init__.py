"""Operators over frontiers, in the Gunrock model: advance, filter, neighbour-reduce, intersection, compute.

A frontier is an array of vertex ids (or, for pulling, a bitmap).  Every
operator runs on the array module its arrays live in: CuPy kernels in
:mod:`.cupy_ops` on a GPU; on a CPU compiled loops in :mod:`.numba_ops`, or
the NumPy twins in :mod:`.numpy_ops` that both are checked against
(``MGRAPH_CPU_KERNELS=numpy``).  Primitives call
only these functions (and plain array code on their own per-vertex arrays),
so the same primitive runs on either backend and on a part of a graph.

The generic operators, for primitives of your own:

* :func:`advance` runs a :class:`Functor` (a CUDA body and its NumPy twin,
  :mod:`.functors`) on every out-arc of a frontier, load-balanced over the
  arcs, and returns the vertices it emits;
* :func:`neighbor_reduce` reduces a per-vertex array over each vertex's
  out-neighbours (in-neighbours: pass ``graph.reverse()``): sum, min, max,
  mode, mex;
* :func:`intersect_count` counts the neighbours two vertices share;
* :func:`arcs` lists a frontier's arcs; :func:`filter` keeps part of a frontier;
* :func:`own_map` computes over the own vertices of a graph, wherever they
  lie in its numbering, and :func:`tree_of` finds a vertex's union-find tree;
* :class:`Direction` chooses push or pull for :func:`advance_visit` each
  superstep, the same way on every device.

While the enactor runs supersteps in batches, the push advances return a
:class:`Queue`: the output with its length still in device memory
(:mod:`.queue`), so that the next advance launches without a host read.
Every operator takes a Queue where it takes a frontier.

The named advances (:func:`advance_visit`, :func:`advance_relax`, ...) are
:func:`advance` with the built-in functors of :mod:`.functors`.
docs/write-a-primitive.md lists every operator with its dtype rules.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from mgraph.backend import array_module
from mgraph.ops import functors, levels, numpy_ops, propose, segments
from mgraph.ops.direction import Direction
from mgraph.ops.functors import Functor, first_claims
from mgraph.ops import queue
from mgraph.ops.queue import Count, Queue, counting, plain, read_counts

UNVISITED = numpy_ops.UNVISITED
Bits = numpy_ops.Bits
__all__ = ["UNVISITED", "advance_visit", "advance_visit_pull", "advance_relax", "advance_count_paths",
           "advance_dependency", "tight_predecessors", "pull_sum", "prepare_pull", "l1_distance", "hook_components",
           "compress", "bitmap", "Bits", "id_range", "bit_test", "unvisited", "start_at", "filter", "segment_min", "tree_spread", "advance", "Functor", "first_claims",
           "functors", "neighbor_reduce", "intersect_count", "arcs", "advance_levels", "Levels", "visit_levels",
           "Direction", "own_map", "tree_of", "pair_sums", "pair_totals", "best_moves", "fused_moves", "unsettled_rows", "inside_change", "commit_sums", "best_per_row", "Queue", "Count", "counting", "plain", "read_counts",
           "whole_graph_kernel"]
Levels = levels.Levels


@functools.lru_cache(maxsize=None)
def _numba_ops():
    """:mod:`.numba_ops`, or None where numba is not installed (a source tree on a machine without it, such as
    a GPU host that runs the CuPy kernels): the NumPy twins then serve the CPU."""
    try:
        from mgraph.ops import numba_ops
    except ImportError:
        return None
    return numba_ops


def _impl(a):
    if array_module(a) is np:  # compiled kernels, or the NumPy twins (numba_ops.configure, MGRAPH_CPU_KERNELS)
        compiled = _numba_ops()
        return compiled if compiled is not None and compiled.selected() else numpy_ops
    from mgraph.ops import cupy_ops

    return cupy_ops


def advance(graph, frontier, functor, *args):
    """Push advance with a functor: run ``functor`` on every out-arc u -> v of ``frontier`` (every arc of the
    graph where ``frontier`` is None) and return the vertices it emits, each once (None for a functor declared
    with ``emits=False``).  ``args`` fill the functor's declared parameters: arrays of the declared dtypes on the
    graph's array module, numbers converted to the declared types (a mismatch is a ValueError)."""
    if not isinstance(functor, Functor):
        raise ValueError(f"advance needs an ops.Functor, got {type(functor).__name__}")
    xp = graph.xp
    queued = isinstance(frontier, Queue)
    if frontier is not None and not queued:
        if not isinstance(frontier, xp.ndarray) or frontier.ndim != 1 or frontier.dtype.kind not in "iu":
            raise ValueError(f"advance's frontier must be a 1-D integer {xp.__name__} array of vertex ids, or None")
    args = functor.arguments(graph, args, xp)
    if frontier is not None and functor.emits and queue.wanted(frontier):
        return _advance_queue(graph, frontier, functor, args)
    return _impl(graph.indptr).advance(graph, plain(frontier), functor, args)


def _advance_queue(graph, frontier, functor, args):
    """A push advance whose output keeps its count on the device (a Queue) where the graph allows; ``args`` as
    the functor declares them."""
    impl = _impl(graph.indptr)
    if impl is numpy_ops or impl is _numba_ops():
        return levels.advance_queue(graph, frontier, functor, args, impl.advance)
    return impl.advance_queue(graph, frontier, functor, args, impl.advance)


def advance_levels(graph, frontier, functor, *args, level, limit=levels.FUSE_ARCS, max_levels=1 << 30,
                   until_pull=None):
    """Push advances level after level while the frontier stays small: :func:`advance` with ``functor``, then again
    from what it emitted, the ``int`` argument named ``level`` (the functor's level or stamp parameter) one larger
    each time, until a level emits nothing, the emitted vertices' out-arcs exceed ``limit``, or ``max_levels``
    levels ran.  Returns :class:`~mgraph.ops.levels.Levels` (the last level's output, how many levels ran, how many
    vertices they emitted in all).  On a GPU the levels run in one persistent kernel with one read at its end; a
    frontier with more than ``limit`` out-arcs, a graph that is one device's part of a larger one (an exchange
    must run between levels), or a graph with a vertex of more than ``levels.FUSE_DEGREE`` out-arcs (the kernel
    gives a vertex one warp) gets one plain advance.  The functor must emit each vertex at most once per level,
    as for :func:`advance`.  ``until_pull=(visited, do_a)`` also stops where a direction-optimizing traversal
    (:class:`Direction`, "auto") would switch to pulling the next level: ``visited`` counts the vertices of every
    frontier so far, this one's included."""
    if not isinstance(functor, Functor):
        raise ValueError(f"advance_levels needs an ops.Functor, got {type(functor).__name__}")
    names = [p.name for p in functor.params]
    if level not in names or functor.params[names.index(level)].pointer or \
            functor.params[names.index(level)].ctype != "int":
        raise ValueError(f"advance_levels: functor {functor.name} has no int parameter {level!r} to count levels with")
    if not functor.emits:
        raise ValueError(f"advance_levels: functor {functor.name} emits nothing, so there is no next level")
    if int(max_levels) < 1 or int(limit) < 0:
        raise ValueError(f"advance_levels: max_levels must be >= 1 and limit >= 0, got {max_levels}, {limit}")
    xp = graph.xp
    frontier = plain(frontier)
    if not isinstance(frontier, xp.ndarray) or frontier.ndim != 1 or frontier.dtype.kind not in "iu":
        raise ValueError(f"advance_levels' frontier must be a 1-D integer {xp.__name__} array of vertex ids")
    args = functor.arguments(graph, args, xp)
    if not levels.fusable(graph):  # a part of a larger graph, or a hub: one level, load-balanced
        out = _impl(graph.indptr).advance(graph, frontier, functor, args)
        return Levels(out, 1, int(out.shape[0]))
    rule = None if until_pull is None else levels.PullRule(graph, *until_pull)
    if xp is np:
        impl = _impl(graph.indptr)
        if impl is not numpy_ops:  # the compiled loop runs a visit's fused levels in one call
            fused = impl.advance_levels(graph, frontier, functor, args, names.index(level), int(limit),
                                        int(max_levels), rule)
            if fused is not None:
                return fused
        return levels.advance_levels(graph, frontier, functor, args, names.index(level), int(limit),
                                     int(max_levels), impl.advance, rule)
    from mgraph.ops import cupy_levels, cupy_ops

    return cupy_levels.advance_levels(graph, frontier, functor, args, names.index(level), int(limit),
                                      int(max_levels), cupy_ops.advance, rule)


def neighbor_reduce(graph, values, op, vertices=None, *, weighted=False, prefer=None, empty=None):
    """Reduce ``values`` (one per vertex) over the out-neighbours of each of ``vertices`` (every vertex when None;
    in-neighbours: pass ``graph.reverse()``); one result per listed vertex, in their order.

    ``op``: "sum" (of values, times the arc's weight where ``weighted``), "min", "max" (in the values' dtype; a
    vertex without neighbours gets ``empty``, by default the dtype's largest / smallest value or +-inf), "mode"
    (the most frequent value; a tie goes to ``prefer``'s entry for the vertex where it is among the most frequent,
    else to the largest; a vertex without neighbours gets ``prefer``'s entry, or ``empty``, default -1) or "mex"
    (the smallest non-negative integer not among the neighbours' values, negative values ignored; int64).  On a
    part of a graph, only own vertices have their neighbours here.
    """
    if op not in segments.REDUCTIONS:
        raise ValueError(f"unknown reduction {op!r}: expected one of {', '.join(segments.REDUCTIONS)}")
    xp = graph.xp
    if not isinstance(values, xp.ndarray) or values.shape != (graph.num_vertices,):
        raise ValueError(f"neighbor_reduce needs one value per vertex ({graph.num_vertices}) in a {xp.__name__} array")
    if op in ("mode", "mex") and values.dtype.kind not in "iu":
        raise ValueError(f"the {op} of neighbours' values needs integer values, got {values.dtype}")
    if prefer is not None and (op != "mode" or getattr(prefer, "shape", None) != values.shape):
        raise ValueError("prefer goes with op='mode', one value per vertex like values")
    impl = _impl(values) if xp is np and _impl(values) is not numpy_ops else segments
    return impl.neighbor_reduce(graph, values, op, plain(vertices), weighted, prefer, empty)


def intersect_count(graph, a, b):
    """For each pair (a[i], b[i]) of vertices, how many out-neighbours they share (int64).  Every row of ``graph``
    must list its neighbours in increasing order, as a whole Graph and a part with proxies' arcs do (ValueError
    otherwise)."""
    a, b = plain(a), plain(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("intersect_count needs two 1-D arrays of vertex ids of one length")
    if not segments.rows_sorted(graph):
        raise ValueError("intersect_count needs each row's neighbours in increasing order; this graph's are not")
    return _impl(graph.indptr).intersect_count(graph, a, b)


def arcs(graph, vertices=None, *, narrow=False):
    """(sources, targets) of the out-arcs of ``vertices`` (every vertex when None), int64, in CSR order.
    ``narrow`` (every vertex only): both in the graph's id dtype (int32 where ids fit), the targets the graph's
    own ``indices``, not a copy (read them only): a primitive that keeps every arc's ends then holds 4 bytes an
    arc of its own instead of 16."""
    if narrow and vertices is not None:
        raise ValueError("arcs: narrow gives every vertex's arcs (vertices=None) only")
    return segments.arcs(graph, plain(vertices), narrow)


def advance_visit(graph, frontier, label, pred, level, dist=None, *, direction="push", frontier_total=None):
    """Advance + filter: every unvisited vertex adjacent to the frontier takes ``level`` and, as its predecessor, a
    frontier vertex with an arc to it; the new frontier.

    ``direction``: "push" claims the frontier's out-neighbours (only along tight arcs when ``dist`` is given);
    "pull" has each unvisited vertex look for a frontier vertex among its in-neighbours (``graph.reverse()``),
    stopping at the first; or a :class:`Direction`, which picks one of the two from ``frontier_total``, the
    whole frontier's size (all devices).  Both give the same labels; the predecessors may differ."""
    if isinstance(direction, Direction):
        if frontier_total is None:
            raise ValueError("advance_visit with a Direction needs frontier_total, the whole frontier's size")
        direction = direction.choose(frontier_total)
    elif not isinstance(direction, str) or direction not in ("push", "pull"):
        raise ValueError(f"advance_visit's direction must be 'push', 'pull' or an ops.Direction (which keeps what "
                         f"'auto' decides from superstep to superstep), got {direction!r}")
    if direction == "push":
        link = getattr(graph, "levels_link", None)  # one device's part in batched supersteps: exchanged on the devices
        if link is not None and not link.gated and dist is None and queue.wanted(frontier) and link.serves(label, pred):
            return link.visit(frontier, label, pred, int(level))
        if queue.wanted(frontier) and levels.fusable(graph):  # the step kernel: the output's count stays on the device
            if dist is None:
                return _advance_queue(graph, frontier, functors.VISIT, (label, pred, np.int32(level)))
            return _advance_queue(graph, frontier, functors.VISIT_TIGHT, (label, pred, np.int32(level), dist))
        return _impl(label).advance_visit(graph, plain(frontier), label, pred, level, dist)
    if dist is not None:
        raise ValueError("advance_visit pulls without dist: a tight-arc visit pushes")
    return advance_visit_pull(graph.reverse(), label, pred, level, bitmap(frontier, graph.num_vertices))


def visit_levels(graph, frontier, label, pred, level, *, direction, frontier_total):
    """:func:`advance_visit` from ``level`` on, and where the traversal pushes (``direction`` "push", or an "auto"
    :class:`Direction` before its switch to pull — up to where it would switch — or after it has switched back)
    the levels after it too, while their frontiers' arcs stay below ``levels.FUSE_VISIT_ARCS``
    (:func:`advance_levels`).  On one GPU holding a graph with hubs (which :func:`advance_levels` does not fuse),
    an "auto" traversal from a small frontier (at most ``levels.DIRECTIONS_FRONTIER`` vertices: its start) runs
    every level, pushing and pulling as the policy chooses, in one cooperative kernel (its NumPy twin:
    :func:`levels.visit_directions`), until the frontier empties or would push more arcs than the bound.  Returns
    :class:`Levels`: the last level's output, how many levels ran (the last of them labelled ``level + levels -
    1``) and what they emitted.  On a part whose devices are linked (``graph.levels_link``: mgraph.comm.peer) the
    pushed levels run across the devices; a gated link (a graph with hubs) takes a frontier of at most
    ``levels.GATED_ARCS`` vertices and runs levels while their arcs stay within that bound."""
    policy = direction if isinstance(direction, Direction) else None
    frontier = plain(frontier)
    rule = None
    if policy is None:
        way, fuse = direction, direction == "push" and levels.fusable(graph)
    else:
        if frontier_total is None:
            raise ValueError("visit_levels with a Direction needs frontier_total, the whole frontier's size")
        if policy.mode == "auto" and graph.xp is not np and levels.is_whole(graph) and not levels.fusable(graph) \
                and 0 < int(frontier_total) <= levels.DIRECTIONS_FRONTIER:  # one GPU, hubs: every level in one kernel
            from mgraph.ops import cupy_levels

            return cupy_levels.visit_directions(graph, graph.reverse(), frontier, label, pred, int(level), policy,
                                                levels.FUSE_VISIT_ARCS, 1 << 30)
        link = getattr(graph, "levels_link", None)
        if policy.mode == "auto" and link is not None and link.serves(label, pred) and \
                link.runs_directions and 0 < int(frontier_total) <= levels.DIRECTIONS_FRONTIER:
            # a part whose devices are linked: every level across the devices, the policy choosing each one
            return link.visit_directions(frontier, label, pred, int(level), policy, 1 << 30)
        to_the_end, before_switch = policy.pushes_to_the_end(), policy.mode == "auto" and not policy.switched
        way = policy.choose(frontier_total)
        fuse = way == "push" and (to_the_end or before_switch) and levels.fusable(graph)
        if fuse and before_switch:  # push on while the policy would, and stop where it would pull
            rule = (policy.visited, policy.do_a)
    link = getattr(graph, "levels_link", None)  # one device's part: levels run across the devices where it serves
    limit = levels.GATED_ARCS if link is not None and link.gated else levels.FUSE_VISIT_ARCS
    if link is not None and frontier_total and link.serves(label, pred) and \
            (way == "push" if policy is None else way == "push" and policy.pushes_to_the_end()) and \
            (not link.gated or int(frontier_total) <= limit):  # more vertices than that: more arcs, nearly always
        r = link.visit_levels(frontier, label, pred, int(level), limit, 1 << 30)
        if r is not None:  # None: a gated link found more arcs than its levels serve; the host's advance takes them
            if policy is not None:
                policy.pushed(r.levels - 1, r.emitted - int(r.frontier.shape[0]))
            return r
    if not fuse:  # a plain array out: a traversal that fuses its levels reads their counts anyway
        out = plain(advance_visit(graph, frontier, label, pred, level, direction=way))
        return Levels(out, 1, int(out.shape[0]))
    r = advance_levels(graph, frontier, functors.VISIT, label, pred, level, level="level", until_pull=rule,
                       limit=levels.FUSE_VISIT_ARCS)
    if policy is not None:
        policy.pushed(r.levels - 1, r.emitted - int(r.frontier.shape[0]))
    return r


def advance_visit_pull(rgraph, label, pred, level, frontier_bits):
    """Pull advance with early exit over in-arcs (``rgraph`` is the reverse graph); the new frontier."""
    return _impl(label).advance_visit_pull(rgraph, label, pred, level, frontier_bits)


def tight_predecessors(rgraph, dist, pred):
    """Compute: SSSP's predecessors in one pull over in-arcs (``rgraph = graph.reverse()``, weighted): each vertex
    v with a finite ``dist[v]`` and ``pred[v] == -1`` takes the tail u of the first of its in-arcs, in row order,
    with dist[u] + w == dist[v].  Where every weight is positive these predecessors form a shortest-path tree
    rooted at the source (set the source's own first): distances fall strictly along tight arcs.  With a zero
    weight, tight arcs may form cycles; walk them from the source instead (``advance_visit`` with ``dist``).
    ``dist`` float64, ``pred`` the graph's id type, every weight 1 on an unweighted graph; on a part, proxies'
    distances must be current."""
    return _impl(dist).tight_predecessors(rgraph, dist, pred)


def advance_relax(graph, frontier, dist, marks, stamp):
    """Push advance + filter: min-relax distances along out-arcs; the improved vertices, once each.

    ``marks`` (int32 per vertex, never equal to a fresh ``stamp``) is scratch
    that dedupes the output without a sort: pass a new stamp each superstep.
    """
    if queue.wanted(frontier) and levels.fusable(graph):
        return _advance_queue(graph, frontier, functors.RELAX, (dist, marks, np.int32(stamp)))
    return _impl(dist).advance_relax(graph, plain(frontier), dist, marks, stamp)


def advance_count_paths(graph, frontier, label, sigma, level):
    """Brandes forward: visit the next level and count shortest paths into it; the new frontier."""
    return _impl(sigma).advance_count_paths(graph, plain(frontier), label, sigma, level)


def advance_dependency(graph, frontier, label, sigma, delta, level):
    """Brandes backward: accumulate dependencies of the ``level`` frontier from its successors."""
    return _impl(delta).advance_dependency(graph, plain(frontier), label, sigma, delta, level)


def pull_sum(rgraph, x, scale=1.0, shift=0.0):
    """Compute: y[v] = scale * (sum over in-arcs u -> v of x[u] * w(u, v)) + shift, for every row v of ``rgraph``
    (float64; a row without arcs, such as a part's proxy, gets ``shift``).  ``x``: float64, one value per vertex;
    ``scale``: a number; ``shift``: a number or a 0-d float64 array on x's backend, which on a GPU is read by the
    kernels and never copied to the host (PageRank's dangling mass).  The product and the sum are rounded apart,
    the same on both backends.  On a GPU each row adds its terms in an order fixed per graph (see
    :func:`prepare_pull`): the same bits every run, within rounding of the NumPy twin."""
    if np.ndim(shift) and getattr(shift, "size", 0) != 1:
        raise ValueError(f"pull_sum's shift must be a number or an array of one value, got shape {shift.shape}")
    return _impl(x).pull_sum(rgraph, x, scale, shift)


def prepare_pull(rgraph):
    """Prepare ``rgraph`` for repeated :func:`pull_sum` calls, once while it lives (a primitive calls it where it
    is built, so that the work is timed apart from its runs): on a GPU, column ids renumbered hot first and each
    row's arcs sorted by them, so that the gathers hit L2 and a row's lanes share cache sectors.  A pull builds
    the same layout where this was not called: results do not depend on it."""
    _impl(rgraph.indptr).prepare_pull(rgraph)


def l1_distance(a, b, count=None):
    """Compute: the sum of |a[i] - b[i]| over i < ``count`` (every i where None) of two 1-D arrays of one backend,
    as a 0-d float64 array of that backend (not read to the host).  On a GPU one fused two-pass reduction whose
    order depends on the length alone: the same bits every run (NumPy's pairwise sum may differ in the last
    bits).  PageRank's L1 change over its own vertices."""
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"l1_distance needs two 1-D arrays of one length, got shapes {a.shape} and {b.shape}")
    if count is not None and not 0 <= int(count) <= a.shape[0]:
        raise ValueError(f"l1_distance's count must be in 0..{a.shape[0]}, got {count}")
    return _impl(a).l1_distance(a, b, count)


def pair_sums(a, b, weights=None):
    """Compute: the distinct pairs (a[i], b[i]) of two 1-D arrays of non-negative integers, sorted by a then b, and
    the sum of ``weights`` (float64) over each pair's entries, or how many entries where None: three arrays
    (int64, int64, float64).  The sum of arc weights per (vertex, neighbour's community) from :func:`arcs`, and a
    coarser graph's arcs from its communities' (Louvain)."""
    xp = array_module(a)
    if a.ndim != 1 or a.shape != b.shape or (weights is not None and weights.shape != a.shape):
        raise ValueError("pair_sums needs 1-D arrays a, b (and weights) of one length")
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        raise ValueError(f"pair_sums needs integer arrays, got {a.dtype} and {b.dtype}")
    if xp is np:
        return segments.pair_sums(np, a, b, weights)
    from mgraph.ops import cupy_pairs

    return segments.pair_sums(xp, a, b, weights, cupy_pairs.run_sums)


def pair_totals(rows, keys, weights, span):
    """Compute: the distinct pairs (rows[i], keys[i]) of two 1-D arrays of non-negative integers, in no particular
    order, and the sum of ``weights`` (float64; a count where None) over each pair's entries: three arrays (int64,
    int64, float64).  Each pair is one int64 key, rows[i] * ``span`` + keys[i]: every key must be below ``span``
    and every such key below 2**63.  What :func:`pair_sums` gives, less its order, from a hash table instead of a
    sort: Louvain's weight of each scored vertex's arcs per neighbouring community, every round.

    On a CPU the pairs come in the table's order and each sum adds its pair's entries in their order: the same
    bits every run.  On a GPU one kernel inserts every entry (atomics) and one gathers the pairs: the same pairs,
    in any order, the sums the same to rounding; one host read (how many pairs), two on a call of millions of
    entries (a bound on the pairs, which sizes the table).  ``weights`` None: no array of ones is made (on a GPU
    the kernel adds 1.0 per entry), and int32 rows and keys are read as int32."""
    xp = array_module(rows)
    if rows.ndim != 1 or rows.shape != keys.shape or (weights is not None and weights.shape != rows.shape):
        raise ValueError("pair_totals needs 1-D arrays rows, keys (and weights) of one length")
    if rows.dtype.kind not in "iu" or keys.dtype.kind not in "iu":
        raise ValueError(f"pair_totals needs integer rows and keys, got {rows.dtype} and {keys.dtype}")
    if isinstance(span, bool) or not isinstance(span, numbers.Integral) or not 0 < span < 2 ** 63:
        raise ValueError(f"pair_totals' span must be a positive integer below 2**63, got {span!r}")
    if xp is np:  # compiled (numba_ops), or the twin of array operations (numpy_ops): the same bits
        return _impl(rows).pair_totals(rows, keys, weights, int(span))
    from mgraph.ops import cupy_pairs

    return cupy_pairs.pair_totals(rows, keys, weights, int(span))


best_per_row = propose.best_per_row


def fused_moves(graph) -> bool:
    """Whether :func:`best_moves` runs fused on ``graph``: a whole undirected graph (one device holds every vertex's
    arcs) on a GPU, with ``propose.ENABLED`` on.  Elsewhere it runs as the array operations, and Louvain on a part
    of a graph, a directed graph or the CPU keeps its own."""
    return propose.ENABLED and graph.xp is not np and not graph.directed and levels.is_whole(graph) \
        and getattr(graph, "owner", None) is None


def best_moves(graph, community, k_out, totals, resolution, scale, look=None, distinct=False):
    """Compute Louvain's proposal on an undirected graph that holds every vertex's arcs, for each row u in ``look``
    (a boolean mask over the vertices; None: every row): ``w_stay[u]``, u's arc weight to its own community
    ``community[u]``, and among the other communities of its neighbours the one of the highest score
    w(u, c) - ``resolution`` * (2 ``k_out[u]`` ``totals[c]``) / ``scale``, ties to the smallest label: ``target[u]``
    (-1 where there is none) and ``best[u]``, its score (-inf there; -0.0 as 0.0).  Rows outside ``look`` get
    -1, -inf and 0.0.  ``distinct`` (with ``look`` None): every arc of a row goes to a community of its own (each
    vertex alone on a simple graph), so that the pairs are the arcs.  Three arrays over the vertices (int64,
    float64, float64); ``totals`` has one entry per label, the weights are the graph's (1.0 where unweighted).

    On a GPU (:func:`fused_moves`) one pass over the rows' arcs, a warp or a block a row (:mod:`.cupy_propose`):
    on an unweighted graph the same bits as the array operations, which are the NumPy twin
    (:func:`propose.best_moves`); on a weighted one the sums of a pair's weights in another order."""
    if graph.directed:
        raise ValueError("best_moves scores an undirected graph's rows (a directed one's in-arcs are not its rows)")
    n = graph.num_vertices
    if community.shape != (n,) or k_out.shape != (n,) or (look is not None and look.shape != (n,)):
        raise ValueError(f"best_moves needs community, k_out (and look) of one entry per vertex ({n})")
    if fused_moves(graph):
        from mgraph.ops import cupy_propose

        return cupy_propose.best_moves(graph, community, k_out, totals, float(resolution), float(scale), look,
                                       bool(distinct), pair_totals)
    return propose.best_moves(graph, community, k_out, totals, float(resolution), float(scale), look, bool(distinct),
                              pair_totals)


def unsettled_rows(graph, moved, priority):
    """Louvain's rows to score again, on an undirected graph that holds every vertex's arcs: a mask over the
    vertices, true where ``moved[u]``, where ``priority[u] >= 0`` (u proposed) or where some neighbour of u moved.

    On a GPU (:func:`fused_moves`) a group of lanes per row that stops at the first moved neighbour, the long rows
    cut into pieces (:mod:`.cupy_commit`); the array operations, a scatter of every arc, are the NumPy twin
    (:func:`propose.unsettled_rows`).  The same mask either way."""
    n = graph.num_vertices
    if graph.directed:
        raise ValueError("unsettled_rows reads an undirected graph's rows (a directed one's in-arcs are not its rows)")
    if moved.shape != (n,) or priority.shape != (n,):
        raise ValueError(f"unsettled_rows needs moved and priority of one entry per vertex ({n})")
    if fused_moves(graph):
        from mgraph.ops import cupy_commit

        return cupy_commit.unsettled_rows(graph, moved, priority)
    return propose.unsettled_rows(graph, moved, priority)


def inside_change(graph, moved, community, old):
    """Louvain's change of the weight of the arcs within communities from ``old`` to ``community`` (labels per
    vertex), on an undirected graph that holds every vertex's arcs, counted from the arcs of the vertices that
    ``moved`` alone (a mask; every vertex that changed community is in it): an arc u - v of a moved u adds its
    weight (1.0 where unweighted) times (c[u] == c[v]) - (old[u] == old[v]), twice where v did not move (its
    reverse, which v's row does not list).  A 0-d float64 array, not read to the host.

    On a GPU (:func:`fused_moves`) a group of lanes per moved vertex's row, the long rows in pieces, one atomic add
    per block (:mod:`.cupy_commit`); the array operations, the moved vertices' arcs compacted and summed, are the
    NumPy twin (:func:`propose.inside_change`).  Unweighted, or with integer weights: the same value (sums of
    integers); weighted: the same to rounding."""
    n = graph.num_vertices
    if graph.directed:
        raise ValueError("inside_change reads an undirected graph's rows (a directed one's in-arcs are not its rows)")
    if moved.shape != (n,) or community.shape != (n,) or old.shape != (n,):
        raise ValueError(f"inside_change needs moved, community and old of one entry per vertex ({n})")
    if fused_moves(graph):
        from mgraph.ops import cupy_commit

        return cupy_commit.inside_change(graph, moved, community, old)
    return propose.inside_change(graph, moved, community, old)


def commit_sums(graph, priority, target, community, blocked=False):
    """Louvain's check of its proposals, on an undirected graph that holds every vertex's arcs: for each proposer u
    (``priority[u] >= 0``), each neighbour v taken to be in ``target[v]`` where it proposes at a priority at least
    u's and in ``community[v]`` otherwise, ``w_to[u]`` the weight of u's arcs to neighbours so taken to be in
    ``target[u]`` and ``w_stay[u]`` those in ``community[u]`` (weights 1.0 where unweighted; 0.0 for the other
    rows); with ``blocked``, also whether some neighbour of u is so taken first (else None).  Three arrays over
    the vertices (float64, float64, bool or None).

    On a GPU (:func:`fused_moves`) a group of lanes per proposer's row, the long rows cut into pieces
    (:mod:`.cupy_commit`); the array operations, the proposers' arcs compacted and scatter-adds over them, are the
    NumPy twin (:func:`propose.commit_sums`).  Unweighted: the same bits.  Weighted: each row's weights added in
    CSR order from 0.0, as the CPU's bincount adds them, but the long rows' pieces in another order."""
    n = graph.num_vertices
    if graph.directed:
        raise ValueError("commit_sums reads an undirected graph's rows (a directed one's in-arcs are not its rows)")
    if priority.shape != (n,) or target.shape != (n,) or community.shape != (n,):
        raise ValueError(f"commit_sums needs priority, target and community of one entry per vertex ({n})")
    if fused_moves(graph):
        from mgraph.ops import cupy_commit

        return cupy_commit.commit_sums(graph, priority, target, community, bool(blocked))
    return propose.commit_sums(graph, priority, target, community, bool(blocked))


def own_map(graph, ufunc, *arrays, out):
    """Compute over own vertices: ``out``'s entries of ``graph.own_vertices`` become ``ufunc`` of the ``arrays``'
    entries of those vertices, cast to ``out``'s dtype; its other entries stay as they are.  ``ufunc``: a ufunc of
    the graph's array module (``xp.multiply``); ``arrays`` and ``out``: one value per vertex.  Where own vertices
    come first in the numbering (``graph.own`` is a view) the ufunc writes into ``out`` in one pass, with no
    temporary.  PageRank publishes its shares, rank / out-weight, this way."""
    n = graph.num_vertices
    if any(getattr(a, "shape", None) != (n,) for a in (*arrays, out)):
        raise ValueError(f"own_map needs arrays of one value per vertex ({n})")
    below = graph.own_below
    if below is not None:
        ufunc(*(a[:below] for a in arrays), out=out[:below])
    else:
        own = graph.own_vertices
        out[own] = ufunc(*(a[own] for a in arrays))
    return out


def tree_of(graph, parent, vertex):
    """The root of the union-find tree in ``parent`` (after :func:`compress`) that holds ``vertex``, a vertex id in
    the caller's numbering (``graph.vertex_ids``); None where ``vertex`` is None or this graph does not hold it.
    One host read.  As ``skip`` of :func:`hook_components` (Afforest): a graph that does not hold the vertex cannot
    tell its tree's rows from the others, and None there hooks every arc, which is always correct."""
    local = graph.local_id(vertex)
    return None if local is None else int(parent[local])


def unvisited(graph, dtype):
    """A new array of ``graph.num_vertices`` entries of ``dtype`` (a signed integer type), all UNVISITED (-1), on the
    graph's backend: a traversal's labels or predecessors at the start of a run.  On a GPU one memset of 0xff
    bytes (-1 in two's complement), where filling the value took an elementwise kernel at a fraction of the
    copy bandwidth."""
    dtype = np.dtype(dtype)
    if dtype.kind != "i":
        raise ValueError(f"unvisited needs a signed integer dtype, got {dtype}")
    return _impl(graph.indptr).unvisited(graph.num_vertices, dtype)


def start_at(graph, source, *writes):
    """A traversal's start: each ``(array, value)`` of ``writes`` takes ``value`` at ``source``, and the frontier of
    that one vertex is returned (the graph's id type; ``source`` None: nothing written, an empty frontier).  On a GPU
    one launch: the setitems and the frontier's copy from the host were a CuPy call each on every run's path."""
    if source is None:
        out = graph.xp.empty(0, dtype=graph.indices.dtype)
    else:
        for array, _ in writes:
            if not isinstance(array, graph.xp.ndarray) or array.ndim != 1 or not array.flags.c_contiguous:
                raise ValueError(f"start_at writes into contiguous 1-D {graph.xp.__name__} arrays, got "
                                 f"{type(array).__name__}")
        out = _impl(graph.indptr).start_at(graph.indices.dtype, int(source), writes)
    graph._start = (out, source)  # for started_at
    return out


def started_at(graph, frontier, source) -> bool:
    """Whether ``frontier`` is what :func:`start_at` last returned on ``graph`` for ``source`` (a local id, or None).
    On a part of a run every device holding the run's source is handed its own id of it, so every copy of the vertex
    starts with the values its owner does: a frontier that only starts there needs none of the devices' copies of
    it sent anywhere (mgraph.comm.Exchange), where the values combine by min or max."""
    start = getattr(graph, "_start", None)
    return start is not None and start[0] is frontier and start[1] == source


def hook_components(graph, parent, pairs_below=None, *, arcs=None, skip=None):
    """Compute: union-find over the arcs; roots end as the smallest id of each component they connect.  An arc
    u -> v between two vertices below ``pairs_below`` is hooked only where u < v: the caller hooks the other arc of
    every such pair (an undirected graph stores both; a directed graph's other direction is in its reverse, which
    the caller hooks too), so each of those edges is hooked once (None: every arc).

    Sampled hooking (Afforest, Sutton et al. 2018), for a graph that holds every arc of its vertices both ways
    (a whole undirected graph, or a directed one and its reverse): ``arcs=(lo, hi)`` hooks only each row's arcs
    at positions lo..hi - 1 of the row (hi None: to its end), and ``skip=c`` leaves out the rows u whose
    ``parent[u]`` is c when the call starts (after :func:`compress`: the members of c's tree).  Hooking a row's
    first one or two arcs joins most of a power-law graph into one large tree; the rest of the arcs then need
    hooking only from rows outside it, since an arc between two other trees, or between one of them and the
    large one, is hooked from the end outside it.  ``pairs_below`` does not combine with either."""
    if (arcs is not None or skip is not None) and pairs_below is not None:
        raise ValueError("hook_components: pairs_below hooks half of the arcs and does not combine with arcs or skip")
    if arcs is not None:
        lo, hi = arcs
        if int(lo) < 0 or (hi is not None and int(hi) < int(lo)):
            raise ValueError(f"hook_components: arcs must be (lo, hi) with 0 <= lo <= hi, or (lo, None), got {arcs}")
        arcs = (int(lo), None if hi is None else int(hi))
    if skip is not None and not 0 <= int(skip) < graph.num_vertices:
        raise ValueError(f"hook_components: skip must be a vertex id below {graph.num_vertices}, got {skip}")
    return _impl(parent).hook_components(graph, parent, pairs_below, arcs, None if skip is None else int(skip))


def compress(parent):
    """Compute: pointer jumping until every vertex points at its root."""
    return _impl(parent).compress(parent)


def segment_min(seg, values, initial):
    """Compute: a copy of ``initial`` lowered to the smallest of ``values`` landing on each slot (``seg`` gives each
    value's slot).  CC: the smallest label of each union-find tree, starting from the roots' own labels."""
    return _impl(values).segment_min(seg, values, initial)


def tree_spread(graph, parent, label, tree_min, lowered=None):
    """Compute (CC's spread): every union-find tree takes the smallest label of its members; the vertices whose label
    dropped (the graph's id type) where another device may hold them, none on a whole graph (one device), where
    nobody reads them: the labels are final once the trees are.  ``parent`` gives every vertex its root
    (compressed); ``tree_min`` holds each root's tree minimum as the last call left it (a copy of ``label`` before
    the first call) and is lowered by the labels of ``lowered``, the vertices whose label dropped since (None: every
    vertex).  ``label`` and ``tree_min`` (int64) are updated in place: on a GPU two passes, where the minimum's copy,
    its gather, the comparison and the compaction were one each over every vertex."""
    xp = graph.xp
    for name, a in (("parent", parent), ("label", label), ("tree_min", tree_min)):
        if not isinstance(a, xp.ndarray) or a.dtype != np.int64 or a.shape != (graph.num_vertices,):
            raise ValueError(f"tree_spread: {name} must be an int64 {xp.__name__} array of one entry per vertex")
    lowered = None if lowered is None else plain(lowered)
    return _impl(label).tree_spread(parent, label, tree_min, lowered, graph.indices.dtype, not levels.is_whole(graph))


def id_range(ids):
    """The smallest and largest of ``ids`` (a non-empty 1-D integer array) as Python ints: one host read.  How the
    framework checks that a primitive's frontier holds this graph's ids before a kernel indexes with them."""
    ids = plain(ids)
    if ids.shape[0] == 0:
        raise ValueError("id_range of an empty array")
    return _impl(ids).id_range(ids)


def bitmap(vertices, num_vertices, table=None, base=0):
    """A frontier as a bitmap of uint32 words over ``num_vertices`` bits; with ``table``, bit ``table[v] - base``
    for each vertex v whose ``table[v]`` is not -1 (the bits of another numbering's block of ids)."""
    vertices = plain(vertices)
    return _impl(vertices).bitmap(vertices, num_vertices, table, base)


def bit_test(bits, ids):
    """Which of ``ids`` are set in ``bits``."""
    return _impl(bits).bit_test(bits, plain(ids))


def filter(frontier, keep):
    """The frontier's vertices where ``keep`` (a boolean array over the frontier) holds."""
    return plain(frontier)[keep]


def whole_graph_kernel(graph, name):
    """A whole-graph algorithm for ``graph`` where it is whole (one device holds every vertex's arcs): on the CPU,
    with the compiled kernels selected, ``name`` of :mod:`.numba_ops` (``core_numbers``, ``triangle_counts``,
    ``shortest_distances``, ``connected_components``); on a GPU, ``core_numbers`` of :mod:`.cupy_peel` (every
    level of the peeling in one cooperative kernel; its NumPy twin is :func:`mgraph.ops.peel.core_numbers`).  Else
    None: a part of a larger graph, the NumPy twins, or a name the GPU runs as a frontier program, where the
    primitive runs its supersteps.  A device's part that happens to own every vertex (a tiny graph on several
    devices) is not whole here: its peers, owning none, run the frontier program, and every device must take the
    same path (their declarations, such as CC's global_mins, must agree)."""
    if not levels.is_whole(graph) or getattr(graph, "owner", None) is not None:
        return None
    if graph.xp is not np:
        if name != "core_numbers":
            return None
        from mgraph.ops import cupy_peel

        return cupy_peel.core_numbers
    impl = _impl(graph.indptr)
    return getattr(impl, name) if impl is not numpy_ops else None

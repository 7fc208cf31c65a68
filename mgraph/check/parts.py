"""Distributed ``--validate``: every worker checks its own part's arcs, so no process needs the whole graph.

Under MPI each rank holds only its :class:`~mgraph.parts.subgraph.SubGraph`; at
R-MAT scale 28-30 no process can hold the graph that
:mod:`mgraph.check.validate` checks.  The functions here are collective: every
worker of a :class:`~mgraph.group.Group` calls them with its own part and the
WHOLE result arrays (caller ids, NumPy, the same on every worker: the caller
broadcasts them).  Work per worker is two or three passes over its own arcs
(its out-arcs, and for a directed graph its in-arcs for the parent rule), in
blocks of :data:`BLOCK_ARCS` (:data:`DEVICE_BLOCK_ARCS` on a GPU), plus
O(n / P) for the vertex rules, split by vertex ranges, and O(n) arrays where a
rule needs a whole-graph structure (named below).

The arc passes run on the array module the part lives on (``part.xp``: CuPy
on a GPU, NumPy on the CPU): the result arrays are copied to that device once
per check, each block of arcs is read where it lies, and only verdicts (a
first bad index, counts, a few scalars for a message) come back to the host.
The vertex-range rules (O(n / P)) stay host NumPy, as do the whole-graph
parent-tree walk (``_tree_levels``), scipy's spanning forests, and PageRank's
reduce-scatter of an n-vector (one copy of it to the host per check).

Verdicts are agreed: a check runs as stages, each ending in one ``allgather``
of every worker's verdict, so a worker that finds a violation never leaves the
others waiting in a collective.  On success every worker returns None; on a
violation every worker raises :class:`~mgraph.check.validate.ValidationError` with
the same one-line message, the first in rank order.  (A worker that fails
otherwise, e.g. out of memory, re-raises its own exception and the others
raise RuntimeError naming it.)

What is certified, against :mod:`mgraph.check.validate`'s whole-graph checks:

* :func:`validate_bfs_parts`: Graph500's five rules, exactly (the same
  verdict as ``validate_bfs``).  With a depth array the tree rule needs no
  pointer jumping: a reached vertex's parent is reached and one level up, and
  only the source is at level 0, so every parent chain strictly descends to the
  source; this is checked per vertex range.  A cycle of parents breaks a level
  somewhere and so is reported as rule 2.  Without depths every worker derives
  the levels from the parent array (pointer jumping, O(n log depth)).
* :func:`validate_sssp_parts`: Graph500's SSSP rules, the tree checked once,
  by rank 0 (pointer jumping: zero-weight arcs allow tight cycles).  With
  whole-number weights and distances (exact sums) these rules certify the
  distances on their own, the same verdict as ``validate_sssp``.  With
  fractional weights each arc is checked within ``rtol``, but the comparison
  with a Dijkstra reference that ``validate_sssp`` adds is NOT made (it needs
  the whole graph): a drift below ``rtol`` per tree arc that compounds along a
  path is not caught (the distances are certified only within a factor
  (1 + rtol) ** hops of the true ones).
* :func:`validate_components_parts`: exact.  Arc, bound and idempotence rules
  per worker, then the number of components counted distributedly: each
  worker reduces its arcs to a spanning forest (O(n) pairs: on its device, by
  hooking roots along arcs and pointer jumping, with scipy on the host for
  whatever is left after :data:`HOOK_ROUNDS` rounds), the forests are merged
  pairwise up a binary tree (log2 P rounds of O(n), scipy on the host), and
  rank 0 compares the count with the number of labels.
* :func:`pagerank_residual_parts`: the exact L1 residual of one networkx step
  (up to summation order), by a reduce-scatter of each worker's n-vector of
  pushed rank.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from mgraph.backend import array_module, to_numpy
from mgraph.graph import index_dtype
from mgraph.check.validate import ValidationError, _fail, _ids, _integral, _num, _tree_levels

__all__ = ["validate_bfs_parts", "validate_sssp_parts", "validate_components_parts", "pagerank_residual_parts",
           "validate_pagerank_parts", "BLOCK_ARCS", "DEVICE_BLOCK_ARCS", "HOOK_ROUNDS"]

BLOCK_ARCS = 1 << 24  # arcs read at a time by a part on the host (NumPy)
DEVICE_BLOCK_ARCS = 1 << 26  # ... and by a part on a GPU (CuPy): a few GB of temporaries a block
HOOK_ROUNDS = 32  # rounds of root hooking for a part's spanning forest before scipy takes what is left


def _on_device(check):
    """Run ``check(group, part, ...)`` with the part's GPU current (CuPy allocates and launches there)."""

    @functools.wraps(check)
    def run(group, part, *args, **kwargs):
        xp = array_module(part.indptr)
        with contextlib.nullcontext() if xp is np else xp.cuda.Device(part.indptr.device.id):
            return check(group, part, *args, **kwargs)

    return run


# -- BFS --------------------------------------------------------------------------
@_on_device
def validate_bfs_parts(group, part, source, depth, predecessor) -> None:
    """Graph500's five BFS rules, each worker checking its vertex range and its own arcs; collective.

    Stages, each agreed by all workers: rules 1 and 2 over vertex ranges
    (depth[source] == 0, predecessor[source] == source, unreached -1 in both),
    rule 5 by the owner of each vertex (the arc pred -> v among v's in-arcs),
    then rules 4 and 3 over every worker's out-arcs.
    """
    view = _View(part)
    xp, n = view.xp, view.n
    lo, hi = _range(n, group)

    def tree():
        s = _source(n, source)
        pred = _ids(predecessor, n, "BFS predecessor")
        if depth is None:
            d = _tree_levels(pred, s, "BFS rule 1 (tree)")
        else:
            d = _ids(depth, n, "BFS depth")
        _bfs_tree(pred, d, s, lo, hi)
        return (s, pred, view.ids_on_device(pred), view.ids_on_device(d)), None

    (s, pred, pred_x, d_x), _ = _agree(group, tree)  # host arrays for messages, device ones for the arc passes

    def parents():
        miss = view.parent_arcs(pred_x, s)[0]
        if miss is not None:
            _fail(f"BFS rule 5 (parent edges exist): vertex {miss} has parent {pred[miss]} "
                  f"but there is no edge {pred[miss]}->{miss}")
        return None, None

    _agree(group, parents)

    def arcs():
        rule4 = rule3 = None
        for u, v, _ in view.arcs(part, weights=False):
            lu, lv = d_x[u], d_x[v]
            reached = lu >= 0
            bad = xp.flatnonzero(reached & (lv < 0))
            if bad.size:
                e = int(bad[0])
                rule4 = (f"BFS rule 4 (spans the component): vertex {int(v[e])} is reachable from {s} "
                         f"(by the edge {int(u[e])}->{int(v[e])} from level {int(lu[e])}) but unreached")
                break
            if rule3 is None:
                bad = xp.flatnonzero(reached & (lv > lu + 1))
                if bad.size:
                    e = int(bad[0])
                    rule3 = (f"BFS rule 3 (edges span at most one level): edge {int(u[e])}->{int(v[e])} "
                             f"joins levels {int(lu[e])} and {int(lv[e])}")
        if rule4 or rule3:
            _fail(rule4 or rule3)
        return None, None

    _agree(group, arcs)


def _bfs_tree(pred, d, s, lo, hi):
    """Rules 1 and 2 for the vertices lo..hi-1: with these on every range, the parents form a tree rooted at ``s``
    whose levels are ``d`` (each parent chain descends one level a step, and only ``s`` has level 0)."""
    if pred[s] != s:
        _fail(f"BFS rule 1 (tree): the root {s} has parent {pred[s]}, not itself")
    if d[s] != 0:
        _fail(f"BFS rule 2 (tree edges span one level): the source {s} has depth {d[s]}, not 0")
    p, dv = pred[lo:hi], d[lo:hi]
    bad = np.flatnonzero((p < -1) | (p >= pred.size))
    if bad.size:
        v = lo + int(bad[0])
        _fail(f"BFS rule 1 (tree): vertex {v} has parent {pred[v]}, neither a vertex nor -1")
    reached = p >= 0
    bad = np.flatnonzero((dv < -1) | (reached != (dv >= 0)))
    if bad.size:
        v = lo + int(bad[0])
        _fail(f"BFS rule 2 (tree edges span one level): vertex {v} has depth {d[v]} and parent {pred[v]} "
              f"(unreached must be -1 in both)")
    child = np.flatnonzero(reached)
    child = child[child + lo != s]
    up = p[child]
    bad = np.flatnonzero(pred[up] < 0)
    if bad.size:
        v = lo + int(child[bad[0]])
        _fail(f"BFS rule 1 (tree): vertex {v} has parent {pred[v]}, which is unreached (parent -1)")
    bad = np.flatnonzero(d[up] != dv[child] - 1)
    if bad.size:
        v = lo + int(child[bad[0]])
        _fail(f"BFS rule 2 (tree edges span one level): vertex {v} has depth {d[v]} "
              f"but its parent {pred[v]} has depth {d[pred[v]]}")


# -- SSSP -------------------------------------------------------------------------
@_on_device
def validate_sssp_parts(group, part, source, distance, predecessor, *, rtol=1e-9) -> None:
    """Graph500's SSSP rules, each worker checking its vertex range and its own arcs; collective.

    Stages: the values over vertex ranges (no NaN or negative distance, inf
    exactly where the predecessor is -1, d(source) = 0) and the predecessor
    tree (rank 0); the tree arcs by the owner of each vertex (an arc
    pred -> v with d(v) = d(pred) + w); then d(v) <= d(u) + w(u, v) over every
    worker's out-arcs.  Exact when every weight and distance is a whole number
    (agreed over all workers), as ``validate_sssp``; otherwise within ``rtol``
    and without its Dijkstra comparison (see the module's notes).
    """
    view = _View(part)
    xp, n = view.xp, view.n
    lo, hi = _range(n, group)

    def values():
        s = _source(n, source)
        dist = to_numpy(distance)
        if dist.shape != (n,) or dist.dtype.kind not in "iuf":
            _fail(f"SSSP distance: expected {n} numbers, got shape {dist.shape} dtype {dist.dtype}")
        dist = dist.astype(np.float64, copy=False)
        mine = dist[lo:hi]
        bad = np.flatnonzero(np.isnan(mine) | (mine < 0))
        if bad.size:
            _fail(f"SSSP distance: vertex {lo + bad[0]} has distance {_num(mine[bad[0]])}")
        pred = _ids(predecessor, n, "SSSP predecessor")
        p = pred[lo:hi]
        bad = np.flatnonzero((p < -1) | (p >= n))
        if bad.size:
            v = lo + int(bad[0])
            _fail(f"SSSP tree: vertex {v} has parent {pred[v]}, neither a vertex nor -1")
        if group.rank == 0:
            _tree_levels(pred, s, "SSSP tree")  # also catches cycles of zero-weight tight arcs
        reached = p >= 0
        bad = np.flatnonzero(reached == np.isinf(mine))
        if bad.size:
            v = lo + int(bad[0])
            _fail(f"SSSP tree: vertex {v} has distance {dist[v]} and predecessor {pred[v]} "
                  f"(unreached must be inf and -1 together)")
        if dist[s] != 0:
            _fail(f"SSSP tree: the source {s} has distance {dist[s]}, not 0")
        exact = _integral(mine[reached])
        if exact and part.weights is not None:
            exact = all(_integral_on(xp, w) for w in view.weight_blocks())
        return (s, dist, pred, xp.asarray(dist), view.ids_on_device(pred)), exact

    # host arrays for the messages, device ones for the arc passes
    (s, dist, pred, dist_x, pred_x), flags = _agree(group, values)
    tol = 0.0 if all(flags) else float(rtol)

    def tree_arcs():
        miss, child, w = view.parent_arcs(pred_x, s, weights=True)
        if miss is not None:
            _fail(f"SSSP tree edge: vertex {miss} has predecessor {pred[miss]} "
                  f"but there is no arc {pred[miss]}->{miss}")
        if not child.shape[0]:
            return None, None
        through = dist_x[pred_x[child]] + w
        bad = xp.flatnonzero(~(xp.abs(dist_x[child] - through) <= tol * through))
        if bad.size:
            e = int(bad[int(xp.argmin(child[bad]))])  # the smallest such vertex
            v = int(child[e])
            _fail(f"SSSP tree edge: d({v}) = {_num(dist[v])} but d({pred[v]}) + w = "
                  f"{_num(dist[pred[v]])} + {_num(w[e])}")
        return None, None

    _agree(group, tree_arcs)

    def arcs():
        for u, v, w in view.arcs(part):
            du, dv = dist_x[u], dist_x[v]
            bad = xp.flatnonzero(~(dv <= (du + (1.0 if w is None else w)) * (1 + tol)))  # inf + w = inf: arcs
            if bad.size:                                                                # out of unreached u pass
                e = int(bad[0])
                _fail(f"SSSP edge rule: arc {int(u[e])}->{int(v[e])} of weight {_num(1.0 if w is None else w[e])} "
                      f"could still relax d({int(v[e])}) = {_num(dv[e])} from d({int(u[e])}) = {_num(du[e])}")
        return None, None

    _agree(group, arcs)


# -- connected components ------------------------------------------------------------
@_on_device
def validate_components_parts(group, part, labels) -> None:
    """Weakly connected components labelled by their smallest vertex; collective, and exact.

    Stages: over vertex ranges, 0 <= labels[v] <= v and labels[labels[v]] ==
    labels[v] (so the distinct labels are the vertices labelled by themselves,
    counted: R); over every worker's out-arcs, equal labels at both ends (so
    each component lies inside one label class).  Then the R classes are the
    C components, each labelled by its smallest vertex, exactly when R == C:
    C is counted by merging every worker's spanning forest up a binary tree,
    rank 0 making the final merge and comparison.
    """
    view = _View(part)
    xp, n = view.xp, view.n
    lo, hi = _range(n, group)

    def bounds():
        lab = _ids(labels, n, "CC labels")
        mine = lab[lo:hi]
        ids = np.arange(lo, hi, dtype=np.int64)
        bad = np.flatnonzero((mine < 0) | (mine > ids))
        if bad.size:
            v = lo + int(bad[0])
            _fail(f"CC labels: vertex {v} has label {lab[v]}, not a vertex id at most {v} "
                  f"(a component is labelled by its smallest vertex)")
        bad = np.flatnonzero(lab[mine] != mine)
        if bad.size:
            v = lo + int(bad[0])
            _fail(f"CC labels: vertex {v} has label {lab[v]}, but vertex {lab[v]} has label {lab[lab[v]]}")
        return (lab, view.ids_on_device(lab)), int(np.count_nonzero(mine == ids))

    (lab, lab_x), roots = _agree(group, bounds)
    num_labels = sum(roots)

    def arcs():
        for u, v, _ in view.arcs(part, weights=False):
            lu, lv = lab_x[u], lab_x[v]
            bad = xp.flatnonzero(lu != lv)
            if bad.size:
                e = int(bad[0])
                _fail(f"CC labels: arc {int(u[e])}->{int(v[e])} joins labels {int(lu[e])} and {int(lv[e])}")
        return None, None

    _agree(group, arcs)

    del lab_x

    def local_forest():
        return view.forest(), None

    forest, _ = _agree(group, local_forest)
    step = 1
    while step < group.size:  # binary-tree merge: after the round of ``step``, rank r % 2step == 0 holds its block's
        sender = group.rank % (2 * step) == step
        ids = index_dtype(n)  # one dtype on every worker, empty arrays included: MPI receives by the receiver's
        send = [np.zeros(0, dtype=ids)] * group.size
        if sender:
            send[group.rank - step] = np.concatenate(forest).astype(ids)
        got = group.alltoallv(send)

        def merge():
            if sender:
                return (np.zeros(0, np.int64), np.zeros(0, np.int64)), None
            if group.rank % (2 * step) == 0 and group.rank + step < group.size:
                pairs = got[group.rank + step].astype(np.int64, copy=False)
                h = pairs.size // 2
                return _forest(np.concatenate([forest[0], pairs[:h]]), np.concatenate([forest[1], pairs[h:]]), n), None
            return forest, None

        forest, _ = _agree(group, merge)
        step *= 2

    def count():
        if group.rank != 0:
            return None, None
        num_components = n - int(forest[0].size)  # a spanning forest has one arc per vertex but the roots
        if num_components != num_labels:
            rep = np.arange(n, dtype=np.int64)
            rep[forest[0]] = forest[1]
            smallest = np.full(n, n, dtype=np.int64)
            np.minimum.at(smallest, rep, np.arange(n, dtype=np.int64))
            ref = smallest[rep]
            bad = np.flatnonzero(lab != ref)
            v = int(bad[0]) if bad.size else -1
            _fail(f"CC components: the labels name {num_labels} components but the graph has {num_components}: "
                  f"vertex {v} has label {lab[v]}, the smallest vertex of its component is {ref[v]}")
        return None, None

    _agree(group, count)


def _forest(a, b, n):
    """A spanning forest of the arcs a[i]-b[i] over n vertices, as pairs (vertex, its component's representative)
    for every vertex but the representatives: n - (number of components) pairs."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    if not a.size:
        return a.astype(np.int64), b.astype(np.int64)
    m = sp.csr_matrix((np.ones(a.size, dtype=bool), (a, b)), shape=(n, n))
    k, comp = connected_components(m, directed=True, connection="weak")
    rep = np.empty(k, dtype=np.int64)
    rep[comp] = np.arange(n, dtype=np.int64)  # any member will do: whichever write lands
    rep = rep[comp]
    keep = np.flatnonzero(rep != np.arange(n))
    return keep.astype(np.int64), rep[keep]


# -- PageRank ------------------------------------------------------------------------
@_on_device
def pagerank_residual_parts(group, part, rank, alpha) -> float:
    """|T(rank) - rank|_1 for networkx's PageRank step T (uniform teleport and dangling redistribution, weights
    weight), each worker pushing along its own rows' out-arcs; the same float on every worker.  Collective.

    Each worker adds its pushed rank into an n-vector (on its device, then
    copied to the host once); a reduce-scatter (``alltoallv`` of vertex
    ranges) leaves each worker the sums of its range, where it takes its
    share of the residual.
    """
    view = _View(part)
    xp, n = view.xp, view.n
    bounds = [_range(n, group, r) for r in range(group.size)]

    def push():
        if n == 0:
            raise ValueError("pagerank of an empty graph (0 vertices)")
        x = to_numpy(rank)
        if x.shape != (n,) or x.dtype.kind not in "iuf":
            _fail(f"PageRank rank: expected {n} numbers, got shape {x.shape} dtype {x.dtype}")
        x = x.astype(np.float64, copy=False)
        x_x = xp.asarray(x)
        if part.weights is None:
            out = xp.diff(part.indptr).astype(np.float64)  # out-degrees
        else:  # out-weights: each block's rows are consecutive, so a bincount over them
            out = xp.zeros(view.num_local)
            for r, _, w in view.arcs(part, caller=False):
                first, last = int(r[0]), int(r[-1]) + 1
                out[first:last] += xp.bincount(r - first, weights=w.astype(np.float64, copy=False),
                                               minlength=last - first)
        own = view.own
        dangling = float(x_x[view.caller(own[out[own] == 0])].sum())
        inv = xp.where(out == 0, 0.0, 1.0 / xp.where(out == 0, 1.0, out))
        y = xp.zeros(n)
        for r, c, w in view.arcs(part, caller=False):
            share = x_x[view.caller(r)] * inv[r]
            y += xp.bincount(view.caller(c), weights=share if w is None else share * w, minlength=n)
        return (x, to_numpy(y)), dangling

    (x, y), dangling = _agree(group, push)
    got = group.alltoallv([y[a:b] for a, b in bounds])
    mass = sum(dangling)  # in rank order: the same float everywhere

    def residual():
        a, b = bounds[group.rank]
        pulled = np.zeros(b - a)
        for piece in got:
            pulled += piece
        step = alpha * (pulled + mass / n) + (1.0 - alpha) / n
        return None, float(np.abs(step - x[a:b]).sum())

    _, parts = _agree(group, residual)
    return float(sum(parts))


def validate_pagerank_parts(group, part, rank, alpha, error) -> None:
    """The CLI's PageRank rule, collectively: one more step may move ``rank`` by at most alpha x ``error`` (the
    run's last L1 change), since T contracts by alpha in L1.  Raises ValidationError on every worker."""
    step = pagerank_residual_parts(group, part, rank, alpha)
    allowed = alpha * float(error) * (1 + 1e-6) + 1e-10
    if not step <= allowed:
        raise ValidationError(f"PageRank: one more power-iteration step moves the ranks by {step:.3g} (L1), "
                              f"more than alpha x the reported last change allows ({allowed:.3g})")


# -- helpers -------------------------------------------------------------------------
def _agree(group, check):
    """Run this worker's share of one stage and agree on the verdict with one allgather.

    ``check()`` returns (local value, small shared value); it raises
    ValidationError for a violation.  Returns (local value, every worker's
    shared value in rank order), or raises the same thing on every worker:
    a worker's unexpected error first (re-raised where it happened,
    RuntimeError elsewhere), else the first violation in rank order.
    """
    failure = None
    try:
        local, shared = check()
        verdict = ("ok", shared)
    except ValidationError as e:
        local, verdict = None, ("invalid", str(e))
    except Exception as e:  # noqa: BLE001 - reported to every worker, re-raised below
        local, verdict, failure = None, ("error", f"{type(e).__name__}: {e}"), e
    verdicts = group.allgather(verdict)
    errors = [k for k, (kind, _) in enumerate(verdicts) if kind == "error"]
    if errors:
        if failure is not None:
            raise failure
        raise RuntimeError(f"validation failed on worker {errors[0]} of {group.size}: {verdicts[errors[0]][1]}")
    for kind, payload in verdicts:
        if kind == "invalid":
            raise ValidationError(payload)
    return local, [payload for _, payload in verdicts]


def _range(n, group, rank=None):
    """The vertex range [lo, hi) whose vertex rules worker ``rank`` checks."""
    r = group.rank if rank is None else rank
    return n * r // group.size, n * (r + 1) // group.size


def _source(n, source):
    if not 0 <= int(source) < n:
        raise ValueError(f"source {source} is not a vertex of a graph with {n} vertices")
    return int(source)


def _integral_on(xp, a) -> bool:
    """``validate._integral`` on the array module ``a`` lives on (only the verdict comes to the host)."""
    if not a.shape[0]:
        return True
    if a.dtype.kind == "f" and not bool((xp.isfinite(a) & (a == xp.floor(a))).all()):
        return False
    return float(xp.abs(a).max()) < 2.0 ** 52


def _jump(xp, root):
    """``root`` with every entry replaced by the end of its chain (root[v] <= v, so chains end): pointer jumping."""
    while True:
        up = root[root]
        if not bool((up != root).any()):
            return root
        root = up


class _View:
    """A part's arrays as the checks read them: own rows, local <-> caller ids, arcs a block at a time, all on the
    array module the part lives on (``xp``)."""

    def __init__(self, part):
        self.xp = array_module(part.indptr)
        self.n = int(part.num_global_vertices)
        self.num_local = int(part.num_vertices)
        self.directed = bool(part.directed)
        self.ids = getattr(part, "caller_ids", None)  # None: local ids are the caller's
        self.g2l = getattr(part, "global_to_local", None) if self.ids is not None else None
        self.own = part.own_vertices
        self.part = part
        self.block = BLOCK_ARCS if self.xp is np else DEVICE_BLOCK_ARCS

    def ids_on_device(self, a):
        """Host caller-id (or level) array ``a`` on the part's device, as the narrowest id dtype that holds n."""
        return self.xp.asarray(a.astype(index_dtype(self.n), copy=False))

    def caller(self, local):
        return local if self.ids is None else self.ids[local]

    def local(self, caller):
        """Local ids of caller ids (>= 0); -1 for a vertex this part lacks."""
        return caller if self.g2l is None else self.g2l[caller]

    def _bounds(self, indptr):
        """(first arc, end arc, first row, end row) of each block of arcs of the CSR ``indptr``, on the host."""
        xp = self.xp
        m = int(indptr[-1])
        if not m:
            return []
        a = np.arange(0, m, self.block, dtype=np.int64)
        b = np.minimum(a + self.block, m)
        first = to_numpy(xp.searchsorted(indptr, xp.asarray(a), side="right")) - 1  # the rows that hold a..b-1
        stop = to_numpy(xp.searchsorted(indptr, xp.asarray(b), side="left"))
        return zip(a.tolist(), b.tolist(), first.tolist(), stop.tolist())

    def arcs(self, graph, *, caller=True, weights=True):
        """(row, column, weight or None) of the stored arcs of ``graph`` (the part or its reverse), a block at a
        time, on the part's device; rows and columns in caller ids unless ``caller`` is False."""
        xp, indptr = self.xp, graph.indptr
        for a, b, first, stop in self._bounds(indptr):
            # rows of arcs a..b-1: first, plus one for each row start at or before the arc (no repeat: CuPy's
            # needs host counts)
            rows = first + xp.cumsum(xp.bincount(indptr[first + 1:stop] - a, minlength=b - a))
            cols = graph.indices[a:b]
            w = None if not weights or graph.weights is None else graph.weights[a:b]
            if caller:
                rows, cols = self.caller(rows), self.caller(cols)
            yield rows, cols, w

    def weight_blocks(self):
        """The part's arc weights (not None), a block at a time."""
        w, m = self.part.weights, self.part.weights.shape[0]
        for a in range(0, m, self.block):
            yield w[a:a + self.block]

    def parent_arcs(self, pred, s, weights=False):
        """For the own vertices v reached (pred >= 0) other than ``s``, the arc pred[v] -> v: among v's in-arcs
        (directed) or in v's row.  ``pred`` is on the part's device.  Returns (smallest caller id with no such arc
        or None, caller ids of those own vertices, the arcs' weights (ones if unweighted) when ``weights``), the
        arrays on the part's device."""
        xp = self.xp
        graph = self.part.reverse() if self.directed else self.part
        own = self.own
        own_c = self.caller(own)
        need = (pred[own_c] >= 0) & (own_c != s)
        own, own_c = own[need], own_c[need]
        want = xp.full(self.num_local, -1, dtype=np.int64)
        want[own] = self.local(pred[own_c])
        hit = xp.zeros(self.num_local, dtype=bool)
        wt = xp.ones(self.num_local) if weights else None
        for r, c, w in self.arcs(graph, caller=False, weights=weights):
            found = xp.flatnonzero(c == want[r])
            if not found.size:
                continue
            hit[r[found]] = True
            if w is not None:
                wt[r[found]] = w[found]
        missing = own_c[~hit[own]]
        miss = int(missing.min()) if missing.shape[0] else None
        return miss, own_c, (wt[own] if weights else None)

    def forest(self):
        """A spanning forest of this part's arcs (weakly: directions ignored), as caller-id pairs (vertex,
        representative) on the host.

        On the part's device: every vertex starts as its own root; each round, every arc whose ends have
        different roots lowers the larger root's parent to the smaller root, the smallest offered (no cycles: a
        parent only goes down and is never above its vertex; and each vertex stays joined to its parent by a
        path of arcs), then pointer jumping makes every parent a root.  A round in which no arc joins two roots
        leaves the trees, the components: the pairs (v, root of v) for v not a root.  After
        :data:`HOOK_ROUNDS` rounds, whatever arcs still join two roots go to the host (as root pairs, a block
        of at least num_local at a time) and scipy merges them into the forest."""
        xp, nl = self.xp, self.num_local
        root = xp.arange(nl, dtype=index_dtype(nl))
        for _ in range(HOOK_ROUNDS):
            joined = False
            for r, c, _ in self.arcs(self.part, caller=False, weights=False):
                a, b = root[r], root[c]
                k = xp.flatnonzero(a != b)
                if k.size:
                    joined = True
                    a, b = a[k], b[k]
                    xp.minimum.at(root, xp.maximum(a, b), xp.minimum(a, b))  # the smallest candidate (CuPy: atomicMin)
            if not joined:
                break
            root = _jump(xp, root)
        else:  # out of rounds: scipy merges the arcs that still join two trees (as root pairs) into the forest
            v = xp.flatnonzero(root != xp.arange(nl, dtype=root.dtype))
            fu, fv = to_numpy(v).astype(np.int64), to_numpy(root[v]).astype(np.int64)
            block, pending, size = max(self.block, nl), [], 0
            for r, c, _ in self.arcs(self.part, caller=False, weights=False):
                a, b = root[r], root[c]
                k = xp.flatnonzero(a != b)
                if k.size:
                    pending.append((to_numpy(a[k]), to_numpy(b[k])))
                    size += k.size
                if size >= block:
                    fu, fv = _merge_forest(fu, fv, pending, nl)
                    pending, size = [], 0
            fu, fv = _merge_forest(fu, fv, pending, nl)
            root = xp.arange(nl, dtype=root.dtype)
            root[xp.asarray(fu)] = xp.asarray(fv).astype(root.dtype)
        v = xp.flatnonzero(root != xp.arange(nl, dtype=root.dtype))
        return (to_numpy(self.caller(v)).astype(np.int64, copy=False),
                to_numpy(self.caller(root[v])).astype(np.int64, copy=False))


def _merge_forest(fu, fv, pending, n):
    """The forest (fu, fv) with the arcs of ``pending`` (host pairs) merged in, by scipy."""
    if not pending:
        return fu, fv
    return _forest(np.concatenate([fu] + [p[0] for p in pending]), np.concatenate([fv] + [p[1] for p in pending]), n)

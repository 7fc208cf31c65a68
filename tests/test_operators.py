"""The public operators on the CPU: advance with a user's functor, neighbour-reduce, intersection, arcs.

Expected values come from plain Python loops over the edge list of the
case (conftest), not from mgraph's CSR.  The GPU twins of the same calls are
compared with these in tests/test_gpu_ops.py.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import mgraph
from conftest import REACH, get_case
from mgraph import ops


def heavy_twin(u, v, w, sums, limit):
    keep = w > limit
    np.add.at(sums, v[keep], w[keep])
    return None


HEAVY = ops.Functor("heavy", "double* sums, double limit", "if (w > limit) atomicAdd(&sums[v], w);", heavy_twin,
                    emits=False)


def neighbours(case, u):
    return [v for v, _ in case.out_arcs[u]]


def test_a_users_functor_advances_a_frontier():
    c = get_case("small_und")
    g = c.graph
    label = np.full(g.num_vertices, -1, dtype=np.int32)
    label[[0, 1]] = 0
    out = ops.advance(g, np.array([0, 1], dtype=g.indices.dtype), REACH, label, 1)
    want = sorted(set(neighbours(c, 0)) | set(neighbours(c, 1)) - {0, 1})
    assert out.tolist() == want and out.dtype == g.indices.dtype
    assert sorted(np.flatnonzero(label == 1).tolist()) == want


def test_a_functor_that_only_updates_sees_every_arc_and_its_weight():
    c = get_case("rand_dir_float")
    g = c.graph
    total = np.zeros(g.num_vertices)
    assert ops.advance(g, None, HEAVY, total, 0.5) is None
    want = np.zeros(g.num_vertices)
    for (u, v), w in c.edges.items():
        if w > 0.5:
            want[v] += w
    np.testing.assert_allclose(total, want)


@pytest.mark.parametrize("args, message", [
    ((np.zeros(3, dtype=np.int64), 1), "declared int\\* \\(int32\\), got an array of int64"),
    ((np.zeros(3, dtype=np.int32),), "takes 2 argument"),
    ((np.zeros(3, dtype=np.int32), 1.5), "does not fit its type int"),
    (([0, 0, 0], 1), "must be a numpy array"),
    ((np.zeros(3, dtype=np.int32), np.zeros(2)), "must be a number"),
])
def test_functor_arguments_are_checked_against_their_declaration(args, message):
    g = mgraph.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(ValueError, match=message):
        ops.advance(g, np.array([0]), REACH, *args)


@pytest.mark.parametrize("params, message", [("float4* x", "cannot read parameter"), ("int v", "taken by the advance"),
                                             ("int* a b", "cannot read parameter")])
def test_a_functor_declaration_is_checked_when_made(params, message):
    with pytest.raises(ValueError, match=message):
        ops.Functor("bad", params, "emit = true;", lambda *a: None)


def test_a_twin_must_return_a_mask_over_the_arcs():
    bad = ops.Functor("bad", "", "emit = true;", lambda u, v, w: v)
    g = mgraph.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(ValueError, match="boolean mask"):
        ops.advance(g, np.array([0]), bad)


@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_neighbor_reduce_sum_min_max(op):
    c = get_case("small_und")
    g = c.graph
    values = np.random.default_rng(1).integers(-50, 50, g.num_vertices).astype(np.int64)
    got = ops.neighbor_reduce(g, values, op, empty=-999)
    for u in range(g.num_vertices):
        nb = [values[v] for v in neighbours(c, u)]
        want = -999 if not nb else {"sum": sum, "min": min, "max": max}[op](nb)
        assert got[u] == (0 if op == "sum" and not nb else want)


def test_neighbor_reduce_weighted_sum_over_listed_vertices():
    c = get_case("rand_dir_float")
    g = c.graph
    x = np.random.default_rng(2).random(g.num_vertices)
    rows = np.array([5, 3, 3, 100], dtype=np.int64)
    got = ops.neighbor_reduce(g, x, "sum", rows, weighted=True)
    want = [sum(x[v] * w for v, w in c.out_arcs[u]) for u in rows]
    np.testing.assert_allclose(got, want)


def test_neighbor_reduce_mode_breaks_ties_to_prefer_then_largest():
    c = get_case("small_und")
    g = c.graph
    values = (np.arange(g.num_vertices) * 7 % 5).astype(np.int64)
    prefer = (np.arange(g.num_vertices) % 3).astype(np.int64)
    got = ops.neighbor_reduce(g, values, "mode", prefer=prefer)
    plain = ops.neighbor_reduce(g, values, "mode", empty=-7)
    for u in range(g.num_vertices):
        counts = Counter(values[v] for v in neighbours(c, u))
        if not counts:
            assert got[u] == prefer[u] and plain[u] == -7
            continue
        top = {x for x, k in counts.items() if k == max(counts.values())}
        assert got[u] == (prefer[u] if prefer[u] in top else max(top))
        assert plain[u] == max(top)


def test_neighbor_reduce_mex():
    c = get_case("small_und")
    g = c.graph
    values = np.random.default_rng(3).integers(-1, 4, g.num_vertices).astype(np.int64)
    got = ops.neighbor_reduce(g, values, "mex")
    for u in range(g.num_vertices):
        seen = {int(values[v]) for v in neighbours(c, u)}
        assert got[u] == next(k for k in range(len(seen) + 1) if k not in seen)


@pytest.mark.parametrize("call, message", [
    (lambda g: ops.neighbor_reduce(g, np.zeros(3), "median"), "unknown reduction"),
    (lambda g: ops.neighbor_reduce(g, np.zeros(2), "sum"), "one value per vertex"),
    (lambda g: ops.neighbor_reduce(g, np.zeros(3), "mode"), "needs integer values"),
    (lambda g: ops.neighbor_reduce(g, np.zeros(3, dtype=int), "max", prefer=np.zeros(3, dtype=int)), "prefer goes"),
])
def test_neighbor_reduce_refuses_what_it_cannot_do(call, message):
    with pytest.raises(ValueError, match=message):
        call(mgraph.Graph.from_edges([0, 1], [1, 2]))


def test_intersect_count_and_arcs():
    c = get_case("chesapeake")
    g = c.graph
    src, dst = ops.arcs(g)
    assert sorted(zip(src.tolist(), dst.tolist())) == sorted((u, v) for u in range(c.n) for v in neighbours(c, u))
    got = ops.intersect_count(g, src, dst)
    want = [len(set(neighbours(c, u)) & set(neighbours(c, v))) for u, v in zip(src.tolist(), dst.tolist())]
    np.testing.assert_array_equal(got, want)
    some = np.array([3, 7], dtype=np.int64)
    s2, d2 = ops.arcs(g, some)
    assert sorted(zip(s2.tolist(), d2.tolist())) == sorted((u, v) for u in (3, 7) for v in neighbours(c, u))


def test_intersect_count_needs_sorted_rows():
    g = mgraph.Graph(np.array([0, 2, 3, 4]), np.array([2, 1, 0, 0]), None, directed=True)
    with pytest.raises(ValueError, match="increasing order"):
        ops.intersect_count(g, np.array([0]), np.array([1]))


def test_a_primitive_that_runs_on_one_device_only_is_refused_before_it_starts():
    from mgraph.primitives.cc import CC

    class Whole(CC):
        runs_on_parts = False

    g = get_case("small_und").graph
    mgraph.run(Whole, g)
    with pytest.raises(ValueError, match="runs on one device only"):
        mgraph.run(Whole, g, devices=2)


def test_needs_source_is_honoured_on_one_device_and_many():
    from mgraph.primitives.bfs import BFS
    from mgraph.primitives.cc import CC

    g = get_case("small_und").graph
    for devices in (1, 3):
        with pytest.raises(ValueError, match="needs a source"):
            mgraph.run(BFS, g, devices=devices)
        with pytest.raises(ValueError, match="takes no source"):
            mgraph.run(CC, g, 0, devices=devices)


def test_unvisited_fills_minus_one_in_signed_types_only():
    g = mgraph.Graph.from_edges([0], [1], num_vertices=5)
    for dtype in (np.int8, np.int32, np.int64):
        a = ops.unvisited(g, dtype)
        assert a.dtype == dtype and a.tolist() == [-1] * 5
    with pytest.raises(ValueError, match="signed integer dtype, got float64"):
        ops.unvisited(g, np.float64)
    with pytest.raises(ValueError, match="signed integer dtype, got uint32"):
        ops.unvisited(g, np.uint32)


def test_id_range_is_min_and_max_as_python_ints():
    assert ops.id_range(np.array([5, -3, 9, 0], dtype=np.int32)) == (-3, 9)
    lo, hi = ops.id_range(np.array([7], dtype=np.uint64))
    assert (lo, hi) == (7, 7) and type(lo) is int and type(hi) is int
    with pytest.raises(ValueError, match="empty"):
        ops.id_range(np.array([], dtype=np.int64))


@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("kernels", ["numpy", "compiled"])
def test_tree_spread_gives_every_tree_its_smallest_label_then_follows_lowered_labels(kernels, whole, monkeypatch):
    from mgraph.ops import numpy_ops
    from mgraph.parts.subgraph import build

    if kernels == "numpy":
        monkeypatch.setattr(ops, "_impl", lambda a: numpy_ops)
    rng = np.random.default_rng(4)
    g = mgraph.Graph.from_edges(np.arange(499), np.arange(1, 500), num_vertices=500)  # only its size matters here
    if not whole:  # a part: other devices hold copies of its vertices, so the dropped ones are returned
        g = build(g, np.arange(500) % 2, 2)[0]
    n = g.num_vertices
    roots = rng.choice(n, 40, replace=False)
    parent = roots[rng.integers(0, 40, n)].astype(np.int64)
    parent[roots] = roots  # compressed: every vertex points at its root
    label = rng.permutation(n).astype(np.int64) + 1000
    want = label.copy()
    for r in roots:
        want[parent == r] = label[parent == r].min()
    tree_min, first = label.copy(), label.copy()
    changed = ops.tree_spread(g, parent, label, tree_min)
    np.testing.assert_array_equal(label, want)
    dropped = [] if whole else np.flatnonzero(want < first).tolist()
    assert changed.dtype == g.indices.dtype and sorted(changed.tolist()) == dropped
    assert whole or len(dropped) > 100  # most vertices drop to their tree's minimum
    # labels lowered at a few copies (as a combine does), then only those are given
    lowered = rng.choice(n, 7, replace=False)
    label[lowered] -= rng.integers(1, 2000, 7)
    expect = label.copy()
    for r in roots:
        expect[parent == r] = label[parent == r].min()
    before = label.copy()
    changed = ops.tree_spread(g, parent, label, tree_min, lowered=lowered.astype(g.indices.dtype))
    np.testing.assert_array_equal(label, expect)
    assert sorted(changed.tolist()) == ([] if whole else np.flatnonzero(expect < before).tolist())
    assert ops.tree_spread(g, parent, label, tree_min, lowered=lowered[:0]).shape == (0,)
    with pytest.raises(ValueError, match="int64"):
        ops.tree_spread(g, parent.astype(np.int32), label, tree_min)


def test_start_at_writes_the_sources_values_and_returns_its_frontier():
    g = get_case("chesapeake").graph
    depth, sigma = ops.unvisited(g, np.int32), np.zeros(g.num_vertices)
    frontier = ops.start_at(g, 5, (depth, 0), (sigma, 1.5))
    assert frontier.tolist() == [5] and frontier.dtype == g.indices.dtype
    assert depth[5] == 0 and (np.delete(depth, 5) == ops.UNVISITED).all()
    assert sigma[5] == 1.5 and np.count_nonzero(sigma) == 1
    empty = ops.start_at(g, None, (depth, 7))  # a device that does not hold the source
    assert empty.shape == (0,) and empty.dtype == g.indices.dtype and depth[5] == 0 and (depth != 7).all()
    with pytest.raises(ValueError, match="contiguous 1-D"):
        ops.start_at(g, 0, (depth[::2], 0))

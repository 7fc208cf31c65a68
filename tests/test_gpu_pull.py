"""PageRank's GPU pull: the hot-first layout with rows sorted by their new ids, the unrolled gathers, the fused
affine step (a shift given as a number or as a device value) and ops.l1_distance, each against its NumPy twin,
and the same bits every run.

Run on a device machine: ``PYTHONPATH=$PWD python3 -m pytest -m gpu tests/test_gpu_pull.py``.
"""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.io.generators import rmat
from mgraph.graph import Graph
from mgraph.ops import numpy_ops

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from mgraph.ops import cupy_ops  # noqa: E402  (imports cupy)

HEAVY = cupy_ops.HEAVY_ROW


def h(a):
    return cp.asnumpy(a)


def heavy_graph(seed, weighted, n=1 << 17, arc_rows=None):
    """A directed graph of 2^17 vertices (enough for the hot-first layout) with rows below, at and above
    HEAVY_ROW, one of many pieces, and many short rows; rows from ``arc_rows`` on hold no arcs (a part's
    proxies)."""
    rng = np.random.default_rng(seed)
    k = arc_rows or n
    lengths = [HEAVY - 1, HEAVY, HEAVY + 1, 3 * HEAVY + 17, 40 * HEAVY]
    heavy = [1 + 7 * i for i in range(len(lengths))]
    # a skewed column distribution, so that the hot-first numbering differs from the ids
    skew = lambda size: np.minimum((rng.pareto(1.2, size) * 50).astype(np.int64), n - 1)  # noqa: E731
    rows = np.concatenate([np.full(d, r) for r, d in zip(heavy, lengths)] + [rng.integers(100, k, 600_000)])
    # a heavy row's columns: distinct, and never the row itself (from_edges drops self-loops)
    picked = [rng.choice(n - 1, d, replace=False) for d in lengths]
    picked = [(c * 7919 + 13) % (n - 1) for c in picked]  # hubs spread over the ids
    picked = [c + (c >= r) for c, r in zip(picked, heavy)]
    cols = np.concatenate(picked + [(skew(600_000) * 7919 + 13) % n])
    w = rng.random(rows.size) + 0.5 if weighted else None
    g = Graph.from_edges(rows, cols, w, num_vertices=n, directed=True)
    assert (np.diff(g.indptr)[heavy] == lengths).all()
    if arc_rows is not None:
        assert not np.diff(g.indptr)[arc_rows:].any()
        g.arc_rows = arc_rows
    return g


def on_gpu(g):
    d = g.to("cupy")
    d.arc_rows = g.arc_rows
    return d


def check_layout(g, d):
    """The hot-first layout: each row's new ids ascending, and the same arcs with the same weights as the graph's."""
    hot = cupy_ops._hot_columns(d)
    assert hot is not None, "the test graph must be large enough for the hot-first layout"
    order, idx, w = (None if a is None else h(a) for a in hot)
    assert (w is None) == (g.weights is None)
    end = int(g.indptr[g.arc_rows])
    rows = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))[:end]
    idx = idx[:end].astype(np.int64)
    step = np.diff(idx) >= 0
    assert (step | (np.diff(rows) > 0)).all(), "a row's new ids are not ascending"
    back = order[idx]  # the original column of each arc
    by = np.lexsort((back, rows))
    np.testing.assert_array_equal(back[by], g.indices[:end])
    if w is not None:
        np.testing.assert_array_equal(w[:end][by], g.weights[:end])
    # the hot-first numbering: columns read more get smaller ids
    reads = np.bincount(g.indices[:end], minlength=g.num_vertices)
    assert (np.diff(reads[order]) <= 0).all()


SHIFTS = [(1.0, 0.0), (0.85, 1.5e-7), (-2.0, 3.0)]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("arc_rows", [None, 100_000])
def test_pull_sum_hot_layout_matches_numpy(weighted, arc_rows):
    g = heavy_graph(11, weighted, arc_rows=arc_rows)
    d = on_gpu(g)
    check_layout(g, d)
    x = np.random.default_rng(3).random(g.num_vertices)
    dx = cp.asarray(x)
    for scale, shift in SHIFTS:
        want = numpy_ops.pull_sum(g, x, scale, shift)
        # sums in another order differ by rounding relative to their terms' size, not the result's (3 - a row's
        # sum may cancel to nearly 0)
        size = numpy_ops.pull_sum(g, x, abs(scale), abs(shift))
        for s in (shift, cp.asarray(shift)):  # a number, and a 0-d device value
            got = ops.pull_sum(d, dx, scale=scale, shift=s)
            assert isinstance(got, cp.ndarray) and got.dtype == np.float64
            assert (np.abs(h(got) - want) <= 1e-12 * size).all()
            np.testing.assert_array_equal(h(got), h(ops.pull_sum(d, dx, scale=scale, shift=s)))  # same bits again
        if arc_rows is not None:
            assert (h(ops.pull_sum(d, dx, scale, cp.asarray(shift)))[arc_rows:] == shift).all()


def test_pull_sum_integers_are_exact_in_any_order():
    """Integer values: every partial sum is exact in float64, so the sorted rows' sums equal NumPy's to the bit."""
    g = heavy_graph(12, weighted=False)
    d = on_gpu(g)
    x = np.random.default_rng(4).integers(0, 1 << 20, g.num_vertices).astype(np.float64)
    np.testing.assert_array_equal(h(ops.pull_sum(d, cp.asarray(x))), numpy_ops.pull_sum(g, x))
    np.testing.assert_array_equal(h(ops.pull_sum(d, cp.asarray(x), 2.0, 3.0)), numpy_ops.pull_sum(g, x, 2.0, 3.0))


@pytest.mark.parametrize("weighted", [False, True])
def test_sort_steps_give_the_one_step_layout(weighted, monkeypatch):
    """Rows sorted a few thousand arcs at a time (a heavy row longer than a step alone) give the layout of one
    sort of all the arcs."""
    g = heavy_graph(13, weighted)
    whole = [None if a is None else h(a) for a in cupy_ops._hot_columns(on_gpu(g))]
    monkeypatch.setattr(cupy_ops, "SORT_STEP", 3 * HEAVY)
    steps = [None if a is None else h(a) for a in cupy_ops._hot_columns(on_gpu(g))]
    for a, b in zip(whole, steps):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("weighted", [False, True])
def test_pull_sum_without_room_for_the_layout(weighted, monkeypatch):
    """Where the free memory is short the pull reads the graph's own ids: the same sums to rounding."""
    g = heavy_graph(14, weighted)
    monkeypatch.setattr(cupy_ops, "HOT_COLUMNS_SPARE", 1 << 40)
    d = on_gpu(g)
    assert cupy_ops._hot_columns(d) is None
    x = np.random.default_rng(5).random(g.num_vertices)
    np.testing.assert_allclose(h(ops.pull_sum(d, cp.asarray(x), 0.85, cp.asarray(1e-6))),
                               numpy_ops.pull_sum(g, x, 0.85, 1e-6), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_pull_sum_small_graph_scale_shift(weighted):
    """Below 2^16 vertices there is no hot-first layout; the affine step is the same."""
    rng = np.random.default_rng(6)
    n = 3000
    g = Graph.from_edges(rng.integers(0, n, 30_000), rng.integers(0, n, 30_000),
                         rng.random(30_000) if weighted else None, num_vertices=n, directed=True)
    d = on_gpu(g)
    assert cupy_ops._hot_columns(d) is None
    x = rng.random(n)
    for scale, shift in SHIFTS:
        np.testing.assert_allclose(h(ops.pull_sum(d, cp.asarray(x), scale, cp.asarray(shift))),
                                   numpy_ops.pull_sum(g, x, scale, shift), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n", [0, 1, 31, 1000, 1 << 20, (1 << 22) + 3])
def test_l1_distance_matches_numpy(n):
    rng = np.random.default_rng(n)
    a, b = rng.random(n) - 0.5, rng.random(n) - 0.5
    da, db = cp.asarray(a), cp.asarray(b)
    for count in {None, 0, n // 2, n}:
        got = ops.l1_distance(da, db, count)
        assert isinstance(got, cp.ndarray) and got.shape == () and got.dtype == np.float64
        want = numpy_ops.l1_distance(a, b, count)
        np.testing.assert_allclose(float(got), float(want), rtol=1e-12, atol=0)
        assert float(got) == float(ops.l1_distance(da, db, count))  # the same order every run


@pytest.mark.parametrize("weights", [None, (1, 64)])
def test_pagerank_cupy_matches_numpy_on_rmat(weights):
    g = rmat(17, weights=weights)
    assert cupy_ops._hot_columns(g.to("cupy")) is not None
    a = mgraph.pagerank(g, backend="numpy", tol=1e-10, max_iter=200)
    b = mgraph.pagerank(g, backend="cupy", tol=1e-10, max_iter=200)
    np.testing.assert_allclose(b.rank, a.rank, rtol=1e-12, atol=0)
    assert b.stats["iterations"] == a.stats["iterations"]
    again = mgraph.pagerank(g, backend="cupy", tol=1e-10, max_iter=200)
    np.testing.assert_array_equal(again.rank, b.rank)  # deterministic run to run


@pytest.mark.parametrize("weighted", [False, True])
def test_pull_sum_of_float32_values_is_the_numpy_twins(weighted):
    """A float32 x (PageRank's float32 shares) is gathered as float32 and summed in float64, as the twin does,
    heavy rows included."""
    g = rmat(15, weights=(1, 64) if weighted else None)
    rg = g.reverse()
    x = np.random.default_rng(5).random(g.num_vertices).astype(np.float32)
    got = h(ops.pull_sum(rg.to("cupy"), cp.asarray(x), scale=0.85, shift=1e-6))
    want = numpy_ops.pull_sum(rg, x, 0.85, 1e-6)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("weights", [None, (1, 64)])
def test_pagerank_float32_shares_cupy_matches_numpy(weights):
    g = rmat(17, weights=weights)
    a = mgraph.pagerank(g, backend="numpy", tol=1e-10, max_iter=200, shares="float32")
    b = mgraph.pagerank(g, backend="cupy", tol=1e-10, max_iter=200, shares="float32")
    np.testing.assert_allclose(b.rank, a.rank, rtol=1e-11, atol=0)
    import warnings

    with warnings.catch_warnings():  # run far below the stop test: float32 shares may not reach it
        warnings.simplefilter("ignore", RuntimeWarning)
        exact = mgraph.pagerank(g, backend="cupy", tol=1e-16, max_iter=300)
        rounded = mgraph.pagerank(g, backend="cupy", tol=1e-16, max_iter=300, shares="float32")
    assert 0 < float(np.abs(rounded.rank - exact.rank).sum()) <= 0.85 * 2.0 ** -24 / 0.15

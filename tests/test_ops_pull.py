"""ops.pull_sum's fused affine step and ops.l1_distance on the CPU, against scipy.sparse and NumPy written out
here; PageRank, which uses both, against networkx on one device and on parts (own vertices as a prefix and not)."""
import networkx as nx
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph

from conftest import get_case


def random_rgraph(seed, n=500, m=4000, weighted=False, empty_from=None):
    """A directed graph with a few long rows; rows from ``empty_from`` on hold no arcs (a part's proxies)."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.integers(0, empty_from or n, m), np.full(n // 2, 3)])
    cols = rng.integers(0, n, rows.size)
    w = rng.random(rows.size) + 0.5 if weighted else None
    g = Graph.from_edges(rows, cols, w, num_vertices=n, directed=True)
    if empty_from is not None:
        assert not np.diff(g.indptr)[empty_from:].any()
        g.arc_rows = empty_from
    return g


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("empty_from", [None, 350])
def test_pull_sum_scale_and_shift_against_scipy(weighted, empty_from):
    g = random_rgraph(1, weighted=weighted, empty_from=empty_from)
    x = np.random.default_rng(2).random(g.num_vertices)
    product = g.to_scipy() @ x
    np.testing.assert_allclose(ops.pull_sum(g, x), product, rtol=1e-13, atol=0)
    for scale, shift in [(0.85, 0.003), (2.0, -1.5), (1.0, 0.0), (0.0, 0.25)]:
        want = scale * product + shift
        np.testing.assert_allclose(ops.pull_sum(g, x, scale=scale, shift=shift), want, rtol=1e-13, atol=1e-16)
        # a 0-d array for the shift (a value the GPU keeps on the device), and one of one value
        np.testing.assert_array_equal(ops.pull_sum(g, x, scale, np.float64(shift)),
                                      ops.pull_sum(g, x, scale=scale, shift=np.array(shift)))
        np.testing.assert_array_equal(ops.pull_sum(g, x, scale, np.array([shift])),
                                      ops.pull_sum(g, x, scale=scale, shift=shift))
    if empty_from is not None:  # rows without arcs take the shift alone
        assert (ops.pull_sum(g, x, scale=3.0, shift=0.125)[empty_from:] == 0.125).all()


def test_pull_sum_defaults_are_the_plain_sum():
    """scale 1 and shift 0 give the sum itself, bit for bit, as before the affine step existed."""
    g = random_rgraph(3, weighted=True)
    x = np.random.default_rng(4).random(g.num_vertices)
    rows = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    want = np.bincount(rows, weights=x[g.indices] * g.weights, minlength=g.num_vertices)
    np.testing.assert_array_equal(ops.pull_sum(g, x), want)
    np.testing.assert_array_equal(ops.pull_sum(g, x, 1.0, 0.0), want)


def test_pull_sum_rounds_product_and_sum_apart():
    """The affine step is two roundings (no fused multiply-add): the GPU's kernels do the same."""
    g = random_rgraph(5)
    x = np.random.default_rng(6).random(g.num_vertices)
    plain = ops.pull_sum(g, x)
    got = ops.pull_sum(g, x, scale=0.85, shift=1e-3)
    np.testing.assert_array_equal(got, (plain * 0.85) + 1e-3)


@pytest.mark.parametrize("n", [0, 4])
def test_pull_sum_without_arcs_is_the_shift(n):
    g = Graph.from_edges([], [], num_vertices=n, directed=True)
    y = ops.pull_sum(g, np.ones(n), scale=0.85, shift=0.5)
    assert y.dtype == np.float64 and y.tolist() == [0.5] * n
    assert ops.pull_sum(g, np.ones(n)).dtype == np.float64


def test_pull_sum_refuses_a_shift_of_several_values():
    g = random_rgraph(7)
    with pytest.raises(ValueError, match="shift"):
        ops.pull_sum(g, np.ones(g.num_vertices), shift=np.ones(2))


@pytest.mark.parametrize("count", [None, 0, 1, 137, 1000])
def test_l1_distance_against_numpy(count):
    rng = np.random.default_rng(8)
    a, b = rng.random(1000) - 0.5, rng.random(1000) - 0.5
    got = ops.l1_distance(a, b, count)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float64
    k = 1000 if count is None else count
    assert float(got) == pytest.approx(sum(abs(float(p) - float(q)) for p, q in zip(a[:k], b[:k])), rel=1e-13, abs=0)


def test_l1_distance_of_other_dtypes_is_float64():
    a, b = np.arange(10, dtype=np.int32), np.arange(10, dtype=np.int32)[::-1].copy()
    got = ops.l1_distance(a, b)
    assert got.dtype == np.float64 and float(got) == 50.0


@pytest.mark.parametrize("a,b,count", [(np.ones(3), np.ones(4), None), (np.ones((2, 2)), np.ones((2, 2)), None),
                                       (np.ones(3), np.ones(3), 4), (np.ones(3), np.ones(3), -1)])
def test_l1_distance_refuses_bad_arguments(a, b, count):
    with pytest.raises(ValueError, match="l1_distance"):
        ops.l1_distance(a, b, count)


def nx_ranks(case, **kw):
    pr = nx.pagerank(case.nx, **kw)
    return np.array([pr[v] for v in range(case.n)])


RUNS = [pytest.param({}, id="one-device"),
        pytest.param(dict(devices=3), id="3-devices-1hop"),  # own vertices a prefix: l1 over a count
        pytest.param(dict(devices=3, duplication="all"), id="3-devices-all")]  # own vertices gathered


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name", ["rand_dir", "rand_dir_float", "rand_und", "facebook_w", "star300_dir"])
def test_pagerank_matches_networkx(name, run):
    case = get_case(name)
    r = mgraph.pagerank(case.graph, tol=1e-12, max_iter=1000, **run)
    np.testing.assert_allclose(r.rank, nx_ranks(case, tol=1e-12, max_iter=1000), rtol=0, atol=1e-12)
    assert r.rank.sum() == pytest.approx(1.0, abs=1e-12) and bool(r.stats["converged"])


@pytest.mark.parametrize("name", ["rand_dir_float", "facebook_w"])
def test_pagerank_on_parts_takes_the_same_steps(name):
    """The fused step gives every layout the same iterations and ranks to rounding."""
    case = get_case(name)
    one = mgraph.pagerank(case.graph)
    for run in (dict(devices=3), dict(devices=3, duplication="all")):
        r = mgraph.pagerank(case.graph, **run)
        np.testing.assert_allclose(r.rank, one.rank, rtol=0, atol=1e-14)
        assert r.stats["iterations"] == one.stats["iterations"]

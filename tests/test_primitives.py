"""Every primitive against scipy.sparse.csgraph / networkx references computed here.

References are built from the raw input edge lists by an independent
simplification (tests/conftest.py), never from mgraph's CSR.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from conftest import bfs_reference, check_bfs_tree, check_sssp_tree, get_case, to_networkx

INF = np.inf


def sources_for(case):
    """A few sources: vertex 0, a middle vertex, the last vertex (isolated in the random graphs)."""
    return sorted({0, case.n // 2, case.n - 1})


def scipy_hops(case, source):
    d = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def scipy_dist(case, source):
    if case.weighted:
        return csgraph.dijkstra(case.csr, directed=True, indices=source)
    return csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=source)


# ============================================================================ BFS
BFS_CASES = ["path200", "path200_dir", "star300", "star300_dir", "grid20x15", "rand_und", "rand_dir",
             "rand_dir_sparse", "disconnected", "disconnected_dir", "zero_dir", "chesapeake", "chesapeake_dir",
             "facebook", "facebook_dir"]
DIRECTIONS = [
    pytest.param(dict(direction="push"), id="push"),
    pytest.param(dict(direction="pull"), id="pull"),
    pytest.param(dict(direction="auto"), id="auto"),
    # switch to pull at once and stay there
    pytest.param(dict(direction="auto", do_a=1e-12, do_b=1e-12), id="auto-eager-pull"),
    # switch to pull at once, then back to push at once: alternates
    pytest.param(dict(direction="auto", do_a=1e-12, do_b=1e12), id="auto-flipflop"),
]


@pytest.mark.parametrize("opts", DIRECTIONS)
@pytest.mark.parametrize("case", BFS_CASES, indirect=True)
def test_bfs_depths_and_tree(case, opts):
    for s in sources_for(case):
        r = mgraph.bfs(case.graph, s, **opts)
        expected = scipy_hops(case, s)
        np.testing.assert_array_equal(r.depth, expected, err_msg=f"{case.name} source {s}")
        check_bfs_tree(case, s, r.depth, r.predecessor)


@pytest.mark.parametrize("case", ["path200", "star300", "grid20x15", "rand_dir", "disconnected_dir", "chesapeake"],
                         indirect=True)
def test_bfs_matches_python_bfs(case):
    """A second, independent reference (plain Python BFS)."""
    for s in sources_for(case):
        np.testing.assert_array_equal(mgraph.bfs(case.graph, s).depth, bfs_reference(case, s))


def test_bfs_star_hub_and_leaf():
    case = get_case("star300")
    r = mgraph.bfs(case.graph, 0)
    assert r.depth[0] == 0 and np.all(r.depth[1:] == 1) and np.all(r.predecessor[1:] == 0)
    for direction in ("push", "pull", "auto"):
        r = mgraph.bfs(case.graph, 17, direction=direction)
        assert r.depth[17] == 0 and r.depth[0] == 1
        expected = np.full(301, 2)
        expected[0], expected[17] = 1, 0
        np.testing.assert_array_equal(r.depth, expected)
        assert r.predecessor[0] == 17 and np.all(np.delete(r.predecessor, [0, 17]) == 0)
    # directed star: a leaf reaches nothing
    d = mgraph.bfs(get_case("star300_dir").graph, 5, direction="pull")
    assert d.depth[5] == 0 and np.count_nonzero(d.depth >= 0) == 1 and d.predecessor[0] == -1


def test_bfs_path_high_diameter():
    case = get_case("path200")
    for direction in ("push", "pull", "auto"):
        r = mgraph.bfs(case.graph, 0, direction=direction)
        np.testing.assert_array_equal(r.depth, np.arange(200))
        np.testing.assert_array_equal(r.predecessor, np.r_[0, np.arange(199)])
        assert r.stats["iterations"] >= 199
        r = mgraph.bfs(case.graph, 120, direction=direction)
        np.testing.assert_array_equal(r.depth, np.abs(np.arange(200) - 120))
    rd = mgraph.bfs(get_case("path200_dir").graph, 150, direction="pull")
    np.testing.assert_array_equal(rd.depth, np.r_[np.full(150, -1), np.arange(50)])


def test_bfs_isolated_source():
    case = get_case("rand_und")  # vertices 400..424 never appear in the edge list
    for direction in ("push", "pull", "auto"):
        r = mgraph.bfs(case.graph, case.n - 1, direction=direction)
        assert r.depth[case.n - 1] == 0 and r.predecessor[case.n - 1] == case.n - 1
        assert np.count_nonzero(r.depth >= 0) == 1 and np.count_nonzero(r.predecessor >= 0) == 1


def test_bfs_auto_really_switches_on_facebook():
    """The direction-optimizing tests above only mean something if 'auto' actually pulls somewhere."""
    r = mgraph.bfs(get_case("facebook").graph, 0, direction="auto")
    dirs = r.stats["directions"]
    assert "push" in dirs and "pull" in dirs
    assert set(mgraph.bfs(get_case("facebook").graph, 0, direction="pull").stats["directions"]) == {"pull"}
    assert set(mgraph.bfs(get_case("facebook").graph, 0, direction="push").stats["directions"]) == {"push"}
    flip = mgraph.bfs(get_case("grid20x15").graph, 0, direction="auto", do_a=1e-12, do_b=1e12).stats["directions"]
    assert "push" in flip and "pull" in flip


# =========================================================================== SSSP
SSSP_CASES = ["path200_w", "path200_dir", "star300", "grid20x15", "grid20x15_w", "rand_und_int", "rand_dir_int",
              "rand_und_float", "rand_dir_float", "rand_dir", "zero_dir", "zero_und", "zero_heavy_dir",
              "zero_heavy_und", "disconnected", "disconnected_dir", "chesapeake", "chesapeake_dir", "facebook_w"]


@pytest.mark.parametrize("case", SSSP_CASES, indirect=True)
def test_sssp_distances_and_tree(case):
    for s in sources_for(case):
        r = mgraph.sssp(case.graph, s)
        expected = scipy_dist(case, s)
        assert np.array_equal(np.isinf(r.distance), np.isinf(expected)), f"{case.name} source {s}: reachability"
        fin = np.isfinite(expected)
        if case.weights is None or np.all(case.weights == np.round(case.weights)):
            np.testing.assert_array_equal(r.distance[fin], expected[fin])  # integer sums are exact
        else:
            np.testing.assert_allclose(r.distance[fin], expected[fin], rtol=1e-12, atol=0)
        check_sssp_tree(case, s, r.distance, r.predecessor)


@pytest.mark.parametrize("case", ["zero_dir", "zero_und", "zero_heavy_dir", "rand_und_float", "small_dir"],
                         indirect=True)
def test_sssp_matches_networkx_dijkstra(case):
    """networkx as a second reference (explicit zero weights handled without scipy's sparse conventions)."""
    for s in sources_for(case):
        lengths = nx.single_source_dijkstra_path_length(case.nx, s, weight="weight")
        expected = np.full(case.n, INF)
        for v, d in lengths.items():
            expected[v] = d
        r = mgraph.sssp(case.graph, s)
        np.testing.assert_allclose(r.distance, expected, rtol=1e-12, atol=0)


def test_sssp_zero_weight_cycles_by_hand():
    case = get_case("zero_dir")
    r = mgraph.sssp(case.graph, 0)
    np.testing.assert_array_equal(r.distance, [0, 1, 1, 1, 3, 3, 3, INF, INF, 3, INF])
    check_sssp_tree(case, 0, r.distance, r.predecessor)
    assert r.predecessor[1] == 0 and r.predecessor[2] == 1 and r.predecessor[3] == 2
    assert r.predecessor[4] in (3, 5)  # 3 -2-> 4, or 5 -0-> 4 (both tight)
    assert r.predecessor[9] in (0, 2)  # the tie
    assert np.all(r.predecessor[[7, 8, 10]] == -1)
    # from inside the zero cycle: everything on it is at distance 0, and the source is not re-parented
    r = mgraph.sssp(case.graph, 2)
    np.testing.assert_array_equal(r.distance, [2, 0, 0, 0, 2, 2, 2, INF, INF, 2, INF])
    assert r.predecessor[2] == 2
    check_sssp_tree(case, 2, r.distance, r.predecessor)
    # the unreachable zero cycle, as a source
    r = mgraph.sssp(case.graph, 7)
    np.testing.assert_array_equal(r.distance, [INF, INF, INF, INF, INF, INF, 1, 0, 0, INF, INF])
    check_sssp_tree(case, 7, r.distance, r.predecessor)


@pytest.mark.parametrize("case", ["path200", "star300", "grid20x15", "rand_dir", "rand_und", "chesapeake_dir"],
                         indirect=True)
def test_sssp_unweighted_is_hop_count(case):
    for s in sources_for(case):
        d = mgraph.sssp(case.graph, s).distance
        hops = mgraph.bfs(case.graph, s).depth
        expected = np.where(hops < 0, INF, hops.astype(float))
        np.testing.assert_array_equal(d, expected)
        np.testing.assert_array_equal(d, scipy_dist(case, s))


def test_sssp_duplicate_edges_use_smallest_weight():
    g = mgraph.Graph.from_edges([0, 0, 1, 1], [1, 1, 2, 2], [5.0, 2.0, 7.0, 1.5], directed=True)
    r = mgraph.sssp(g, 0)
    np.testing.assert_array_equal(r.distance, [0.0, 2.0, 3.5])
    g = mgraph.Graph.from_edges([0, 1], [1, 0], [4.0, 1.0])  # undirected: both orientations are one edge
    np.testing.assert_array_equal(mgraph.sssp(g, 1).distance, [1.0, 0.0])
    np.testing.assert_array_equal(mgraph.sssp(g, 0).distance, [0.0, 1.0])


# ============================================================================= CC
CC_CASES = ["path200", "path200_dir", "star300", "star300_dir", "grid20x15", "rand_und", "rand_dir",
            "rand_dir_sparse", "zero_dir", "zero_heavy_dir", "disconnected", "disconnected_dir", "chesapeake",
            "chesapeake_dir", "facebook", "facebook_dir"]


def min_id_labels(case):
    k, lab = csgraph.connected_components(case.csr, directed=True, connection="weak")
    mins = np.full(k, case.n, dtype=np.int64)
    np.minimum.at(mins, lab, np.arange(case.n))
    return mins[lab], k


@pytest.mark.parametrize("case", CC_CASES, indirect=True)
def test_cc_labels(case):
    r = mgraph.connected_components(case.graph)
    expected, k = min_id_labels(case)
    np.testing.assert_array_equal(r.labels, expected)
    assert r.stats["num_components"] == k


@pytest.mark.parametrize("case", ["rand_dir", "small_und", "disconnected_dir", "zero_heavy_dir"], indirect=True)
def test_cc_matches_networkx(case):
    comps = nx.weakly_connected_components(case.nx) if case.directed else nx.connected_components(case.nx)
    expected = np.empty(case.n, dtype=np.int64)
    for comp in comps:
        expected[list(comp)] = min(comp)
    np.testing.assert_array_equal(mgraph.connected_components(case.graph).labels, expected)


def test_cc_by_hand():
    r = mgraph.connected_components(get_case("disconnected").graph)
    np.testing.assert_array_equal(r.labels, [0, 0, 0, 3, 3, 3, 3, 3, 8, 9, 10, 10, 10, 10, 10, 10, 16, 17, 18, 19])
    assert r.stats["num_components"] == 9
    r = mgraph.connected_components(get_case("disconnected_dir").graph)
    np.testing.assert_array_equal(r.labels, [0, 0, 0, 3, 4, 0, 6, 7, 7, 7, 3, 3, 3, 13])
    # a long path given in reverse order, so hooking must propagate the minimum across 1999 arcs
    n = 2000
    g = mgraph.Graph.from_edges(np.arange(n - 1, 0, -1), np.arange(n - 2, -1, -1), directed=True)
    np.testing.assert_array_equal(mgraph.connected_components(g).labels, np.zeros(n, dtype=np.int64))


# ======================================================================= PageRank
def pagerank_reference(case, alpha=0.85, tol=1e-6, max_iter=100):
    """networkx's _pagerank_scipy iteration, written out (it raises instead of returning when it does not
    converge); returns (rank, iterations, converged)."""
    n = case.n
    A = case.csr  # weights (explicit zeros kept), or ones
    S = np.asarray(A.sum(axis=1)).ravel()
    dangling = S == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, S))
    x = np.full(n, 1.0 / n)
    p = np.full(n, 1.0 / n)
    for it in range(1, max_iter + 1):
        xlast = x
        x = alpha * ((x * inv) @ A + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - xlast).sum() < n * tol:
            return x, it, True
    return x, max_iter, False


def nx_pagerank(case, **kw):
    pr = nx.pagerank(case.nx, **kw)
    return np.array([pr[v] for v in range(case.n)])


PR_CASES = ["path200", "path200_dir", "star300", "star300_dir", "grid20x15", "rand_und", "rand_dir",
            "rand_dir_sparse", "rand_und_int", "rand_dir_int", "rand_dir_float", "zero_dir", "zero_heavy_dir",
            "zero_heavy_und", "disconnected", "disconnected_dir", "chesapeake", "chesapeake_dir", "facebook",
            "facebook_w"]


@pytest.mark.parametrize("case", PR_CASES, indirect=True)
def test_pagerank_vs_networkx(case):
    r = mgraph.pagerank(case.graph)
    expected = nx_pagerank(case)
    np.testing.assert_allclose(r.rank, expected, rtol=0, atol=1e-9)
    assert r.rank.sum() == pytest.approx(1.0, abs=1e-9)
    assert bool(r.stats["converged"])


@pytest.mark.parametrize("alpha,tol", [(0.5, 1e-6), (0.99, 1e-10), (0.85, 1e-3), (0.85, 1e-12), (0.0, 1e-6),
                                       (0.3, 1e-9)])
@pytest.mark.parametrize("case", ["rand_dir", "rand_dir_int", "star300_dir", "chesapeake"], indirect=True)
def test_pagerank_parameters_vs_networkx(case, alpha, tol):
    r = mgraph.pagerank(case.graph, alpha=alpha, tol=tol, max_iter=5000)
    expected = nx_pagerank(case, alpha=alpha, tol=tol, max_iter=5000)
    np.testing.assert_allclose(r.rank, expected, rtol=0, atol=1e-9)
    ref, iters, ok = pagerank_reference(case, alpha, tol, 5000)
    np.testing.assert_allclose(ref, expected, rtol=0, atol=1e-12)  # the written-out reference is networkx's
    assert ok and r.stats["iterations"] == iters


def test_pagerank_alpha_zero_is_uniform():
    case = get_case("rand_dir_int")
    r = mgraph.pagerank(case.graph, alpha=0.0)
    np.testing.assert_allclose(r.rank, np.full(case.n, 1.0 / case.n), rtol=0, atol=1e-15)


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_pagerank_max_iter_stops_and_warns(max_iter):
    case = get_case("rand_dir_int")
    with pytest.warns(RuntimeWarning, match="converge"):
        r = mgraph.pagerank(case.graph, alpha=0.85, tol=1e-12, max_iter=max_iter)
    ref, iters, ok = pagerank_reference(case, 0.85, 1e-12, max_iter)
    assert not ok and iters == max_iter
    assert r.stats["iterations"] == max_iter and not r.stats["converged"]
    np.testing.assert_allclose(r.rank, ref, rtol=0, atol=1e-12)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(case.nx, tol=1e-12, max_iter=max_iter)


def test_pagerank_dangling_vertices():
    """A directed star: 300 dangling leaves and a hub no one links to."""
    case = get_case("star300_dir")
    r = mgraph.pagerank(case.graph, tol=1e-12, max_iter=1000)
    expected = nx_pagerank(case, tol=1e-12, max_iter=1000)
    np.testing.assert_allclose(r.rank, expected, rtol=0, atol=1e-12)
    assert np.all(r.rank[1:] > r.rank[0]) and np.allclose(r.rank[1:], r.rank[1])
    # isolated vertices are dangling too
    iso = get_case("rand_dir")
    r = mgraph.pagerank(iso.graph)
    assert np.all(r.rank[iso.n - 25:] > 0)
    np.testing.assert_allclose(r.rank, nx_pagerank(iso), rtol=0, atol=1e-9)


def test_pagerank_uses_weights():
    """Same structure, different weights: networkx's answer changes, and mgraph follows it."""
    src, dst = [0, 0, 1, 2, 3], [1, 2, 2, 0, 0]
    ga = mgraph.Graph.from_edges(src, dst, [1.0, 1.0, 1, 1, 1], directed=True)
    gb = mgraph.Graph.from_edges(src, dst, [9.0, 1.0, 1, 1, 1], directed=True)
    for g in (ga, gb):
        pr = nx.pagerank(to_networkx(g), tol=1e-12, max_iter=1000)
        np.testing.assert_allclose(mgraph.pagerank(g, tol=1e-12, max_iter=1000).rank, [pr[i] for i in range(4)],
                                   rtol=0, atol=1e-12)
    assert not np.allclose(mgraph.pagerank(ga).rank, mgraph.pagerank(gb).rank, atol=1e-4)


# ==================================================================== Betweenness
BC_ALL_CASES = ["path60", "path200_dir", "star300", "star300_dir", "grid8x6", "small_und", "small_dir", "zero_dir",
                "zero_und", "disconnected", "disconnected_dir", "chesapeake", "chesapeake_dir"]


def nx_array(d, n):
    return np.array([d[v] for v in range(n)], dtype=np.float64)


@pytest.mark.parametrize("case", BC_ALL_CASES, indirect=True)
def test_bc_all_sources_vs_networkx(case):
    r = mgraph.betweenness_centrality(case.graph)
    # weights are ignored by BC (networkx's default weight=None): a hop-count betweenness
    expected = nx_array(nx.betweenness_centrality(case.nx, normalized=False), case.n)
    np.testing.assert_allclose(r.centrality, expected, rtol=1e-10, atol=1e-9)
    assert r.stats["sources"] == case.n


BC_SUBSET = [
    ("path200", [0, 100, 199]),
    ("star300", [0]),
    ("star300", [5, 9]),
    ("grid20x15", [0, 7, 150, 299]),
    ("rand_und", [0, 7, 200, 424]),  # 424 is isolated
    ("rand_dir", [3, 50, 399, 410]),
    ("rand_dir_sparse", list(range(0, 500, 25))),
    ("facebook", [0, 5, 1000]),
    ("facebook_dir", [1, 2, 18427]),
]


@pytest.mark.parametrize("name,sources", BC_SUBSET, ids=[f"{n}-{len(s)}" for n, s in BC_SUBSET])
def test_bc_subset_vs_networkx(name, sources):
    case = get_case(name)
    r = mgraph.betweenness_centrality(case.graph, sources=sources)
    expected = nx_array(nx.betweenness_centrality_subset(case.nx, sources, list(range(case.n)), normalized=False),
                        case.n)
    np.testing.assert_allclose(r.centrality, expected, rtol=1e-10, atol=1e-9)
    assert r.stats["sources"] == len(sources)


def test_bc_by_hand():
    # path 0-1-2-3-4 (undirected): vertex k lies on k*(4-k) pairs
    g = mgraph.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4])
    np.testing.assert_allclose(mgraph.betweenness_centrality(g).centrality, [0, 3, 4, 3, 0])
    # star: hub lies on all C(300, 2) leaf pairs
    r = mgraph.betweenness_centrality(get_case("star300").graph)
    assert r.centrality[0] == pytest.approx(300 * 299 / 2) and np.all(r.centrality[1:] == 0)
    # square 0-1-2-3-0: two shortest paths between opposite corners, each middle vertex gets 1/2
    g = mgraph.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0])
    np.testing.assert_allclose(mgraph.betweenness_centrality(g).centrality, [0.5] * 4)
    # directed: 0 -> 1 -> 2 only
    g = mgraph.Graph.from_edges([0, 1], [1, 2], directed=True)
    np.testing.assert_allclose(mgraph.betweenness_centrality(g).centrality, [0, 1, 0])


def test_bc_is_additive_over_sources():
    case = get_case("small_dir")
    total = mgraph.betweenness_centrality(case.graph).centrality
    parts = sum(mgraph.betweenness_centrality(case.graph, sources=[s]).centrality for s in range(case.n))
    np.testing.assert_allclose(total, parts, rtol=1e-12, atol=1e-12)
    split = (mgraph.betweenness_centrality(case.graph, sources=range(0, 40)).centrality
             + mgraph.betweenness_centrality(case.graph, sources=range(40, case.n)).centrality)
    np.testing.assert_allclose(total, split, rtol=1e-12, atol=1e-12)

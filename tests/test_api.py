"""The public API: user errors, result types, stats, backend selection, Graph construction."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import mgraph
from conftest import BUILDERS, get_case, simple_edges, to_networkx
from mgraph import ops
from mgraph.backend import gpu_available

no_gpu = pytest.mark.skipif(gpu_available(), reason="a GPU is present: backend='cupy' would work")


@pytest.fixture
def g():
    """Undirected, weighted: 0-1-2-3 path plus 4 isolated."""
    return mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 3.0], num_vertices=5)


# one call per public function, with extra keyword arguments passed through
CALLS = {
    "bfs": lambda graph, **kw: mgraph.bfs(graph, 0, **kw),
    "sssp": lambda graph, **kw: mgraph.sssp(graph, 0, **kw),
    "cc": lambda graph, **kw: mgraph.connected_components(graph, **kw),
    "pagerank": lambda graph, **kw: mgraph.pagerank(graph, **kw),
    "bc": lambda graph, **kw: mgraph.betweenness_centrality(graph, **kw),
    "bc_subset": lambda graph, **kw: mgraph.betweenness_centrality(graph, sources=[0, 2], **kw),
}
SOURCE_CALLS = {
    "bfs": lambda graph, s: mgraph.bfs(graph, s),
    "bfs_pull": lambda graph, s: mgraph.bfs(graph, s, direction="pull"),
    "sssp": lambda graph, s: mgraph.sssp(graph, s),
    "bc": lambda graph, s: mgraph.betweenness_centrality(graph, sources=[0, s]),
}


# ======================================================================== errors
@pytest.mark.parametrize("call", SOURCE_CALLS.values(), ids=SOURCE_CALLS.keys())
@pytest.mark.parametrize("source,match", [
    (5, "out of range"),
    (6, "out of range"),
    (10**12, "out of range"),
    (-1, "out of range"),
    (-5, "out of range"),
    (1.0, "integer"),
    (1.5, "integer"),
    ("1", "integer"),
    (None, "integer"),
    (True, "integer"),
])
def test_bad_source(g, call, source, match):
    with pytest.raises(ValueError, match=match):
        call(g, source)


def test_numpy_integer_sources_accepted(g):
    for s in (np.int64(3), np.int32(3), np.uint8(3)):
        assert mgraph.bfs(g, s).depth[0] == 3
        assert mgraph.sssp(g, s).distance[0] == 6.0
    np.testing.assert_array_equal(mgraph.betweenness_centrality(g, sources=np.array([0, 3])).centrality,
                                  mgraph.betweenness_centrality(g, sources=[0, 3]).centrality)
    # an int means one source
    np.testing.assert_array_equal(mgraph.betweenness_centrality(g, sources=1).centrality,
                                  mgraph.betweenness_centrality(g, sources=[1]).centrality)


def test_sssp_negative_weights(g):
    neg = mgraph.Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, -2.0, 3.0], directed=True)
    with pytest.raises(ValueError, match="negative"):
        mgraph.sssp(neg, 0)
    # other primitives accept the graph (weights unused or allowed)
    assert mgraph.bfs(neg, 0).depth.tolist() == [0, 1, 2]


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
@pytest.mark.parametrize("kw,match", [
    ({"backend": "foo"}, "backend"),
    ({"backend": "CUDA"}, "backend"),
    ({"devices": 0}, "devices"),
    ({"devices": [0, -1]}, "device ids"),
    ({"devices": 2, "partitioner": "kmeans"}, "partitioner"),
    ({"devices": 2, "duplication": "2-hop"}, "duplication"),
    ({"devices": 2, "communication": "gossip"}, "communication"),
    ({"devices": []}, "devices"),
    ({"devices": -1}, "devices"),
    ({"devices": "one"}, "devices"),
    ({"frobnicate": 1}, "frobnicate"),
    ({"Backend": "numpy"}, "Backend"),
    ({"seed": "x"}, "seed"),
])
def test_bad_run_options(g, call, kw, match):
    with pytest.raises(ValueError, match=match):
        call(g, **kw)


def test_the_runner_names_a_command_line_needs_are_public_in_the_api(g):
    """The CLI and graph500 import mgraph.api only: the run options' names, the workers' choices, the device a run
    uses and (under MPI) a rank's part."""
    from mgraph import api

    assert api.RUN_OPTIONS == ("backend", "devices", "partitioner", "duplication", "communication", "seed",
                               "workers", "gather", "output", "max_supersteps", "threads", "peer_levels",
                               "peer_borders")
    assert api.WORKERS == ("auto", "threads")
    b = api.run_backend(g, backend="numpy", devices=3)
    assert (b.name, b.device) == ("numpy", 0)
    with pytest.raises(ValueError, match="^unknown backend 'gpu'"):
        api.run_backend(g, backend="gpu")
    with pytest.raises(ValueError, match=r"^prepare\(\) is for MPI ranks: without MPI the graph is whole"):
        api.prepare(g, devices=2)


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_good_run_options(g, call):
    a = call(g)
    b = call(g, backend="numpy", devices=1, seed=123)
    c = call(g, devices=[0])
    for key in a.keys():
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
        np.testing.assert_array_equal(getattr(a, key), getattr(c, key))


@pytest.mark.parametrize("kw,match", [
    ({"direction": "sideways"}, "direction"),
    ({"direction": "PUSH"}, "direction"),
    ({"direction": None}, "direction"),
    ({"do_a": 0}, "do_a"),
    ({"do_b": -1.0}, "do_b"),
    ({"directon": "pull"}, "directon"),  # a misspelt option is an unknown option, not silently ignored
])
def test_bfs_bad_options(g, kw, match):
    with pytest.raises(ValueError, match=match):
        mgraph.bfs(g, 0, **kw)


@pytest.mark.parametrize("kw,match", [
    ({"alpha": 1.5}, "alpha"),
    ({"alpha": -0.1}, "alpha"),
    ({"tol": 0}, "tol"),
    ({"tol": -1e-6}, "tol"),
    ({"max_iter": 0}, "max_iter"),
    ({"damping": 0.85}, "damping"),
])
def test_pagerank_bad_options(g, kw, match):
    with pytest.raises(ValueError, match=match):
        mgraph.pagerank(g, **kw)


def test_pagerank_empty_graph():
    empty = mgraph.Graph.from_edges([], [], num_vertices=0)
    with pytest.raises(ValueError, match="empty"):
        mgraph.pagerank(empty)


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_not_a_graph(call):
    # a networkx graph, sparse matrix or DataFrame is a graph now (mgraph.convert.as_graph); an edge list is not
    with pytest.raises(ValueError, match="expected an mgraph.Graph, a networkx graph, .* got list"):
        call([(0, 1), (1, 2)])


def test_bc_bad_sources(g):
    with pytest.raises(ValueError, match="out of range"):
        mgraph.betweenness_centrality(g, sources=[0, 5])
    with pytest.raises(ValueError, match="out of range"):
        mgraph.betweenness_centrality(g, sources=[-1])
    with pytest.raises(ValueError, match="integer"):
        mgraph.betweenness_centrality(g, sources=[0.5])


@no_gpu
@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_cupy_without_gpu(g, call):
    with pytest.raises(ValueError, match="(?i)cupy.*gpu"):
        call(g, backend="cupy")


@no_gpu
def test_graph_to_cupy_without_gpu(g):
    with pytest.raises(ValueError, match="(?i)gpu"):
        g.to("cupy")


# ====================================================================== backends
def test_env_backend_numpy(g, monkeypatch):
    monkeypatch.setenv("MGRAPH_BACKEND", "numpy")
    r = mgraph.bfs(g, 0)
    assert r.stats["backend"] == "numpy"
    assert r.depth.tolist() == [0, 1, 2, 3, -1]
    assert mgraph.pagerank(g, backend="auto").stats["backend"] == "numpy"


@pytest.mark.parametrize("value", ["bogus", "gpu", "numpy2"])
def test_env_backend_bogus(g, monkeypatch, value):
    monkeypatch.setenv("MGRAPH_BACKEND", value)
    for call in CALLS.values():
        with pytest.raises(ValueError, match="MGRAPH_BACKEND"):
            call(g)
    # the variable only overrides backend="auto": an explicit backend still works
    assert mgraph.bfs(g, 0, backend="numpy").depth.tolist() == [0, 1, 2, 3, -1]


@no_gpu
def test_env_backend_cupy_without_gpu(g, monkeypatch):
    monkeypatch.setenv("MGRAPH_BACKEND", "cupy")
    with pytest.raises(ValueError, match="(?i)gpu"):
        mgraph.bfs(g, 0)


def test_auto_backend_without_env(g, monkeypatch):
    monkeypatch.delenv("MGRAPH_BACKEND", raising=False)
    r = mgraph.connected_components(g)
    assert r.stats["backend"] == ("cupy" if gpu_available() else "numpy")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["rand_dir_int", "rand_und", "chesapeake"])
def test_cupy_matches_numpy(name):
    """GPU runs agree with the NumPy backend on everything that must agree (skipped without a GPU)."""
    case = get_case(name)
    for fn, kw, keys in [(mgraph.bfs, {"source": 0}, ["depth"]), (mgraph.sssp, {"source": 0}, ["distance"]),
                         (mgraph.connected_components, {}, ["labels"]), (mgraph.pagerank, {}, ["rank"]),
                         (mgraph.betweenness_centrality, {"sources": [0, 3]}, ["centrality"])]:
        a = fn(case.graph, backend="numpy", **kw)
        b = fn(case.graph, backend="cupy", **kw)
        assert b.stats["backend"] == "cupy"
        for k in keys:
            assert isinstance(getattr(b, k), np.ndarray)
            np.testing.assert_allclose(getattr(b, k), getattr(a, k), rtol=1e-12, atol=1e-12)


# =============================================================== result types
def _check_array(a, n, dtype):
    assert type(a) is np.ndarray, type(a)
    assert a.dtype == dtype, a.dtype
    assert a.shape == (n,)


@pytest.mark.parametrize("name", ["rand_dir_int", "rand_und", "disconnected"])
def test_result_types(name):
    case = get_case(name)
    graph, n = case.graph, case.n
    for direction in ("push", "pull", "auto"):
        r = mgraph.bfs(graph, 0, direction=direction)
        _check_array(r.depth, n, np.int64)
        _check_array(r.predecessor, n, np.int64)
        assert set(r.keys()) == {"depth", "predecessor"}
    r = mgraph.sssp(graph, 0)
    _check_array(r.distance, n, np.float64)
    _check_array(r.predecessor, n, np.int64)
    r = mgraph.connected_components(graph)
    _check_array(r.labels, n, np.int64)
    r = mgraph.pagerank(graph)
    _check_array(r.rank, n, np.float64)
    r = mgraph.betweenness_centrality(graph, sources=[0, 1])
    _check_array(r.centrality, n, np.float64)
    with pytest.raises(AttributeError):
        r.nonexistent  # noqa: B018


def test_unreached_conventions():
    case = get_case("disconnected")
    r = mgraph.bfs(case.graph, 3)
    assert r.depth[3] == 0 and r.predecessor[3] == 3
    assert np.all(r.depth[[0, 1, 2, 8, 9, 10, 19]] == -1) and np.all(r.predecessor[[0, 1, 2, 8, 10, 19]] == -1)
    s = mgraph.sssp(case.graph, 3)
    assert s.distance[3] == 0.0 and s.predecessor[3] == 3
    assert np.all(np.isposinf(s.distance[[0, 1, 2, 8, 9, 10, 19]])) and np.all(s.predecessor[[0, 8, 19]] == -1)


# ======================================================================== stats
def _component_edges(case, reached):
    """Simple edges with both ends reached (directed: tail reached, which implies the head)."""
    return sum(1 for (u, v) in case.edges if reached[u] and (case.directed or reached[v]))


TRAVERSALS = [
    ("bfs", lambda graph, s: mgraph.bfs(graph, s)),
    ("bfs_pull", lambda graph, s: mgraph.bfs(graph, s, direction="pull")),
    ("bfs_auto", lambda graph, s: mgraph.bfs(graph, s, direction="auto")),
    ("sssp", lambda graph, s: mgraph.sssp(graph, s)),
]


@pytest.mark.parametrize("call", [c for _, c in TRAVERSALS], ids=[n for n, _ in TRAVERSALS])
@pytest.mark.parametrize("name,source", [("chesapeake", 0), ("disconnected", 3), ("disconnected", 10),
                                         ("rand_dir", 0), ("rand_und_int", 5), ("star300_dir", 0),
                                         ("facebook", 0)])
def test_traversal_stats(call, name, source):
    case = get_case(name)
    r = call(case.graph, source)
    st = r.stats
    for key in ("iterations", "elapsed_s", "graph500_teps", "directed_edge_teps", "edges_in_component"):
        assert key in st, key
    reached = (r.depth >= 0) if "depth" in r.keys() else np.isfinite(r.distance)
    expected = _component_edges(case, reached)
    assert st["edges_in_component"] == expected
    assert expected > 0
    assert st["elapsed_s"] > 0 and math.isfinite(st["elapsed_s"])
    assert st["graph500_teps"] > 0 and st["directed_edge_teps"] > 0
    assert st["graph500_teps"] == pytest.approx(expected / st["elapsed_s"])
    arcs = expected if case.directed else 2 * expected
    assert st["directed_edge_teps"] == pytest.approx(arcs / st["elapsed_s"])
    assert isinstance(st["iterations"], int) and st["iterations"] >= 1
    if "depth" in r.keys():
        assert st["iterations"] >= r.depth.max()


def test_edges_in_component_known_values():
    assert mgraph.bfs(get_case("chesapeake").graph, 0).stats["edges_in_component"] == 170
    d = get_case("disconnected").graph
    assert mgraph.bfs(d, 0).stats["edges_in_component"] == 3  # triangle
    assert mgraph.bfs(d, 4).stats["edges_in_component"] == 4  # path 3..7
    assert mgraph.bfs(d, 13).stats["edges_in_component"] == 5  # star 10..15
    assert mgraph.bfs(d, 8).stats["edges_in_component"] == 0  # isolated
    assert mgraph.sssp(d, 8).stats["edges_in_component"] == 0
    # facebook: 171,002 input lines, 179 self-loops; connected
    fb = get_case("facebook")
    assert mgraph.bfs(fb.graph, 0).stats["edges_in_component"] == len(fb.edges)
    # a directed path from the middle reaches only the arcs behind it
    assert mgraph.bfs(get_case("path200_dir").graph, 150).stats["edges_in_component"] == 49


@pytest.mark.parametrize("name", CALLS.keys())
def test_common_stats(g, name):
    st = CALLS[name](g).stats
    # CC on a whole graph on the CPU is one compiled call in its reset, with no iterate, as core numbers are
    whole = name == "cc" and st["backend"] == "numpy" and ops.whole_graph_kernel(g, "connected_components") is not None
    assert isinstance(st["iterations"], int) and st["iterations"] >= (0 if whole else 1)
    assert st["elapsed_s"] >= 0 and math.isfinite(st["elapsed_s"])
    assert st["backend"] == "numpy" or gpu_available()


def test_algorithm_stats():
    case = get_case("path200")
    assert mgraph.bfs(case.graph, 0).stats["iterations"] >= 199
    pr = mgraph.pagerank(case.graph, tol=1e-9, max_iter=500)
    assert pr.stats["converged"] and 1 <= pr.stats["iterations"] <= 500
    assert mgraph.connected_components(get_case("disconnected").graph).stats["num_components"] == 9
    bc = mgraph.betweenness_centrality(get_case("star300").graph, sources=[0, 1, 2])
    assert bc.stats["sources"] == 3 and bc.stats["iterations"] >= 3


# ==================================================================== the Graph
@pytest.mark.parametrize("kw,match", [
    (dict(src=[0, -1], dst=[1, 2]), "negative"),
    (dict(src=[0, 1], dst=[1, -3]), "negative"),
    (dict(src=[0, 1], dst=[1, 5], num_vertices=5), "out of range"),
    (dict(src=[7, 1], dst=[1, 2], num_vertices=3), "out of range"),
    (dict(src=[0, 1, 2], dst=[1, 2]), "length"),
    (dict(src=[0, 1], dst=[1, 2], weights=[1.0]), "length"),
    (dict(src=[0, 1], dst=[1, 2], weights=[1.0, np.nan]), "NaN"),
    (dict(src=[0, 1], dst=[1, 2], weights=[np.inf, 1.0]), "infinite"),
    (dict(src=[0, 1], dst=[1, 2], weights=[1.0, -np.inf]), "infinite"),
    (dict(src=[0.0, 1.5], dst=[1, 2]), "integer"),
    (dict(src=[[0, 1]], dst=[[1, 2]]), "1-D"),
    (dict(src=["a", "b"], dst=[1, 2]), "integer"),
    (dict(src=[0, 1], dst=[1, 2], num_vertices=-1), "num_vertices"),
])
def test_from_edges_errors(kw, match):
    src, dst = kw.pop("src"), kw.pop("dst")
    with pytest.raises(ValueError, match=match):
        mgraph.Graph.from_edges(src, dst, **kw)


def _arcs(graph):
    """{(u, v): w} of every stored arc, read straight from the CSR."""
    indptr, indices = np.asarray(graph.indptr), np.asarray(graph.indices)
    w = np.ones(indices.size) if graph.weights is None else np.asarray(graph.weights)
    return {(u, int(indices[k])): float(w[k]) for u in range(graph.num_vertices)
            for k in range(indptr[u], indptr[u + 1])}


def test_simplification_by_hand():
    # self-loops (2,2) and (0,0) dropped; (0,1) appears three times; (1,0) is its reverse
    src = [0, 0, 2, 1, 0, 0, 3]
    dst = [1, 1, 2, 0, 0, 1, 2]
    w = [5.0, 3.0, 0.5, 4.0, 1.0, 7.0, 2.0]
    und = mgraph.Graph.from_edges(src, dst, w)
    assert und.num_vertices == 4 and not und.directed
    assert _arcs(und) == {(0, 1): 3.0, (1, 0): 3.0, (3, 2): 2.0, (2, 3): 2.0}
    assert und.num_edges == 2 and und.num_arcs == 4
    s, d, ww = und.edges()
    assert s.tolist() == [0, 2] and d.tolist() == [1, 3] and ww.tolist() == [3.0, 2.0]

    dg = mgraph.Graph.from_edges(src, dst, w, directed=True)
    assert _arcs(dg) == {(0, 1): 3.0, (1, 0): 4.0, (3, 2): 2.0}
    assert dg.num_edges == 3 and dg.num_arcs == 3
    np.testing.assert_array_equal(dg.out_degree(), [1, 1, 0, 1])

    # unweighted, with the reverse-direction duplicate on an undirected graph
    u = mgraph.Graph.from_edges([0, 1, 1, 2], [1, 0, 1, 1])
    assert u.weights is None and set(_arcs(u)) == {(0, 1), (1, 0), (1, 2), (2, 1)}
    # an undirected duplicate given in both orientations keeps the smaller weight in both arcs
    u = mgraph.Graph.from_edges([0, 1], [1, 0], [2.0, 1.0])
    assert _arcs(u) == {(0, 1): 1.0, (1, 0): 1.0}


def test_csr_is_well_formed_and_sorted():
    case = get_case("rand_dir_float")
    graph = case.graph
    indptr, indices = np.asarray(graph.indptr), np.asarray(graph.indices)
    assert indptr.dtype == np.int64 and indptr[0] == 0 and indptr[-1] == indices.size
    assert np.all(np.diff(indptr) >= 0) and indptr.size == case.n + 1
    assert graph.weights.dtype == np.float64
    for u in range(case.n):
        row = indices[indptr[u]:indptr[u + 1]]
        assert np.all(np.diff(row) > 0)  # sorted, no duplicates
        assert u not in row  # no self-loops


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_graph_edges_match_independent_simplification(name):
    """Every shared test graph: mgraph's simple graph == the dict-based simplification of its raw input."""
    case = get_case(name)
    graph = case.graph
    assert graph.num_vertices == case.n and graph.directed == case.directed
    assert graph.num_edges == len(case.edges)
    assert graph.num_arcs == (1 if case.directed else 2) * len(case.edges)
    s, d, w = graph.edges()
    got = dict(zip(zip(s.tolist(), d.tolist()), [1.0] * s.size if w is None else w.tolist()))
    assert got == case.edges
    if name in ("facebook", "facebook_dir", "facebook_w"):
        return  # the networkx comparison below is slow on 171k edges
    G = to_networkx(graph)
    assert G.number_of_nodes() == case.n and G.number_of_edges() == len(case.edges)
    assert G.is_directed() == case.directed
    if case.weighted:
        for (u, v), wt in case.edges.items():
            assert G[u][v]["weight"] == wt


def test_graph_reverse():
    case = get_case("rand_dir_int")
    rev = case.graph.reverse()
    assert rev.directed and rev.num_vertices == case.n
    assert _arcs(rev) == {(v, u): w for (u, v), w in case.edges.items()}
    assert rev.reverse() is case.graph
    und = get_case("rand_und").graph
    assert und.reverse() is und


def test_isolated_tail_vertices():
    graph = mgraph.Graph.from_edges([0], [1], num_vertices=10)
    assert graph.num_vertices == 10 and graph.num_edges == 1
    np.testing.assert_array_equal(graph.out_degree(), [1, 1] + [0] * 8)
    empty = mgraph.Graph.from_edges([], [], num_vertices=3)
    assert empty.num_vertices == 3 and empty.num_edges == 0
    assert mgraph.connected_components(empty).labels.tolist() == [0, 1, 2]
    assert mgraph.bfs(empty, 2).depth.tolist() == [-1, -1, 0]


def test_int_and_float_id_inputs():
    a = mgraph.Graph.from_edges(np.array([0, 1], dtype=np.int32), np.array([1, 2], dtype=np.uint16))
    b = mgraph.Graph.from_edges(np.array([0.0, 1.0]), [1, 2])
    assert _arcs(a) == _arcs(b) == {(0, 1): 1.0, (1, 0): 1.0, (1, 2): 1.0, (2, 1): 1.0}


def test_to_numpy_identity(g):
    assert g.to("numpy") is g
    assert g.to(mgraph.backend.Backend("numpy")) is g
    assert g.to("numpy").to("numpy") is g
    if not gpu_available():
        assert g.to("auto") is g


def test_simple_edges_helper_itself():
    """The independent reference simplification (conftest) does what it claims."""
    e = simple_edges([0, 1, 1, 2, 2], [1, 0, 1, 3, 3], [4.0, 2.0, 9.0, 1.0, 0.5], directed=False)
    assert e == {(0, 1): 2.0, (2, 3): 0.5}
    e = simple_edges([0, 1, 1], [1, 0, 1], [4.0, 2.0, 9.0], directed=True)
    assert e == {(0, 1): 4.0, (1, 0): 2.0}


def test_from_scipy_round_trip_and_errors():
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    rng = np.random.default_rng(8)
    a = sp.random(60, 60, density=0.08, random_state=9, format="csr")
    a.data = np.round(a.data * 10) + 1
    a.setdiag(0)
    a.eliminate_zeros()
    g = mgraph.Graph.from_scipy(a)
    assert g.directed and g.num_vertices == 60 and g.num_edges == a.nnz
    assert (g.to_scipy() != a).nnz == 0
    src = int(rng.integers(60))
    np.testing.assert_array_equal(mgraph.sssp(g, src).distance, dijkstra(a, indices=src))
    u = mgraph.Graph.from_scipy(a, directed=False)
    np.testing.assert_array_equal(mgraph.sssp(u, src).distance, dijkstra(a, directed=False, indices=src))
    with pytest.raises(ValueError, match="square"):
        mgraph.Graph.from_scipy(sp.csr_matrix((2, 3)))
    with pytest.raises(ValueError, match="scipy.sparse"):
        mgraph.Graph.from_scipy(np.eye(3))


# ====================================================================== output
@pytest.mark.gpu
@pytest.mark.parametrize("devices", [1, [0, 0]])
def test_output_device_keeps_cupy_arrays_equal_to_numpy_output(devices):
    """output="device": CuPy arrays on the run's (first) device, with the API's dtypes, equal to the NumPy ones."""
    import cupy
    g = get_case("chesapeake").graph
    for fn, kw in [(mgraph.bfs, {"source": 0}), (mgraph.sssp, {"source": 0}), (mgraph.connected_components, {}),
                   (mgraph.pagerank, {}), (mgraph.betweenness_centrality, {"sources": [0, 3]})]:
        host = fn(g, backend="cupy", devices=devices, **kw)
        dev = fn(g, backend="cupy", devices=devices, output="device", **kw)
        for name in host.keys():
            assert isinstance(dev[name], cupy.ndarray) and dev[name].device.id == 0
            assert dev[name].dtype == host[name].dtype == (np.float64 if host[name].dtype.kind == "f" else np.int64)
            if name != "predecessor":  # two runs may pick different parents at one depth, both right
                np.testing.assert_allclose(cupy.asnumpy(dev[name]), host[name], rtol=1e-12)
        if "predecessor" in host.keys():  # each reached vertex's parent is one step (or one arc) closer
            value = cupy.asnumpy(dev["depth" if "depth" in host.keys() else "distance"])
            pred = cupy.asnumpy(dev["predecessor"])
            reached = (pred >= 0) & (np.arange(len(pred)) != 0)
            assert (value[pred[reached]] < value[reached]).all()


def test_output_is_numpy_or_device(g):
    assert mgraph.bfs(g, 0, output="device").depth.tolist() == [0, 1, 2, 3, -1]  # the CPU's arrays are NumPy
    assert isinstance(mgraph.bfs(g, 0, output="numpy").depth, np.ndarray)
    for bad in ("cupy", "host", None, 1):
        with pytest.raises(ValueError, match="output"):
            mgraph.bfs(g, 0, output=bad)


def test_pagerank_with_float32_shares_stays_within_its_stated_bound():
    """shares="float32" rounds the gathered values only: ranks stay float64, and the fixed point moves by at most
    alpha * 2**-24 / (1 - alpha) in L1 (both runs taken far below it, so the stop adds nothing that matters)."""
    g = mgraph.load("rmat:12", backend="numpy")
    exact = mgraph.pagerank(g, tol=1e-15, max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 shares may not go below tol=1e-15
        r = mgraph.pagerank(g, tol=1e-15, max_iter=300, shares="float32")
    assert r.rank.dtype == np.float64 and r.stats["shares"] == "float32" and exact.stats["shares"] == "float64"
    l1 = float(np.abs(r.rank - exact.rank).sum())
    assert 0 < l1 <= 0.85 * 2.0 ** -24 / 0.15
    with pytest.raises(ValueError, match="shares must be one of float64, float32, got 'float16'"):
        mgraph.pagerank(g, shares="float16")


def test_pagerank_with_float32_shares_on_several_devices_matches_one():
    g = mgraph.load("rmat:10", backend="numpy")
    one = mgraph.pagerank(g, shares="float32")
    for devices in (2, 3):
        many = mgraph.pagerank(g, shares="float32", devices=devices)
        np.testing.assert_allclose(many.rank, one.rank, rtol=1e-12, atol=1e-15)
        assert many.stats["iterations"] == one.stats["iterations"]

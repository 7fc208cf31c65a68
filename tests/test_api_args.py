"""Every public argument is checked for type and range: a ValueError naming it, never a TypeError or a silent
truncation; and empty sources and empty graphs give the same result (or the same error) on 1 and 3 devices."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import mgraph
from mgraph.primitives.bc import BC
from mgraph.primitives.bfs import BFS
from mgraph.primitives.cc import CC

ROOT = Path(__file__).parent.parent


@pytest.fixture
def g():
    """Undirected, weighted: the path 0-1-2-3 and the isolated vertex 4."""
    return mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 3.0], num_vertices=5)


def empty():
    return mgraph.Graph.from_edges([], [], num_vertices=0)


def raises_naming(name, call):
    with pytest.raises(ValueError, match=name) as info:
        call()
    assert type(info.value) is ValueError or isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)
    return str(info.value)


# -- primitives' parameters -----------------------------------------------------------------------

BAD = [
    # (argument named in the message, call)
    ("source", lambda g: mgraph.bfs(g, 1.0)),
    ("source", lambda g: mgraph.bfs(g, np.float64(1))),
    ("source", lambda g: mgraph.bfs(g, True)),
    ("source", lambda g: mgraph.bfs(g, "1")),
    ("source", lambda g: mgraph.sssp(g, 1.0)),
    ("source", lambda g: mgraph.sssp(g, np.bool_(True))),
    ("source", lambda g: mgraph.sssp(g, None)),
    ("direction", lambda g: mgraph.bfs(g, 0, direction=["push"])),
    ("direction", lambda g: mgraph.bfs(g, 0, direction=np.array("push"))),
    ("direction", lambda g: mgraph.bfs(g, 0, direction=None)),
    ("do_a", lambda g: mgraph.bfs(g, 0, direction="auto", do_a="x")),
    ("do_a", lambda g: mgraph.bfs(g, 0, direction="auto", do_a=math.nan)),
    ("do_a", lambda g: mgraph.bfs(g, 0, direction="auto", do_a=math.inf)),
    ("do_a", lambda g: mgraph.bfs(g, 0, direction="auto", do_a=True)),
    ("do_a", lambda g: mgraph.bfs(g, 0, direction="auto", do_a=0)),
    ("do_b", lambda g: mgraph.bfs(g, 0, direction="auto", do_b="0.1")),
    ("do_b", lambda g: mgraph.bfs(g, 0, direction="auto", do_b=-0.1)),
    ("do_b", lambda g: mgraph.bfs(g, 0, direction="auto", do_b=1j)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha="0.5")),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=None)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=math.nan)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=0.5 + 0j)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=True)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=1.0)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=1.5)),
    ("alpha", lambda g: mgraph.pagerank(g, alpha=-0.1)),
    ("tol", lambda g: mgraph.pagerank(g, tol=0)),
    ("tol", lambda g: mgraph.pagerank(g, tol="1e-6")),
    ("tol", lambda g: mgraph.pagerank(g, tol=None)),
    ("tol", lambda g: mgraph.pagerank(g, tol=math.inf)),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter=1.5)),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter=100.0)),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter=True)),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter="10")),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter=0)),
    ("max_iter", lambda g: mgraph.pagerank(g, max_iter=None)),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=1.0)),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources="01")),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=object())),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=np.array(1))),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=np.array([[0, 1]]))),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=np.array([1.0, 2.0]))),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=np.array([True]))),
    ("source", lambda g: mgraph.betweenness_centrality(g, sources=[1.0])),
    ("source", lambda g: mgraph.betweenness_centrality(g, sources=[0, None])),
    ("source", lambda g: mgraph.betweenness_centrality(g, sources=[[0]])),
    ("source", lambda g: mgraph.betweenness_centrality(g, sources=[5])),
    ("sources", lambda g: mgraph.betweenness_centrality(g, sources=5)),
    ("sources", lambda g: mgraph.run(BFS, g, sources=1.0)),
    ("sources", lambda g: mgraph.run(BFS, g, sources=[])),
    ("source", lambda g: mgraph.run(BFS, g, source=0.0)),
    ("primitive", lambda g: mgraph.run("bfs", g, source=0)),
]


@pytest.mark.parametrize("name,call", BAD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD)])
def test_bad_argument_is_a_value_error_naming_it(g, name, call):
    raises_naming(name, lambda: call(g))


# run options, for every primitive
RUNS = {
    "bfs": lambda g, **kw: mgraph.bfs(g, 0, **kw),
    "sssp": lambda g, **kw: mgraph.sssp(g, 0, **kw),
    "cc": lambda g, **kw: mgraph.connected_components(g, **kw),
    "pagerank": lambda g, **kw: mgraph.pagerank(g, **kw),
    "bc": lambda g, **kw: mgraph.betweenness_centrality(g, sources=[0], **kw),
    "run": lambda g, **kw: mgraph.run(CC, g, **kw),
}
BAD_OPTIONS = [
    ("devices", {"devices": 2.0}),
    ("devices", {"devices": "2"}),
    ("devices", {"devices": True}),
    ("seed", {"seed": 1.5}),
    ("seed", {"seed": "1"}),
    ("gather", {"gather": 1}),
    ("backend", {"backend": 3}),
    ("partitioner", {"devices": 2, "partitioner": 1}),
    ("duplication", {"devices": 2, "duplication": np.array("all")}),
    ("communication", {"devices": 2, "communication": np.array("selective")}),
    ("workers", {"workers": None}),
    ("workers", {"workers": np.array("threads")}),
    ("devicess", {"devicess": 2}),
]


@pytest.mark.parametrize("call", RUNS.values(), ids=RUNS.keys())
@pytest.mark.parametrize("name,options", BAD_OPTIONS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_OPTIONS)])
def test_bad_run_option(g, call, name, options):
    raises_naming(name, lambda: call(g, **options))


def test_good_arguments_of_other_types_still_work(g):
    assert mgraph.bfs(g, np.int32(3)).depth.tolist() == [3, 2, 1, 0, -1]
    r = mgraph.bfs(g, 0, direction="auto", do_a=np.float32(0.5), do_b=1)
    assert r.depth.tolist() == [0, 1, 2, 3, -1]
    a = mgraph.pagerank(g, alpha=np.float64(0.85), tol=1e-6, max_iter=np.int64(100)).rank
    b = mgraph.pagerank(g).rank
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(mgraph.pagerank(g, alpha=0).rank, np.full(5, 0.2))  # alpha = 0: uniform
    expected = [0.0, 2.0, 2.0, 0.0, 0.0]  # the path 0-1-2-3: 1 and 2 each lie on 2 of its pairs
    for sources in (None, range(5), (0, 1, 2, 3, 4), np.arange(5), np.arange(5, dtype=np.uint8),
                    [np.int64(v) for v in range(5)]):
        np.testing.assert_allclose(mgraph.betweenness_centrality(g, sources=sources).centrality, expected)
    # from source 1 only vertex 2 lies between (on 1-3); undirected sums count each pair from both ends, halved
    np.testing.assert_allclose(mgraph.betweenness_centrality(g, sources=np.int64(1)).centrality,
                               [0.0, 0.0, 0.5, 0.0, 0.0])


# -- graphs and load ------------------------------------------------------------------------------

@pytest.mark.parametrize("weights,dtype", [
    ([1 + 2j], "complex"), (["1.5"], "<U3"), (["abc"], "<U3"), ([None], "object"), ([True], "bool"),
    (np.array([b"1"]), "S1"),
])
def test_from_edges_weights_must_be_real_numbers(weights, dtype):
    message = raises_naming("weights", lambda: mgraph.Graph.from_edges([0], [1], weights))
    assert dtype in message


def test_weights_of_real_types_become_float64():
    for w in ([3], np.array([3], np.int8), np.array([3], np.uint64), np.array([3.0], np.float32)):
        g = mgraph.Graph.from_edges([0], [1], w, directed=True)
        assert g.weights.dtype == np.float64 and g.weights.tolist() == [3.0]


def test_from_scipy_complex_and_boolean_matrices():
    m = sp.csr_matrix(np.array([[0, 1 + 1j], [0, 0]]))
    raises_naming("weights", lambda: mgraph.Graph.from_scipy(m))
    pattern = sp.csr_matrix(np.array([[False, True], [True, False]]))
    g = mgraph.Graph.from_scipy(pattern, directed=True)
    assert g.weights.tolist() == [1.0, 1.0] and g.indices.tolist() == [1, 0]


def test_graph_constructor_checks_weights_dtype():
    indptr, indices = np.array([0, 1, 1], np.int64), np.array([1], np.int32)
    raises_naming("weights", lambda: mgraph.Graph(indptr, indices, np.array([1 + 0j]), directed=True))
    raises_naming("weights", lambda: mgraph.Graph(indptr, indices, [1.0], directed=True))
    assert mgraph.Graph(indptr, indices, np.array([2.0]), directed=True).weights.tolist() == [2.0]


@pytest.mark.parametrize("value", ["no", 1, None, np.array(True)])
def test_from_edges_directed_must_be_a_bool(value):
    raises_naming("directed", lambda: mgraph.Graph.from_edges([0], [1], directed=value))


@pytest.mark.parametrize("name,args,kw", [
    ("path_or_spec", (123,), {}),
    ("path_or_spec", (None,), {}),
    ("path_or_spec", (b"rmat:4",), {}),
    ("path_or_spec", (["rmat:4"],), {}),
    ("seed", ("rmat:4",), {"seed": 1.5}),
    ("seed", ("rmat:4",), {"seed": "1"}),
    ("directed", ("rmat:4",), {"directed": "no"}),
    ("directed", (str(ROOT / "tests" / "data" / "chesapeake.mtx"),), {"directed": 1}),
    ("weights", ("rmat:4",), {"weights": (1.5, 3)}),
    ("weights", ("rmat:4",), {"weights": "1:3"}),
    ("backend", ("rmat:4",), {"backend": 3}),
])
def test_load_arguments(name, args, kw):
    from mgraph.io import loaders as mio

    raises_naming(name, lambda: mgraph.load(*args, **kw))
    raises_naming(name, lambda: mio.load(*args, **kw))


def test_load_takes_a_path_object():
    g = mgraph.load(ROOT / "tests" / "data" / "chesapeake.mtx", backend="numpy")
    assert (g.num_vertices, g.num_edges) == (39, 170)


# -- empty sources and empty graphs: one rule everywhere --------------------------------------------

EMPTY_SOURCES = [[], (), range(0), np.array([], dtype=np.int64), np.array([])]


@pytest.mark.parametrize("sources", EMPTY_SOURCES, ids=["list", "tuple", "range", "int-array", "float-array"])
@pytest.mark.parametrize("devices", [1, 3])
def test_empty_sources_are_refused_by_every_function_that_takes_sources(g, sources, devices):
    """A run from no source has no defined result: betweenness_centrality refuses an empty list as run does."""
    for call in (lambda: mgraph.betweenness_centrality(g, sources=sources, devices=devices),
                 lambda: mgraph.run(BC, g, sources=sources, devices=devices),
                 lambda: mgraph.run(BFS, g, sources=sources, devices=devices)):
        message = raises_naming("sources is empty", call)
        assert "give at least one source" in message


def test_bc_of_some_sources_agrees_on_1_and_3_devices(g):
    one = mgraph.betweenness_centrality(g, sources=[1, 2]).centrality
    three = mgraph.betweenness_centrality(g, sources=[1, 2], devices=3).centrality
    np.testing.assert_allclose(one, three)
    np.testing.assert_allclose(one, [0.0, 0.5, 0.5, 0.0, 0.0])


EMPTY_RESULTS = {  # primitive -> (the result field, or the error an empty graph gives on one device)
    "bfs": (lambda e, **kw: mgraph.bfs(e, 0, **kw), "source 0 is out of range"),
    "sssp": (lambda e, **kw: mgraph.sssp(e, 0, **kw), "source 0 is out of range"),
    "pagerank": (lambda e, **kw: mgraph.pagerank(e, **kw), "empty graph"),
    "cc": (lambda e, **kw: mgraph.connected_components(e, **kw), "labels"),
    "bc": (lambda e, **kw: mgraph.betweenness_centrality(e, **kw), "centrality"),
    "bc_no_sources": (lambda e, **kw: mgraph.betweenness_centrality(e, sources=[], **kw), "sources is empty"),
    "run_cc": (lambda e, **kw: mgraph.run(CC, e, **kw), "labels"),
    "run_bc": (lambda e, **kw: mgraph.run(BC, e, **kw), "needs a source"),  # needs_source is honoured
    "run_bfs": (lambda e, **kw: mgraph.run(BFS, e, **kw), "needs a source"),
    "run_empty_sources": (lambda e, **kw: mgraph.run(BC, e, sources=[], **kw), "sources is empty"),
}


@pytest.mark.parametrize("name", EMPTY_RESULTS)
def test_an_empty_graph_runs_on_one_device_and_refuses_more(name):
    """A graph of no vertex runs on one device (empty arrays, or the function's error); it splits over no more
    devices than it has vertices, so devices=3 is a ValueError naming the vertex count, whatever the function."""
    call, expect = EMPTY_RESULTS[name]
    try:
        r = call(empty())
    except ValueError as e:
        assert expect in str(e)
    else:
        value = getattr(r, expect)
        assert isinstance(value, np.ndarray) and value.shape == (0,)
        assert value.dtype == (np.float64 if expect == "centrality" else np.int64)
    message = raises_naming("devices=3 for a graph of 0 vertices", lambda: call(empty(), devices=3))
    assert "at most 1" in message


def test_bc_of_an_empty_graph_counts_no_source():
    r = mgraph.betweenness_centrality(empty())
    assert r.centrality.shape == (0,) and r.stats["sources"] == 0


def test_run_with_no_sources_is_an_error_on_every_device_count(g):
    for devices in (1, 3):
        raises_naming("sources is empty", lambda: mgraph.run(BC, g, sources=[], devices=devices))


def test_cli_bc_on_a_header_only_csv(tmp_path):
    """An empty graph runs on one device; on three it is a user error (one line, exit status 2)."""
    path = tmp_path / "header.csv"
    path.write_text("id_1,id_2\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MGRAPH_BACKEND="numpy")
    for extra, code in (([], 0), (["--devices", "3"], 2)):
        proc = subprocess.run([sys.executable, "-m", "mgraph", "bc", str(path), *extra], capture_output=True,
                              text=True, env=env, timeout=120)
        assert "Traceback" not in proc.stderr
        assert proc.returncode == code, proc.stderr
        if code == 0:
            assert "0 vertices, 0 edges" in proc.stdout
        else:
            assert proc.stderr.strip() == ("mgraph: error: devices=3 for a graph of 0 vertices: a graph splits over "
                                           "at most as many devices as it has vertices, so this one runs on at most 1")

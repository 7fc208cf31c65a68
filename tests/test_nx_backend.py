"""The NetworkX backend "mgraph": the same answers as networkx, and networkx's own tests passing through it.

(a) each function the backend runs, called with ``backend="mgraph"``, against
plain networkx on graphs with int, string and tuple labels, directed and
undirected, weighted and not, several components, on 1 and several devices;
(b) networkx's own test modules for those functions, run in a subprocess with
NETWORKX_TEST_BACKEND=mgraph and NETWORKX_FALLBACK_TO_NX=True, where every
call of a dispatchable function goes through the backend.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import types
import warnings
from importlib.metadata import entry_points

import networkx as nx
import pytest
from networkx.algorithms.approximation.kcomponents import _AntiGraph

import mgraph
import mgraph_nx_info
from mgraph import nx_backend
from mgraph.nx_backend import FUNCTIONS, SMALL_GRAPH_EDGES, backend_interface
from mgraph.nx_backend.graph import NxGraph
from mgraph.nx_backend.testing import mark_expected_failures

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs are saved to cache")


def _graphs():
    """name -> networkx graph: labels of several kinds, both directions, weights, isolated nodes, components."""
    out = {}
    karate = nx.karate_club_graph()  # ints 0..33, weighted ("weight" ints)
    out["karate"] = karate
    out["karate_str"] = nx.relabel_nodes(karate, {i: f"v{(i * 7) % 34}" for i in karate})  # strings, unsorted
    d = nx.gnp_random_graph(60, 0.06, directed=True, seed=4)
    for k, (u, v) in enumerate(d.edges()):
        d[u][v]["weight"] = 0.5 + (k * 37 % 11) / 4  # float weights
    out["directed_str"] = nx.relabel_nodes(d, {i: f"n{59 - i}" for i in d})
    g = nx.disjoint_union(nx.les_miserables_graph(), nx.path_graph(5))  # string+int labels become ints here
    g.add_nodes_from([100, 101])  # isolated
    out["components"] = g
    out["grid_tuples"] = nx.grid_2d_graph(5, 4)
    m = nx.gnm_random_graph(40, 70, seed=2)
    for u, v in m.edges():
        m[u][v]["weight"] = (u * v) % 5 + 1
    out["weighted_ints"] = m
    return out


GRAPHS = _graphs()
DEVICES = [1, 3]


def approx_same(a: dict, b: dict, *, order=True, rel=1e-9, abs_=1e-12):
    """The same keys (in the same order where ``order``), values within tolerance, and Python-typed values."""
    assert set(a) == set(b)
    if order:
        assert list(a) == list(b)
    for k, v in a.items():
        assert type(b[k]) is type(v), (k, type(b[k]), type(v))
        assert b[k] == pytest.approx(v, rel=rel, abs=abs_, nan_ok=True), k  # nan: networkx's k=1 sources


@pytest.fixture(params=DEVICES, ids=lambda d: f"devices{d}")
def devices(request):
    with nx.config.backends.mgraph(devices=request.param):
        yield request.param


# ======================================================================== (a) answers
@pytest.mark.parametrize("name", GRAPHS)
def test_pagerank_matches_networkx(name, devices):
    G = GRAPHS[name]
    for kw in ({}, {"weight": None}, {"alpha": 0.6, "tol": 1e-10}):
        approx_same(nx.pagerank(G, **kw), nx.pagerank(G, backend="mgraph", **kw))


@pytest.mark.parametrize("name", GRAPHS)
def test_betweenness_matches_networkx(name, devices):
    G = GRAPHS[name]
    sampled = ({"k": 7, "seed": 11}, {"k": 7, "seed": 11, "normalized": False}, {"k": 1, "seed": 3})
    # every source on several devices is many short multi-device runs: slow here, and no different in kind
    every = ({}, {"normalized": False}, {"k": len(G), "seed": 1}) if devices == 1 else ()
    for kw in every + sampled:
        approx_same(nx.betweenness_centrality(G, **kw), nx.betweenness_centrality(G, backend="mgraph", **kw),
                    rel=1e-9, abs_=1e-12)


@pytest.mark.parametrize("name", GRAPHS)
def test_components_match_networkx(name, devices):
    G = GRAPHS[name]
    if G.is_directed():
        calls = (nx.weakly_connected_components, nx.number_weakly_connected_components, nx.is_weakly_connected)
    else:
        calls = (nx.connected_components, nx.number_connected_components, nx.is_connected)
    comps, count, connected = calls
    got = comps(G, backend="mgraph")
    assert isinstance(got, types.GeneratorType)
    got = list(got)
    assert all(type(c) is set for c in got)
    assert got == list(comps(G))  # the same sets in the same order (by their first node)
    n = count(G, backend="mgraph")
    assert type(n) is int and n == count(G)
    c = connected(G, backend="mgraph")
    assert type(c) is bool and c == connected(G)
    if G.is_directed():
        strong = nx.strongly_connected_components(G, backend="mgraph")
        assert isinstance(strong, types.GeneratorType)
        strong = list(strong)
        assert all(type(c) is set for c in strong)
        # the same sets; networkx's Tarjan order is its own
        assert {frozenset(c) for c in strong} == {frozenset(c) for c in nx.strongly_connected_components(G)}
        n = nx.number_strongly_connected_components(G, backend="mgraph")
        assert type(n) is int and n == nx.number_strongly_connected_components(G)
        c = nx.is_strongly_connected(G, backend="mgraph")
        assert type(c) is bool and c == nx.is_strongly_connected(G)


def test_strong_components_of_small_directed_graphs_match_networkx():
    cycle_and_tail = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")])
    multi = nx.MultiDiGraph([(0, 1), (0, 1), (1, 0), (2, 2), (1, 2)])
    for G in (cycle_and_tail, multi, nx.cycle_graph(5, create_using=nx.DiGraph), nx.DiGraph([(1, 2)])):
        want = {frozenset(c) for c in nx.strongly_connected_components(G)}
        assert {frozenset(c) for c in nx.strongly_connected_components(G, backend="mgraph")} == want
        assert nx.number_strongly_connected_components(G, backend="mgraph") == len(want)
        assert nx.is_strongly_connected(G, backend="mgraph") == (len(want) == 1)


@pytest.mark.parametrize("name", GRAPHS)
def test_shortest_path_lengths_match_networkx(name, devices):
    G = GRAPHS[name]
    nodes = list(G)
    for source in (nodes[0], nodes[len(nodes) // 2]):
        for cutoff in (None, 0, 2, 2.5):
            want = nx.single_source_shortest_path_length(G, source, cutoff=cutoff)
            got = nx.single_source_shortest_path_length(G, source, cutoff=cutoff, backend="mgraph")
            approx_same(want, got, order=False)
            assert list(got.values()) == sorted(got.values())  # nearest first, as networkx's BFS yields them
        for weight, cutoff in ((None, None), ("weight", None), ("weight", 3)):
            want = nx.single_source_dijkstra_path_length(G, source, cutoff=cutoff, weight=weight)
            got = nx.single_source_dijkstra_path_length(G, source, cutoff=cutoff, weight=weight, backend="mgraph")
            approx_same(want, got, order=False)  # ints where networkx sums ints


def test_run_options_per_call_and_from_config():
    G = GRAPHS["karate_str"]
    want = nx.pagerank(G)
    approx_same(want, nx.pagerank(G, backend="mgraph", devices=2, partitioner="biased-random"))
    with nx.config.backends.mgraph(devices=4, partitioner="metis"):
        approx_same(want, nx.pagerank(G, backend="mgraph"))
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        nx.pagerank(G, backend="mgraph", colour="red")


# ======================================================================== (a) errors, as networkx raises them
def test_errors_are_networkx_errors():
    G = nx.path_graph(["a", "b", "c"])
    with pytest.raises(nx.NodeNotFound, match="Source z is not in G"):
        nx.single_source_shortest_path_length(G, "z", backend="mgraph")
    with pytest.raises(nx.NodeNotFound, match="Node z not found in graph"):
        nx.single_source_dijkstra_path_length(G, "z", backend="mgraph")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_connected(nx.Graph(), backend="mgraph")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.connected_components(nx.DiGraph([(1, 2)]), backend="mgraph")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.weakly_connected_components(G, backend="mgraph")
    with pytest.raises(nx.NetworkXNotImplemented):
        next(nx.strongly_connected_components(G, backend="mgraph"))
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.is_strongly_connected(G, backend="mgraph")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_strongly_connected(nx.DiGraph(), backend="mgraph")
    assert list(nx.strongly_connected_components(nx.DiGraph(), backend="mgraph")) == []
    assert nx.number_strongly_connected_components(nx.DiGraph(), backend="mgraph") == 0
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(GRAPHS["karate"], max_iter=3, tol=1e-12, backend="mgraph")
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=0, backend="mgraph")
    assert nx.pagerank(nx.Graph(), backend="mgraph") == {}
    assert nx.betweenness_centrality(nx.Graph(), backend="mgraph") == {}
    assert list(nx.connected_components(nx.Graph(), backend="mgraph")) == []


DECLINED = {
    "personalization": lambda G: nx.pagerank(G, personalization={0: 1}, backend="mgraph"),
    "nstart": lambda G: nx.pagerank(G, nstart={0: 1}, backend="mgraph"),
    "dangling": lambda G: nx.pagerank(G, dangling={0: 1}, backend="mgraph"),
    "alpha=1": lambda G: nx.pagerank(G, alpha=1.0, backend="mgraph"),
    "multigraph_pagerank": lambda G: nx.pagerank(nx.MultiGraph(G), backend="mgraph"),
    "self_loop_pagerank": lambda G: nx.pagerank(nx.Graph([(0, 0), (0, 1)]), backend="mgraph"),
    "weighted_betweenness": lambda G: nx.betweenness_centrality(G, weight="weight", backend="mgraph"),
    "endpoints": lambda G: nx.betweenness_centrality(G, endpoints=True, backend="mgraph"),
    "weight_function": lambda G: nx.single_source_dijkstra_path_length(G, 0, weight=lambda u, v, d: 1,
                                                                        backend="mgraph"),
}


@pytest.mark.parametrize("call", DECLINED.values(), ids=DECLINED.keys())
def test_declined_calls_say_so(call):
    """What mgraph cannot answer as networkx does is declined (can_run names the reason), never answered wrong."""
    with pytest.raises(NotImplementedError, match="not implemented by 'mgraph' backend for the given arguments"):
        call(nx.karate_club_graph())


def test_can_run_reasons():
    G = nx.karate_club_graph()
    assert backend_interface.can_run("pagerank", (G,), {}) is True
    assert "personalization" in backend_interface.can_run("pagerank", (G,), {"personalization": {0: 1}})
    assert "self-loops" in backend_interface.can_run("pagerank", (nx.Graph([(1, 1)]),), {})
    assert "unweighted" in backend_interface.can_run("betweenness_centrality", (G,), {"weight": "weight"})
    assert "cutoff" in backend_interface.can_run("single_source_shortest_path_length", (G, 0), {"cutoff": "x"})
    assert "does not implement" in backend_interface.can_run("kosaraju_strongly_connected_components", (G,), {})
    assert "sort_neighbors" in backend_interface.can_run("bfs_edges", (G, 0), {"sort_neighbors": sorted})


def test_a_cached_graph_answers_for_its_self_loops_until_it_changes():
    """Declining a graph with self-loops reads a cached conversion's count instead of walking every node (which
    cost more than a cached PageRank's whole run); networkx clears that cache when the graph changes."""
    G = nx.karate_club_graph()
    with nx.config(cache_converted_graphs=True):
        want = nx.pagerank(G)
        got = nx.pagerank(G, backend="mgraph")  # converted and cached
        assert max(abs(got[v] - want[v]) for v in G) < 1e-6
        assert backend_interface.can_run("pagerank", (G,), {}) is True
        G.add_edge(3, 3)  # through G's methods: networkx drops the cached conversion
        assert "self-loops" in backend_interface.can_run("pagerank", (G,), {})
        G.remove_edge(3, 3)
        assert backend_interface.can_run("pagerank", (G,), {}) is True


def test_negative_weights_fall_back_to_networkx():
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, 2), (1, 2, -1)])
    with pytest.raises(NotImplementedError):
        nx.single_source_dijkstra_path_length(G, 0, backend="mgraph")
    with nx.config(fallback_to_nx=True, backend_priority=["mgraph"]):
        assert nx.single_source_dijkstra_path_length(G, 0) == nx.single_source_dijkstra_path_length(
            G, 0, backend="networkx")


def test_should_run_leaves_small_graphs_to_networkx(monkeypatch):
    small, big = nx.karate_club_graph(), nx.gnm_random_graph(1000, SMALL_GRAPH_EDGES, seed=0)
    assert "fewer than 5000 edges" in backend_interface.should_run("pagerank", (small,), {})
    assert backend_interface.should_run("pagerank", (big,), {}) is True
    assert backend_interface.should_run("pagerank", (backend_interface.convert_from_nx(small),), {}) is True
    ran = []
    monkeypatch.setattr(backend_interface, "pagerank", lambda G, *a, **kw: ran.append(len(G)) or
                        FUNCTIONS["pagerank"](G, *a, **kw))
    with nx.config(backend_priority=["mgraph"], cache_converted_graphs=False):
        approx_same(nx.pagerank(small, backend="networkx"), nx.pagerank(small))
        approx_same(nx.pagerank(big, backend="networkx"), nx.pagerank(big))
    assert ran == [1000]  # only the big graph went to mgraph


def test_expected_failures_are_marked_strict_with_their_reason():
    class Item:
        def __init__(self, path, name, cls=None):
            self.path, self.name, self.cls, self.markers = pathlib.Path(path), name, cls, []

        def add_marker(self, marker):
            self.markers.append(marker)

    class TestThing:
        pass

    hit, other = Item("/x/test_a.py", "test_b", TestThing), Item("/x/test_a.py", "test_c")
    mark_expected_failures([hit, other], {("test_a.py", "test_b", "TestThing"): "why it fails"})
    [mark] = hit.markers
    assert mark.name == "xfail" and mark.kwargs == {"reason": "why it fails", "strict": True}
    assert other.markers == []


# ======================================================================== registration and conversion
def test_registered_through_entry_points_and_info_imports_nothing_heavy():
    assert [ep.value for ep in entry_points(group="networkx.backends", name="mgraph")] == [
        "mgraph.nx_backend:backend_interface"]
    assert [ep.value for ep in entry_points(group="networkx.backend_info", name="mgraph")] == [
        "mgraph_nx_info:get_info"]
    info = mgraph_nx_info.get_info()
    assert set(info["functions"]) == set(FUNCTIONS)
    assert all(callable(getattr(backend_interface, name)) for name in FUNCTIONS)
    assert dict(nx.config.backends.mgraph) == info["default_config"]
    # networkx reads every backend's info while it is imported: that must not import mgraph, NumPy or CuPy
    code = "import sys, networkx; print(sorted(m for m in ('mgraph', 'numpy', 'cupy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_converted_graph_round_trip_and_use():
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c", weight=3)
    G.add_edge("c", "c", weight=9)  # a self-loop: mgraph graphs have none
    H = backend_interface.convert_from_nx(G, edge_attrs={"weight": 1})
    assert isinstance(H, NxGraph) and H.self_loops == 1 and H.is_directed() and len(H) == 3 and "b" in H
    back = backend_interface.convert_to_nx(H)
    assert type(back) is nx.DiGraph and list(back) == ["a", "b", "c"]
    assert {(u, v): d for u, v, d in back.edges(data="weight")} == {("a", "b"): 2, ("b", "c"): 3}
    # a converted graph passed to networkx runs on the backend without converting again
    assert nx.single_source_dijkstra_path_length(H, "a") == {"a": 0, "b": 2, "c": 5}
    # and the run functions of mgraph take it as the labelled graph it holds
    assert H.graph.labels.tolist() == ["a", "b", "c"]
    assert backend_interface.convert_to_nx({"x": 1}) == {"x": 1}


def test_conversion_reads_the_public_adjacency_of_subclasses(monkeypatch):
    """networkx's _AntiGraph stores the complement of the graph it stands for and presents the graph through G.adj:
    the backend converts what G.adj shows (the issue's wrong core numbers: 16 or 22 where networkx gives 4)."""
    karate = nx.karate_club_graph()
    anti = _AntiGraph(nx.complement(karate))  # stands for karate itself
    assert nx.core_number(anti, backend="mgraph") == nx.core_number(anti) == nx.core_number(karate)
    assert max(nx.core_number(anti, backend="mgraph").values()) == 4
    g = mgraph.from_networkx(anti)
    assert g.num_edges == karate.number_of_edges()
    assert list(nx.connected_components(anti, backend="mgraph")) == list(nx.connected_components(karate))
    want = nx.approximation.k_components(karate)  # networkx's test_karate_1: its _AntiGraph calls reach mgraph
    monkeypatch.setattr(nx_backend, "SMALL_GRAPH_EDGES", 0)
    with nx.config(backend_priority=["mgraph"], fallback_to_nx=True):
        assert nx.approximation.k_components(karate) == want


def test_converted_graphs_stay_cached_without_networkx_warning(monkeypatch):
    """One walk of G for any number of calls, no cache warning; a change through G's methods converts again."""
    G = nx.karate_club_graph()
    walks = []
    walk = NxGraph.from_networkx.__func__
    monkeypatch.setattr(NxGraph, "from_networkx",
                        classmethod(lambda cls, H, *a, **k: walks.append(a) or walk(cls, H, *a, **k)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # networkx's "conversions to backend graphs are saved to cache" fails here
        first = nx.pagerank(G, backend="mgraph")
        assert nx.pagerank(G, backend="mgraph") == first
        nx.betweenness_centrality(G, backend="mgraph")  # unweighted: served by the weighted conversion
        list(nx.bfs_edges(G, 0, backend="mgraph"))
    assert walks == [("weight", 1)]
    G.add_edge(0, 99)  # networkx clears G's cache, the backend's key with it
    nx.pagerank(G, backend="mgraph")
    assert walks == [("weight", 1)] * 2
    with nx.config(cache_converted_graphs=False):  # nothing kept where networkx keeps nothing
        nx.pagerank(G, backend="mgraph")
        nx.pagerank(nx.Graph(G), backend="mgraph")
    assert len(walks) == 4


# ======================================================================== (b) networkx's own tests
# networkx's test modules of every function the backend runs (the test below checks that each one is reached)
NX_TEST_MODULES = [
    "algorithms/traversal/tests/test_bfs.py",
    "algorithms/traversal/breadth_first_search.py",  # its doctests: the only plain calls of generic_bfs_edges
    "algorithms/tests/test_dag.py",
    "algorithms/shortest_paths/tests/test_unweighted.py",
    "algorithms/shortest_paths/tests/test_weighted.py",
    "algorithms/shortest_paths/tests/test_generic.py",
    "algorithms/components/tests/test_connected.py",
    "algorithms/components/tests/test_weakly_connected.py",
    "algorithms/components/tests/test_strongly_connected.py",
    "algorithms/link_analysis/tests/test_pagerank.py",
    "algorithms/link_analysis/tests/test_hits.py",
    "algorithms/centrality/tests/test_betweenness_centrality.py",
    "algorithms/centrality/tests/test_degree_centrality.py",
    "algorithms/centrality/tests/test_eigenvector_centrality.py",
    "algorithms/centrality/tests/test_katz_centrality.py",
    "algorithms/tests/test_cluster.py",
    "algorithms/tests/test_core.py",
    "algorithms/tests/test_link_prediction.py",
    "algorithms/tests/test_isolate.py",
    "algorithms/tests/test_reciprocity.py",
    "algorithms/tree/tests/test_recognition.py",
    "algorithms/operators/tests/test_unary.py",
    "algorithms/community/tests/test_label_propagation.py",
    "algorithms/community/tests/test_louvain.py",
    "algorithms/community/tests/test_leiden.py",
    "algorithms/approximation/tests/test_kcomponents.py",
    "generators/tests/test_ego.py",
    "classes/tests/test_function.py",
]

# A pytest plugin for the subprocess: runs the backend on MGRAPH_NX_TEST_DEVICES devices and counts the calls that
# reached each backend function, so that a run in which networkx never called the backend cannot pass.
PLUGIN = textwrap.dedent('''
    import collections, functools, os

    import networkx as nx

    from mgraph.nx_backend import FUNCTIONS, SMALL_GRAPH_EDGES, backend_interface

    CALLS = collections.Counter()

    def _counted(name, fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            CALLS[name] += 1
            return fn(*args, **kwargs)
        return call

    for _name, _fn in FUNCTIONS.items():
        setattr(backend_interface, _name, _counted(_name, _fn))

    def pytest_configure(config):
        nx.config.backends.mgraph.devices = int(os.environ["MGRAPH_NX_TEST_DEVICES"])

    def pytest_terminal_summary(terminalreporter):
        terminalreporter.write_line("MGRAPH_CALLS " + repr(dict(CALLS)))
        terminalreporter.write_line(f"MGRAPH_DEVICES {nx.config.backends.mgraph.devices}")
''')


@pytest.mark.slow
@pytest.mark.parametrize("num_devices", [1, 2])
def test_networkx_own_tests_pass_with_the_backend(tmp_path, num_devices):
    nx_dir = os.path.dirname(importlib.util.find_spec("networkx").origin)
    modules = [os.path.join(nx_dir, m) for m in NX_TEST_MODULES]
    missing = [m for m in modules if not os.path.isfile(m)]
    assert not missing, f"networkx's test modules are not installed: {missing}"
    (tmp_path / "mgraph_count_calls.py").write_text(PLUGIN)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not this repository's pytest settings
    env = dict(os.environ, NETWORKX_TEST_BACKEND="mgraph", NETWORKX_FALLBACK_TO_NX="True",
               MGRAPH_NX_TEST_DEVICES=str(num_devices), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mgraph_count_calls",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", nx_dir, "--doctest-modules", "-W", "ignore::UserWarning",
         *modules],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    summary = proc.stdout.strip().splitlines()[-1]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|xfailed|xpassed|error|errors|skipped)", summary)}
    assert counts.get("passed", 0) >= 700 and not counts.get("failed") and not counts.get("xpassed"), summary
    calls = ast.literal_eval(re.search(r"MGRAPH_CALLS (\{.*\})", proc.stdout).group(1))
    assert set(calls) == set(FUNCTIONS), f"networkx's tests did not reach {set(FUNCTIONS) - set(calls)}"
    assert f"MGRAPH_DEVICES {num_devices}\n" in proc.stdout

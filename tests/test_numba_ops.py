"""The compiled CPU kernels (mgraph.ops.numba_ops) against their NumPy twins, call by call on the same inputs, and
whole runs against scipy / networkx references; on one thread, and on two with every call made parallel.

Results must be the twins' to the bit, but for one documented freedom: a push visit on several threads may take
another valid predecessor (checked here by the tree's rules and by Graph500's, mgraph.check.validate).
"""
from __future__ import annotations

import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

numba = pytest.importorskip("numba")  # a GPU host's source tree may lack it: these tests are the CPU's

import mgraph
from conftest import REACH, get_case
from mgraph import ops
from mgraph.check import validate
from mgraph.graph import Graph
from mgraph.io import generators
from mgraph.ops import functors, numba_ops, numpy_ops, segments

POOL = numba.config.NUMBA_NUM_THREADS


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request, monkeypatch):
    """The kernels' thread count; with two, every call takes its parallel path, however small."""
    if request.param > POOL:
        pytest.skip(f"numba's pool has {POOL} thread(s)")
    old = numba_ops.configure(threads=request.param)
    if request.param > 1:
        monkeypatch.setattr(numba_ops, "PARALLEL_ARCS", 0)
    yield request.param
    numba_ops.configure(**old)


@pytest.fixture(params=["blocks-marks", "blocks-lists", "rows-lists"])
def collect(request, monkeypatch):
    """How a parallel push visit splits its frontier (ranges of blocks counted by the threads, for a long frontier, or
    ranges balanced row by row) and gathers its claims (byte marks read off by every thread, for a level of many
    arcs, or each range's list sorted through a bitmap)."""
    split, gather = request.param.split("-")
    monkeypatch.setattr(numba_ops, "PARALLEL_FRONTIER", 0 if split == "blocks" else 1 << 62)
    monkeypatch.setattr(numba_ops, "MARK_SCAN", 1 << 62 if gather == "marks" else 0)
    return request.param


def with_kernels(kernels, call, *args, **kwargs):
    old = numba_ops.configure(kernels=kernels)
    try:
        return call(*args, **kwargs)
    finally:
        numba_ops.configure(**old)


def both(call, *arrays):
    """``call(*copies of arrays)`` with the NumPy twins and with the compiled kernels: [(result, arrays)] * 2."""
    out = []
    for kernels in ("numpy", "numba"):
        copies = [a.copy() for a in arrays]
        out.append((with_kernels(kernels, call, *copies), copies))
    return out


def same(a, b):
    """Equal to the bit, dtype and shape included."""
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- graphs ----------------------------------------------------------------------------------------------------

def rmat(scale=11, weighted=False):
    g = generators.rmat(scale, 16, seed=3)
    return generators.with_random_weights(g, 1, 64, seed=4) if weighted else g


def wide_ids(g):
    """The same graph with 64-bit vertex ids."""
    return Graph(g.indptr, g.indices.astype(np.int64), g.weights, directed=g.directed)


def with_proxies(seed=5, n=600, m=5000, own=450):
    """A directed weighted graph whose rows from ``own`` on hold no arcs, as a part's proxies."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([rng.integers(0, own, m), np.full(n // 3, 7)])
    dst = rng.integers(0, n, src.size)
    g = Graph.from_edges(src, dst, rng.random(src.size) + 0.25, num_vertices=n, directed=True)
    g.arc_rows = own
    return g


GRAPHS = {
    "rmat11": lambda: rmat(),
    "rmat11_w": lambda: rmat(weighted=True),
    "rmat11_w_i64": lambda: wide_ids(rmat(weighted=True)),
    "grid": lambda: generators.grid(40, 30),
    "rand_dir_float": lambda: get_case("rand_dir_float").graph,
    "zero_heavy_dir": lambda: get_case("zero_heavy_dir").graph,
    "proxies": with_proxies,
}
_built = {}


def graph(name):
    if name not in _built:
        _built[name] = GRAPHS[name]()
    return _built[name]


def source_of(g):
    """A vertex of the largest out-degree: a traversal from it reaches much of the graph."""
    return int(np.argmax(np.diff(g.indptr)))


def arc_set(g):
    src, dst = ops.arcs(g)
    return set(zip(src.tolist(), dst.tolist()))


# -- settings ----------------------------------------------------------------------------------------------------

def test_the_setting_and_the_environment_select_the_kernels(monkeypatch):
    old = numba_ops.configure(kernels=None)
    try:
        monkeypatch.delenv("MGRAPH_CPU_KERNELS", raising=False)
        assert ops._impl(np.zeros(1)) is numba_ops
        monkeypatch.setenv("MGRAPH_CPU_KERNELS", "numpy")  # read again where the setting returns to None
        assert ops._impl(np.zeros(1)) is numba_ops
        numba_ops.configure(kernels=None)
        assert ops._impl(np.zeros(1)) is numpy_ops
        numba_ops.configure(kernels="numba")
        assert ops._impl(np.zeros(1)) is numba_ops
        monkeypatch.setenv("MGRAPH_CPU_KERNELS", "fortran")
        numba_ops.configure(kernels=None)
        with pytest.raises(ValueError, match="MGRAPH_CPU_KERNELS must be one of numba, numpy"):
            ops._impl(np.zeros(1))
    finally:
        numba_ops.configure(**old)
    with pytest.raises(ValueError, match="CPU kernels must be one of"):
        numba_ops.configure(kernels="cuda")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_id_range(dtype):
    ids = np.array([5, 3, 9, 9, 0, 4], dtype=dtype)
    assert numba_ops.id_range(ids) == (0, 9) and numba_ops.id_range(ids[:1]) == (5, 5)
    big = np.array([2 ** 63 + 5, 7], dtype=np.uint64)
    assert numba_ops.id_range(big) == (7, 2 ** 63 + 5) and all(type(x) is int for x in numba_ops.id_range(big))


def test_the_kernels_not_compiled_are_the_twins():
    assert numba_ops.translate is numpy_ops.translate and numba_ops.count_own is numpy_ops.count_own
    with pytest.raises(AttributeError):
        numba_ops.no_such_kernel  # noqa: B018


def test_threads_follow_the_setting_numba_and_the_ranks_of_the_node(monkeypatch):
    old = numba_ops.configure(threads=None)
    try:
        monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
        for name in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(numba_ops.os, "cpu_count", lambda: 8)
        monkeypatch.setattr(numba_ops.os, "sched_getaffinity", lambda pid: set(range(8)))
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 8)
        assert numba_ops.threads() == 8
        monkeypatch.setenv("PMI_SIZE", "3")  # three ranks on this node share its cores
        monkeypatch.setenv("MPI_LOCALNRANKS", "3")
        assert numba_ops.threads() == 2
        monkeypatch.setenv("MPI_LOCALNRANKS", "16")
        assert numba_ops.threads() == 1
        monkeypatch.setattr(numba_ops.os, "sched_getaffinity", lambda pid: {4, 5, 6})  # bound: that is its share
        assert numba_ops.threads() == 3
        monkeypatch.setenv("NUMBA_NUM_THREADS", "8")  # the user's own count wins over the split
        assert numba_ops.threads() == 8
        numba_ops.configure(threads=5)
        assert numba_ops.threads() == 5
        with pytest.raises(ValueError, match="more than numba's pool of 8"):
            numba_ops.configure(threads=9)
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match="positive integer"):
                numba_ops.configure(threads=bad)
    finally:
        numba_ops.configure(**old)


def test_a_runs_threads_option_sets_its_kernels_threads_and_devices_divide_them(monkeypatch):
    """threads= is the run's CPU threads in this process; devices=P worker threads take threads // P each (at least
    one), so that P workers with their kernels' threads do not oversubscribe the cores; outside the run the
    process's setting stands."""
    import threading

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 8)  # a pool of 8 (the kernels run on fewer here)
    monkeypatch.setattr(numba_ops, "default_threads", lambda: 6)
    seen = []
    monkeypatch.setattr(numba_ops, "_parallel", lambda work: seen.append(
        (threading.current_thread().name, numba_ops.threads())) or 1)
    old = numba_ops.configure(threads=None)
    try:
        g = rmat(9)
        for run, want in (({}, {6}), ({"threads": 1}, {1}), ({"threads": 8}, {8}), ({"devices": 2}, {3}),
                          ({"devices": 4, "threads": 8}, {2}), ({"devices": 3, "threads": 2}, {1})):
            seen.clear()
            r = with_kernels("numba", mgraph.connected_components, g, **run)
            np.testing.assert_array_equal(r.labels, validate.reference_components(g))
            assert {t for _, t in seen} == want, run
            workers = {name for name, _ in seen}
            assert len(workers) == run.get("devices", 1), workers  # each worker thread asked for its own share
            assert r.stats.get("threads") == run.get("threads")
        assert numba_ops.threads() == 6  # outside a run
        numba_ops.configure(threads=4)
        seen.clear()
        with_kernels("numba", mgraph.connected_components, g, devices=2)
        assert {t for _, t in seen} == {2}
        for bad in (0, -2, 1.5, True, "2"):
            with pytest.raises(ValueError, match="threads must be a positive integer"):
                mgraph.bfs(g, 0, threads=bad)
        with pytest.raises(ValueError, match="more than numba's pool of 8"):
            mgraph.bfs(g, 0, threads=9)
    finally:
        numba_ops.configure(**old)


@pytest.mark.skipif(sys.platform != "linux", reason="reads the cores this process may use (Linux)")
def test_ranks_under_mpiexec_split_the_cores():
    import os
    import shutil

    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         env.get("PYTHONPATH", "")])
    # one write per rank (print writes its pieces apart, and two ranks' pieces interleaved into "22 ...")
    code = ("import os; from mgraph.ops import numba_ops as nb; "
            "os.write(1, f'{nb._local_ranks()} {nb.threads()} {len(os.sched_getaffinity(0))} {os.cpu_count()}\\n'"
            ".encode())")
    got = subprocess.run([mpiexec, "-n", "2", sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        ranks, threads, allowed, total = map(int, line.split())
        share = allowed if allowed < total else total // 2  # a rank bound to cores keeps them, else half the node
        assert ranks == 2 and threads == max(1, min(POOL, share))


# -- push visits -------------------------------------------------------------------------------------------------

def check_claims(g, frontier, new, pred, arcs):
    """Each newly claimed vertex's predecessor is in the frontier, along an arc."""
    members = set(frontier.tolist())
    for v in new.tolist():
        assert int(pred[v]) in members and (int(pred[v]), v) in arcs


@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "grid", "rand_dir_float", "proxies"])
def test_push_visit_level_by_level(name, threads, collect):
    g = graph(name)
    idx = g.indices.dtype
    s = source_of(g)
    label, pred = np.full(g.num_vertices, -1, np.int32), np.full(g.num_vertices, -1, idx)
    label[s], pred[s] = 0, s
    frontier, level, arcs = np.array([s], dtype=idx), 0, arc_set(g)
    while frontier.size:
        level += 1
        (f0, (l0, p0)), (f1, (l1, p1)) = both(lambda lab, pre: ops.advance_visit(g, frontier, lab, pre, level),
                                              label, pred)
        assert same(f0, f1) and same(l0, l1)
        if threads == 1:
            assert same(p0, p1)
        else:  # another valid claim where two frontier vertices reach one vertex
            assert same(p0 == -1, p1 == -1)
            check_claims(g, frontier, f1, p1, arcs)
        frontier, label, pred = f0, l0, p0
    assert level > 2


def test_marked_claims_are_read_off_in_order_once_each_however_a_race_counted_them(threads):
    """Two threads may claim one vertex at once and both tally it: the read-off closes the gap that leaves."""
    n, t = 5000, threads
    rng = np.random.default_rng(1)
    claimed = np.unique(rng.integers(0, n, 700))
    marks = np.zeros(n, np.uint8)
    marks[claimed] = 1
    shift = numba_ops._mark_blocks(n, t)
    counts = np.bincount(claimed >> shift, minlength=((n - 1) >> shift) + 1).astype(np.int64)
    counts[::2] += 1  # a vertex counted twice in every other block
    got = numba_ops._collect_marks(marks, shift, counts, np.int32)
    assert got.dtype == np.int32 and same(got, claimed.astype(np.int32)) and not marks.any()


@pytest.mark.parametrize("name", ["rmat11_w", "rmat11_w_i64", "zero_heavy_dir", "proxies"])
def test_tight_visit_and_tight_predecessors(name, threads, collect):
    g = graph(name)
    s = source_of(g)
    dist = validate.reference_sssp(g, s)
    idx = g.indices.dtype
    label, pred = np.full(g.num_vertices, -1, np.int32), np.full(g.num_vertices, -1, idx)
    label[s], pred[s] = 0, s
    frontier, level, arcs = np.array([s], dtype=idx), 0, arc_set(g)
    while frontier.size:
        level += 1
        (f0, (l0, p0)), (f1, (l1, p1)) = both(lambda lab, pre: ops.advance_visit(g, frontier, lab, pre, level, dist),
                                              label, pred)
        assert same(f0, f1) and same(l0, l1)
        if threads == 1:
            assert same(p0, p1)
        else:
            check_claims(g, frontier, f1, p1, arcs)
        frontier, label, pred = f0, l0, p0
    start = np.full(g.num_vertices, -1, idx)
    start[s] = s
    (_, (p0,)), (_, (p1,)) = both(lambda p: ops.tight_predecessors(g.reverse(), dist, p), start)
    assert same(p0, p1)


@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "rand_dir_float", "proxies"])
def test_pull_visit_level_by_level(name, threads):
    g = graph(name)
    rg = g.reverse()
    if name == "proxies":  # the reverse of a part: only its own rows pull
        rg = Graph(rg.indptr, rg.indices, rg.weights, directed=True)
        rg.arc_rows = 450
    idx = g.indices.dtype
    s = source_of(g)
    label, pred = np.full(g.num_vertices, -1, np.int32), np.full(g.num_vertices, -1, idx)
    label[s], pred[s] = 0, s
    frontier, level = np.array([s], dtype=idx), 0
    while frontier.size:
        level += 1
        bits = ops.bitmap(frontier, g.num_vertices)
        (f0, (l0, p0)), (f1, (l1, p1)) = both(lambda lab, pre: ops.advance_visit_pull(rg, lab, pre, level, bits),
                                              label, pred)
        assert same(f0, f1) and same(l0, l1) and same(p0, p1)
        frontier, label, pred = f0, l0, p0


@pytest.mark.parametrize("name", ["rmat11", "grid", "rand_dir_float"])
def test_bfs_runs_are_valid_by_graph500s_rules(name, threads):
    g = graph(name)
    s = source_of(g)
    for direction in ("push", "auto"):
        r = with_kernels("numba", mgraph.bfs, g, s, direction=direction)
        np.testing.assert_array_equal(r.depth, validate.reference_bfs_depth(g, s))
        validate.validate_bfs(g, s, r.depth, r.predecessor)


def test_bfs_on_two_devices_in_one_process_calls_the_kernels_from_two_threads(threads):
    g = graph("rmat11")
    s = source_of(g)
    for devices in (2, 3):
        r = with_kernels("numba", mgraph.bfs, g, s, devices=devices)
        np.testing.assert_array_equal(r.depth, validate.reference_bfs_depth(g, s))
        validate.validate_bfs(g, s, r.depth, r.predecessor)


# -- relaxation, paths, dependencies ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rmat11_w", "rmat11_w_i64", "grid", "zero_heavy_dir", "proxies"])
def test_relax_superstep_by_superstep(name):
    g = graph(name)
    s = source_of(g)
    dist, marks = np.full(g.num_vertices, np.inf), np.zeros(g.num_vertices, np.int32)
    dist[s] = 0.0
    frontier, stamp = np.array([s], dtype=g.indices.dtype), 0
    while frontier.size:
        stamp += 1
        (f0, (d0, m0)), (f1, (d1, m1)) = both(lambda d, m: ops.advance_relax(g, frontier, d, m, stamp), dist, marks)
        assert same(f0, f1) and same(d0, d1) and same(m0, m1)
        frontier, dist, marks = f0, d0, m0
    np.testing.assert_array_equal(dist, validate.reference_sssp(g, s))


@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "grid", "rand_dir_float"])
def test_path_counts_and_dependencies_level_by_level(name):
    g = graph(name)
    s = source_of(g)
    label, sigma = np.full(g.num_vertices, -1, np.int32), np.zeros(g.num_vertices)
    label[s], sigma[s] = 0, 1.0
    levels, frontier = [], np.array([s], dtype=g.indices.dtype)
    while frontier.size:
        levels.append(frontier)
        (f0, (l0, s0)), (f1, (l1, s1)) = both(
            lambda lab, sig: ops.advance_count_paths(g, frontier, lab, sig, len(levels)), label, sigma)
        assert same(f0, f1) and same(l0, l1) and same(s0, s1)
        frontier, label, sigma = f0, l0, s0
    delta = np.zeros(g.num_vertices)
    for level in range(len(levels) - 2, -1, -1):
        (r0, (d0,)), (r1, (d1,)) = both(
            lambda d: ops.advance_dependency(g, levels[level], label, sigma, d, level), delta)
        assert r0 is None and r1 is None and same(d0, d1)
        delta = d0


def test_betweenness_against_networkx():
    c = get_case("chesapeake")
    r = with_kernels("numba", mgraph.betweenness_centrality, c.graph)
    want = nx.betweenness_centrality(nx.from_scipy_sparse_array(c.csr), normalized=False)
    np.testing.assert_allclose(r.centrality, [want[v] for v in range(c.n)], rtol=1e-9)


# -- union-find ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "grid", "rand_dir_float", "proxies"])
def test_hooks_and_pointer_jumping(name, threads):
    g = graph(name)
    n = g.num_vertices
    start = np.arange(n, dtype=np.int64)
    def hooked(p, **kwargs):  # a forest whose roots are the components' smallest ids; flat after compress
        ops.hook_components(g, p, **kwargs)
        assert (p <= np.arange(n)).all()  # every parent a smaller id: no cycle
        ops.compress(p)

    for kwargs in ({}, {"pairs_below": n // 2}, {"arcs": (0, 1)}, {"arcs": (1, 3)}, {"arcs": (2, None)}):
        (_, (p0,)), (_, (p1,)) = both(lambda p: hooked(p, **kwargs), start)
        assert same(p0, p1), kwargs
    # Afforest: a sample, then the rest of the arcs of the rows outside the largest tree
    (_, (p0,)), (_, (p1,)) = both(lambda p: hooked(p, arcs=(0, 1)), start)
    sampled = p0
    skip = int(np.bincount(sampled).argmax())
    (_, (p0,)), (_, (p1,)) = both(lambda p: hooked(p, arcs=(1, None), skip=skip), sampled)
    assert same(p0, p1)
    # a forest that is not flat yet: every vertex jumps to its root
    forest = np.arange(n, dtype=np.int64)
    forest[1:] = np.random.default_rng(1).integers(0, np.arange(1, n))
    (_, (p0,)), (_, (p1,)) = both(ops.compress, forest)
    assert same(p0, p1)
    seg = p0
    values = np.random.default_rng(2).integers(0, n, n)
    (m0, _), (m1, _) = both(lambda: ops.segment_min(seg, values, values))
    assert same(m0, m1)


def test_hook_functor_over_a_frontier():
    g = graph("rmat11")
    frontier = np.arange(0, g.num_vertices, 3, dtype=g.indices.dtype)
    start = np.arange(g.num_vertices, dtype=np.int64)
    (r0, (p0,)), (r1, (p1,)) = both(lambda p: (ops.advance(g, frontier, functors.HOOK, p, 100), ops.compress(p))[0],
                                    start)
    assert r0 is None and r1 is None and same(p0, p1)


@pytest.mark.parametrize("name", ["rmat11", "grid", "rand_dir_float", "proxies"])
def test_components_against_scipy(name, threads):
    g = graph(name)
    if name == "proxies":
        g = Graph(g.indptr, g.indices, g.weights, directed=True)  # a whole graph: its proxies' rows are empty anyway
    r = with_kernels("numba", mgraph.connected_components, g)
    np.testing.assert_array_equal(r.labels, validate.reference_components(g))


@pytest.mark.parametrize("name", ["rmat11", "grid", "rand_dir_float", "zero_heavy_dir"])
def test_whole_graph_components_in_compiled_calls(name, threads):
    """The CC primitive's Afforest on a whole graph in compiled calls: the smallest id of each component, from any
    hub whose tree the full hooking leaves out (or none), and the labels of the frontier program (the twins)."""
    g = graph(name)
    want = validate.reference_components(g)
    degree = np.diff(g.indptr)
    for sampled, hub in ((2, int(np.argmax(degree))), (1, int(np.argmin(degree))), (0, None), (2, None)):
        got = numba_ops.connected_components(g, sampled, hub)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
    r = with_kernels("numba", mgraph.connected_components, g)
    np.testing.assert_array_equal(r.labels, want)
    np.testing.assert_array_equal(with_kernels("numpy", mgraph.connected_components, g).labels, want)
    assert r.stats["num_components"] == np.unique(want).shape[0]
    assert ops.whole_graph_kernel(g, "connected_components") is numba_ops.connected_components


# -- pull sum, L1 --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "rand_dir_float", "proxies"])
def test_pull_sum_bits(name, threads):
    g = graph(name)
    rg = g.reverse()
    x = np.random.default_rng(7).random(g.num_vertices)
    for scale, shift in [(1.0, 0.0), (0.85, 0.003), (-2.0, 0.0), (0.5, np.float64(0.25)), (1.0, np.array([0.0]))]:
        (y0, _), (y1, _) = both(lambda: ops.pull_sum(rg, x, scale, shift))
        assert same(y0, y1), (scale, shift)
    np.testing.assert_allclose(ops.pull_sum(rg, x), g.to_scipy().T @ x, rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 1000, 8191, 8193, 100_003])
def test_l1_distance_bits(n):
    rng = np.random.default_rng(n)
    a, b = rng.random(n) * 10.0 ** rng.integers(-8, 8, n), rng.random(n)
    for x, y, count in [(a, b, None), (a.astype(np.float32), b.astype(np.float32), None), (a, b, n // 2),
                        ((a * 1000).astype(np.int64), (b * 1000).astype(np.int64), None)]:
        (r0, _), (r1, _) = both(lambda: ops.l1_distance(x, y, count))
        assert same(r0, r1) and r1.ndim == 0


def test_pagerank_against_networkx(threads):
    c = get_case("rand_dir")
    r = with_kernels("numba", mgraph.pagerank, c.graph, tol=1e-12, max_iter=500)
    twin = with_kernels("numpy", mgraph.pagerank, c.graph, tol=1e-12, max_iter=500)
    assert same(r.rank, twin.rank)
    want = nx.pagerank(nx.from_scipy_sparse_array(c.csr, create_using=nx.DiGraph), tol=1e-12, max_iter=500)
    np.testing.assert_allclose(r.rank, [want[v] for v in range(c.n)], rtol=1e-6)


# -- neighbour-reduce --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rmat11_w", "rmat11_w_i64", "rand_dir_float", "proxies"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
def test_neighbor_reduce_is_the_twins(name, dtype, threads):
    if threads > 1 and dtype not in (np.int64, np.float64):
        pytest.skip("the parallel kernels are the serial ones per range: two dtypes try them (each one compiles)")
    g = graph(name)
    rng = np.random.default_rng(8)
    values = rng.integers(-5, 40, g.num_vertices).astype(dtype) if np.dtype(dtype).kind != "u" \
        else rng.integers(0, 9, g.num_vertices).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values[::7] = -0.0
        values[::11] = 0.0
    prefer = rng.integers(-1, 9, g.num_vertices).astype(dtype)
    rows = np.concatenate([rng.integers(0, g.num_vertices, 300), [source_of(g)] * 3, [g.num_vertices - 1]])
    kind = np.dtype(dtype).kind  # the twin's mode gives unsigned rows without neighbours -1: it takes signed ids
    ops_list = ["sum", "min", "max"] + (["mex"] if kind in "iu" else []) + (["mode"] if kind == "i" else [])
    for op in ops_list:
        for vertices in (None, rows):
            for kwargs in ({}, {"weighted": True}, {"empty": 3}, {"prefer": prefer} if op == "mode" else {}):
                (r0, _), (r1, _) = both(lambda: ops.neighbor_reduce(g, values, op, vertices, **kwargs))
                assert same(r0, r1), (op, vertices is None, kwargs)


def test_neighbor_reduce_of_large_integers_stays_exact():
    g = graph("rmat11")
    values = (np.arange(g.num_vertices, dtype=np.int64) + (1 << 60))
    for op in ("sum", "min", "max", "mode"):
        (r0, _), (r1, _) = both(lambda: ops.neighbor_reduce(g, values, op))
        assert same(r0, r1), op


def test_label_propagation_and_core_numbers_against_networkx():
    c = get_case("chesapeake")
    nxg = nx.from_scipy_sparse_array(c.csr)
    r = with_kernels("numba", mgraph.core_number, c.graph)
    want = nx.core_number(nxg)
    np.testing.assert_array_equal(r.core, [want[v] for v in range(c.n)])
    r0 = with_kernels("numpy", mgraph.label_propagation, c.graph)
    r1 = with_kernels("numba", mgraph.label_propagation, c.graph)
    assert same(r0.labels, r1.labels)
    validate.validate_label_propagation(c.graph, r1.labels)


# -- intersection -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "grid"])
def test_intersect_count_is_the_twins(name, threads):
    g = graph(name)
    src, dst = ops.arcs(g)
    rng = np.random.default_rng(9)
    a = np.concatenate([src, rng.integers(0, g.num_vertices, 2000)])
    b = np.concatenate([dst, np.full(2000, source_of(g))])  # a hub against short rows
    # many pairs go grouped by their longer row; a few (below n / 16), one by one: merged, or searched in a hub
    for lo, hi in ((0, a.size), (0, 40), (a.size - 40, a.size), (a.size // 2, a.size // 2 + 30)):
        (r0, _), (r1, _) = both(lambda: ops.intersect_count(g, a[lo:hi], b[lo:hi]))
        assert same(r0, r1), (lo, hi)


def test_triangles_against_networkx(threads):
    g = graph("rmat11")
    r = with_kernels("numba", mgraph.triangles, g)
    want = nx.triangles(nx.from_scipy_sparse_array(g.to_scipy()))
    np.testing.assert_array_equal(r.triangles, [want[v] for v in range(g.num_vertices)])


# -- a user's functor ------------------------------------------------------------------------------------------------

def _reach_cpu(u, v, e, w, label, level):
    if label[v] == -1:
        label[v] = level
        return True
    return False


def _heavy_twin(u, v, w, sums, limit):
    keep = w > limit
    np.add.at(sums, v[keep], w[keep])


def _heavy_cpu(u, v, e, w, sums, limit):
    if w > limit:
        sums[v] += w


REACH_CPU = ops.Functor("reach_cpu", REACH.signature[2:].replace("__restrict__ ", ""), REACH.cuda, REACH.numpy,
                        cpu=_reach_cpu)
HEAVY_CPU = ops.Functor("heavy_cpu", "double* sums, double limit", "if (w > limit) atomicAdd(&sums[v], w);",
                        _heavy_twin, emits=False, cpu=_heavy_cpu)


@pytest.mark.parametrize("name", ["rmat11", "rmat11_w_i64", "rand_dir_float"])
def test_a_functors_cpu_body_is_compiled_and_agrees_with_its_twin(name):
    g = graph(name)
    s = source_of(g)
    label = np.full(g.num_vertices, -1, np.int32)
    label[s] = 0
    frontier, level = np.array([s], dtype=g.indices.dtype), 0
    while frontier.size:
        level += 1
        (f0, (l0,)), (f1, (l1,)) = both(lambda lab: ops.advance(g, frontier, REACH_CPU, lab, level), label)
        assert same(f0, f1) and same(l0, l1)
        frontier, label = f0, l0
    if g.weights is None:  # the twin takes w None on an unweighted graph
        g = graph("rmat11_w")
    (r0, (s0,)), (r1, (s1,)) = both(lambda sums: ops.advance(g, None, HEAVY_CPU, sums, 32.0),
                                    np.zeros(g.num_vertices))
    assert r0 is None and r1 is None and same(s0, s1)


def test_a_functor_without_a_cpu_body_runs_its_twin():
    seen = []

    def twin(u, v, w, label, level):
        seen.append(u.size)
        return REACH.numpy(u, v, w, label, level)

    plain = ops.Functor("plain", "int* label, int level", REACH.cuda, twin)
    g = graph("grid")
    label = np.full(g.num_vertices, -1, np.int32)
    out = with_kernels("numba", ops.advance, g, np.array([0], dtype=g.indices.dtype), plain, label, 1)
    assert seen == [2] and out.tolist() == [1, 40]


def test_a_cpu_body_that_does_not_compile_is_a_value_error():
    bad = ops.Functor("bad_cpu", "int* label", "emit = true;", lambda u, v, w, label: v >= 0,
                      cpu=lambda u, v, e, w, label: label.nosuch)
    g = graph("grid")
    with pytest.raises(ValueError, match="functor bad_cpu: its cpu body does not compile"):
        with_kernels("numba", ops.advance, g, np.array([0], dtype=g.indices.dtype), bad,
                     np.zeros(g.num_vertices, np.int32))
    with pytest.raises(ValueError, match="cpu must be a scalar function"):
        ops.Functor("bad", "", "emit = true;", lambda *a: None, cpu="emit = true;")


def test_without_numba_the_twins_serve_the_cpu():
    """A source tree on a machine without numba (the GPU hosts) still imports and runs on the CPU: the twins."""
    code = ("import sys, importlib.abc\n"
            "class Block(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'numba': raise ImportError('no numba here')\n"
            "sys.meta_path.insert(0, Block())\n"
            "import mgraph\n"
            "from mgraph import ops\n"
            "g = mgraph.load('grid:30x20', backend='numpy')\n"
            "print(ops._impl(g.indptr).__name__, int(mgraph.bfs(g, 0).depth.max()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["mgraph.ops.numpy_ops", "48"]


# -- whole-graph algorithms: the one-device CPU paths of k-core, triangles and SSSP ------------------------------

def _per_vertex(n, d):
    return np.array([d[v] for v in range(n)], dtype=np.int64)


@pytest.mark.parametrize("name", ["chesapeake", "small_und", "small_dir", "rand_dir", "star300_dir", "disconnected",
                                  "grid20x15", "path60"])
def test_core_numbers_by_peeling_equal_networkx_and_the_levels(name):
    """One device peels in one compiled call (two supersteps: reset, and the end); the levels' frontier program runs
    with the twins and on two devices; all equal networkx.core_number."""
    c = get_case(name)
    want = _per_vertex(c.n, nx.core_number(c.nx))
    r = with_kernels("numba", mgraph.core_number, c.graph)
    assert r.stats["supersteps"] == 2
    np.testing.assert_array_equal(r.core, want)
    assert same(r.core, numba_ops.core_numbers(c.graph))
    levels = with_kernels("numpy", mgraph.core_number, c.graph)
    assert levels.stats["supersteps"] > 2 or c.n < 3
    assert same(levels.core, r.core)
    np.testing.assert_array_equal(with_kernels("numba", mgraph.core_number, c.graph, devices=2).core, want)


@pytest.mark.parametrize("name", ["rmat11", "chesapeake", "small_und", "rand_und", "grid", "star300"])
def test_triangles_compact_forward_equal_networkx_and_the_intersections(name, threads):
    g = graph(name) if name in GRAPHS else get_case(name).graph
    want = _per_vertex(g.num_vertices, nx.triangles(nx.from_scipy_sparse_array(g.to_scipy())))
    got = numba_ops.triangle_counts(g)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    r = with_kernels("numba", mgraph.triangles, g)
    assert same(r.triangles, got) and r.stats["supersteps"] == 2
    assert same(with_kernels("numpy", mgraph.triangles, g).triangles, got)  # the intersections' frontier program
    np.testing.assert_array_equal(with_kernels("numba", mgraph.triangles, g, devices=2).triangles, want)


def test_triangles_ignore_self_loops_as_networkx_does():
    src, dst = np.array([0, 1, 2, 0, 1, 3, 3]), np.array([1, 2, 0, 0, 1, 0, 3])  # a triangle, loops at 0, 1, 3
    g = Graph.from_edges(src, dst, num_vertices=5)
    G = nx.Graph(list(zip(src.tolist(), dst.tolist())))
    G.add_node(4)
    np.testing.assert_array_equal(numba_ops.triangle_counts(g), _per_vertex(5, nx.triangles(G)))
    np.testing.assert_array_equal(with_kernels("numba", mgraph.triangles, g).triangles, [1, 1, 1, 0, 0])


@pytest.mark.parametrize("name", ["rmat11_w", "rmat11_w_i64", "grid", "rand_dir_float", "zero_heavy_dir", "zero_und",
                                  "disconnected_dir", "path200_w"])
def test_sssp_by_dijkstra_equals_scipy_and_the_relaxations(name, monkeypatch):
    g = graph(name) if name in GRAPHS else get_case(name).graph
    s = source_of(g)
    want = csgraph.dijkstra(g.to_scipy(), directed=g.directed, indices=s)
    dist = np.full(g.num_vertices, np.inf)
    dist[s] = 0.0
    assert numba_ops.shortest_distances(g, s, dist) == int(np.isfinite(want).sum())
    np.testing.assert_array_equal(dist, want)
    # a relaxation stopped after a few rounds, finished by Dijkstra from its frontier
    dist, marks = np.full(g.num_vertices, np.inf), np.zeros(g.num_vertices, np.int32)
    dist[s] = 0.0
    frontier = np.array([s], dtype=g.indices.dtype)
    for stamp in range(1, 4):
        frontier = ops.advance_relax(g, frontier, dist, marks, stamp)
    numba_ops.shortest_distances(g, frontier, dist)
    np.testing.assert_array_equal(dist, want)
    # whole runs: past DIJKSTRA_AFTER rounds (the grid's, the path's) Dijkstra finishes the distances
    calls = []
    real = numba_ops.shortest_distances
    monkeypatch.setattr(numba_ops, "shortest_distances", lambda *a: calls.append(a[1].shape[0]) or real(*a))
    r = with_kernels("numba", mgraph.sssp, g, s)
    np.testing.assert_array_equal(r.distance, want)
    validate.validate_sssp(g, s, r.distance, r.predecessor)
    levels = validate.reference_bfs_depth(g, s).max()
    assert len(calls) == (1 if levels > 64 else 0), (levels, calls)
    relaxed = with_kernels("numpy", mgraph.sssp, g, s)  # the frontier program to the end, with the twins
    assert same(relaxed.distance, r.distance) and same(relaxed.predecessor, r.predecessor)
    two = with_kernels("numba", mgraph.sssp, g, s, devices=2)
    np.testing.assert_array_equal(two.distance, want)
    validate.validate_sssp(g, s, two.distance, two.predecessor)


# -- fused levels in one compiled call (for mgraph.ops.levels.advance_levels' CPU loop) ---------------------------

@pytest.mark.parametrize("name, limit, max_levels, do_a", [
    ("grid", 1 << 16, 1 << 30, None), ("grid", 60, 1 << 30, None), ("grid", 1 << 16, 7, None),
    ("grid", 1 << 16, 1 << 30, 1e-3), ("path200", 1 << 16, 1 << 30, None), ("rand_dir_sparse", 1 << 16, 1 << 30, None),
    ("rmat10_4", 1 << 16, 1 << 30, None)])
def test_compiled_levels_are_the_loops_levels(name, limit, max_levels, do_a):
    """The same levels, labels and last output as the loop of one-level visits; the predecessors another valid BFS
    tree (each level expands in claim order, where the loop expands sorted frontiers)."""
    from mgraph.ops import levels

    if name == "rmat10_4":  # vertices reached from several frontier vertices in one level, no hub past FUSE_DEGREE
        g = generators.rmat(10, 4, seed=1)
        assert levels.fusable(g)
    else:
        g = graph(name) if name in GRAPHS else get_case(name).graph
    s = source_of(g) if name != "path200" else 0
    got = []
    for way in ("loop", "compiled"):
        label = np.full(g.num_vertices, -1, np.int32)
        pred = np.full(g.num_vertices, -1, g.indices.dtype)
        label[s], pred[s] = 0, s
        frontier = np.array([s], dtype=g.indices.dtype)
        rule = None if do_a is None else levels.PullRule(g, 1, do_a)
        args = (label, pred, 1)
        old = numba_ops.configure(kernels="numba", threads=1)
        try:
            if way == "loop":
                r = levels.advance_levels(g, frontier, functors.VISIT, args, 2, limit, max_levels, numba_ops.advance,
                                          rule)
            else:
                r = numba_ops.advance_levels(g, frontier, functors.VISIT, args, 2, limit, max_levels, rule)
        finally:
            numba_ops.configure(**old)
        got.append((r, label, pred))
    (a, la, pa), (b, lb, pb) = got
    assert b is not None and (a.levels, a.emitted) == (b.levels, b.emitted) and a.levels > 1
    assert same(a.frontier, b.frontier) and same(la, lb) and pa.dtype == pb.dtype
    reached = np.flatnonzero(lb > 0)
    assert (pb[lb < 0] == -1).all() and pb[s] == s
    assert (lb[pb[reached]] == lb[reached] - 1).all()  # each predecessor one level up ...
    arcs = arc_set(g)
    assert all((int(u), int(v)) in arcs for u, v in zip(pb[reached], reached))  # ... along an arc
    assert numba_ops.advance_levels(g, np.array([s], g.indices.dtype), functors.RELAX, (), 0, limit, 5) is None


def test_compiled_levels_leave_what_does_not_fuse_to_the_loop():
    leaves = np.arange(1, 2001)
    g = Graph.from_edges(np.zeros(2000, np.int64), leaves)  # a hub of more than FUSE_DEGREE arcs: no fusing
    label = np.full(g.num_vertices, -1, np.int32)
    f = np.array([1], dtype=g.indices.dtype)
    assert numba_ops.advance_levels(g, f, functors.VISIT, (label, label.astype(g.indices.dtype), 1), 2, 1 << 16,
                                    100) is None


# -- Louvain's pair totals ----------------------------------------------------------------------------------------

def pair_inputs(case, rng):
    """(rows, keys, weights, span) for ops.pair_totals: grouped rows (Louvain's arcs), rows in any order (a
    directed graph's out- and in-arcs), keys too wide to mark (the probing rounds replayed), sums that round."""
    if case == "arcs":
        g = graph("rmat11_w")
        src, dst = ops.arcs(g)
        community = rng.integers(0, 60, g.num_vertices)
        return src, community[dst], g.weights.astype(np.float64), g.num_vertices
    if case == "grouped":
        m = 20_000
        return np.sort(rng.integers(0, 400, m)), rng.integers(0, 50, m), rng.standard_normal(m), 50
    if case == "any_order":
        m = 20_000
        return rng.integers(0, 400, m).astype(np.int32), rng.integers(0, 50, m).astype(np.int32), rng.random(m), 64
    if case == "wide_keys":
        m = 3_000
        return np.sort(rng.integers(0, 40, m)), rng.integers(0, 2 ** 40, m) // 3 * 3, rng.random(m), 2 ** 40
    if case == "float_sums":  # each pair's additions in another order would show in the bits
        m = 5_000
        w = np.array([0.1, 0.2, 0.3, 1e-17, 1e16, -0.0])[rng.integers(0, 6, m)]
        return np.sort(rng.integers(0, 3, m)), rng.integers(0, 4, m), w, 4
    # each entry a pair of its own, so that every key has a home and the table is half full: long runs of probes
    m = 4_000
    return np.arange(m), rng.integers(0, 2, m), rng.random(m).astype(np.float32), 2


@pytest.mark.parametrize("case", ["arcs", "grouped", "any_order", "wide_keys", "float_sums", "distinct"])
def test_pair_totals_are_the_twins_pairs_in_their_order(case):
    """The compiled pair_totals gives segments.pair_totals' pairs in the same order (the table's) and the same sums
    to the bit, whichever of its paths an input takes."""
    rng = np.random.default_rng(21)
    for _ in range(3):
        rows, keys, w, span = pair_inputs(case, rng)
        (want, _), (got, _) = both(lambda: ops.pair_totals(rows, keys, w, span))
        assert want[0].shape[0] == len(set(zip(want[0].tolist(), want[1].tolist())))
        assert all(same(x, y) for x, y in zip(want, got)), case
        for part in (slice(0, 1), slice(0, 7), slice(5, 1000)):  # small tables: claims that wrap past the end
            (want, _), (got, _) = both(lambda: ops.pair_totals(rows[part], keys[part], w[part], span))
            assert all(same(x, y) for x, y in zip(want, got)), (case, part)


def test_pair_totals_place_keys_that_wrap_past_the_tables_end_as_the_twin():
    """Keys whose first slots are the table's last few: the probes run past its end and take its first slots,
    after the keys whose first slots those are; the order of the pairs shows where each key went."""
    m = 64
    size = 2 * m + 1
    candidates = np.arange(200_000, dtype=np.int64)
    home = (segments.mix(candidates) % np.uint64(size)).astype(np.int64)
    tail = candidates[home >= size - 3][:40]  # 40 keys for the last 3 slots
    head = candidates[home <= 2][:24]  # and 24 for the first 3
    assert tail.shape[0] == 40 and head.shape[0] == 24
    rng = np.random.default_rng(4)
    keys = rng.permutation(np.concatenate([tail, head]))
    rows = np.zeros(m, dtype=np.int64)
    w = rng.random(m)
    (want, _), (got, _) = both(lambda: ops.pair_totals(rows, keys, w, 1 << 40))
    assert want[1].shape[0] == m
    # slots 126-128 hold three of the tail's keys, the other 37 wrapped: slots 0-60, after the head's 24
    assert np.isin(want[1][-3:], tail).all() and np.isin(want[1][:61], tail).sum() == 37
    assert all(same(x, y) for x, y in zip(want, got))
    for rows_order in (rng.permutation(m), np.arange(m)[::-1]):  # rows out of order, the same table
        r = rows_order % 3
        (want, _), (got, _) = both(lambda: ops.pair_totals(r, keys, w, 1 << 40))
        assert all(same(x, y) for x, y in zip(want, got))


@pytest.mark.parametrize("fn", ["louvain", "leiden"])
def test_louvain_runs_are_the_twins(fn):
    """Whole runs with the compiled kernels and with the twins: the same communities, modularity and rounds."""
    for name in ("rmat11_w", "rand_dir_float") if fn == "louvain" else ("rmat11_w",):
        g = graph(name)
        (want, _), (got, _) = both(lambda: getattr(mgraph, fn)(g, backend="numpy", seed=2))
        assert same(want.community, got.community)
        for stat in ("modularity", "level_rounds", "level_modularity", "communities"):
            assert want.stats[stat] == got.stats[stat], stat
        assert want.stats["communities"] > 1

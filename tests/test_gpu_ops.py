"""Every CuPy kernel against its NumPy twin on random inputs, and every primitive on the GPU.

Run on a device machine: ``PYTHONPATH=$PWD python3 -m pytest -m gpu``.
"""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.ops import cupy_kernels, numpy_ops

from conftest import REACH

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")


def random_graph(seed, n=3000, m=20000, directed=False, weighted=True, wide_ids=False):
    rng = np.random.default_rng(seed)
    # a few hubs so that some frontiers hold very long neighbour lists
    src = np.concatenate([rng.integers(0, n, m), np.zeros(n // 2, dtype=np.int64)])
    dst = np.concatenate([rng.integers(0, n, m), rng.integers(0, n, n // 2)])
    w = rng.integers(0, 8, src.size).astype(np.float64) if weighted else None
    g = Graph.from_edges(src, dst, w, num_vertices=n + 7, directed=directed)
    if wide_ids:
        g = Graph(g.indptr, g.indices.astype(np.int64), g.weights, directed=directed)
    return g


def both(g):
    return g, g.to("cupy")


def h(a):
    return cp.asnumpy(a)


GRAPHS = [dict(directed=False), dict(directed=True), dict(directed=False, weighted=False),
          dict(directed=True, wide_ids=True)]


@pytest.fixture(params=range(len(GRAPHS)), ids=["undirected", "directed", "unweighted", "int64-ids"])
def graphs(request):
    return both(random_graph(request.param, **GRAPHS[request.param]))


def frontier_state(g, seed, level=3):
    """A random frontier at level-1 with some vertices already visited."""
    rng = np.random.default_rng(seed)
    n = g.num_vertices
    label = np.full(n, -1, dtype=np.int32)
    visited = rng.choice(n, n // 3, replace=False)
    label[visited] = rng.integers(0, level, visited.size)
    frontier = rng.choice(visited, visited.size // 2, replace=False).astype(g.indices.dtype)
    label[frontier] = level - 1
    return frontier, label


def check_preds(g, new, label, pred, level, frontier):
    src, dst, _ = numpy_ops.expand(g, frontier)
    arcs = set(zip(src.tolist(), dst.tolist()))
    assert all((int(pred[v]), int(v)) in arcs for v in new)
    assert (label[new] == level).all()


@pytest.mark.parametrize("tight", [False, True])
def test_advance_visit(graphs, tight):
    g, d = graphs
    frontier, label = frontier_state(g, 1)
    pred = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
    dist = np.random.default_rng(2).integers(0, 20, g.num_vertices).astype(np.float64) if tight else None
    dl, dp = cp.asarray(label), cp.asarray(pred)
    new_h = numpy_ops.advance_visit(g, frontier, label, pred, 3, dist)
    new_d = ops.advance_visit(d, cp.asarray(frontier), dl, dp, 3, None if dist is None else cp.asarray(dist))
    assert np.array_equal(np.sort(h(new_d)), np.sort(new_h)) and new_h.size > 0
    assert np.array_equal(h(dl), label)
    check_preds(g, h(new_d), h(dl), h(dp), 3, frontier)
    if tight:
        p = h(dp)[h(new_d)]
        w = g.to_scipy()
        assert np.array_equal(dist[p] + np.asarray(w[p, h(new_d)]).ravel(), dist[h(new_d)])


@pytest.mark.parametrize("size", [1, 33, 4096, 4097, 15000])  # one block's scan up to 4096 vertices, then a library scan
def test_advance_visit_around_the_one_block_scan(size):
    g, d = both(random_graph(11, n=20000, m=120000))
    rng = np.random.default_rng(size)
    frontier = rng.choice(g.num_vertices, size, replace=False).astype(g.indices.dtype)
    label = np.full(g.num_vertices, -1, dtype=np.int32)
    label[frontier] = 0
    pred = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
    dl, dp = cp.asarray(label), cp.asarray(pred)
    new_h = numpy_ops.advance_visit(g, frontier, label, pred, 1)
    new_d = h(ops.advance_visit(d, cp.asarray(frontier), dl, dp, 1))
    np.testing.assert_array_equal(np.sort(new_d), np.sort(new_h))
    np.testing.assert_array_equal(h(dl), label)
    check_preds(g, new_d, h(dl), h(dp), 1, frontier)


@pytest.mark.parametrize("read_above", [0, 1 << 40])
def test_advances_sized_from_the_count_or_from_a_bound(monkeypatch, read_above):
    """A launch sized from the frontier's arc count read back (read_above 0) or from a bound far above it, the
    output copied out of its larger buffer: the same vertices, labels and components as the NumPy twins."""
    from mgraph.ops import cupy_ops
    monkeypatch.setattr(cupy_ops, "READ_ABOVE", read_above)
    monkeypatch.setattr(cupy_ops, "SLACK", 0)
    g, d = both(random_graph(11, n=20000, m=120000))
    for size in (1, 15000):
        frontier = np.random.default_rng(size).choice(g.num_vertices, size, replace=False).astype(g.indices.dtype)
        label = np.full(g.num_vertices, -1, dtype=np.int32)
        label[frontier] = 0
        pred = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
        dl, dp = cp.asarray(label), cp.asarray(pred)
        new_h = numpy_ops.advance_visit(g, frontier, label, pred, 1)
        new_d = ops.advance_visit(d, cp.asarray(frontier), dl, dp, 1)
        assert new_d.base is None or new_d.base.shape == new_d.shape  # its own buffer, not the bound-sized one
        np.testing.assert_array_equal(np.sort(h(new_d)), np.sort(new_h))
        np.testing.assert_array_equal(h(dl), label)
        check_preds(g, h(new_d), h(dl), h(dp), 1, frontier)
    parent = np.arange(g.num_vertices, dtype=np.int64)  # every vertex's arcs (no frontier)
    dparent = cp.asarray(parent)
    numpy_ops.hook_components(g, parent)
    numpy_ops.compress(parent)
    ops.hook_components(d, dparent)
    ops.compress(dparent)
    np.testing.assert_array_equal(h(dparent), parent)


def test_advance_visit_pull_is_exact(graphs):
    g, d = graphs
    frontier, label = frontier_state(g, 3)
    pred = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
    bits_h = numpy_ops.bitmap(frontier, g.num_vertices)
    bits_d = ops.bitmap(cp.asarray(frontier), g.num_vertices)
    assert np.array_equal(h(bits_d), bits_h)
    dl, dp = cp.asarray(label), cp.asarray(pred)
    new_h = numpy_ops.advance_visit_pull(g.reverse(), label, pred, 3, bits_h)
    new_d = ops.advance_visit_pull(d.reverse(), dl, dp, 3, bits_d)
    assert np.array_equal(np.sort(h(new_d)), new_h) and new_h.size > 0
    # early exit takes the first in-neighbour in CSC order on both
    assert np.array_equal(h(dl), label) and np.array_equal(h(dp), pred)


def test_bit_test(graphs):
    g, _ = graphs
    frontier, _ = frontier_state(g, 4)
    ids = np.arange(g.num_vertices)
    bits = numpy_ops.bitmap(frontier, g.num_vertices)
    assert np.array_equal(h(ops.bit_test(cp.asarray(bits), cp.asarray(ids))), numpy_ops.bit_test(bits, ids))


def test_advance_relax(graphs):
    g, d = graphs
    rng = np.random.default_rng(5)
    dist = np.where(rng.random(g.num_vertices) < 0.5, np.inf, rng.integers(0, 30, g.num_vertices).astype(float))
    frontier = np.flatnonzero(np.isfinite(dist))[::3].astype(g.indices.dtype)
    # the GPU relaxes asynchronously (a frontier vertex improved mid-step pushes its new value);
    # frontier distances that cannot improve make one step's outcome unique
    dist[frontier] = 0.0
    marks = np.zeros(g.num_vertices, dtype=np.int32)
    dd, dm = cp.asarray(dist), cp.asarray(marks)
    new_h = numpy_ops.advance_relax(g, frontier, dist, marks, 7)
    new_d = ops.advance_relax(d, cp.asarray(frontier), dd, dm, 7)
    assert new_h.size > 0
    assert np.array_equal(h(dd), dist)
    assert np.array_equal(np.sort(h(new_d)), new_h)
    assert np.array_equal(h(dm), marks)


def test_brandes_steps(graphs):
    g, d = graphs
    frontier, label = frontier_state(g, 6)
    rng = np.random.default_rng(6)
    sigma = rng.integers(1, 5, g.num_vertices).astype(np.float64)
    dl, ds = cp.asarray(label), cp.asarray(sigma)
    new_h = numpy_ops.advance_count_paths(g, frontier, label, sigma, 3)
    new_d = ops.advance_count_paths(d, cp.asarray(frontier), dl, ds, 3)
    assert np.array_equal(np.sort(h(new_d)), new_h) and new_h.size > 0
    assert np.array_equal(h(dl), label)
    np.testing.assert_allclose(h(ds), sigma, rtol=1e-12)
    delta = rng.random(g.num_vertices)
    dd = cp.asarray(delta)
    numpy_ops.advance_dependency(g, frontier, label, sigma, delta, 2)
    ops.advance_dependency(d, cp.asarray(frontier), cp.asarray(label), cp.asarray(sigma), dd, 2)
    np.testing.assert_allclose(h(dd), delta, rtol=1e-12)


def test_pull_sum(graphs):
    g, d = graphs
    x = np.random.default_rng(7).random(g.num_vertices)
    np.testing.assert_allclose(h(ops.pull_sum(d.reverse(), cp.asarray(x))), numpy_ops.pull_sum(g.reverse(), x),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weighted", [False, True])
def test_pull_sum_over_heavy_rows_is_exact(weighted):
    """Rows longer than HEAVY_ROW are summed in pieces: rows just below, at and above it, one of many pieces and
    a last piece cut short, all on rows below arc_rows (a part's own; the rest hold no arcs)."""
    from mgraph.ops.cupy_ops import HEAVY_ROW
    rng = np.random.default_rng(11)
    n, k = 200_000, 150_000
    lengths = [HEAVY_ROW - 1, HEAVY_ROW, HEAVY_ROW + 1, 3 * HEAVY_ROW + 17, 40 * HEAVY_ROW]
    heavy = [1 + 7 * i for i in range(len(lengths))]  # distinct columns, so each row keeps its length
    rows = np.concatenate([np.full(d, r) for r, d in zip(heavy, lengths)] + [rng.integers(100, k, 300_000)])
    cols = np.concatenate([rng.choice(n, d, replace=False) for d in lengths] + [rng.integers(0, n, 300_000)])
    w = rng.random(rows.size) if weighted else None
    rg = Graph.from_edges(rows, cols, w, num_vertices=n, directed=True)
    d = rg.to("cupy")
    d.arc_rows = k
    # integers as values: every partial sum is exact in float64, whatever the order
    x = rng.integers(0, 1 << 20, n).astype(np.float64) if not weighted else rng.random(n)
    assert (np.diff(rg.indptr)[heavy] == lengths).all() and not np.diff(rg.indptr)[k:].any()
    got, want = h(ops.pull_sum(d, cp.asarray(x))), numpy_ops.pull_sum(rg, x)
    if weighted:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, h(ops.pull_sum(d, cp.asarray(x))))  # the same order every run


@pytest.mark.parametrize("weighted", [False, True])
def test_pull_sum_layouts_add_the_same_terms(weighted, monkeypatch):
    """Hot-first column ids (each row sorted by them) change where x is read and the order a row adds its terms
    in, not what is added: the same sums to rounding with and without them, for every number of lanes per row;
    and each gives the NumPy twin's sums (tests/test_gpu_pull.py checks the layout itself)."""
    from mgraph.ops import cupy_ops
    g = mgraph.load("rmat:17", backend="numpy", weights=(1, 64) if weighted else None)
    assert cupy_ops._hot_columns(g.to("cupy")) is not None  # large enough for the relabelled layout
    x = np.random.default_rng(3).random(g.num_vertices)
    want = numpy_ops.pull_sum(g, x)
    plain = cupy_ops._hot_columns
    for lanes in range(1, 6):
        monkeypatch.setattr(cupy_ops, "_pull_lanes", lambda rg, lanes=lanes: lanes)
        got = []
        for hot in (plain, lambda rg: None):
            monkeypatch.setattr(cupy_ops, "_hot_columns", hot)
            d = g.to("cupy")
            d = Graph(d.indptr, d.indices, d.weights, directed=d.directed)  # a new graph: its layout is built anew
            got.append(h(ops.pull_sum(d, cp.asarray(x))))
        np.testing.assert_allclose(got[0], got[1], rtol=1e-12, atol=0)
        np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("pairs_below", [None, 1000, "n"])
def test_hook_and_compress(graphs, pairs_below):
    """Arcs between two vertices below pairs_below hooked only from the smaller end; the rest all."""
    g, d = graphs
    below = g.num_vertices if pairs_below == "n" else pairs_below
    parent = np.arange(g.num_vertices, dtype=np.int64)
    dp = cp.asarray(parent)
    numpy_ops.hook_components(g, parent, below)
    numpy_ops.compress(parent)
    ops.hook_components(d, dp, below)
    ops.compress(dp)
    assert np.array_equal(h(dp), parent)


@pytest.mark.parametrize("spec", GRAPHS[:2])
def test_primitives_on_gpu_match_cpu(spec):
    g = random_graph(11, n=5000, m=40000, **spec)
    src = int(np.argmax(np.diff(g.indptr)))
    for direction in ("push", "pull", "auto"):
        a, b = mgraph.bfs(g, src, direction=direction, backend="numpy"), mgraph.bfs(g, src, direction=direction, backend="cupy")
        assert np.array_equal(a.depth, b.depth)
        assert isinstance(b.predecessor, np.ndarray) and b.predecessor.dtype == np.int64
    a, b = mgraph.sssp(g, src, backend="numpy"), mgraph.sssp(g, src, backend="cupy")
    assert np.array_equal(a.distance, b.distance)
    from mgraph.check.validate import validate_sssp

    validate_sssp(g, src, b.distance, b.predecessor)
    assert np.array_equal(mgraph.connected_components(g, backend="cupy").labels,
                          mgraph.connected_components(g, backend="numpy").labels)
    np.testing.assert_allclose(mgraph.pagerank(g, backend="cupy").rank, mgraph.pagerank(g, backend="numpy").rank,
                               rtol=1e-10)
    sources = [src, 1, 2]
    np.testing.assert_allclose(mgraph.betweenness_centrality(g, sources=sources, backend="cupy").centrality,
                               mgraph.betweenness_centrality(g, sources=sources, backend="numpy").centrality,
                               rtol=1e-9)


def test_auto_backend_picks_gpu():
    g = random_graph(12, n=100, m=300)
    assert mgraph.bfs(g, 0).stats["backend"] == "cupy"


def test_components_on_rmat_repeatedly():
    """Deep union-find trees on a skewed graph: races in hooking or compression show up as a stray label."""
    from mgraph.io import generators
    from mgraph.check.validate import reference_components

    g = generators.rmat(16, xp=cp, seed=3)
    expected = reference_components(g)
    for _ in range(10):
        assert np.array_equal(mgraph.connected_components(g, backend="cupy").labels, expected)


# ---- the public operators with a user's functor, neighbour-reduce and intersection -----------------------------

def _weigh_twin(u, v, w, sums, hits):
    np.add.at(sums, v, 1.0 if w is None else w)
    np.add.at(hits, v, 1)
    return None


WEIGH = ops.Functor("weigh_gpu", "double* sums, unsigned long long* hits",
                    "atomicAdd(&sums[v], w); atomicAdd(&hits[v], 1ull);", _weigh_twin, emits=False)


def test_a_users_functor_matches_its_twin(graphs):
    g, d = graphs
    frontier, label = frontier_state(g, 4)
    dl = cp.asarray(label)
    new_h = ops.advance(g, frontier, REACH, label, 3)
    new_d = ops.advance(d, cp.asarray(frontier), REACH, dl, 3)
    np.testing.assert_array_equal(np.sort(h(new_d)), new_h)
    np.testing.assert_array_equal(h(dl), label)
    sums, hits = np.zeros(g.num_vertices), np.zeros(g.num_vertices, dtype=np.uint64)
    dsums, dhits = cp.asarray(sums), cp.asarray(hits)
    assert ops.advance(g, None, WEIGH, sums, hits) is None
    assert ops.advance(d, None, WEIGH, dsums, dhits) is None
    np.testing.assert_allclose(h(dsums), sums)
    np.testing.assert_array_equal(h(dhits), hits)


@pytest.mark.parametrize("op", ["sum", "min", "max", "mode", "mex"])
def test_neighbor_reduce_matches_its_twin(graphs, op):
    g, d = graphs
    rng = np.random.default_rng(8)
    values = rng.integers(-3, 12, g.num_vertices).astype(np.int64)
    rows = rng.choice(g.num_vertices, g.num_vertices // 3, replace=False).astype(np.int64)
    kw = dict(prefer=values[::-1].copy()) if op == "mode" else dict(empty=-5) if op in ("min", "max") else {}
    dkw = {k: cp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    for listed in (None, rows):
        want = ops.neighbor_reduce(g, values, op, listed, **kw)
        got = ops.neighbor_reduce(d, cp.asarray(values), op, None if listed is None else cp.asarray(listed), **dkw)
        np.testing.assert_array_equal(h(got), want)
    if op == "sum":
        x = rng.random(g.num_vertices)
        np.testing.assert_allclose(h(ops.neighbor_reduce(d, cp.asarray(x), "sum", weighted=True)),
                                   ops.neighbor_reduce(g, x, "sum", weighted=True), rtol=1e-12)


def test_intersect_count_matches_its_twin(graphs):
    g, d = graphs
    src, dst = ops.arcs(g)
    dsrc, ddst = ops.arcs(d)
    np.testing.assert_array_equal(h(dsrc), src)
    np.testing.assert_array_equal(h(ddst), dst)
    np.testing.assert_array_equal(h(ops.intersect_count(d, dsrc, ddst)), ops.intersect_count(g, src, dst))


@pytest.mark.parametrize("devices", [1, [0, 0, 0]])
def test_triangles_cores_and_communities_on_the_gpu_match_the_cpu(devices):
    g = mgraph.load("rmat:12", backend="numpy")
    for call, key in ((mgraph.triangles, "triangles"), (mgraph.core_number, "core"),
                      (mgraph.label_propagation, "labels")):
        np.testing.assert_array_equal(getattr(call(g, devices=devices, backend="cupy"), key),
                                      getattr(call(g, backend="numpy"), key))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
@pytest.mark.parametrize("n", [0, 1, 1000, (1 << 20) + 3])
def test_unvisited_is_minus_one_everywhere(dtype, n):
    g = Graph.from_edges([], [], num_vertices=n, directed=True).to("cupy")
    a = ops.unvisited(g, dtype)
    assert isinstance(a, cp.ndarray) and a.dtype == dtype and a.shape == (n,)
    assert cp.asnumpy(a).tolist() == numpy_ops.unvisited(n, dtype).tolist() == [-1] * n


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
@pytest.mark.parametrize("n", [1, 31, 1025, (1 << 18), (1 << 18) + 1, 3_000_000])
def test_id_range_is_the_numpy_twins(dtype, n):
    """One block up to RANGE_ONE_BLOCK ids of the kernels' id types, library reductions above it and for others."""
    rng = np.random.default_rng(n)
    hi = np.iinfo(dtype).max if np.dtype(dtype).itemsize < 4 else 1 << 40 if dtype == np.int64 else 1 << 30
    lo = np.iinfo(dtype).min if np.dtype(dtype).kind == "i" else 0
    ids = rng.integers(max(lo, -hi), hi, size=n).astype(dtype)
    want = numpy_ops.id_range(ids)
    assert ops.id_range(cp.asarray(ids)) == want == (int(ids.min()), int(ids.max()))
    assert ops.id_range(cp.asarray(ids[:1])) == (int(ids[0]), int(ids[0]))


@pytest.mark.parametrize("listed", ["hubs", "repeated", "all"])
def test_dependency_on_hubs_repeated_entries_and_every_vertex(listed):
    """Brandes' backward step against its NumPy twin on rows of 100,000 arcs (hubs, whose arcs share one row's
    atomics), a frontier that lists a vertex twice (each entry counts, as np.add.at does) and every vertex (None)."""
    rng = np.random.default_rng(11)
    n, hubs = 200_000, np.array([3, 17, 150_001])
    src = np.concatenate([np.repeat(hubs, 100_000), rng.integers(0, n, 300_000)])
    dst = np.concatenate([rng.integers(0, n, 300_000), rng.integers(0, n, 300_000)])
    g = Graph.from_edges(src, dst, num_vertices=n, directed=True)
    d = g.to("cupy")
    # successors (level 2) are the sinks: no vertex's delta is both added to and read in the one step, as in BC,
    # where the frontier is one level and the successors the next
    label = np.where(np.diff(g.indptr) == 0, 2, 1).astype(np.int32)
    sigma = rng.integers(1, 9, n).astype(np.float64)
    delta = rng.random(n)
    frontier = {"hubs": hubs, "repeated": np.concatenate([hubs, hubs[:1], rng.integers(0, n, 5000), hubs[:1]]),
                "all": None}[listed]
    if frontier is not None:
        frontier = frontier.astype(g.indices.dtype)
    dd = cp.asarray(delta)
    numpy_ops.advance_dependency(g, frontier, label, sigma, delta, 1)
    ops.advance_dependency(d, None if frontier is None else cp.asarray(frontier), cp.asarray(label),
                           cp.asarray(sigma), dd, 1)
    np.testing.assert_allclose(h(dd), delta, rtol=1e-11)


@pytest.mark.parametrize("weighted", [False, True])
def test_large_advances_search_their_tiles_first(weighted, monkeypatch):
    """Advances of more than STARTS_ABOVE tiles take each tile's first frontier entry from tile_starts: the same
    results as the in-kernel searches (STARTS_ABOVE raised past them) and as the NumPy twins, with frontiers whose
    vertices have no arcs among them."""
    from mgraph.ops import cupy_ops

    g = mgraph.load("rmat:17", backend="numpy", weights=(1, 64) if weighted else None)
    d = g.to("cupy")
    rng = np.random.default_rng(3)
    frontier = np.unique(np.concatenate([rng.integers(0, g.num_vertices, 60_000),
                                         np.flatnonzero(np.diff(g.indptr) == 0)[:5000]])).astype(g.indices.dtype)
    tiles = -(-int(np.diff(g.indptr)[frontier].sum()) // (cupy_ops.BLOCK * cupy_kernels.ITEMS))
    assert tiles > 64
    outs = []
    for above in (64, 1 << 40):  # tile_starts, then the in-kernel searches
        monkeypatch.setattr(cupy_ops, "STARTS_ABOVE", above)
        label = cp.full(g.num_vertices, -1, dtype=np.int32)
        pred = cp.full(g.num_vertices, -1, dtype=g.indices.dtype)
        new = ops.advance_visit(d, cp.asarray(frontier), label, pred, 1)
        label[cp.asarray(frontier)] = 0  # level 0: no successor's delta changes while the step reads it
        sigma = cp.ones(g.num_vertices, dtype=np.float64)
        delta = cp.zeros(g.num_vertices, dtype=np.float64)
        ops.advance_dependency(d, cp.asarray(frontier), label, sigma, delta, 0)
        outs.append((np.sort(h(new)), h(label), h(delta)))
    label = np.full(g.num_vertices, -1, dtype=np.int32)
    pred = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
    want = numpy_ops.advance_visit(g, frontier, label, pred, 1)
    label[frontier] = 0
    delta = np.zeros(g.num_vertices)
    numpy_ops.advance_dependency(g, frontier, label, np.ones(g.num_vertices), delta, 0)
    for new, lab, dl in outs:
        assert np.array_equal(new, np.sort(want)) and np.array_equal(lab, label)
        np.testing.assert_allclose(dl, delta, rtol=1e-12)


@pytest.mark.parametrize("emit", [True, False])
@pytest.mark.parametrize("lowered", [False, True, "unchanged", "few"])
def test_tree_spread_matches_numpy_twin(lowered, emit):
    rng = np.random.default_rng(6)
    n = 200_000
    roots = rng.choice(n, 300, replace=False)
    parent = roots[rng.zipf(1.5, n) % 300].astype(np.int64)  # one giant tree, as R-MAT's
    parent[roots] = roots
    label = rng.permutation(n).astype(np.int64)
    tree_min = label.copy()
    numpy_ops.tree_spread(parent, label, tree_min, None, np.int32, False)  # every tree uniform, as after the first spread
    ids = None
    if lowered == "few":  # a few small trees lowered, the giant tree not
        giant = np.bincount(parent).argmax()
        ids = rng.choice(np.flatnonzero(parent != giant), 20, replace=False).astype(np.int32)
        label[ids] -= rng.integers(1, n, 20)
    elif lowered:
        ids = rng.choice(n, 5000, replace=False).astype(np.int32)
        if lowered != "unchanged":  # else the labels given are their trees' minima: the second pass has nothing
            label[ids] -= rng.integers(1, n, 5000)
    d_parent, d_label, d_min = cp.asarray(parent), cp.asarray(label), cp.asarray(tree_min)
    want = numpy_ops.tree_spread(parent, label, tree_min, ids, np.int32, emit)
    got = cupy_ops_tree_spread(d_parent, d_label, d_min, None if ids is None else cp.asarray(ids), emit)
    np.testing.assert_array_equal(np.sort(cp.asnumpy(got)), want)
    np.testing.assert_array_equal(cp.asnumpy(d_label), label)
    np.testing.assert_array_equal(cp.asnumpy(d_min), tree_min)
    # a second spread of every vertex changes nothing; lowered labels change their trees' other vertices
    assert (want.shape[0] == 0) == (lowered not in (True, "few") or not emit)


def cupy_ops_tree_spread(parent, label, tree_min, ids, emit=True):
    from mgraph.ops import cupy_ops

    return cupy_ops.tree_spread(parent, label, tree_min, ids, np.int32, emit)


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_start_at_matches_numpy_twin(id_dtype):
    base = Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 3]), num_vertices=300)
    g = Graph(base.indptr, base.indices.astype(id_dtype), directed=False)
    gg = g.to("cupy")
    arrays = [(np.int32, 0), (id_dtype, 77), (np.float64, 1.25), (np.uint8, 3)]
    host = [np.full(300, -1 if np.dtype(t).kind != "u" else 0, dtype=t) for t, _ in arrays]
    dev = [cp.asarray(a) for a in host]
    want = ops.start_at(g, 77, *[(a, v) for a, (_, v) in zip(host, arrays)])
    got = ops.start_at(gg, 77, *[(a, v) for a, (_, v) in zip(dev, arrays)])
    assert got.dtype == want.dtype == np.dtype(id_dtype) and cp.asnumpy(got).tolist() == want.tolist() == [77]
    for a, b in zip(dev, host):
        np.testing.assert_array_equal(cp.asnumpy(a), b)
    assert ops.start_at(gg, None, (dev[0], 5)).shape == (0,)

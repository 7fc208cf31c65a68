"""Generators: splittable edge lists (any split gives the same edges), sizes, seeds, structure (grid against
networkx), the R-MAT scramble, skew and quadrant odds, specs and their limits, NumPy/CuPy bit-identity.
Random geometric graphs have their own file, tests/test_rgg.py."""
import pickle

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

from mgraph.io import generators as gen
from mgraph.backend import gpu_available, to_numpy
from mgraph.graph import Graph


def edge_set(g):
    src, dst, _ = g.edges()
    return set(zip(src.tolist(), dst.tolist()))


def splits(m, parts, seed):
    """``parts`` uneven ranges covering [0, m), some of them empty."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, m + 1, parts - 1)).tolist()
    if parts > 2:
        cuts[1] = cuts[0]  # an empty range in the middle
    bounds = [0, *cuts, m]
    return list(zip(bounds[:-1], bounds[1:]))


def assert_same_edges(a, b):
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            assert x.dtype == y.dtype and np.array_equal(x, y)


SPLITTABLE = {
    "rmat_w": lambda **kw: gen.rmat_edges(9, 8, seed=3, weights=(1, 64), **kw),
    "rmat": lambda **kw: gen.rmat_edges(7, seed=11, **kw),
    "grid_w": lambda **kw: gen.grid_edges(13, 9, seed=2, weights=(0, 5), **kw),
    "grid": lambda **kw: gen.grid_edges(1, 17, **kw),
    "er_w": lambda **kw: gen.erdos_renyi_edges(300, 2000, seed=4, weights=(2, 7), **kw),
}


# -- any split gives the same list -------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPLITTABLE))
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_any_split_gives_the_whole_list(name, parts):
    make = SPLITTABLE[name]
    whole = make()
    m = whole[0].size
    pieces = [make(start=a, stop=b) for a, b in splits(m, parts, seed=parts)]
    assert sum(p[0].size for p in pieces) == m
    joined = [np.concatenate([p[i] for p in pieces]) if whole[i] is not None else None for i in range(3)]
    assert_same_edges(joined, whole)
    assert_same_edges(make(start=0, stop=m), whole)
    empty = make(start=m, stop=m)
    assert empty[0].size == empty[1].size == 0 and empty[0].dtype == np.int64


@pytest.mark.parametrize("name", sorted(SPLITTABLE))
def test_block_size_does_not_change_the_edges(name, monkeypatch):
    whole = SPLITTABLE[name]()
    stop = min(200, whole[0].size)
    monkeypatch.setattr(gen, "_block_size", lambda xp: 37)
    assert_same_edges(SPLITTABLE[name](), whole)
    assert_same_edges(SPLITTABLE[name](start=5, stop=stop), [x if x is None else x[5:stop] for x in whole])


def test_a_range_of_a_huge_graph_costs_only_its_length():
    # Neither O(m) nor O(n): the last ten edges of a scale-40 R-MAT (2**44 edges) are drawn alone.
    m = 16 << 40
    src, dst, w = gen.rmat_edges(40, start=m - 10, stop=m, weights=(1, 64))
    assert src.size == dst.size == w.size == 10
    assert 0 <= src.min() and max(src.max(), dst.max()) < 1 << 40
    assert src.max() > 1 << 30  # ids spread over the whole range
    side = 1 << 20
    gsrc, gdst, _ = gen.grid_edges(side, side, start=2 * side * (side - 1) - 3)
    assert (gdst - gsrc).tolist() == [side] * 3 and gdst.max() == side * side - 1
    esrc, edst, _ = gen.erdos_renyi_edges(1 << 40, 1 << 48, start=(1 << 48) - 4)
    assert esrc.size == 4 and 0 <= min(esrc.min(), edst.min()) and max(esrc.max(), edst.max()) < 1 << 40


@pytest.mark.parametrize("start, stop", [(-1, 5), (5, 4), (0, 16 * 16 + 1), (1.5, 3), (0, "7")])
def test_bad_ranges_are_value_errors(start, stop):
    with pytest.raises(ValueError, match="start|stop|range"):
        gen.rmat_edges(4, start=start, stop=stop)


# -- R-MAT -----------------------------------------------------------------------------


def test_rmat_sizes_and_simple_undirected():
    g = gen.rmat(10)
    assert g.num_vertices == 1024 and not g.directed and not g.is_weighted
    assert g.num_input_edges == 16 * 1024
    assert 0 < g.num_edges < 16 * 1024
    a = g.to_scipy()
    assert (a != a.T).nnz == 0 and a.diagonal().sum() == 0
    assert gen.rmat(8, 4).num_input_edges == 4 * 256


def test_rmat_edges_shape_range_and_seed():
    src, dst, w = gen.rmat_edges(9, 8, seed=5)
    assert src.shape == dst.shape == (8 * 512,) and w is None
    assert src.dtype == dst.dtype == np.int64
    assert 0 <= min(src.min(), dst.min()) and max(src.max(), dst.max()) < 512
    again = gen.rmat_edges(9, 8, seed=5)
    other = gen.rmat_edges(9, 8, seed=6)
    assert np.array_equal(src, again[0]) and np.array_equal(dst, again[1])
    assert np.mean(src == other[0]) < 0.05 and np.mean(dst == other[1]) < 0.05


def test_rmat_graph_is_built_from_its_edge_list():
    src, dst, w = gen.rmat_edges(8, seed=2, weights=(1, 9))
    direct = Graph.from_edges(src, dst, w, num_vertices=256)
    g = gen.rmat(8, seed=2, weights=(1, 9))
    assert np.array_equal(g.indptr, direct.indptr) and np.array_equal(g.indices, direct.indices)
    assert np.array_equal(g.weights, direct.weights)


@pytest.mark.parametrize("scale", range(1, 13))
def test_scramble_is_a_bijection(scale):
    for seed in (0, 1, 12345):
        v = np.arange(1 << scale, dtype=np.uint64)
        out = gen._scramble(np, v.copy(), scale, seed)
        assert out.dtype == np.uint64
        assert np.array_equal(np.sort(out), v)
        if scale >= 4:
            assert not np.array_equal(out, v)


def test_scramble_depends_on_the_seed_and_moves_the_hub():
    v = np.arange(1 << 12, dtype=np.uint64)
    a, b = gen._scramble(np, v.copy(), 12, 0), gen._scramble(np, v.copy(), 12, 1)
    assert np.mean(a == b) < 0.01
    # Unscrambled, low ids carry the high degrees (vertex 0 takes quadrant A at every level); scrambled, not.
    scale, m = 12, 16 << 12
    raw = gen._rmat_raw(np, scale, 0, m, 0, (gen.RMAT_A, gen.RMAT_B, gen.RMAT_C), None, scramble=False)
    final = gen.rmat_edges(scale)
    for (src, dst, _), tied in ((raw, True), (final, False)):
        deg = np.bincount(np.concatenate([src, dst]), minlength=1 << scale)
        low = deg[: (1 << scale) // 16].mean() / deg.mean()
        assert (low > 4) == tied, low
        assert (int(np.argmax(deg)) == 0) == tied


def test_rmat_quadrant_odds_before_scrambling():
    # m = 2**16 edges: the standard error of a quadrant's fraction is at most 0.002; allow 4 of them.
    scale, m = 10, 1 << 16
    abc = (gen.RMAT_A, gen.RMAT_B, gen.RMAT_C)
    src, dst, _ = gen._rmat_raw(np, scale, 0, m, 7, abc, None, scramble=False)
    expected = [gen.RMAT_A, gen.RMAT_B, gen.RMAT_C, 1 - sum(abc)]
    for bit in (scale - 1, 0, 5):  # the top level, the bottom one, one between
        row, col = (src >> bit) & 1, (dst >> bit) & 1
        got = [np.mean((row == r) & (col == c)) for r, c in ((0, 0), (0, 1), (1, 0), (1, 1))]
        se = np.sqrt(np.array(expected) * (1 - np.array(expected)) / m)
        assert np.all(np.abs(np.array(got) - expected) < 4 * se), (bit, got)
    # other initiators are honoured too
    src, dst, _ = gen._rmat_raw(np, 3, 0, m, 7, (0.25, 0.25, 0.25), None, scramble=False)
    assert abs(np.mean(((src >> 2) & 1) == 0) - 0.5) < 0.01 and abs(np.mean(((dst >> 2) & 1) == 0) - 0.5) < 0.01


def test_rmat_quadrant_odds_match_graph500():
    # At scale 1 an edge is a self-loop exactly in quadrants A and D, whatever the vertex relabelling.
    src, dst, _ = gen.rmat_edges(1, 50_000, seed=1)
    loops = np.mean(src == dst)
    assert abs(loops - (gen.RMAT_A + 1 - gen.RMAT_A - gen.RMAT_B - gen.RMAT_C)) < 0.01


def test_rmat_degrees_are_skewed_unlike_erdos_renyi():
    r = gen.rmat(14)
    rd = np.diff(r.indptr)
    assert rd.max() > 50 * rd.mean()
    e = gen.erdos_renyi(r.num_vertices, r.num_input_edges)
    ed = np.diff(e.indptr)
    assert rd.max() > 10 * ed.max()
    assert np.mean(rd == 0) > 0.1 > np.mean(ed == 0)  # many isolated vertices: a power-law signature


def test_rmat_weights_are_integers_in_range_and_seeded():
    src, dst, w = gen.rmat_edges(8, weights=(3, 10), seed=4)
    assert w.dtype == np.float64 and np.array_equal(w, np.round(w))
    assert w.min() == 3 and w.max() == 10  # both ends hit
    counts = np.bincount(w.astype(np.int64) - 3)
    assert counts.min() > 0.8 * w.size / 8  # roughly uniform
    assert np.array_equal(w, gen.rmat_edges(8, weights=(3, 10), seed=4)[2])
    assert np.mean(w == gen.rmat_edges(8, weights=(3, 10), seed=5)[2]) < 0.2
    # the weights are their own draw: asking for them leaves the endpoints as they were
    plain = gen.rmat_edges(8, seed=4)
    assert np.array_equal(src, plain[0]) and np.array_equal(dst, plain[1])
    g = gen.rmat(8, weights=(1, 64), seed=4)
    assert g.weights.min() >= 1 and g.weights.max() <= 64
    assert (gen.rmat_edges(6, weights=(5, 5))[2] == 5).all()


@pytest.mark.parametrize("args, kwargs", [((0,), {}), ((4, 0), {}), ((4.5,), {}), ((4,), {"a": 0.9}),
                                          ((4,), {"weights": (5, 1)}), ((41,), {}), ((40, 1 << 9), {}),
                                          ((4,), {"weights": (0, 1 << 60)})])
def test_rmat_rejects_bad_parameters(args, kwargs):
    with pytest.raises(ValueError):
        gen.rmat(*args, **kwargs)
    with pytest.raises(ValueError):
        gen.rmat_edges(*args, start=0, stop=0, **kwargs)


# -- grid, Erdos-Renyi -------------------------------------------------------------------


@pytest.mark.parametrize("w, h", [(7, 4), (1, 1), (1, 6), (6, 1), (2, 2), (10, 3)])
def test_grid_matches_networkx_lattice(w, h):
    g = gen.grid(w, h)
    ref = nx.relabel_nodes(nx.grid_2d_graph(w, h), {(x, y): y * w + x for x in range(w) for y in range(h)})
    assert g.num_vertices == w * h and not g.directed
    assert g.num_edges == g.num_input_edges == (w - 1) * h + w * (h - 1) == ref.number_of_edges()
    assert edge_set(g) == {(min(u, v), max(u, v)) for u, v in ref.edges()}
    src, dst, _ = gen.grid_edges(w, h)
    assert src.size == ref.number_of_edges() and (src < dst).all()  # each edge once, no loops


def test_grid_degrees_and_diameter():
    w, h = 30, 20
    g = gen.grid(w, h)
    deg = np.diff(g.indptr).reshape(h, w)
    assert deg[0, 0] == deg[0, -1] == deg[-1, 0] == deg[-1, -1] == 2
    assert (deg[0, 1:-1] == 3).all() and (deg[1:-1, 0] == 3).all()
    assert (deg[1:-1, 1:-1] == 4).all()
    dist = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=[0])
    assert dist.max() == w + h - 2  # the corner-to-corner diameter of a lattice


def test_grid_edge_order_is_horizontal_then_vertical():
    src, dst, _ = gen.grid_edges(4, 3)
    assert list(zip(src.tolist(), dst.tolist())) == [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (6, 7), (8, 9),
                                                     (9, 10), (10, 11), (0, 4), (1, 5), (2, 6), (3, 7), (4, 8),
                                                     (5, 9), (6, 10), (7, 11)]


def test_grid_degenerate_and_weighted():
    line = gen.grid(5, 1)
    assert line.num_edges == 4 and np.diff(line.indptr).tolist() == [1, 2, 2, 2, 1]
    assert gen.grid(1, 1).num_edges == 0
    weighted = gen.grid(3, 3, weights=(2, 2))
    assert weighted.is_weighted and (weighted.weights == 2).all()
    w1, w2 = gen.grid_edges(20, 20, weights=(1, 4), seed=1)[2], gen.grid_edges(20, 20, weights=(1, 4), seed=2)[2]
    assert set(np.unique(w1).tolist()) == {1.0, 2.0, 3.0, 4.0} and np.mean(w1 == w2) < 0.5


def test_erdos_renyi_sizes_and_seed():
    g = gen.erdos_renyi(1000, 5000, seed=7)
    assert g.num_vertices == 1000 and not g.directed and g.num_input_edges == 5000
    assert 4900 < g.num_edges <= 5000
    assert edge_set(g) == edge_set(gen.erdos_renyi(1000, 5000, seed=7))
    assert edge_set(g) != edge_set(gen.erdos_renyi(1000, 5000, seed=8))
    assert gen.erdos_renyi(10, 0).num_edges == 0
    w = gen.erdos_renyi(100, 300, weights=(1, 3)).weights
    assert set(np.unique(w).tolist()) == {1.0, 2.0, 3.0}


def test_erdos_renyi_endpoints_are_uniform():
    n, m = 1000, 100_000
    src, dst, _ = gen.erdos_renyi_edges(n, m, seed=3)
    assert src.size == dst.size == m and src.dtype == np.int64
    assert 0 <= min(src.min(), dst.min()) and max(src.max(), dst.max()) == n - 1
    deg = np.bincount(np.concatenate([src, dst]), minlength=n)  # each ~ Binomial(2m, 1/n): mean 200, sd 14
    assert 120 < deg.min() and deg.max() < 280
    chi2 = ((deg - 2 * m / n) ** 2 / (2 * m / n)).sum()  # n - 1 = 999 degrees of freedom: sd about 45
    assert 800 < chi2 < 1200
    assert abs(np.corrcoef(src, dst)[0, 1]) < 0.02  # the endpoints are independent draws


def test_er_rejects_bad_parameters():
    for args in ((0, 5), (10, -1), (2 ** 40 + 1, 5), (10, 2 ** 48 + 1)):
        with pytest.raises(ValueError):
            gen.erdos_renyi_edges(*args)


# -- specs -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, vertices, input_edges", [
    ("rmat:8", 256, 16 * 256), ("rmat:8:4", 256, 4 * 256), ("RMAT:6", 64, 16 * 64),
    ("grid:5x7", 35, 4 * 7 + 5 * 6), ("er:100:300", 100, 300),
])
def test_from_spec(spec, vertices, input_edges):
    g = gen.from_spec(spec)
    assert (g.num_vertices, g.num_input_edges) == (vertices, input_edges)
    assert gen.is_spec(spec)


@pytest.mark.parametrize("spec, vertices, edges", [
    ("rmat:8", 256, 16 * 256), ("rmat:8:4", 256, 4 * 256), ("RMAT:6", 64, 16 * 64), ("rmat:40", 1 << 40, 16 << 40),
    ("grid:5x7", 35, 4 * 7 + 5 * 6), ("grid:1x1", 1, 0), ("grid:100000x100000", 10 ** 10, 2 * 10 ** 10 - 2 * 10 ** 5),
    ("er:100:300", 100, 300), ("er:1000000000000:7", 10 ** 12, 7),
])
def test_spec_edges_sizes(spec, vertices, edges):
    es = gen.spec_edges(spec)
    assert (es.num_vertices, es.num_edges) == (vertices, edges)
    assert not es.directed and not es.weighted and es.name == spec
    assert gen.spec_edges(spec, weights=(1, 64)).weighted
    src, dst, w = es.edges(max(edges - 5, 0), edges)
    assert src.size == min(edges, 5) and w is None
    if src.size:
        assert 0 <= min(src.min(), dst.min()) and max(src.max(), dst.max()) < vertices


@pytest.mark.parametrize("spec, make", [
    ("rmat:9:4", lambda **kw: gen.rmat_edges(9, 4, **kw)),
    ("grid:11x6", lambda **kw: gen.grid_edges(11, 6, **kw)),
    ("er:500:3000", lambda **kw: gen.erdos_renyi_edges(500, 3000, **kw)),
    ("rgg:10:0.08", lambda **kw: gen.rgg_edges(10, 0.08, **kw)),
])
def test_spec_edges_draw_the_generators_edges_in_any_split(spec, make):
    es = gen.spec_edges(spec, seed=9, weights=(1, 64))
    es = pickle.loads(pickle.dumps(es))  # what a rank receives
    whole = make(seed=9, weights=(1, 64))
    assert_same_edges(es.edges(0, es.num_edges), whole)
    for parts in (2, 5):
        pieces = [es.edges(a, b) for a, b in splits(es.num_edges, parts, seed=parts)]
        assert_same_edges([np.concatenate([p[i] for p in pieces]) for i in range(3)], whole)
    g = gen.from_spec(spec, seed=9, weights=(1, 64))
    direct = Graph.from_edges(*whole, num_vertices=es.num_vertices)
    assert np.array_equal(g.indices, direct.indices) and np.array_equal(g.weights, direct.weights)
    with pytest.raises(ValueError):
        es.edges(0, es.num_edges + 1)


def test_from_spec_is_seeded_and_weighted():
    a, b = gen.from_spec("er:50:100", seed=1), gen.from_spec("er:50:100", seed=1)
    assert edge_set(a) == edge_set(b)
    assert edge_set(a) != edge_set(gen.from_spec("er:50:100", seed=2))
    assert gen.from_spec("rmat:5", weights=(1, 64)).is_weighted


BAD_SPECS = ["rmat", "rmat:", "rmat:x", "rmat:0", "rmat:8:0", "rmat:8:4:2", "grid:5", "grid:0x5", "grid:5x",
             "er:10", "er:0:5", "er:10:-1", "foo:1", "", "rmat:1e3", "rgg", "rgg:", "rgg:0", "rgg:8:0", "rgg:8:-1",
             "rgg:8:x", "rgg:8:1:2"]
HUGE_SPECS = {"rmat:41": "MAX_SCALE", "rmat:45": "MAX_SCALE", "rmat:40:512": "MAX_EDGES",
              "grid:2000000x1000000": "MAX_VERTICES", "er:2000000000000:5": "MAX_VERTICES",
              f"er:10:{2 ** 48 + 1}": "MAX_EDGES", "rgg:31": "MAX_RGG_SCALE", "rgg:30:2": "MAX_EDGES"}


@pytest.mark.parametrize("spec", BAD_SPECS + sorted(HUGE_SPECS))
def test_bad_specs_are_one_line_value_errors(spec):
    for make in (gen.from_spec, gen.spec_edges):
        with pytest.raises(ValueError) as err:
            make(spec)
        msg = str(err.value)
        assert f"bad graph spec {spec!r}" in msg and "\n" not in msg
        if spec in HUGE_SPECS:
            assert HUGE_SPECS[spec] in msg
    with pytest.raises(ValueError, match="bad graph spec 'rmat:5'.*lo <= hi"):
        gen.spec_edges("rmat:5", weights=(3, 1))


def test_is_spec_recognises_only_generator_prefixes():
    assert gen.is_spec("grid:bad") and not gen.is_spec("graph.mtx") and not gen.is_spec("rmat")
    assert gen.is_spec("rgg:16") and gen.is_spec("RGG:16:0.01") and not gen.is_spec("rgg")


# -- GPU ---------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_cupy_and_numpy_draw_bit_identical_edges():
    import cupy

    m = 16 << 20
    cases = [  # ranges crossing the block boundaries of both backends
        (lambda **kw: gen.rmat_edges(20, seed=3, weights=(1, 64), **kw), (m // 2 - 70_000, m // 2 + 70_000)),
        (lambda **kw: gen.rmat_edges(11, 4, seed=1, weights=(0, 9), **kw), (0, None)),
        (lambda **kw: gen.grid_edges(1000, 900, seed=5, weights=(1, 3), **kw), (890_000, 1_010_000)),
        (lambda **kw: gen.grid_edges(9, 5, **kw), (0, None)),
        (lambda **kw: gen.erdos_renyi_edges(10 ** 9, 10 ** 8, seed=2, weights=(1, 64), **kw),
         ((1 << 23) - 5000, (1 << 23) + 70_000)),
    ]
    for make, (start, stop) in cases:
        on_gpu = make(start=start, stop=stop, xp=cupy)
        assert isinstance(on_gpu[0], cupy.ndarray) and on_gpu[0].dtype == np.int64
        on_cpu = make(start=start, stop=stop)
        assert_same_edges([None if x is None else to_numpy(x) for x in on_gpu], on_cpu)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_generators_run_on_cupy():
    import cupy

    r = gen.rmat(14, xp=cupy, seed=3, weights=(1, 64))
    assert r.xp is cupy and r.num_vertices == 1 << 14 and r.num_input_edges == 16 << 14
    deg = to_numpy(r.out_degree())
    assert deg.max() > 20 * deg.mean()
    w = to_numpy(r.weights)
    assert w.min() >= 1 and w.max() <= 64
    cpu = gen.rmat(14, seed=3, weights=(1, 64))
    assert np.array_equal(to_numpy(r.indices), cpu.indices) and np.array_equal(w, cpu.weights)
    src, dst, _ = gen.rmat_edges(1, 50_000, xp=cupy, seed=1)
    assert abs(float(cupy.mean(src == dst)) - 0.62) < 0.01
    g = gen.grid(9, 5, xp=cupy)
    assert np.array_equal(to_numpy(g.indices), gen.grid(9, 5).indices)
    e = gen.erdos_renyi(1000, 5000, xp=cupy, seed=2)
    assert e.xp is cupy and 4900 < e.num_edges <= 5000
    assert edge_set(e) == edge_set(gen.erdos_renyi(1000, 5000, seed=2))

"""Generators: sizes, seeds, structure (grid against networkx), R-MAT skew and quadrant odds, specs."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

from mgraph import generators as gen
from mgraph.backend import gpu_available, to_numpy


def edge_set(g):
    src, dst, _ = g.edges()
    return set(zip(src.tolist(), dst.tolist()))


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
    assert src.dtype == np.int64 and 0 <= min(src.min(), dst.min()) and max(src.max(), dst.max()) < 512
    again = gen.rmat_edges(9, 8, seed=5)
    other = gen.rmat_edges(9, 8, seed=6)
    assert np.array_equal(src, again[0]) and np.array_equal(dst, again[1])
    assert not np.array_equal(src, other[0])


def test_rmat_shuffle_only_reorders_and_graph_matches_the_shuffled_list():
    shuffled = gen.rmat_edges(8, seed=2, weights=(1, 9))
    ordered = gen.rmat_edges(8, seed=2, weights=(1, 9), shuffle=False)
    key = lambda e: sorted(zip(*(x.tolist() for x in e)))  # noqa: E731
    assert key(shuffled) == key(ordered)
    assert not np.array_equal(shuffled[0], ordered[0])
    from mgraph.graph import Graph

    direct = Graph.from_edges(*shuffled[:2], shuffled[2], num_vertices=256)
    g = gen.rmat(8, seed=2, weights=(1, 9))
    assert np.array_equal(g.indptr, direct.indptr) and np.array_equal(g.indices, direct.indices)
    assert np.array_equal(g.weights, direct.weights)


def test_rmat_quadrant_odds_match_graph500():
    # At scale 1 an edge is a self-loop exactly in quadrants A and D, whatever the vertex permutation.
    src, dst, _ = gen.rmat_edges(1, 50_000, seed=1)
    loops = np.mean(src == dst)
    assert abs(loops - (gen.RMAT_A + 1 - gen.RMAT_A - gen.RMAT_B - gen.RMAT_C)) < 0.01


def test_rmat_degrees_are_skewed_unlike_erdos_renyi():
    r = gen.rmat(12)
    e = gen.erdos_renyi(r.num_vertices, r.num_input_edges)
    rd, ed = np.diff(r.indptr), np.diff(e.indptr)
    assert rd.max() > 10 * ed.max()
    assert np.mean(rd == 0) > 0.1 > np.mean(ed == 0)  # many isolated vertices: a power-law signature


def test_rmat_weights_are_integers_in_range_and_seeded():
    g = gen.rmat(8, weights=(1, 64), seed=4)
    w = g.weights
    assert w.min() >= 1 and w.max() <= 64 and np.array_equal(w, np.round(w))
    assert np.array_equal(w, gen.rmat(8, weights=(1, 64), seed=4).weights)


@pytest.mark.parametrize("args, kwargs", [((0,), {}), ((4, 0), {}), ((4.5,), {}), ((4,), {"a": 0.9}),
                                          ((4,), {"weights": (5, 1)})])
def test_rmat_rejects_bad_parameters(args, kwargs):
    with pytest.raises(ValueError):
        gen.rmat(*args, **kwargs)


# -- grid, Erdos-Renyi -------------------------------------------------------------------


def test_grid_matches_networkx_lattice():
    w, h = 7, 4
    g = gen.grid(w, h)
    ref = nx.convert_node_labels_to_integers(nx.grid_2d_graph(h, w), ordering="sorted")  # (y, x) -> y*w + x
    assert g.num_vertices == w * h and not g.directed
    assert g.num_edges == (w - 1) * h + w * (h - 1) == ref.number_of_edges()
    assert edge_set(g) == {(min(u, v), max(u, v)) for u, v in ref.edges()}


def test_grid_degrees_and_diameter():
    w, h = 30, 20
    g = gen.grid(w, h)
    deg = np.diff(g.indptr).reshape(h, w)
    assert deg[0, 0] == deg[0, -1] == deg[-1, 0] == deg[-1, -1] == 2
    assert (deg[0, 1:-1] == 3).all() and (deg[1:-1, 0] == 3).all()
    assert (deg[1:-1, 1:-1] == 4).all()
    dist = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=[0])
    assert dist.max() == w + h - 2  # the corner-to-corner diameter of a lattice


def test_grid_degenerate_and_weighted():
    line = gen.grid(5, 1)
    assert line.num_edges == 4 and np.diff(line.indptr).tolist() == [1, 2, 2, 2, 1]
    assert gen.grid(1, 1).num_edges == 0
    weighted = gen.grid(3, 3, weights=(2, 2))
    assert weighted.is_weighted and (weighted.weights == 2).all()


def test_erdos_renyi_sizes_and_seed():
    g = gen.erdos_renyi(1000, 5000, seed=7)
    assert g.num_vertices == 1000 and not g.directed
    assert 4900 < g.num_edges <= 5000
    assert edge_set(g) == edge_set(gen.erdos_renyi(1000, 5000, seed=7))
    assert edge_set(g) != edge_set(gen.erdos_renyi(1000, 5000, seed=8))
    assert gen.erdos_renyi(10, 0).num_edges == 0
    w = gen.erdos_renyi(100, 300, weights=(1, 3)).weights
    assert set(np.unique(w).tolist()) <= {1.0, 2.0, 3.0}


# -- specs -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, vertices, input_edges", [
    ("rmat:8", 256, 16 * 256), ("rmat:8:4", 256, 4 * 256), ("RMAT:6", 64, 16 * 64),
    ("grid:5x7", 35, 4 * 7 + 5 * 6), ("er:100:300", 100, 300),
])
def test_from_spec(spec, vertices, input_edges):
    g = gen.from_spec(spec)
    assert (g.num_vertices, g.num_input_edges) == (vertices, input_edges)
    assert gen.is_spec(spec)


def test_from_spec_is_seeded_and_weighted():
    a, b = gen.from_spec("er:50:100", seed=1), gen.from_spec("er:50:100", seed=1)
    assert edge_set(a) == edge_set(b)
    assert gen.from_spec("rmat:5", weights=(1, 64)).is_weighted


@pytest.mark.parametrize("spec", ["rmat", "rmat:", "rmat:x", "rmat:0", "rmat:8:0", "rmat:8:4:2", "grid:5",
                                  "grid:0x5", "grid:5x", "er:10", "er:0:5", "er:10:-1", "foo:1", "", "rmat:1e3"])
def test_bad_specs_are_one_line_value_errors(spec):
    with pytest.raises(ValueError) as err:
        gen.from_spec(spec)
    msg = str(err.value)
    assert f"bad graph spec {spec!r}" in msg and "\n" not in msg


def test_is_spec_recognises_only_generator_prefixes():
    assert gen.is_spec("grid:bad") and not gen.is_spec("graph.mtx") and not gen.is_spec("rmat")


# -- GPU ---------------------------------------------------------------------------------


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
    again = gen.rmat(14, xp=cupy, seed=3, weights=(1, 64))
    assert cupy.array_equal(r.indices, again.indices)
    src, dst, _ = gen.rmat_edges(1, 50_000, xp=cupy, seed=1)
    assert abs(float(cupy.mean(src == dst)) - 0.62) < 0.01
    g = gen.grid(9, 5, xp=cupy)
    assert np.array_equal(to_numpy(g.indices), gen.grid(9, 5).indices)
    e = gen.erdos_renyi(1000, 5000, xp=cupy, seed=2)
    assert e.xp is cupy and 4900 < e.num_edges <= 5000

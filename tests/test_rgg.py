"""Random geometric graphs (``rgg:S[:R]``): the points are the documented SplitMix64 draws, the edges are every pair
within the radius (against cKDTree and a brute-force pair check), the same graph for any split, chunk, block and
number of workers (threads and MPI ranks), degrees near pi r^2 n, a long diameter, specs, weights and memory."""
from __future__ import annotations

import math
import os
import pickle
from fractions import Fraction

import numpy as np
import pytest
from scipy.sparse import csgraph
from scipy.spatial import cKDTree

import mgraph
from conftest import ROOT, run_mpi
from test_partbuild import assert_same_part, build_in_threads
from mgraph import cli, memory
from mgraph.backend import Backend, gpu_available, to_numpy
from mgraph.io import generators as gen
from mgraph.io.sources import SpecSource
from mgraph.parts import subgraph
from mgraph.parts.build import build_graph
from mgraph.partitioners.random import random_owner

JOB = os.path.join(ROOT, "tests", "mpi_job.py")


# -- independent references --------------------------------------------------------------


def splitmix_output(seed: int, counter: int) -> int:
    """SplitMix64's output number ``counter`` for state ``seed`` (Vigna's splitmix64.c), in Python ints."""
    mask = (1 << 64) - 1
    z = (seed + (counter + 1) * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def unit_points(scale, seed=0):
    x, y = gen.rgg_points(scale, seed=seed)
    return np.stack([x, y], axis=1) / 2.0 ** 31


def pairs(src, dst):
    """Sorted rows (min, max) of an edge list."""
    p = np.stack([np.minimum(src, dst), np.maximum(src, dst)], axis=1)
    return p[np.lexsort((p[:, 1], p[:, 0]))]


def brute_force_pairs(scale, radius, seed):
    """Every pair i < j whose points lie within ``radius``, by checking all n^2 pairs in integer coordinates."""
    x, y = (c.astype(object) for c in gen.rgg_points(scale, seed=seed))  # Python ints: no overflow, no rounding
    limit = math.floor(radius * radius * 2 ** 62) if radius < 2 else 1 << 64
    n = x.shape[0]
    found = []
    for i in range(n - 1):
        d2 = (x[i + 1:] - x[i]) ** 2 + (y[i + 1:] - y[i]) ** 2
        found.extend((i, i + 1 + j) for j in np.flatnonzero(d2 <= limit))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def edge_list(spec, seed=0, weights=None):
    es = gen.spec_edges(spec, seed=seed, weights=weights)
    return es, es.edges()


def splits(m, parts, seed):
    """``parts`` uneven ranges covering [0, m), one of them empty."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, m + 1, parts - 1)).tolist()
    if parts > 2:
        cuts[1] = cuts[0]
    bounds = [0, *cuts, m]
    return list(zip(bounds[:-1], bounds[1:]))


def same_lists(a, b):
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


# -- the points ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 7])
def test_points_are_the_top_31_bits_of_draws_0_and_1(seed):
    x, y = gen.rgg_points(10, seed=seed)
    assert x.dtype == y.dtype == np.int64 and x.shape == y.shape == (1024,)
    for i in (0, 1, 2, 517, 1023):
        assert x[i] == splitmix_output(seed, 32 * i) >> 33
        assert y[i] == splitmix_output(seed, 32 * i + 1) >> 33
    xs, ys = gen.rgg_points(10, seed=seed, start=500, stop=600)
    np.testing.assert_array_equal(xs, x[500:600])
    np.testing.assert_array_equal(ys, y[500:600])
    # uniform in the unit square: each quarter holds about a quarter of 2**16 points
    big = unit_points(16, seed)
    quarters = np.bincount((big[:, 0] >= 0.5) * 2 + (big[:, 1] >= 0.5), minlength=4)
    assert np.all(np.abs(quarters - 2 ** 14) < 5 * 2 ** 6.5)


def test_default_radius_is_gunrocks():
    for scale in (1, 14, 24):
        n = 2 ** scale
        assert gen.rgg_radius(scale) == pytest.approx(0.55 * math.sqrt(math.log(n) / n), rel=1e-15)
    assert gen.spec_edges("rgg:12").args == (12, gen.rgg_radius(12))
    assert gen.spec_edges("rgg:12:0.125").args == (12, 0.125)
    assert gen.spec_edges("RGG:12:1e-2").args == (12, 0.01)


# -- the edges -----------------------------------------------------------------------------


CASES = [  # (scale, radius or None, seed): default radius, cells of several sizes, one cell, no edge, 2 points
    (10, None, 0), (9, None, 3), (11, 0.05, 1), (8, 0.3, 2), (7, 2.0, 0), (8, 0.9, 4), (12, 1e-4, 5), (1, None, 0),
]


@pytest.mark.parametrize("scale, radius, seed", CASES)
def test_edges_are_every_pair_within_the_radius(scale, radius, seed):
    spec = f"rgg:{scale}" + ("" if radius is None else f":{radius}")
    es, (src, dst, w) = edge_list(spec, seed)
    r = gen.rgg_radius(scale) if radius is None else radius
    assert w is None and src.dtype == dst.dtype == np.int64
    assert es.num_vertices == 2 ** scale and not es.directed
    assert np.all(src != dst)  # no self-loops, and each pair once, before any construction
    got = pairs(src, dst)
    assert got.shape[0] == 0 or np.all(np.any(np.diff(got, axis=0) != 0, axis=1))
    assert src.shape[0] <= es.num_edges  # the candidates bound the edges
    reference = cKDTree(unit_points(scale, seed)).query_pairs(r, output_type="ndarray")
    np.testing.assert_array_equal(got, pairs(reference[:, 0], reference[:, 1]))
    if scale <= 10:
        np.testing.assert_array_equal(got, brute_force_pairs(scale, r, seed))
    g = gen.from_spec(spec, seed=seed)
    assert g.num_edges == got.shape[0] and g.num_vertices == 2 ** scale
    gs, gd, _ = g.edges()
    np.testing.assert_array_equal(pairs(gs, gd), got)


def test_a_large_radius_joins_every_pair_and_a_tiny_one_none():
    _, (src, _, _) = edge_list("rgg:7:1.5")
    assert src.shape[0] == 128 * 127 // 2
    _, (src, _, _) = edge_list("rgg:12:1e-9")
    assert src.shape[0] == 0


@pytest.mark.parametrize("scale, radius, seed", [(10, None, 0), (11, 0.05, 1), (8, 0.3, 2), (6, 0.4, 3)])
def test_the_candidates_are_the_pairs_in_neighbouring_cells(scale, radius, seed):
    r = gen.rgg_radius(scale) if radius is None else radius
    points = gen.RggPoints(np, scale, r, seed)
    side = points.side
    # cells at least r wide, exactly: 0.05 is a little above 1/20 as a double, so 19 cells
    assert side == min(math.floor(1 / Fraction(r)), math.isqrt(2 ** scale)) and Fraction(side) * Fraction(r) <= 1
    x, y = gen.rgg_points(scale, seed=seed)
    cx, cy = (x * side) >> 31, (y * side) >> 31
    near = (np.abs(cx[:, None] - cx[None, :]) <= 1) & (np.abs(cy[:, None] - cy[None, :]) <= 1)
    expected = int(np.triu(near, 1).sum())
    assert points.num_candidates == expected == gen.spec_edges(f"rgg:{scale}:{r}", seed=seed).num_edges
    # every candidate is such a pair, listed once
    k, j = points.pairs(0, points.num_candidates)
    a, b = points.ids[k].astype(np.int64), points.ids[j].astype(np.int64)
    assert np.all(near[a, b]) and np.all(a != b)
    assert np.unique(pairs(a, b), axis=0).shape[0] == expected


def test_points_of_another_graph_are_refused():
    points = gen.RggPoints(np, 8, gen.rgg_radius(8), 0)
    with pytest.raises(ValueError, match="points are those of rgg:8"):
        gen.rgg_edges(8, xp=np, seed=1, points=points)
    with pytest.raises(ValueError, match="edge range"):
        gen.rgg_edges(8, start=0, stop=points.num_candidates + 1, points=points)


# -- any split, chunk, block or worker count gives the same graph -------------------------------------------


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_any_split_of_the_candidates_gives_the_whole_list(parts):
    es, whole = edge_list("rgg:11", seed=4, weights=(1, 64))
    es = pickle.loads(pickle.dumps(es))  # what a rank receives
    points = es.prepare(np)
    pieces = [es.edges(a, b, prepared=points) for a, b in splits(es.num_edges, parts, seed=parts)]
    same_lists([np.concatenate([p[i] for p in pieces]) for i in range(3)], whole)
    same_lists(es.edges(0, es.num_edges), whole)


@pytest.mark.parametrize("block", [1, 7, 1000, 1 << 20])
def test_the_block_size_does_not_change_the_edges(block, monkeypatch):
    _, whole = edge_list("rgg:10:0.06", seed=2, weights=(0, 9))
    monkeypatch.setattr(gen, "_block_size", lambda xp: block)
    same_lists(edge_list("rgg:10:0.06", seed=2, weights=(0, 9))[1], whole)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("chunk", [64, 5000, None])
def test_the_same_graph_on_any_number_of_workers_and_chunk(p, chunk):
    whole = gen.from_spec("rgg:11", seed=3, weights=(1, 9))
    assert whole.num_edges > 5000
    built = build_graph(SpecSource("rgg:11", seed=3, weights=(1, 9)), Backend("numpy"), chunk=chunk)
    for name in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(built, name), getattr(whole, name), err_msg=name)
    source = SpecSource("rgg:11", seed=3, weights=(1, 9))
    parts = build_in_threads(source, p, "1-hop", chunk=chunk)
    assert list(source._prepared) == [None]  # the threads shared one table of points
    if p == 1:  # the whole graph, in the caller's ids
        for name in ("indptr", "indices", "weights"):
            np.testing.assert_array_equal(getattr(parts[0], name), getattr(whole, name), err_msg=name)
        return
    for got, want in zip(parts, subgraph.build(whole, random_owner(whole, p, 0), p, "1-hop")):
        assert_same_part(got, want)


def test_a_source_pickles_without_its_table():
    source = SpecSource("rgg:9", seed=1)
    first = source.read((0, source.num_edges))
    copy = pickle.loads(pickle.dumps(source))
    assert copy._prepared == {}
    same_lists(copy.read((0, source.num_edges)), first)


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi_ranks_build_the_graph_one_process_builds(tmp_path, ranks):
    out = tmp_path / "arcs.npz"
    job = run_mpi(ranks, ["python", JOB, "arcs", out, "rgg:10"])
    assert job.returncode == 0, job.stderr[-3000:]
    got = np.load(out)
    whole = mgraph.load("rgg:10", backend="numpy")
    assert int(got["n"]) == whole.num_vertices == 1024 and not bool(got["directed"])
    src = np.repeat(np.arange(whole.num_vertices), np.diff(whole.indptr))
    want = np.lexsort((whole.indices, src))
    have = np.lexsort((got["dst"], got["src"]))
    np.testing.assert_array_equal(got["src"][have], src[want])
    np.testing.assert_array_equal(got["dst"][have], whole.indices[want])


# -- structure: degrees and diameter ----------------------------------------------------------------------


def test_degrees_are_near_pi_r2_n():
    scale = 14
    n, r = 2 ** scale, gen.rgg_radius(scale)
    g = mgraph.load(f"rgg:{scale}", backend="numpy")
    deg = np.diff(g.indptr)
    # two uniform points of the unit square lie within r with probability pi r^2 - 8 r^3 / 3 + r^4 / 2 (the
    # square's edges cut the disc); over 12 seeds the mean degree's spread was 0.35 % of it
    expected = (n - 1) * (math.pi * r * r - 8 * r ** 3 / 3 + r ** 4 / 2)
    assert abs(deg.mean() - expected) < 0.015 * expected
    assert abs(deg.mean() - math.pi * r * r * n) < 0.025 * math.pi * r * r * n  # the documented approximation
    assert 0.85 < deg.var() / deg.mean() < 1.2  # binomial: about Poisson
    assert deg.max() < 3 * expected


def test_the_diameter_is_long():
    scale = 16
    r = gen.rgg_radius(scale)
    g = mgraph.load(f"rgg:{scale}", backend="numpy")
    xy = unit_points(scale)
    _, label = csgraph.connected_components(g.to_scipy(), directed=False)
    giant = np.flatnonzero(label == np.bincount(label).argmax())
    assert giant.shape[0] > 0.99 * 2 ** scale  # r sits just below the connectivity threshold
    corner = int(giant[np.argmin(np.sum(xy[giant] ** 2, axis=1))])
    depth = mgraph.bfs(g, corner).depth
    reached = depth >= 0
    assert np.array_equal(np.flatnonzero(reached), giant)
    assert depth.max() >= 200  # from a corner across the square: hundreds of levels
    # each hop covers at most r: a vertex at distance d is at least d / r levels away
    distance = np.hypot(*(xy[reached] - xy[corner]).T)
    assert np.all(depth[reached] >= np.ceil(distance / r - 1e-9))
    reference = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=corner)
    np.testing.assert_array_equal(depth[reached], reference[reached].astype(np.int64))


# -- weights, seeds -----------------------------------------------------------------------------------------


def test_weights_are_integers_in_range_and_seed_picks_the_graph():
    a = gen.from_spec("rgg:10", seed=1, weights=(3, 9))
    assert a.is_weighted and a.weights.min() >= 3 and a.weights.max() <= 9
    assert np.all(a.weights == np.round(a.weights)) and len(np.unique(a.weights)) == 7
    b = gen.from_spec("rgg:10", seed=1)
    np.testing.assert_array_equal(a.indices, b.indices)  # weights do not move the points
    c = gen.from_spec("rgg:10", seed=2)
    assert not np.array_equal(c.indices, b.indices) or not np.array_equal(c.indptr, b.indptr)
    sym = a.to_scipy()
    assert (sym != sym.T).nnz == 0  # both arcs of an edge weigh the same
    with pytest.raises(ValueError, match="bad graph spec 'rgg:8'.*lo <= hi"):
        gen.spec_edges("rgg:8", weights=(5, 1))


def test_rgg_graph_function_equals_the_spec():
    g = gen.rgg(10, 0.07, seed=5, weights=(1, 4))
    s = gen.from_spec("rgg:10:0.07", seed=5, weights=(1, 4))
    for name in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(g, name), getattr(s, name))


# -- specs, the command line, memory ------------------------------------------------------------------------


BAD = {"rgg": None, "rgg:": None, "rgg:x": None, "rgg:0": "scale", "rgg:12:0": "radius", "rgg:12:0.0": "radius",
       "rgg:12:-1": None, "rgg:12:abc": None, "rgg:12:inf": None, "rgg:12:nan": None, "rgg:12:1e999": "radius",
       "rgg:12:0.1:3": None, "rgg:12:": None, "rgg:31": "MAX_RGG_SCALE", "rgg:30:2": "MAX_EDGES"}


@pytest.mark.parametrize("spec", sorted(BAD))
def test_bad_specs_are_one_line_value_errors(spec):
    with pytest.raises(ValueError) as err:
        gen.spec_edges(spec)
    msg = str(err.value)
    assert f"bad graph spec {spec!r}" in msg and "\n" not in msg
    assert BAD[spec] is None or BAD[spec] in msg
    assert gen.is_spec(spec) == (":" in spec)


def test_is_spec_and_load():
    assert gen.is_spec("rgg:12") and gen.is_spec("RGG:12:0.5") and not gen.is_spec("rgg.mtx")
    g = mgraph.load("rgg:12", backend="numpy")
    assert g.num_vertices == 4096 and not g.directed and g.num_edges > 10_000
    np.testing.assert_array_equal(g.indices, gen.rgg(12).indices)
    with pytest.raises(ValueError, match="bad graph spec 'rgg:12:-2'"):
        mgraph.load("rgg:12:-2")


def test_the_command_line_runs_and_describes_an_rgg(capsys):
    assert cli.main(["bfs", "rgg:14", "--backend", "numpy", "--validate"]) == 0
    out = capsys.readouterr().out
    g = mgraph.load("rgg:14", backend="numpy")
    assert f"16,384 vertices, {g.num_edges:,} edges" in out
    assert cli.main(["info", "rgg:12:0.02", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert "4,096" in out and f"{gen.rgg(12, 0.02).num_edges:,}" in out
    assert cli.main(["info", "rgg:12:zero"]) == 2
    assert "bad graph spec 'rgg:12:zero'" in capsys.readouterr().err


def test_memory_is_checked_before_building(monkeypatch):
    monkeypatch.setenv("MGRAPH_MEMORY_LIMIT", "4M")  # counting the cells fits; the build does not
    with pytest.raises(ValueError, match=r"^rgg:16: building a graph of 65,536 vertices and up to [\d,]+ arcs needs"):
        mgraph.load("rgg:16", backend="numpy")
    monkeypatch.setenv("MGRAPH_MEMORY_LIMIT", "2M")
    with pytest.raises(ValueError, match=r"^rgg:16: the table of its 65,536 points needs about 3"):
        gen.RggPoints(np, 16, gen.rgg_radius(16), 0)
    monkeypatch.delenv("MGRAPH_MEMORY_LIMIT")
    points = gen.RggPoints(np, 12, gen.rgg_radius(12), 0)
    assert points.nbytes() < memory.rgg_points_bytes(4096, points.side ** 2)  # what it keeps, below its peak


# -- GPU (run on a device machine: python -m pytest -m gpu tests/test_rgg.py) ---------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_cupy_and_numpy_draw_the_same_rgg():
    import cupy

    for spec, seed, weights, ranges in [("rgg:20", 3, (1, 64), [(0, 70_000), ((1 << 23) - 5000, (1 << 23) + 70_000)]),
                                        ("rgg:12:0.05", 1, None, [(0, None)])]:
        es = gen.spec_edges(spec, seed=seed, weights=weights)
        on_gpu, on_cpu = es.prepare(cupy), es.prepare(np)
        assert on_gpu.num_candidates == on_cpu.num_candidates == es.num_edges
        for name in ("ids", "cell", "x", "y", "cell_start", "first"):
            np.testing.assert_array_equal(to_numpy(getattr(on_gpu, name)), getattr(on_cpu, name), err_msg=name)
        for start, stop in ranges:
            got = es.edges(start, stop, xp=cupy, prepared=on_gpu)
            assert isinstance(got[0], cupy.ndarray) and got[0].dtype == np.int64
            same_lists([None if a is None else to_numpy(a) for a in got], es.edges(start, stop, prepared=on_cpu))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_an_rgg_built_on_the_gpu_is_the_cpu_one():
    g = mgraph.load("rgg:16", backend="cupy", weights=(1, 9))
    c = mgraph.load("rgg:16", backend="numpy", weights=(1, 9))
    for name in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(to_numpy(getattr(g, name)), getattr(c, name), err_msg=name)
    assert mgraph.bfs(g, 0).depth.max() == mgraph.bfs(c, 0).depth.max()

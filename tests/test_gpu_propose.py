"""ops.best_moves, Louvain's proposal: its NumPy twin against a per-row dictionary on the CPU; on a GPU the fused
kernels (a warp, a block or the hub rows' array operations per row) against the twin, bit for bit on unweighted
graphs, and Louvain's runs the same with the fused path on and off."""
from __future__ import annotations

import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.ops import propose


def star(leaves):
    """A star of ``leaves`` leaves whose leaves are joined in a path: a hub row beyond any shared-memory table."""
    hub = np.zeros(leaves, dtype=np.int64)
    leaf = np.arange(1, leaves + 1)
    src = np.concatenate([hub, leaf[:-1]])
    dst = np.concatenate([leaf, leaf[1:]])
    return mgraph.Graph.from_edges(src, dst, num_vertices=leaves + 1)


def weighted_rmat(scale, seed=2):
    g = mgraph.load(f"rmat:{scale}", backend="numpy")
    src, dst = ops.arcs(g)
    up = src < dst
    rng = np.random.default_rng(seed)
    return mgraph.Graph.from_edges(src[up], dst[up], rng.uniform(0.1, 3.0, int(up.sum())),
                                   num_vertices=g.num_vertices)


def state(g, seed, groups):
    """A Louvain round's inputs on ``g`` (NumPy): communities labelled by vertex ids (``groups`` of them; None:
    every vertex alone), degrees, the communities' totals, S, and a random set of rows to score."""
    rng = np.random.default_rng(seed)
    n = g.num_vertices
    w = np.ones(g.num_arcs) if g.weights is None else g.weights
    k = np.bincount(ops.arcs(g)[0], weights=w, minlength=n).astype(np.float64)
    if groups is None:
        c = np.arange(n, dtype=np.int32)
    else:
        c = rng.choice(n, groups, replace=False).astype(np.int32)[rng.integers(0, groups, n)]
    totals = np.bincount(c, weights=k, minlength=n)
    look = rng.random(n) < 0.7
    return c, k, totals, float(k.sum()), look


def reference(g, c, k, totals, resolution, scale, look):
    """Per row, from a dictionary of its communities' weights: target, best, w_stay, and the gap between its best
    score and its second (inf where it has one candidate or none)."""
    n = g.num_vertices
    target, best, stay = np.full(n, -1), np.full(n, -np.inf), np.zeros(n)
    gap = np.full(n, np.inf)
    w = np.ones(g.num_arcs) if g.weights is None else g.weights
    for u in range(n):
        if look is not None and not look[u]:
            continue
        per = {}
        for e in range(g.indptr[u], g.indptr[u + 1]):
            per[int(c[g.indices[e]])] = per.get(int(c[g.indices[e]]), 0.0) + w[e]
        stay[u] = per.pop(int(c[u]), 0.0)
        scored = sorted(((wc - resolution * (k[u] * totals[key] * 2.0) / scale, key) for key, wc in per.items()),
                        key=lambda x: (-x[0], x[1]))
        if scored:
            best[u], target[u] = scored[0][0] + 0.0, scored[0][1]
            if len(scored) > 1:
                gap[u] = scored[0][0] - scored[1][0]
    return target, best, stay, gap


@pytest.mark.parametrize("look", [True, False], ids=["look", "all"])
@pytest.mark.parametrize("groups", [None, 40])
def test_twin_against_dictionary(look, groups):
    """The NumPy twin (the array operations Louvain's proposal runs) against a dictionary per row, bit for bit on an
    unweighted graph; the first round's pairs taken as the arcs where every vertex is alone."""
    g = mgraph.load("rmat:9", backend="numpy")
    c, k, totals, scale, mask = state(g, 1, groups)
    mask = mask if look else None
    got = ops.best_moves(g, c, k, totals, 1.0, scale, mask, distinct=groups is None and not look)
    want = reference(g, c, k, totals, 1.0, scale, mask)
    for a, b in zip(got, want[:3]):
        assert np.array_equal(a, b)


def test_louvain_through_the_twin(monkeypatch):
    """Louvain and Leiden with the proposal through ops.best_moves (its NumPy twin, where the GPU would run the fused
    kernels): the same communities, rounds and modularity as their own array operations."""
    from mgraph.primitives.louvain import Louvain

    for g in (mgraph.load("rmat:11", backend="numpy"), weighted_rmat(9)):
        for fn in (mgraph.louvain, mgraph.leiden):
            own = fn(g, seed=1)
            monkeypatch.setattr(Louvain, "_fused", lambda self: True)
            twin = fn(g, seed=1)
            monkeypatch.undo()
            assert (own.community == twin.community).all()
            assert own.stats["level_rounds"] == twin.stats["level_rounds"]
            assert own.stats["modularity"] == twin.stats["modularity"]


# -- on a GPU --------------------------------------------------------------------------------------------------------
def gpu_cases():
    return {"rmat14": mgraph.load("rmat:14", backend="numpy"), "grid": mgraph.load("grid:120x90", backend="numpy"),
            "star": star(30_000)}


def on_gpu(g):
    return g.to("cupy")


def fused_and_twin(g, c, k, totals, scale, look, distinct):
    import cupy as cp

    from mgraph.ops import cupy_propose

    d = on_gpu(g)
    args = (cp.asarray(c), cp.asarray(k), cp.asarray(totals), 1.0, scale, None if look is None else cp.asarray(look))
    assert ops.fused_moves(d)
    fused = [a.get() for a in cupy_propose.best_moves(d, *args, distinct, ops.pair_totals)]
    twin = [a.get() for a in propose.best_moves(d, *args, distinct, ops.pair_totals)]
    host = propose.best_moves(g, c, k, totals, 1.0, scale, look, distinct, ops.pair_totals)
    return fused, twin, host


@pytest.mark.gpu
@pytest.mark.parametrize("fill", [None, 0.02], ids=["tiers", "more_hubs"])
@pytest.mark.parametrize("groups", [None, 50, 3000])
@pytest.mark.parametrize("name", ["rmat14", "grid", "star"])
def test_gpu_fused_bits(name, groups, fill, monkeypatch):
    """Unweighted: the fused kernels' (target, best, w_stay) are the twin's bits, on the GPU and on the CPU, for
    rows of every tier (R-MAT 14's warp, mid and large rows; a star's hub beyond the block tables; with
    ``more_hubs`` most large rows taken as hubs), scored in part (look) or all, every vertex alone or not."""
    pytest.importorskip("cupy")
    from mgraph.ops import cupy_propose

    if fill is not None:
        monkeypatch.setattr(cupy_propose, "BIG_FILL", fill)
    g = gpu_cases()[name]
    c, k, totals, scale, look = state(g, 3, groups)
    for mask in (look, None):
        fused, twin, host = fused_and_twin(g, c, k, totals, scale, mask, groups is None and mask is None)
        for a, b, h in zip(fused, twin, host):
            assert np.array_equal(a, b) and np.array_equal(a, h)
    if name == "star":
        assert cupy_propose.Plan(on_gpu(g), 4).hubs.shape[0] == 1


@pytest.mark.gpu
@pytest.mark.parametrize("groups", [None, 60])
def test_gpu_fused_weighted(groups):
    """Weighted (uniform real weights): the sums in another order, so the outputs to a tolerance, and the targets
    equal wherever the best and second scores are not within rounding of each other."""
    pytest.importorskip("cupy")
    g = weighted_rmat(12)
    c, k, totals, scale, look = state(g, 5, groups)
    fused, twin, _ = fused_and_twin(g, c, k, totals, scale, look, False)
    _, _, _, gap = reference(g, c, k, totals, 1.0, scale, look)
    assert np.allclose(fused[1], twin[1], rtol=1e-12, atol=1e-12)
    assert np.allclose(fused[2], twin[2], rtol=1e-12, atol=1e-12)
    clear = gap > 1e-9
    assert clear.mean() > 0.5
    assert np.array_equal(fused[0][clear], twin[0][clear])


@pytest.mark.gpu
@pytest.mark.parametrize("fn", [mgraph.louvain, mgraph.leiden], ids=["louvain", "leiden"])
def test_gpu_louvain_fused_on_and_off(fn, monkeypatch):
    """Louvain and Leiden on CuPy with the fused proposal (``ops.propose.ENABLED``) and without: the same
    communities, rounds and modularity on unweighted graphs, and the fused path taken on every level."""
    pytest.importorskip("cupy")
    from mgraph.ops import cupy_propose

    calls = []
    real = cupy_propose.best_moves

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(cupy_propose, "best_moves", counted)
    for name, g in gpu_cases().items():
        for seed in (0, 1):
            calls.clear()
            on = fn(g, backend="cupy", seed=seed)
            assert len(calls) >= sum(on.stats["level_rounds"]), name
            monkeypatch.setattr(propose, "ENABLED", False)
            calls.clear()
            off = fn(g, backend="cupy", seed=seed)
            monkeypatch.setattr(propose, "ENABLED", True)
            assert not calls
            assert (on.community == off.community).all(), name
            assert on.stats["level_rounds"] == off.stats["level_rounds"], name
            assert on.stats["modularity"] == off.stats["modularity"], name

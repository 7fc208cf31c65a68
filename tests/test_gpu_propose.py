"""ops.best_moves, Louvain's proposal, and ops.unsettled_rows and ops.commit_sums, the rows it scores again and the
check of its proposals: their NumPy twins against per-row loops on the CPU; on a GPU the fused kernels (a warp,
a block or the hub rows' array operations per row; a group of lanes per row, the long rows in pieces) against the
twins, bit for bit on unweighted graphs, and Louvain's runs the same with the fused paths on and off."""
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
    """Louvain and Leiden on CuPy with the fused kernels (``ops.propose.ENABLED``: the proposal, the rows to score
    again, the check of the proposals) and without: the same communities, rounds and modularity on unweighted
    graphs, and the fused paths taken on every level."""
    pytest.importorskip("cupy")
    from mgraph.ops import cupy_commit, cupy_propose

    calls = []

    def counted(module, name):
        real = getattr(module, name)

        def call(*args):
            calls.append(name)
            return real(*args)

        monkeypatch.setattr(module, name, call)

    counted(cupy_propose, "best_moves")
    counted(cupy_commit, "unsettled_rows")
    counted(cupy_commit, "commit_sums")
    counted(cupy_commit, "inside_change")
    for name, g in gpu_cases().items():
        for seed in (0, 1):
            calls.clear()
            on = fn(g, backend="cupy", seed=seed)
            rounds = sum(on.stats["level_rounds"])
            assert calls.count("best_moves") >= rounds, name
            assert calls.count("commit_sums") >= rounds - len(on.stats["level_rounds"]), name
            assert calls.count("unsettled_rows") >= rounds - len(on.stats["level_rounds"]), name
            assert calls.count("inside_change") == calls.count("unsettled_rows"), name
            monkeypatch.setattr(propose, "ENABLED", False)
            calls.clear()
            off = fn(g, backend="cupy", seed=seed)
            monkeypatch.setattr(propose, "ENABLED", True)
            assert not calls
            assert (on.community == off.community).all(), name
            assert on.stats["level_rounds"] == off.stats["level_rounds"], name
            assert on.stats["modularity"] == off.stats["modularity"], name


# -- the rows to score again and the check of the proposals (ops.unsettled_rows, ops.commit_sums) -------------------
def round_state(g, seed, groups):
    """A round's state on ``g`` (NumPy): communities and targets (labels of ``groups`` vertices, int32), which
    vertices moved, and priorities (-1 for about half the vertices, ties among the others)."""
    rng = np.random.default_rng(seed)
    n = g.num_vertices
    labels = rng.choice(n, min(groups, n), replace=False).astype(np.int32)
    c = labels[rng.integers(0, labels.shape[0], n)]
    t = labels[rng.integers(0, labels.shape[0], n)]
    moved = rng.random(n) < 0.01
    p = np.where(rng.random(n) < 0.5, rng.integers(0, 50, n), -1).astype(np.int64)
    return c, t, moved, p


def row_reference(g, c, t, moved, p):
    """Per row, by a loop over its arcs in CSR order: the mask, w_to, w_stay and blocked."""
    n = g.num_vertices
    w = np.ones(g.num_arcs) if g.weights is None else g.weights
    look, w_to, w_stay, blocked = np.zeros(n, bool), np.zeros(n), np.zeros(n), np.zeros(n, bool)
    for u in range(n):
        arcs = range(g.indptr[u], g.indptr[u + 1])
        look[u] = moved[u] or p[u] >= 0 or any(moved[g.indices[e]] for e in arcs)
        if p[u] < 0:
            continue
        for e in arcs:
            v = g.indices[e]
            first = p[v] >= p[u]
            there = t[v] if first else c[v]
            blocked[u] |= first
            w_to[u] += w[e] if there == t[u] else 0.0
            w_stay[u] += w[e] if there == c[u] else 0.0
    return look, w_to, w_stay, blocked


def inside_reference(g, moved, c, old):
    """Louvain's inside weight change by a loop over the moved vertices' rows in CSR order."""
    w = np.ones(g.num_arcs) if g.weights is None else g.weights
    total = 0.0
    for u in np.flatnonzero(moved):
        for e in range(g.indptr[u], g.indptr[u + 1]):
            v = g.indices[e]
            change = float(c[u] == c[v]) - float(old[u] == old[v])
            total += w[e] * change * (1.0 if moved[v] else 2.0)
    return total


def test_inside_change_is_the_change():
    """ops.inside_change (the twin on the CPU) is the inside weight after minus before, from the moved rows alone."""
    g = weighted_rmat(9)
    c, t, moved, _ = round_state(g, 8, 30)
    old = np.where(moved, t, c)
    src, dst = ops.arcs(g)

    def inside(labels):
        return float((g.weights * (labels[src] == labels[dst])).sum())

    assert float(ops.inside_change(g, moved, c, old)) == pytest.approx(inside(c) - inside(old), abs=1e-9)
    assert float(ops.inside_change(g, np.zeros(g.num_vertices, bool), c, c)) == 0.0


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_row_twins_against_loops(weighted):
    """The NumPy twins of ops.unsettled_rows and ops.commit_sums (the array operations Louvain runs) against a loop
    per row, bit for bit (the CPU's bincount adds each row's weights in CSR order from 0.0, as the loop)."""
    g = weighted_rmat(9) if weighted else mgraph.load("rmat:9", backend="numpy")
    c, t, moved, p = round_state(g, 4, 30)
    look, w_to, w_stay, blocked = row_reference(g, c, t, moved, p)
    assert np.array_equal(ops.unsettled_rows(g, moved, p), look)
    got = ops.commit_sums(g, p, t, c, blocked=True)
    assert np.array_equal(got[0], w_to) and np.array_equal(got[1], w_stay) and np.array_equal(got[2], blocked)
    assert ops.commit_sums(g, p, t, c)[2] is None
    old = np.where(moved, t, c)  # the moved vertices came from their targets' labels
    want = inside_reference(g, moved, c, old)  # weighted: NumPy's sum adds pairwise, the loop in order
    assert float(ops.inside_change(g, moved, c, old)) == (pytest.approx(want, rel=1e-12) if weighted else want)


@pytest.mark.gpu
@pytest.mark.parametrize("groups", [3, 50, 3000])
@pytest.mark.parametrize("name", ["rmat14", "grid", "star"])
def test_gpu_row_kernels_bits(name, groups):
    """Unweighted: the row kernels' mask and sums (:mod:`mgraph.ops.cupy_commit`: a group per row, the long rows in
    pieces) are the twins' bits, on the GPU and on the CPU, with a star's hub cut into pieces."""
    pytest.importorskip("cupy")
    import cupy as cp

    from mgraph.ops import cupy_commit

    g = gpu_cases()[name]
    d = on_gpu(g)
    assert ops.fused_moves(d)
    for seed in (1, 2):
        c, t, moved, p = round_state(g, seed, groups)
        for frac in (None, 0.0002):  # few moved: most rows read to their end; the star's hub too
            if frac is not None:
                moved = np.random.default_rng(seed).random(g.num_vertices) < frac
            dm, dp, dt, dc = cp.asarray(moved), cp.asarray(p), cp.asarray(t), cp.asarray(c)
            fused = cupy_commit.unsettled_rows(d, dm, dp).get()
            assert np.array_equal(fused, propose.unsettled_rows(d, dm, dp).get())
            assert np.array_equal(fused, propose.unsettled_rows(g, moved, p))
            for blocked in (True, False):
                fused = cupy_commit.commit_sums(d, dp, dt, dc, blocked)
                twin = propose.commit_sums(d, dp, dt, dc, blocked)
                host = propose.commit_sums(g, p, t, c, blocked)
                for a, b, h in zip(fused, twin, host):
                    if h is None:
                        assert a is None and b is None
                        continue
                    assert np.array_equal(a.get(), b.get()) and np.array_equal(a.get(), h)
            old = np.where(moved, t, c)
            fused = float(cupy_commit.inside_change(d, dm, dc, cp.asarray(old)))
            assert fused == float(propose.inside_change(d, dm, dc, cp.asarray(old)))  # sums of integers: exact
            assert fused == float(propose.inside_change(g, moved, c, old))
    if name == "star":
        assert cupy_commit.pieces_of(d).row.shape[0] > 1


@pytest.mark.gpu
def test_gpu_row_kernels_weighted():
    """Weighted: the mask the twin's; the sums the CPU twin's bits on rows of up to ROW_DEG arcs (CSR order from
    0.0), to rounding on the long rows' pieces."""
    pytest.importorskip("cupy")
    import cupy as cp

    from mgraph.ops import cupy_commit

    g = weighted_rmat(12)
    d = on_gpu(g)
    c, t, moved, p = round_state(g, 6, 40)
    args = (cp.asarray(p), cp.asarray(t), cp.asarray(c), True)
    fused = [a.get() for a in cupy_commit.commit_sums(d, *args)]
    host = propose.commit_sums(g, p, t, c, True)
    short = np.diff(g.indptr) <= cupy_commit.ROW_DEG
    for a, h in zip(fused[:2], host[:2]):
        assert np.array_equal(a[short], h[short])
        assert np.allclose(a, h, rtol=1e-12, atol=1e-12)
    assert np.array_equal(fused[2], host[2])
    assert np.array_equal(cupy_commit.unsettled_rows(d, cp.asarray(moved), cp.asarray(p)).get(),
                          propose.unsettled_rows(g, moved, p))
    old = np.where(moved, t, c)
    got = float(cupy_commit.inside_change(d, cp.asarray(moved), cp.asarray(c), cp.asarray(old)))
    assert got == pytest.approx(float(propose.inside_change(g, moved, c, old)), rel=1e-12, abs=1e-9)


@pytest.mark.gpu
def test_gpu_scatters_match_numpy():
    """ops.cupy_scatter's add, max and min (a warp's entries of one slot combined first) against NumPy's ufunc.at:
    maxima and minima the same, integer sums the same, real sums to rounding; slots in runs (a hub's pairs), in one
    run, scattered; int32 and int64 slots; lengths mid-warp; none; the int64 extremes among the values."""
    pytest.importorskip("cupy")
    import cupy as cp

    from mgraph.ops import cupy_scatter

    rng = np.random.default_rng(11)
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    for n, slots, layout in ((100_003, 500, "runs"), (70_001, 3, "one"), (50_017, 40_000, "scattered"),
                             (33, 7, "scattered"), (1, 1, "one"), (0, 4, "one")):
        if layout == "runs":
            at = np.sort(rng.integers(0, slots, n))
        elif layout == "one":
            at = np.zeros(n, dtype=np.int64)
        else:
            at = rng.integers(0, slots, n)
        for dt in (np.int32, np.int64):
            a = at.astype(dt)
            real, whole = rng.random(n), rng.integers(-3, 4, n).astype(np.float64)
            for w in (real, whole, None):
                want = np.zeros(slots)
                np.add.at(want, a, 1.0 if w is None else w)
                got = cupy_scatter.add_at(cp.zeros(slots), cp.asarray(a), None if w is None else cp.asarray(w)).get()
                if w is real:
                    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
                else:
                    assert np.array_equal(got, want)
            v = rng.integers(-10**15, 10**15, n)
            if n > 2:
                v[[0, n // 2]] = lo, hi
            for op, ufunc, fill in (("max", np.maximum, lo), ("min", np.minimum, hi)):
                want = np.full(slots, fill, dtype=np.int64)
                ufunc.at(want, a, v)
                out = cp.full(slots, fill, dtype=np.int64)
                got = (cupy_scatter.max_at if op == "max" else cupy_scatter.min_at)(out, cp.asarray(a), cp.asarray(v))
                assert np.array_equal(got.get(), want)

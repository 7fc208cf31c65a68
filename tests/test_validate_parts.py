"""The distributed validators (mgraph.check.parts): every worker checks its own part, all agree on the verdict.

Parts come from build_part over P worker threads (ThreadGroup), as under MPI.
Correct answers come from the whole-graph runs (mgraph.bfs, ...) and must pass
on every worker; corrupted ones must raise the same ValidationError on every
worker, with no worker left waiting in a collective (threads joined with a
timeout), and the verdict must be the whole-graph validator's.
"""
import functools
import threading

import numpy as np
import pytest

import mgraph
from conftest import get_case, run_mpi
from mgraph.check import parts as vp
from mgraph.backend import Backend
from mgraph.group import ThreadGroup
from mgraph.parts.build import Owners, build_part
from mgraph.io.sources import GraphSource
from mgraph.check.validate import ValidationError, pagerank_step, reference_components, validate_bfs, validate_sssp

TIMEOUT = 60
HOOK_ROUNDS = vp.HOOK_ROUNDS  # the default, before any test patches it

# (workers, duplication, arcs per block: None is the module's default; 7 exercises the blocked passes)
LAYOUTS = [(1, "1-hop", None), (1, "1-hop", 7), (2, "1-hop", None), (2, "all", None), (3, "1-hop", 7),
           (3, "all", 7)]
LAYOUT_IDS = [f"P{p}-{d}-{'block' + str(b) if b else 'whole'}" for p, d, b in LAYOUTS]

BFS_GRAPHS = ["chesapeake", "small_dir", "rand_dir", "rand_und_int"]
SSSP_GRAPHS = ["chesapeake", "small_dir", "rand_und_int", "rand_dir_float", "zero_heavy_und"]
CC_GRAPHS = ["chesapeake", "small_und", "small_dir", "rand_und_int", "rand_dir_sparse", "disconnected",
             "disconnected_dir"]
PR_GRAPHS = ["chesapeake", "small_dir", "rand_dir_float"]


# -- running P workers ------------------------------------------------------------
def run_workers(p, work):
    """``work(group, rank)`` on p threads; (results, errors) by rank.  None may still run after TIMEOUT seconds
    (a worker left waiting in a collective)."""
    shared = ThreadGroup.shared_state(p)
    results, errors = [None] * p, [None] * p

    def run(r):
        try:
            results[r] = work(ThreadGroup(shared, r), r)
        except ValidationError as e:
            errors[r] = e
        except BaseException as e:  # noqa: BLE001 - no abort: every worker must get out of the collectives itself
            errors[r] = e

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a worker hung in a collective"
    return results, errors


@functools.lru_cache(maxsize=None)
def parts(name, p, duplication):
    graph = get_case(name).graph
    built, errors = run_workers(p, lambda group, r: build_part(group, GraphSource(graph), Backend("numpy"),
                                                               Owners(p, seed=1), duplication, chunk=257))
    assert errors == [None] * p, errors
    return tuple(built)


@pytest.fixture(params=LAYOUTS, ids=LAYOUT_IDS)
def layout(request, monkeypatch):
    p, duplication, block = request.param
    if block:
        monkeypatch.setattr(vp, "BLOCK_ARCS", block)
    return p, duplication


@functools.lru_cache(maxsize=None)
def gpu_parts(name, p, duplication):
    """The same parts as ``parts``, on GPU 0 (CuPy)."""
    pytest.importorskip("cupy")
    return tuple(part.to(Backend("cupy", 0)) for part in parts(name, p, duplication))


def collective(name, layout, check, gpu=False):
    """``check(group, part)`` on every worker of the layout (parts on GPU 0 when ``gpu``); (results, errors)."""
    p, duplication = layout
    ps = (gpu_parts if gpu else parts)(name, p, duplication)
    if p > 1:
        assert all(part.duplication == duplication for part in ps)
    return run_workers(p, lambda group, r: check(group, ps[r]))


def passes(name, layout, check, gpu=False):
    results, errors = collective(name, layout, check, gpu)
    assert errors == [None] * len(errors), errors
    return results


def fails(name, layout, check, match=None, gpu=False):
    """Every worker raised ValidationError, with one message; returns it."""
    _, errors = collective(name, layout, check, gpu)
    assert all(isinstance(e, ValidationError) for e in errors), errors
    messages = {str(e) for e in errors}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert "\n" not in message
    if match:
        assert any(word in message for word in match.split("|")), message
    return message


# -- references and corruptions ---------------------------------------------------------
def source_of(name):
    g = get_case(name).graph
    return int(np.argmax(np.diff(g.indptr)))  # a hub: reaches much of the graph


@functools.lru_cache(maxsize=None)
def bfs_answer(name):
    r = mgraph.bfs(get_case(name).graph, source_of(name))
    return r.depth, r.predecessor


@functools.lru_cache(maxsize=None)
def sssp_answer(name):
    r = mgraph.sssp(get_case(name).graph, source_of(name))
    return r.distance, r.predecessor


@functools.lru_cache(maxsize=None)
def arc_set(name):
    g = get_case(name).graph
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    return set(zip(src.tolist(), g.indices.tolist()))


def non_parent(name, v, candidates):
    """A vertex among ``candidates`` with no arc to ``v`` (not v itself)."""
    arcs = arc_set(name)
    for u in candidates:
        if u != v and (int(u), v) not in arcs:
            return int(u)
    pytest.skip("no such vertex")


BFS_CORRUPTIONS = ["depth+1-leaf", "depth+1-inner", "depth-1", "parent-not-neighbour", "missed-vertex",
                   "parent-cycle", "root-parent", "unreached-depth", "parent-out-of-range"]


def corrupt_bfs(name, how):
    s = source_of(name)
    depth, pred = (a.copy() for a in bfs_answer(name))
    reached = np.flatnonzero(depth > 0)
    leaf = int(reached[np.argmax(depth[reached])])
    if how == "depth+1-leaf":
        depth[leaf] += 1
    elif how == "depth+1-inner":
        inner = int(pred[leaf])
        if inner == s:
            pytest.skip("the deepest vertex hangs from the source")
        depth[inner] += 1
    elif how == "depth-1":
        v = int(reached[np.argmax(depth[reached] >= 2)])
        if depth[v] < 2:
            pytest.skip("no vertex at depth 2")
        depth[v] -= 1
    elif how == "parent-not-neighbour":  # depths stay a consistent tree: only rule 5 can catch it
        arcs = arc_set(name)
        for v in reached[np.argsort(-depth[reached], kind="stable")].tolist():
            u = next((int(u) for u in np.flatnonzero(depth == depth[v] - 1) if (int(u), v) not in arcs), None)
            if u is not None:
                pred[v] = u
                break
        else:
            pytest.skip("every vertex is joined to every vertex a level up")
    elif how == "missed-vertex":
        depth[leaf], pred[leaf] = -1, -1
    elif how == "parent-cycle":
        a = next((int(v) for v in reached if pred[v] != s and (v, int(pred[v])) in arc_set(name)), None)
        if a is None:
            pytest.skip("no tree edge with a reverse arc")
        pred[int(pred[a])] = a
    elif how == "root-parent":
        pred[s] = leaf
    elif how == "unreached-depth":
        lonely = np.flatnonzero(depth < 0)
        if not lonely.size:
            pytest.skip("every vertex is reached")
        depth[lonely[0]] = 1
    else:
        pred[leaf] = depth.size
    return s, depth, pred


SSSP_CORRUPTIONS = ["too-small", "too-large", "slightly-large", "parent-not-neighbour", "parent-not-tight",
                    "finite-unreached", "inf-reached", "source-distance", "parent-cycle"]


def corrupt_sssp(name, how):
    s = source_of(name)
    dist, pred = (a.copy() for a in sssp_answer(name))
    reached = np.flatnonzero(np.isfinite(dist) & (dist >= 1))
    v = int(reached[np.argmax(dist[reached])])  # the farthest vertex
    if how == "too-small":
        dist[v] -= 0.5
    elif how == "too-large":
        dist[v] += 1.0
    elif how == "slightly-large":
        dist[v] *= 1 + 1e-6
    elif how == "parent-not-neighbour":
        pred[v] = non_parent(name, v, np.flatnonzero(np.isfinite(dist) & (dist < dist[v])))
    elif how == "parent-not-tight":  # an arc u->v into some reached v that is not on a shortest path
        g = get_case(name).graph
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
        w = np.ones(src.size) if g.weights is None else g.weights
        loose = np.flatnonzero(np.isfinite(dist[src]) & (dist[src] + w > dist[g.indices]) & (g.indices != s)
                               & (dist[src] < dist[g.indices]))
        if not loose.size:
            pytest.skip("no loose arc")
        pred[g.indices[loose[-1]]] = src[loose[-1]]
    elif how == "finite-unreached":
        lonely = np.flatnonzero(np.isinf(dist))
        if not lonely.size:
            pytest.skip("every vertex is reached")
        dist[lonely[0]] = 7.0
    elif how == "inf-reached":
        dist[v] = np.inf
    elif how == "source-distance":
        dist[s] = 0.5
    else:  # two vertices each other's predecessor
        a = next((int(u) for u in reached if pred[u] != s and (u, int(pred[u])) in arc_set(name)), None)
        if a is None:
            pytest.skip("no tree edge with a reverse arc")
        pred[int(pred[a])] = a
    return s, dist, pred


def bfs_check(s, depth, pred):
    return lambda group, part: vp.validate_bfs_parts(group, part, s, depth, pred)


def sssp_check(s, dist, pred):
    return lambda group, part: vp.validate_sssp_parts(group, part, s, dist, pred)


# -- BFS ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BFS_GRAPHS)
def test_bfs_accepts_correct_result(name, layout):
    s = source_of(name)
    depth, pred = bfs_answer(name)
    validate_bfs(get_case(name).graph, s, depth, pred)
    assert passes(name, layout, bfs_check(s, depth, pred)) == [None] * layout[0]
    passes(name, layout, bfs_check(s, None, pred))  # parents only, as Graph500 results carry


@pytest.mark.parametrize("how", BFS_CORRUPTIONS)
@pytest.mark.parametrize("name", BFS_GRAPHS)
def test_bfs_rejects_corruption_as_whole_graph_check_does(name, how, layout):
    s, depth, pred = corrupt_bfs(name, how)
    with pytest.raises(ValidationError):
        validate_bfs(get_case(name).graph, s, depth, pred)
    message = fails(name, layout, bfs_check(s, depth, pred), "BFS rule")
    if how == "parent-not-neighbour":
        assert "rule 5" in message
    if how == "missed-vertex":
        assert "rule 4" in message
    if how in PARENTS_ONLY:  # levels taken from the parents, as for a Graph500 result
        with pytest.raises(ValidationError):
            validate_bfs(get_case(name).graph, s, None, pred)
        fails(name, layout, bfs_check(s, None, pred), "BFS rule")


PARENTS_ONLY = {"parent-not-neighbour", "missed-vertex", "parent-cycle", "root-parent", "parent-out-of-range"}


def test_bfs_rule_3_alone():
    """A tree of real arcs with consistent depths, but an arc that skips levels (a DFS tree): only rule 3."""
    g = mgraph.Graph.from_edges(np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 5, 0]), num_vertices=6)
    depth, pred = np.arange(6), np.array([0, 0, 1, 2, 3, 4])
    for p in (1, 2, 3):
        ps = _adhoc_parts(g, p)
        _, errors = run_workers(p, lambda group, r: vp.validate_bfs_parts(group, ps[r], 0, depth, pred))
        assert all(isinstance(e, ValidationError) and "rule 3" in str(e) for e in errors), errors


def test_bfs_directed_back_arcs_may_span_levels():
    g = mgraph.Graph.from_edges(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0]), num_vertices=5, directed=True)
    depth, pred = np.array([0, 1, 2, 3, -1]), np.array([0, 0, 1, 2, -1])
    validate_bfs(g, 0, depth, pred)
    for p in (1, 2, 3):
        ps = _adhoc_parts(g, p)
        _, errors = run_workers(p, lambda group, r: vp.validate_bfs_parts(group, ps[r], 0, depth, pred))
        assert errors == [None] * p
        # a parent joined only by the reverse arc: 0 -> 3 does not exist
        bad = np.array([0, 0, 1, 0, -1])
        with pytest.raises(ValidationError):
            validate_bfs(g, 0, np.array([0, 1, 2, 1, -1]), bad)
        _, errors = run_workers(p, lambda group, r: vp.validate_bfs_parts(group, ps[r], 0, np.array([0, 1, 2, 1, -1]),
                                                                          bad))
        assert all(isinstance(e, ValidationError) for e in errors), errors


def _adhoc_parts(g, p, duplication="1-hop"):
    built, errors = run_workers(p, lambda group, r: build_part(group, GraphSource(g), Backend("numpy"),
                                                               Owners(p, seed=1), duplication))
    assert errors == [None] * p
    return built


# -- SSSP -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", SSSP_GRAPHS)
def test_sssp_accepts_correct_result(name, layout):
    s = source_of(name)
    dist, pred = sssp_answer(name)
    validate_sssp(get_case(name).graph, s, dist, pred)
    assert passes(name, layout, sssp_check(s, dist, pred)) == [None] * layout[0]


@pytest.mark.parametrize("how", SSSP_CORRUPTIONS)
@pytest.mark.parametrize("name", SSSP_GRAPHS)
def test_sssp_rejects_corruption_as_whole_graph_check_does(name, how, layout):
    s, dist, pred = corrupt_sssp(name, how)
    with pytest.raises(ValidationError):
        validate_sssp(get_case(name).graph, s, dist, pred)
    fails(name, layout, sssp_check(s, dist, pred), "SSSP")


def test_sssp_zero_weight_cycle_is_caught_by_the_tree_check():
    g = mgraph.Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([1.0, 0.0, 1.0]), num_vertices=4)
    dist, pred = np.array([0.0, 1.0, 1.0, 2.0]), np.array([0, 2, 1, 2])  # 1 and 2: tight both ways, no root
    with pytest.raises(ValidationError, match="cycle"):
        validate_sssp(g, 0, dist, pred)
    for p in (1, 2, 3):
        ps = _adhoc_parts(g, p)
        _, errors = run_workers(p, lambda group, r: vp.validate_sssp_parts(group, ps[r], 0, dist, pred))
        assert all(isinstance(e, ValidationError) and "cycle" in str(e) for e in errors), errors


# -- connected components --------------------------------------------------------------
CC_CORRUPTIONS = ["above-vertex", "neighbour-label", "not-idempotent", "self-label", "merge-components",
                  "merge-isolated"]


@functools.lru_cache(maxsize=None)
def cc_answer(name):
    return mgraph.connected_components(get_case(name).graph).labels


def corrupt_cc(name, how):
    labels = cc_answer(name).copy()
    n = labels.size
    roots = np.flatnonzero(labels == np.arange(n))
    sizes = np.bincount(labels, minlength=n)
    big = int(np.argmax(sizes))  # the giant component's label
    members = np.flatnonzero(labels == big)
    v = int(members[-1])
    if how == "above-vertex":
        if v + 1 >= n:
            pytest.skip("no id above the vertex")
        labels[v] = v + 1
    elif how == "neighbour-label":  # a vertex of the giant component labelled by another component
        other = roots[roots != big]
        if not other.size or other.min() > v:
            pytest.skip("one component")
        labels[v] = int(other.min())
    elif how == "not-idempotent":
        labels[v] = int(members[1])  # a member below v, not itself a label
    elif how == "self-label":  # splits the component: an arc joins two labels
        labels[v] = v
    elif how == "merge-components":  # a whole component takes a smaller component's label: only the count tells
        whole = [int(r) for r in roots if r != big and sizes[r] > 1]
        if not whole:
            pytest.skip("no second non-trivial component")
        r = whole[-1]
        target = int(roots[0]) if roots[0] < r else None
        if target is None:
            pytest.skip("no smaller label")
        labels[labels == r] = target
    else:  # an isolated vertex takes label 0: its own rules all hold
        lonely = [int(r) for r in roots if sizes[r] == 1 and r > labels[0]]
        if not lonely:
            pytest.skip("no isolated vertex")
        labels[lonely[-1]] = labels[0]
    return labels


def cc_check(labels):
    return lambda group, part: vp.validate_components_parts(group, part, labels)


@pytest.mark.parametrize("name", CC_GRAPHS)
def test_components_accepts_correct_labels(name, layout):
    labels = cc_answer(name)
    np.testing.assert_array_equal(labels, reference_components(get_case(name).graph))
    assert passes(name, layout, cc_check(labels)) == [None] * layout[0]


@pytest.mark.parametrize("how", CC_CORRUPTIONS)
@pytest.mark.parametrize("name", CC_GRAPHS)
def test_components_rejects_corruption(name, how, layout):
    labels = corrupt_cc(name, how)
    assert (labels != reference_components(get_case(name).graph)).any()  # the whole-graph verdict: wrong
    message = fails(name, layout, cc_check(labels), "CC")
    if how.startswith("merge"):
        assert "CC components" in message


# -- PageRank ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def pr_answer(name):
    r = mgraph.pagerank(get_case(name).graph, tol=1e-10, max_iter=1000)
    return r.rank, r.stats["error"]


def whole_residual(name, rank, alpha=0.85):
    step = pagerank_step(get_case(name).graph, alpha)
    return float(np.abs(step(rank) - rank).sum())


@pytest.mark.parametrize("name", PR_GRAPHS)
def test_pagerank_residual_matches_whole_graph(name, layout):
    rank, error = pr_answer(name)
    perturbed = rank.copy()
    perturbed[3] += 1e-3
    perturbed[7] *= 0.5
    for x in (rank, perturbed):
        want = whole_residual(name, x)
        got = passes(name, layout, lambda group, part: vp.pagerank_residual_parts(group, part, x, 0.85))
        assert len(set(got)) == 1  # the same float on every worker
        assert got[0] == pytest.approx(want, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("name", PR_GRAPHS)
def test_pagerank_rule_accepts_result_and_rejects_perturbed(name, layout):
    rank, error = pr_answer(name)
    passes(name, layout, lambda group, part: vp.validate_pagerank_parts(group, part, rank, 0.85, error))
    perturbed = rank.copy()
    perturbed[5] += 1e-4
    perturbed[-1] -= 1e-4
    assert whole_residual(name, perturbed) > 0.85 * error  # the CLI's whole-graph rule fails it too
    fails(name, layout, lambda group, part: vp.validate_pagerank_parts(group, part, perturbed, 0.85, error),
          "PageRank")


# -- the blocked arc passes ------------------------------------------------------------------
@pytest.mark.parametrize("block", [1, 2, 7, 1 << 24])
@pytest.mark.parametrize("name", ["chesapeake", "small_dir", "disconnected"])
def test_arc_blocks_are_the_stored_arcs(name, block, monkeypatch):
    """Every block's rows (found without repeat: CuPy's needs host counts) and columns, in CSR order, empty rows
    and rows split across blocks included."""
    monkeypatch.setattr(vp, "BLOCK_ARCS", block)
    for part in parts(name, 3, "1-hop") + parts(name, 1, "1-hop"):
        _check_arc_blocks(part, block, np.asarray)


def _check_arc_blocks(part, block, host):
    view = vp._View(part)
    for graph in {id(part): part, id(part.reverse()): part.reverse()}.values():
        indptr = host(graph.indptr)
        want_rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
        blocks = list(view.arcs(graph, caller=False))
        assert all(r.shape[0] <= block for r, _, _ in blocks)
        got_rows = np.concatenate([host(r) for r, _, _ in blocks] or [np.zeros(0, np.int64)])
        got_cols = np.concatenate([host(c) for _, c, _ in blocks] or [np.zeros(0, np.int64)])
        np.testing.assert_array_equal(got_rows, want_rows)
        np.testing.assert_array_equal(got_cols, host(graph.indices))


def _star_desc(n):  # the hub is the largest id: hooking the largest offer first would take a round a leaf
    return mgraph.Graph.from_edges(np.full(n - 1, n - 1), np.arange(n - 1), num_vertices=n)


def _permuted_path(n):
    perm = np.random.default_rng(5).permutation(n)
    return mgraph.Graph.from_edges(perm[:-1], perm[1:], num_vertices=n, directed=True)


def _forest_case(kind):
    if kind == "star":
        return _star_desc(3000)
    if kind == "path":
        return _permuted_path(3000)
    return get_case(kind).graph


@pytest.mark.parametrize("hook_rounds", [0, 1, 2, HOOK_ROUNDS])
@pytest.mark.parametrize("kind", ["star", "path", "disconnected_dir", "rand_und_int", "rand_dir_sparse"])
def test_part_forest_spans_its_components(kind, hook_rounds, monkeypatch):
    """A part's forest: pairs (vertex, representative) with representatives their own, one pair per vertex but
    one per component of the part's arcs, every pair inside a component; whether the device's hooking rounds
    finish it or scipy takes over."""
    g = _forest_case(kind)
    monkeypatch.setattr(vp, "HOOK_ROUNDS", hook_rounds)
    monkeypatch.setattr(vp, "BLOCK_ARCS", 97)
    rounds, merges = [], []
    jump, forest = vp._jump, vp._forest
    monkeypatch.setattr(vp, "_jump", lambda xp, root: rounds.append(1) or jump(xp, root))
    monkeypatch.setattr(vp, "_forest", lambda *a: merges.append(1) or forest(*a))
    for p in (1, 3):
        ps = _adhoc_parts(g, p)
        for part in ps:
            _check_forest(part, vp._View(part).forest(), np.asarray)
    if hook_rounds == HOOK_ROUNDS:
        assert not merges  # the device's rounds finished every part: scipy had nothing to do
    if kind == "star" and hook_rounds == HOOK_ROUNDS:
        assert len(rounds) <= 4 * 4  # the smallest offer wins: a round or two a part, not one a leaf


def _check_forest(part, forest, host):
    view = vp._View(part)
    n = view.n
    ids = np.arange(n) if part.caller_ids is None else host(part.caller_ids)
    indptr = host(part.indptr)
    src = ids[np.repeat(np.arange(indptr.size - 1), np.diff(indptr))]
    dst = ids[host(part.indices)]
    present = np.zeros(n, dtype=bool)
    present[ids] = True
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    _, comp = connected_components(sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n)), directed=True,
                                   connection="weak")
    fu, fv = forest
    assert fu.dtype == fv.dtype == np.int64
    assert len(set(fu.tolist())) == fu.size and not np.isin(fv, fu).any()  # representatives are their own
    assert present[fu].all() and present[fv].all()
    np.testing.assert_array_equal(comp[fu], comp[fv])
    assert fu.size == int(present.sum()) - np.unique(comp[present]).size


# -- agreement ------------------------------------------------------------------------------
def test_malformed_arrays_fail_on_every_worker(layout):
    name = "small_dir"
    s = source_of(name)
    depth, pred = bfs_answer(name)
    fails(name, layout, bfs_check(s, depth, pred[:-1]), "BFS predecessor")
    fails(name, layout, bfs_check(s, depth.astype(float), pred), "BFS depth")
    fails(name, layout, lambda group, part: vp.pagerank_residual_parts(group, part, np.zeros(3), 0.85), "PageRank")
    fails(name, layout, cc_check(np.zeros(5, dtype=np.int64)), "CC labels")


def test_bad_source_is_a_value_error_on_every_worker(layout):
    name = "small_dir"
    depth, pred = bfs_answer(name)
    _, errors = collective(name, layout, bfs_check(depth.size, depth, pred))
    assert all(isinstance(e, ValueError) and "source" in str(e) for e in errors), errors


def test_one_worker_failing_unexpectedly_stops_none_in_a_collective(monkeypatch):
    """A worker whose own check breaks (here: out of memory) re-raises it; the others get a RuntimeError."""
    name, p = "small_dir", 3
    s = source_of(name)
    depth, pred = bfs_answer(name)
    ps = parts(name, p, "1-hop")
    real = vp._View.parent_arcs

    def broken(self, *a, **k):
        if self.part is ps[1]:
            raise MemoryError("simulated")
        return real(self, *a, **k)

    monkeypatch.setattr(vp._View, "parent_arcs", broken)
    _, errors = run_workers(p, lambda group, r: vp.validate_bfs_parts(group, ps[r], s, depth, pred))
    assert isinstance(errors[1], MemoryError)
    assert all(isinstance(errors[r], RuntimeError) and "worker 1" in str(errors[r]) for r in (0, 2)), errors


@pytest.mark.parametrize("hook_rounds", [0, HOOK_ROUNDS])
@pytest.mark.parametrize("p", [4, 5, 8])
def test_more_workers_merge_forests_up_a_tree(p, hook_rounds, monkeypatch):
    """Forests merged over log2 P rounds, P not a power of two included; a block of 5 arcs forces several local
    merges (by scipy, with no hooking rounds).  Every check passes and fails as with fewer workers."""
    monkeypatch.setattr(vp, "BLOCK_ARCS", 5)
    monkeypatch.setattr(vp, "HOOK_ROUNDS", hook_rounds)
    for name in ("rand_dir_sparse", "disconnected", "rand_und_int"):
        for duplication in ("1-hop", "all"):
            lay = (p, duplication)
            labels = cc_answer(name)
            passes(name, lay, cc_check(labels))
            merged = labels.copy()
            lonely = [int(r) for r in np.flatnonzero(labels == np.arange(labels.size)) if r > 0]
            merged[merged == lonely[-1]] = 0  # the last component takes label 0: only the count catches it
            assert "CC components" in fails(name, lay, cc_check(merged))
            s = source_of(name)
            depth, pred = bfs_answer(name)
            passes(name, lay, bfs_check(s, depth, pred))
            fails(name, lay, bfs_check(*corrupt_bfs(name, "parent-not-neighbour")), "rule 5")
            dist, pred = sssp_answer(name)
            passes(name, lay, sssp_check(s, dist, pred))
            fails(name, lay, sssp_check(*corrupt_sssp(name, "too-small")), "SSSP")
            rank, error = pr_answer(name)
            got = passes(name, lay, lambda group, part: vp.pagerank_residual_parts(group, part, rank, 0.85))
            assert got == [got[0]] * p and got[0] == pytest.approx(whole_residual(name, rank), rel=1e-9, abs=1e-15)


class StrictGroup(ThreadGroup):
    """A ThreadGroup that, as MPI's typed buffers need, refuses an alltoallv whose workers send different
    dtypes (an empty array included: a receiver reads the bytes as its own dtype)."""

    def alltoallv(self, arrays):
        kinds = self.allgather(sorted({np.asarray(a).dtype.str for a in arrays}))
        assert all(k == kinds[0] and len(k) == 1 for k in kinds), f"alltoallv dtypes differ: {kinds}"
        return super().alltoallv(arrays)


def test_collectives_send_one_dtype_everywhere():
    name, p = "rand_dir_sparse", 5
    ps = parts(name, p, "1-hop")
    shared = ThreadGroup.shared_state(p)
    errors = [None] * p
    labels, (rank, _) = cc_answer(name), pr_answer(name)

    def run(r):
        try:
            group = StrictGroup(shared, r)
            vp.validate_components_parts(group, ps[r], labels)
            vp.pagerank_residual_parts(group, ps[r], rank, 0.85)
        except BaseException as e:  # noqa: BLE001
            errors[r] = e

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads)
    assert errors == [None] * p, errors


MPI_SCRIPT = """
import json, sys
import numpy as np
from mgraph.backend import Backend
from mgraph.graph import Graph
from mgraph.group import world
from mgraph.parts.build import Owners, build_part
from mgraph.io.sources import GraphSource
from mgraph.check import parts as vp
from mgraph.check.validate import ValidationError

group = world()
z = np.load(sys.argv[1])
w = z["w"] if z["w"].size else None
graph = Graph.from_edges(z["src"], z["dst"], w, num_vertices=int(z["n"]), directed=bool(z["directed"]))
s = int(z["s"])
out = []
for duplication in ("1-hop", "all"):
    part = build_part(group, GraphSource(graph), Backend("numpy"), Owners(group.size, 1), duplication)
    bfs, sssp, cc = vp.validate_bfs_parts, vp.validate_sssp_parts, vp.validate_components_parts
    checks = [(bfs, (s, z["depth"], z["pred"])), (bfs, (s, z["bad_depth"], z["pred"])),
              (sssp, (s, z["dist"], z["spred"])), (sssp, (s, z["bad_dist"], z["spred"])),
              (cc, (z["labels"],)), (cc, (z["bad_labels"],))]
    for fn, args in checks:
        try:
            fn(group, part, *args)
            out.append("ok")
        except ValidationError as e:
            out.append(str(e))
    out.append(vp.pagerank_residual_parts(group, part, z["rank"], 0.85))
open(f"{sys.argv[2]}/out{group.rank}.json", "w").write(json.dumps(out))
"""


@pytest.mark.parametrize("name", ["rand_dir_sparse", "rand_und_int"])
def test_under_mpi(name, tmp_path):
    """The same checks on the ranks of an MPI job (typed alltoallv, pickled allgather): every rank agrees."""
    g = get_case(name).graph
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    s = source_of(name)
    depth, pred = bfs_answer(name)
    dist, spred = sssp_answer(name)
    labels = cc_answer(name)
    bad_depth = corrupt_bfs(name, "depth+1-leaf")[1]
    bad_dist = corrupt_sssp(name, "too-small")[1]
    bad_labels = labels.copy()
    bad_labels[bad_labels == np.flatnonzero(labels == np.arange(labels.size))[-1]] = 0
    rank = pr_answer(name)[0]
    np.savez(tmp_path / "case.npz", src=src, dst=g.indices, w=g.weights if g.weights is not None else np.zeros(0),
             n=g.num_vertices, directed=g.directed, s=s, depth=depth, pred=pred, bad_depth=bad_depth, dist=dist,
             spred=spred, bad_dist=bad_dist, labels=labels, bad_labels=bad_labels, rank=rank)
    (tmp_path / "job.py").write_text(MPI_SCRIPT)
    job = run_mpi(3, ["python", tmp_path / "job.py", tmp_path / "case.npz", tmp_path])
    assert job.returncode == 0, job.stderr[-3000:]
    import json

    outs = [json.loads((tmp_path / f"out{r}.json").read_text()) for r in range(3)]  # one file a rank: no mixed lines
    assert all(out == outs[0] for out in outs)
    for k in range(2):
        ok_bfs, bad_bfs, ok_sssp, bad_sssp, ok_cc, bad_cc, residual = outs[0][7 * k: 7 * k + 7]
        assert (ok_bfs, ok_sssp, ok_cc) == ("ok", "ok", "ok")
        assert "BFS rule 2" in bad_bfs and "SSSP" in bad_sssp and "CC components" in bad_cc
        assert residual == pytest.approx(whole_residual(name, rank), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_parts_cut_from_a_whole_graph(duplication):
    """Parts from mgraph.parts.subgraph.build (the in-process multi-device path) serve as well as build_part's."""
    from mgraph.parts import subgraph
    from mgraph.partitioners.random import random_owner

    name, p = "rand_dir_float", 3
    g = get_case(name).graph
    ps = subgraph.build(g, random_owner(g, p, 1), p, duplication)
    s = source_of(name)
    labels, (rank, error) = cc_answer(name), pr_answer(name)
    good = [bfs_check(s, *bfs_answer(name)), sssp_check(s, *sssp_answer(name)), cc_check(labels),
            lambda group, part: vp.validate_pagerank_parts(group, part, rank, 0.85, error)]
    bad = [bfs_check(*corrupt_bfs(name, "missed-vertex")), sssp_check(*corrupt_sssp(name, "too-large")),
           cc_check(corrupt_cc(name, "self-label"))]
    for check in good:
        _, errors = run_workers(p, lambda group, r: check(group, ps[r]))
        assert errors == [None] * p, errors
    for check in bad:
        _, errors = run_workers(p, lambda group, r: check(group, ps[r]))
        assert all(isinstance(e, ValidationError) for e in errors) and len({str(e) for e in errors}) == 1, errors


# -- parts on a GPU ---------------------------------------------------------------------------
# The same checks with every part on GPU 0 (SubGraph.to(Backend("cupy", 0))): the arc passes run in CuPy, the
# result arrays go to the device once, and every verdict is the one the NumPy parts give, message included.
GPU_LAYOUTS = [(1, "1-hop", None), (1, "1-hop", 7), (2, "all", None), (3, "1-hop", 7), (3, "all", 7)]
GPU_LAYOUT_IDS = [f"P{p}-{d}-{'block' + str(b) if b else 'whole'}" for p, d, b in GPU_LAYOUTS]


@pytest.fixture(params=GPU_LAYOUTS, ids=GPU_LAYOUT_IDS)
def gpu_layout(request, monkeypatch):
    pytest.importorskip("cupy")
    p, duplication, block = request.param
    if block:  # the same blocks on both: the first violation found is then the same
        monkeypatch.setattr(vp, "BLOCK_ARCS", block)
        monkeypatch.setattr(vp, "DEVICE_BLOCK_ARCS", block)
    return p, duplication


def same_on_gpu(name, layout, check, match=None):
    """The check fails on the GPU parts with the NumPy parts' message."""
    want = fails(name, layout, check, match)
    assert fails(name, layout, check, match, gpu=True) == want
    return want


@pytest.fixture
def small_host_copies(monkeypatch):
    """Records the size of every array the module copies from a GPU to the host."""
    sizes = []
    real = vp.to_numpy

    def spy(a):
        out = real(a)
        if type(a).__module__.startswith("cupy"):
            sizes.append(out.size)
        return out

    monkeypatch.setattr(vp, "to_numpy", spy)
    return sizes


def assert_no_arcs_copied(sizes, name):
    """No copy bigger than a vertex array or the list of block bounds: no block of arcs came to the host."""
    g = get_case(name).graph
    assert max(sizes, default=0) <= max(g.num_vertices + 1, g.num_arcs // vp.DEVICE_BLOCK_ARCS + 1), sizes


@pytest.mark.gpu
@pytest.mark.parametrize("name", BFS_GRAPHS)
def test_gpu_bfs(name, gpu_layout, small_host_copies):
    import cupy as cp

    s = source_of(name)
    depth, pred = bfs_answer(name)
    passes(name, gpu_layout, bfs_check(s, depth, pred), gpu=True)
    passes(name, gpu_layout, bfs_check(s, None, pred), gpu=True)
    passes(name, gpu_layout, bfs_check(s, cp.asarray(depth), cp.asarray(pred)), gpu=True)  # results on a GPU too
    assert_no_arcs_copied(small_host_copies, name)
    for how, rule in [("parent-not-neighbour", "rule 5"), ("missed-vertex", "rule 4"), ("depth+1-leaf", "BFS rule"),
                      ("depth-1", "BFS rule"), ("parent-cycle", "BFS rule")]:
        try:
            case = corrupt_bfs(name, how)
        except pytest.skip.Exception:
            continue
        assert rule in same_on_gpu(name, gpu_layout, bfs_check(*case), "BFS rule")


@pytest.mark.gpu
def test_gpu_bfs_rule_3_alone():
    pytest.importorskip("cupy")
    g = mgraph.Graph.from_edges(np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 5, 0]), num_vertices=6)
    depth, pred = np.arange(6), np.array([0, 0, 1, 2, 3, 4])
    for p in (1, 2, 3):
        ps = [part.to(Backend("cupy", 0)) for part in _adhoc_parts(g, p)]
        _, errors = run_workers(p, lambda group, r: vp.validate_bfs_parts(group, ps[r], 0, depth, pred))
        assert all(isinstance(e, ValidationError) and "rule 3" in str(e) for e in errors), errors


@pytest.mark.gpu
@pytest.mark.parametrize("name", SSSP_GRAPHS)
def test_gpu_sssp(name, gpu_layout, small_host_copies):
    s = source_of(name)
    dist, pred = sssp_answer(name)
    passes(name, gpu_layout, sssp_check(s, dist, pred), gpu=True)
    assert_no_arcs_copied(small_host_copies, name)
    for how in ["too-small", "too-large", "slightly-large", "parent-not-neighbour", "parent-not-tight"]:
        try:
            s, bad_dist, bad_pred = corrupt_sssp(name, how)
        except pytest.skip.Exception:
            continue
        same_on_gpu(name, gpu_layout, sssp_check(s, bad_dist, bad_pred), "SSSP")


@pytest.mark.gpu
@pytest.mark.parametrize("hook_rounds", [0, 1, HOOK_ROUNDS])
@pytest.mark.parametrize("name", CC_GRAPHS)
def test_gpu_components(name, hook_rounds, gpu_layout, small_host_copies, monkeypatch):
    monkeypatch.setattr(vp, "HOOK_ROUNDS", hook_rounds)
    labels = cc_answer(name)
    passes(name, gpu_layout, cc_check(labels), gpu=True)
    if hook_rounds == HOOK_ROUNDS:  # with rounds left over the arcs go to scipy on the host, by design
        assert_no_arcs_copied(small_host_copies, name)
    for how in ["self-label", "neighbour-label", "not-idempotent", "merge-components", "merge-isolated"]:
        try:
            bad = corrupt_cc(name, how)
        except pytest.skip.Exception:
            continue
        message = same_on_gpu(name, gpu_layout, cc_check(bad), "CC")
        if how.startswith("merge"):
            assert "CC components" in message


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["star", "path", "disconnected_dir", "rand_und_int"])
def test_gpu_part_forest_spans_its_components(kind, monkeypatch):
    pytest.importorskip("cupy")
    monkeypatch.setattr(vp, "DEVICE_BLOCK_ARCS", 97)
    monkeypatch.setattr(vp, "BLOCK_ARCS", 97)
    g = _forest_case(kind)
    for hook_rounds in (0, 1, HOOK_ROUNDS):
        monkeypatch.setattr(vp, "HOOK_ROUNDS", hook_rounds)
        for p in (1, 3):
            for part in _adhoc_parts(g, p):
                gpu = part.to(Backend("cupy", 0))
                forest = vp._View(gpu).forest()
                _check_forest(gpu, forest, vp.to_numpy)
                host = vp._View(part).forest()  # the same forest: the same blocks, the smallest offer wins
                np.testing.assert_array_equal(forest[0], host[0])
                np.testing.assert_array_equal(forest[1], host[1])


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["chesapeake", "small_dir", "disconnected"])
def test_gpu_arc_blocks_are_the_stored_arcs(name, monkeypatch):
    pytest.importorskip("cupy")
    for block in (1, 2, 7, 1 << 26):
        monkeypatch.setattr(vp, "DEVICE_BLOCK_ARCS", block)
        for part in gpu_parts(name, 3, "1-hop") + gpu_parts(name, 1, "1-hop"):
            _check_arc_blocks(part, block, vp.to_numpy)


@pytest.mark.gpu
@pytest.mark.parametrize("name", PR_GRAPHS)
def test_gpu_pagerank(name, gpu_layout, small_host_copies):
    rank, error = pr_answer(name)
    perturbed = rank.copy()
    perturbed[5] += 1e-4
    perturbed[-1] -= 1e-4
    for x in (rank, perturbed):
        got = passes(name, gpu_layout, lambda group, part: vp.pagerank_residual_parts(group, part, x, 0.85), gpu=True)
        assert len(set(got)) == 1
        assert got[0] == pytest.approx(whole_residual(name, x), rel=1e-9, abs=1e-15)
    assert_no_arcs_copied(small_host_copies, name)
    passes(name, gpu_layout, lambda group, part: vp.validate_pagerank_parts(group, part, rank, 0.85, error), gpu=True)
    same_on_gpu(name, gpu_layout,
                lambda group, part: vp.validate_pagerank_parts(group, part, perturbed, 0.85, error), "PageRank")


@pytest.mark.gpu
def test_gpu_malformed_arrays_fail_on_every_worker(gpu_layout):
    name = "small_dir"
    s = source_of(name)
    depth, pred = bfs_answer(name)
    for check, match in [(bfs_check(s, depth, pred[:-1]), "BFS predecessor"),
                         (bfs_check(s, depth.astype(float), pred), "BFS depth"),
                         (lambda group, part: vp.pagerank_residual_parts(group, part, np.zeros(3), 0.85), "PageRank"),
                         (cc_check(np.zeros(5, dtype=np.int64)), "CC labels")]:
        same_on_gpu(name, gpu_layout, check, match)

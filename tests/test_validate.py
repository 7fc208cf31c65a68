"""The validators accept independently computed answers and reject each kind of corruption.

Correct answers come from networkx, never from mgraph.check.validate itself, so a
validator that wrongly rejects (or a reference that is wrong) shows up here.
"""
import networkx as nx
import numpy as np
import pytest

from mgraph.graph import Graph
from mgraph.check.validate import (ValidationError, reference_bfs_depth, reference_components, reference_sssp,
                             validate_bfs, validate_sssp)


# -- graphs and independent answers ---------------------------------------------
def make(edges, n, *, directed=False, weights=None):
    """(mgraph Graph, networkx graph) over the same simple edge list."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    g = Graph.from_edges(edges[:, 0], edges[:, 1], weights, num_vertices=n, directed=directed)
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    if weights is None:
        G.add_edges_from(edges.tolist())
    else:
        G.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(edges, weights))
    return g, G


def random_edges(n_active, m, seed, directed, weight_values=None):
    """Distinct, loop-free random edges among the first n_active vertices (later ids stay isolated)."""
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n_active, size=(m, 2))
    e = e[e[:, 0] != e[:, 1]]
    if not directed:
        e = np.sort(e, axis=1)
    e = np.unique(e, axis=0)
    w = None if weight_values is None else rng.choice(weight_values, size=len(e)).astype(np.float64)
    return e, w


def path(n):
    return [(i, i + 1) for i in range(n - 1)]


def grid(w, h):
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(w, h))
    return list(G.edges()), G.number_of_nodes()


def bfs_answer(G, source):
    n = G.number_of_nodes()
    pred = np.full(n, -1, dtype=np.int64)
    depth = np.full(n, -1, dtype=np.int64)
    pred[source] = source
    for child, parent in nx.bfs_predecessors(G, source):
        pred[child] = parent
    for v, d in nx.single_source_shortest_path_length(G, source).items():
        depth[v] = d
    return depth, pred


def sssp_answer(G, source):
    n = G.number_of_nodes()
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    lengths, paths = nx.single_source_dijkstra(G, source, weight="weight")
    for v, p in paths.items():
        dist[v] = lengths[v]
        pred[v] = p[-2] if len(p) > 1 else v
    return dist, pred


def cases():
    g_edges, g_n = grid(5, 6)
    ue, _ = random_edges(80, 90, seed=1, directed=False)
    de, _ = random_edges(80, 200, seed=2, directed=True)
    we, ww = random_edges(80, 160, seed=3, directed=False, weight_values=[0, 0, 1, 2, 5])
    dwe, dww = random_edges(80, 300, seed=4, directed=True, weight_values=[0, 0.5, 1.25, 3])
    return {
        "path": make(path(8), 8),
        "star": make([(0, i) for i in range(1, 9)], 9),
        "grid": make(g_edges, g_n),
        "random-undirected": make(ue, 100),
        "random-directed": make(de, 100, directed=True),
        "zero-weights-undirected": make(we, 100, weights=ww),
        "zero-weights-directed": make(dwe, 100, directed=True, weights=dww),
    }


CASES = cases()
SOURCES = [0, 3, 7, 95]  # 95 is isolated in the random graphs, out of range in the small ones


def case_sources():
    for name, (g, _) in CASES.items():
        for s in SOURCES:
            if s < g.num_vertices:
                yield pytest.param(name, s, id=f"{name}-{s}")


# -- accepting correct answers ----------------------------------------------------
@pytest.mark.parametrize("name, source", list(case_sources()))
def test_accepts_correct_bfs(name, source):
    g, G = CASES[name]
    depth, pred = bfs_answer(G, source)
    validate_bfs(g, source, depth, pred)
    validate_bfs(g, source, None, pred.astype(np.int32))
    np.testing.assert_array_equal(reference_bfs_depth(g, source), depth)


@pytest.mark.parametrize("name, source", list(case_sources()))
def test_accepts_correct_sssp(name, source):
    g, G = CASES[name]
    dist, pred = sssp_answer(G, source)
    validate_sssp(g, source, dist, pred)
    np.testing.assert_array_equal(reference_sssp(g, source), dist)


def test_accepts_scipy_bfs_parents():
    from scipy.sparse.csgraph import breadth_first_order

    g, G = CASES["random-directed"]
    _, p = breadth_first_order(g.to_scipy(), 3, directed=True, return_predecessors=True)
    pred = np.where(p < 0, -1, p)
    pred[3] = 3
    validate_bfs(g, 3, bfs_answer(G, 3)[0], pred)


@pytest.mark.parametrize("name", list(CASES))
def test_reference_components(name):
    g, G = CASES[name]
    want = np.empty(g.num_vertices, dtype=np.int64)
    comps = nx.weakly_connected_components(G) if g.directed else nx.connected_components(G)
    for comp in comps:
        want[list(comp)] = min(comp)
    got = reference_components(g)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_zero_weight_edges_are_edges():
    # 1, 2 and 4 are reachable only through zero-weight edges
    g, G = make([(0, 1), (1, 2), (2, 3), (0, 3), (3, 4)], 6, weights=[0, 0, 3, 5, 0])
    want = np.array([0, 0, 0, 3, 3, np.inf])
    np.testing.assert_array_equal(reference_sssp(g, 0), want)
    dist, pred = sssp_answer(G, 0)
    np.testing.assert_array_equal(dist, want)
    validate_sssp(g, 0, dist, pred)
    np.testing.assert_array_equal(reference_components(g), [0, 0, 0, 0, 0, 5])
    dg, _ = make([(0, 1), (1, 2)], 3, directed=True, weights=[0, 0])
    np.testing.assert_array_equal(reference_sssp(dg, 0), [0, 0, 0])
    np.testing.assert_array_equal(reference_bfs_depth(dg, 0), [0, 1, 2])


def test_directed_back_arcs_may_span_levels():
    g, G = make([(0, 1), (1, 2), (2, 3), (3, 0)], 4, directed=True)
    depth, pred = bfs_answer(G, 0)
    np.testing.assert_array_equal(depth, [0, 1, 2, 3])
    validate_bfs(g, 0, depth, pred)  # arc 3->0 goes back three levels: allowed


def test_source_out_of_range_is_a_value_error():
    g, _ = CASES["path"]
    with pytest.raises(ValueError, match="source"):
        validate_bfs(g, 8, None, np.zeros(8, dtype=np.int64))
    with pytest.raises(ValueError, match="source"):
        reference_sssp(g, -1)


def test_negative_weights_are_a_value_error():
    g, _ = make([(0, 1)], 2, weights=[-1.0])
    with pytest.raises(ValueError, match="negative"):
        reference_sssp(g, 0)


# -- rejecting corrupted BFS results --------------------------------------------------
def grid_answer():
    g, G = CASES["grid"]
    depth, pred = bfs_answer(G, 0)
    return g, G, depth, pred


def reject_bfs(g, source, depth, pred, rule):
    with pytest.raises(ValidationError, match=rule):
        validate_bfs(g, source, depth, pred)


def test_bfs_rejects_cycle():
    g, G, depth, pred = grid_answer()
    a, b = next((u, v) for u, v in G.edges() if 0 not in (u, v))
    pred[a], pred[b] = b, a
    reject_bfs(g, 0, None, pred, "rule 1")


def test_bfs_rejects_long_cycle():
    # a cycle longer than any pointer-jumping shortcut still fails
    g, _ = make(path(40) + [(39, 1)], 40)
    pred = np.arange(40) - 1
    pred[0], pred[1] = 0, 39  # 1 <- 39 <- 38 <- ... <- 2 <- 1
    reject_bfs(g, 0, None, pred, "rule 1.*cycle")


@pytest.mark.parametrize("corrupt", ["root-parent", "out-of-range", "parent-unreached", "wrong-dtype", "wrong-length"])
def test_bfs_rejects_malformed_parents(corrupt):
    g, G = CASES["random-undirected"]
    depth, pred = bfs_answer(G, 0)
    v = int(np.flatnonzero(depth > 0)[0])
    if corrupt == "root-parent":
        pred[0] = v
    elif corrupt == "out-of-range":
        pred[v] = g.num_vertices
    elif corrupt == "parent-unreached":
        pred[v] = 99  # isolated
    elif corrupt == "wrong-dtype":
        pred = pred.astype(np.float64)
    else:
        pred = pred[:-1]
    with pytest.raises(ValidationError):
        validate_bfs(g, 0, depth, pred)


def test_bfs_rejects_wrong_depth():
    g, G, depth, pred = grid_answer()
    inner = int(pred[np.argmax(depth)])  # has a child
    depth[inner] += 1
    reject_bfs(g, 0, depth, pred, "rule 2")


def test_bfs_rejects_depth_for_unreached_vertex():
    g, G = CASES["random-undirected"]
    depth, pred = bfs_answer(G, 0)
    depth[99] = 0
    reject_bfs(g, 0, depth, pred, "rule 2")


def test_bfs_rejects_tree_edge_skipping_a_level():
    g, G, depth, pred = grid_answer()
    leaf = int(np.argmax(depth))
    depth[leaf] += 1  # its tree edge now joins levels d-1 and d+1
    reject_bfs(g, 0, depth, pred, "rule 2")


def test_bfs_rejects_parent_that_is_not_a_neighbour():
    g, G, depth, pred = grid_answer()
    v = int(np.flatnonzero(depth == 3)[0])
    u = next(int(u) for u in np.flatnonzero(depth == 2) if not G.has_edge(u, v))
    pred[v] = u  # depth stays consistent with the tree: only rule 5 can catch it
    reject_bfs(g, 0, depth, pred, "rule 5")


def test_bfs_rejects_parent_joined_only_by_a_reverse_arc():
    g, _ = make([(0, 1), (0, 2), (1, 3), (3, 2)], 4, directed=True)
    validate_bfs(g, 0, np.array([0, 1, 1, 2]), np.array([0, 0, 0, 1]))
    reject_bfs(g, 0, np.array([0, 1, 1, 2]), np.array([0, 0, 0, 2]), "rule 5")  # only 3->2 exists


def test_graph_without_edges():
    g, _ = make([], 3)
    validate_bfs(g, 1, np.array([-1, 0, -1]), np.array([-1, 1, -1]))
    validate_sssp(g, 1, np.array([np.inf, 0, np.inf]), np.array([-1, 1, -1]))
    reject_bfs(g, 1, None, np.array([1, 1, -1]), "rule 5")
    np.testing.assert_array_equal(reference_components(g), [0, 1, 2])


@pytest.mark.parametrize("name", ["grid", "random-directed"])
def test_bfs_rejects_missed_reachable_vertex(name):
    g, G = CASES[name]
    depth, pred = bfs_answer(G, 0)
    leaf = int(np.argmax(depth))
    depth[leaf], pred[leaf] = -1, -1
    reject_bfs(g, 0, depth, pred, "rule 4")


def test_bfs_rejects_dfs_tree():
    # a valid tree of real edges with consistent depths, but the closing edge 5-0 spans five levels
    g, _ = make(path(6) + [(5, 0)], 6)
    pred = np.array([0, 0, 1, 2, 3, 4])
    reject_bfs(g, 0, np.arange(6), pred, "rule 3")


def test_bfs_rejects_directed_shortcut():
    g, _ = make([(0, 1), (1, 2), (0, 2)], 3, directed=True)
    reject_bfs(g, 0, np.array([0, 1, 2]), np.array([0, 0, 1]), "rule 3")


# -- rejecting corrupted SSSP results ----------------------------------------------------
def weighted_answer(name="zero-weights-undirected", source=0):
    g, G = CASES[name]
    dist, pred = sssp_answer(G, source)
    return g, G, dist, pred


def reject_sssp(g, source, dist, pred, check="SSSP"):
    with pytest.raises(ValidationError, match=check):
        validate_sssp(g, source, dist, pred)


@pytest.mark.parametrize("name", ["zero-weights-undirected", "zero-weights-directed", "grid"])
@pytest.mark.parametrize("delta", [+1.0, -0.5, +1e-6])
def test_sssp_rejects_wrong_distance(name, delta):
    g, G, dist, pred = weighted_answer(name)
    v = int(np.flatnonzero(np.isfinite(dist) & (dist >= 1))[0])
    dist[v] += delta
    reject_sssp(g, 0, dist, pred)


def test_sssp_rejects_predecessor_edge_not_tight():
    g, G, dist, pred = weighted_answer()
    u, v = next((u, v) for u, v in G.edges() if dist[u] < dist[v] < np.inf and pred[v] != u
                and dist[u] + G[u][v]["weight"] > dist[v])
    pred[v] = u
    reject_sssp(g, 0, dist, pred, "tree edge")


def test_sssp_rejects_predecessor_without_arc():
    g, G, dist, pred = weighted_answer()
    v = int(np.flatnonzero(np.isfinite(dist) & (dist > 0))[0])
    pred[v] = next(int(u) for u in np.flatnonzero(np.isfinite(dist)) if u != v and not G.has_edge(u, v))
    reject_sssp(g, 0, dist, pred, "tree edge")


def test_sssp_rejects_zero_weight_two_cycle():
    g, G = make([(0, 1), (1, 2), (2, 3)], 4, weights=[1, 0, 1])
    dist, pred = sssp_answer(G, 0)
    np.testing.assert_array_equal(dist, [0, 1, 1, 2])
    validate_sssp(g, 0, dist, pred)
    pred[1], pred[2] = 2, 1  # both tree edges tight (1 == 1 + 0), but no root
    reject_sssp(g, 0, dist, pred, "SSSP tree.*cycle")


@pytest.mark.parametrize("corrupt", ["finite-unreached", "inf-reached", "source-distance", "negative", "nan"])
def test_sssp_rejects_inconsistent_values(corrupt):
    g, G, dist, pred = weighted_answer()
    v = int(np.flatnonzero(np.isfinite(dist) & (dist > 0))[0])
    if corrupt == "finite-unreached":
        dist[99] = 7.0
    elif corrupt == "inf-reached":
        dist[v] = np.inf
    elif corrupt == "source-distance":
        dist[0] = 0.5
    elif corrupt == "negative":
        dist[v] = -1.0
    else:
        dist[v] = np.nan
    reject_sssp(g, 0, dist, pred)


def test_sssp_rejects_tree_of_longer_paths():
    # a tight tree (0->2 direct, weight 5) that the edge 1-2 could still shorten
    g, _ = make([(0, 1), (1, 2), (0, 2)], 3, weights=[1, 1, 5])
    reject_sssp(g, 0, np.array([0.0, 1.0, 5.0]), np.array([0, 0, 0]), "edge rule")


def test_sssp_rejects_drift_within_per_edge_tolerance():
    # each tree edge is within rtol, but the error compounds along the path
    n = 300
    g, _ = make(path(n), n, weights=np.ones(n - 1))
    dist = np.zeros(n)
    for k in range(1, n):
        dist[k] = (dist[k - 1] + 1) * (1 + 0.9e-9)
    reject_sssp(g, 0, dist, np.maximum(np.arange(n) - 1, 0), "reference")


def test_sssp_with_integer_weights_is_certified_without_dijkstra(monkeypatch):
    """Whole-number weights make Graph500's rules exact, so no reference run is needed and a wrong distance
    still fails a rule; fractional weights still go to Dijkstra."""
    import mgraph.check.validate as validate

    calls = []
    monkeypatch.setattr(validate, "reference_sssp", lambda g, s: calls.append(s) or sssp_answer(G, s)[0])
    g, G, dist, pred = weighted_answer("grid")
    validate_sssp(g, 0, dist, pred)
    assert calls == []
    v = int(np.flatnonzero(np.isfinite(dist) & (dist >= 1))[0])
    dist[v] -= 1.0
    reject_sssp(g, 0, dist, pred)
    assert calls == []
    g, G = make([(0, 1), (1, 2), (0, 2)], 3, weights=[0.5, 0.25, 1.0])
    dist, pred = sssp_answer(G, 0)
    np.testing.assert_array_equal(dist, [0, 0.5, 0.75])
    validate_sssp(g, 0, dist, pred)
    assert calls == [0]

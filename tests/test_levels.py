"""ops.advance_levels: fused levels give what level-by-level advances give (the NumPy twin here; GPU: test_gpu_levels)."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.ops import levels
from mgraph.parts import subgraph


def bfs_levels(g, source, **kw):
    depth = ops.unvisited(g, np.int32)
    pred = ops.unvisited(g, g.indices.dtype)
    depth[source], pred[source] = 0, source
    frontier, level, calls = np.array([source], dtype=g.indices.dtype), 1, 0
    while frontier.shape[0]:
        r = ops.advance_levels(g, frontier, ops.functors.VISIT, depth, pred, level, level="level", **kw)
        frontier, level, calls = r.frontier, level + r.levels, calls + 1
    return depth, pred, calls


def scipy_depths(g, source):
    a = sp.csr_matrix((np.ones(g.num_arcs), g.indices, g.indptr), shape=(g.num_vertices,) * 2)
    d = csgraph.shortest_path(a, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@pytest.mark.parametrize("spec", ["grid:40x30", "rmat:10"])
@pytest.mark.parametrize("limit", [0, 8, 1 << 16])
def test_fused_bfs_depths_equal_scipys(spec, limit):
    g = mgraph.load(spec, backend="numpy")
    source = int(np.argmax(np.diff(g.indptr) > 0))
    depth, pred, calls = bfs_levels(g, source, limit=limit)
    np.testing.assert_array_equal(depth, scipy_depths(g, source))
    reached = np.flatnonzero((depth > 0))
    assert np.all(depth[pred[reached]] == depth[reached] - 1)  # each predecessor one level up, joined by an arc
    arcs = set(zip(np.repeat(np.arange(g.num_vertices), np.diff(g.indptr)).tolist(), g.indices.tolist()))
    assert all((int(pred[v]), int(v)) in arcs for v in reached)
    if limit == 1 << 16:  # every frontier small: one call runs the whole traversal
        assert calls == 1
    if limit == 0:  # nothing fuses: one call per level, as the plain advance
        assert calls == int(depth.max()) + 1


def test_levels_count_and_emitted():
    g = mgraph.load("grid:30x1", backend="numpy")  # a path: one vertex per level
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[0], pred[0] = 0, 0
    r = ops.advance_levels(g, np.array([0], dtype=g.indices.dtype), ops.functors.VISIT, depth, pred, 1,
                           level="level", max_levels=10)
    assert (r.levels, r.emitted, r.frontier.tolist()) == (10, 10, [10])
    assert depth[:12].tolist() == list(range(11)) + [-1]
    r = ops.advance_levels(g, r.frontier, ops.functors.VISIT, depth, pred, 11, level="level")
    assert (r.levels, r.emitted, r.frontier.shape[0]) == (20, 19, 0)  # 19 more vertices, then an empty level
    assert depth.tolist() == list(range(30))


def test_fused_relax_gives_dijkstras_distances():
    rng = np.random.default_rng(5)
    base = mgraph.load("grid:25x25", backend="numpy")
    src, dst, _ = base.edges()
    w = rng.integers(1, 9, src.shape[0]).astype(np.float64)
    g = Graph.from_edges(src, dst, w, num_vertices=base.num_vertices)
    dist, marks = np.full(g.num_vertices, np.inf), np.zeros(g.num_vertices, dtype=np.int32)
    dist[0] = 0.0
    frontier, stamp = np.array([0], dtype=g.indices.dtype), 1
    while frontier.shape[0]:
        r = ops.advance_levels(g, frontier, ops.functors.RELAX, dist, marks, stamp, level="stamp")
        frontier, stamp = r.frontier, stamp + r.levels
    a = sp.csr_matrix((g.weights, g.indices, g.indptr), shape=(g.num_vertices,) * 2)
    np.testing.assert_allclose(dist, csgraph.dijkstra(a, indices=0))


def test_a_part_runs_one_level():
    g = mgraph.load("grid:10x10", backend="numpy")
    owner = (np.arange(g.num_vertices) % 2).astype(np.int32)
    part = subgraph.build(g, owner, 2)[0]
    depth, pred = ops.unvisited(part, np.int32), ops.unvisited(part, part.indices.dtype)
    v = int(part.own_vertices[0])
    depth[v], pred[v] = 0, v
    r = ops.advance_levels(part, part.own_vertices[:1], ops.functors.VISIT, depth, pred, 1, level="level")
    assert r.levels == 1 and r.emitted == r.frontier.shape[0] > 0


def test_wrong_uses_are_value_errors():
    g = mgraph.load("grid:5x5", backend="numpy")
    d, p = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    f = np.array([0], dtype=g.indices.dtype)
    with pytest.raises(ValueError, match="no int parameter 'stamp'"):
        ops.advance_levels(g, f, ops.functors.VISIT, d, p, 1, level="stamp")
    with pytest.raises(ValueError, match="no int parameter 'label'"):
        ops.advance_levels(g, f, ops.functors.VISIT, d, p, 1, level="label")
    with pytest.raises(ValueError, match="max_levels"):
        ops.advance_levels(g, f, ops.functors.VISIT, d, p, 1, level="level", max_levels=0)
    with pytest.raises(ValueError, match="frontier"):
        ops.advance_levels(g, [0], ops.functors.VISIT, d, p, 1, level="level")


@pytest.mark.parametrize("direction", ["push", "auto"])
def test_one_device_bfs_fuses_levels_and_takes_the_same_directions(direction):
    g = mgraph.load("rmat:11", backend="numpy")  # its largest degree, 779, lets levels fuse
    assert np.diff(g.indptr).max() <= levels.FUSE_DEGREE
    source = int(np.flatnonzero(np.diff(g.indptr) == 1)[0])  # a leaf: "auto" pushes, pulls, then pushes to the end
    one = mgraph.bfs(g, source, direction=direction)
    # through the host, a part fuses nothing: one level per superstep (tests/test_peer_levels.py: the devices' way)
    parts = mgraph.bfs(g, source, direction=direction, devices=2, peer_levels=False)
    np.testing.assert_array_equal(one.depth, scipy_depths(g, source))
    np.testing.assert_array_equal(parts.depth, one.depth)
    assert one.stats["directions"] == parts.stats["directions"]  # fused levels stop where "auto" would pull
    assert len(one.stats["directions"]) == int(one.depth.max()) + 1
    assert one.stats["supersteps"] < parts.stats["supersteps"]


def test_a_graph_with_a_hub_runs_its_levels_one_at_a_time():
    g = mgraph.load("rmat:12", backend="numpy")  # a vertex of 1360 arcs: a warp would walk them alone
    assert np.diff(g.indptr).max() > levels.FUSE_DEGREE
    source = int(np.flatnonzero(np.diff(g.indptr) == 1)[0])
    one, parts = mgraph.bfs(g, source), mgraph.bfs(g, source, devices=2, peer_levels=False)
    np.testing.assert_array_equal(one.depth, scipy_depths(g, source))
    assert one.stats["supersteps"] == parts.stats["supersteps"]  # no superstep ran two levels
    # across devices the link's gated levels run the small ones on the devices (tests/test_peer_levels.py)
    linked = mgraph.bfs(g, source, devices=2)
    np.testing.assert_array_equal(linked.depth, one.depth)
    assert linked.stats["level_path"] == "peer" and linked.stats["supersteps"] < parts.stats["supersteps"]
    assert one.stats["iterations"] == int(one.depth.max()) + 1


def twin_directions(g, source, do_a, limit=levels.FUSE_VISIT_ARCS):
    """levels.visit_directions from ``source`` until the traversal ends, the host taking one level wherever it stops
    for a push too large: (depth, pred, the policy, each call's Levels)."""
    from mgraph.ops import numpy_ops

    rg = g.reverse()
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[source], pred[source] = 0, source
    policy = ops.Direction(g, "auto", do_a)

    def push(f, level):
        return numpy_ops.advance_visit(g, f, depth, pred, level)

    def pull(f, level):
        return numpy_ops.advance_visit_pull(rg, depth, pred, level, ops.bitmap(f, g.num_vertices))

    frontier, level, calls = np.array([source], dtype=g.indices.dtype), 1, []
    while frontier.shape[0]:
        r = levels.visit_directions(g, frontier, depth, pred, level, policy, limit, 1 << 30, push, pull)
        calls.append(r)
        frontier, level = r.frontier, level + r.levels
        if frontier.shape[0]:  # the load-balanced level the host runs, as visit_levels would
            way = policy.choose(int(frontier.shape[0]))
            frontier, level = (pull if way == "pull" else push)(frontier, level), level + 1
    return depth, pred, policy, calls


def directed_graph(n=3000, m=12000, seed=3):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), (rng.zipf(1.6, m) - 1) % n  # skewed in-degrees, one-way arcs
    return Graph.from_edges(src, dst, num_vertices=n, directed=True)


@pytest.mark.parametrize("spec", ["rmat:12", "grid:60x40", "directed"])
@pytest.mark.parametrize("do_a", [1e-5, 1e-2])
def test_direction_levels_twin_takes_the_host_levels_directions(spec, do_a):
    g = directed_graph() if spec == "directed" else mgraph.load(spec, backend="numpy")
    source = int(np.argmax(np.diff(g.indptr)))  # a hub where there is one
    depth, pred, policy, calls = twin_directions(g, source, do_a)
    host = mgraph.bfs(g, source, direction="auto", do_a=do_a)  # the host drives every level
    np.testing.assert_array_equal(depth, host.depth)
    np.testing.assert_array_equal(depth, scipy_depths(g, source))
    assert policy.directions == host.stats["directions"]
    assert len(calls) == 1 and calls[0].levels == len(policy.directions) == int(depth.max()) + 1
    assert calls[0].emitted == int((depth > 0).sum())
    reached = np.flatnonzero(depth > 0)
    assert np.all(depth[pred[reached]] == depth[reached] - 1)
    if spec == "rmat:12" and do_a == 1e-5:
        assert "pull" in policy.directions and policy.directions[0] == "push"


def test_direction_levels_twin_stops_before_a_large_push():
    g = mgraph.load("grid:60x40", backend="numpy")
    depth, _, policy, calls = twin_directions(g, 0, 1e12, limit=40)  # it pulls at most the last level
    np.testing.assert_array_equal(depth, scipy_depths(g, 0))
    assert policy.directions == mgraph.bfs(g, 0, direction="auto", do_a=1e12).stats["directions"]
    assert len(calls) > 1
    for r in calls[:-1]:  # each call ends with a frontier whose push would be over the bound
        assert r.frontier.shape[0] and levels.light_arcs(g, r.frontier) > 40


def test_direction_next_way_and_took_agree_with_choose():
    g = mgraph.load("rmat:12", backend="numpy")
    a, b = ops.Direction(g, "auto", 1e-5), ops.Direction(g, "auto", 1e-5)
    ways = []
    for total in (1, 30, 900, 2500, 40, 2):
        assert a.next_way(total) == b.choose(total)
        ways.append(a.next_way(total))
        a.visited += total
        a.pulling, a.switched = b.pulling, b.switched
    c = ops.Direction(g, "auto", 1e-5)
    c.took(ways, b.visited)
    assert (c.directions, c.visited, c.pulling, c.switched) == (b.directions, b.visited, b.pulling, b.switched)

"""ops.advance_levels on the GPU (one persistent cooperative kernel) against its NumPy twin."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.check.validate import validate_bfs
from mgraph.graph import Graph

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")


def run_bfs(g, source, limit):
    xp = g.xp
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[source], pred[source] = 0, source
    frontier, level, trace = xp.asarray([source], dtype=g.indices.dtype), 1, []
    while frontier.shape[0]:
        r = ops.advance_levels(g, frontier, ops.functors.VISIT, depth, pred, level, level="level", limit=limit)
        trace.append((r.levels, r.emitted))
        frontier, level = r.frontier, level + r.levels
    return cp.asnumpy(depth) if xp is cp else depth, cp.asnumpy(pred) if xp is cp else pred, trace


@pytest.mark.parametrize("spec", ["grid:300x200", "rmat:14"])
@pytest.mark.parametrize("limit", [0, 64, 1 << 16])
def test_fused_bfs_matches_the_twin(spec, limit):
    g = mgraph.load(spec, backend="numpy")
    source = int(np.argmax(np.diff(g.indptr) > 0))
    d_cpu, _, t_cpu = run_bfs(g, source, limit)
    d_gpu, p_gpu, t_gpu = run_bfs(g.to("cupy"), source, limit)
    np.testing.assert_array_equal(d_gpu, d_cpu)
    assert t_gpu == t_cpu  # the same levels fused in the same calls
    reached = np.flatnonzero(d_gpu > 0)
    assert np.all(d_gpu[p_gpu[reached]] == d_gpu[reached] - 1)


def test_fused_relax_matches_the_twin():
    rng = np.random.default_rng(2)
    base = mgraph.load("grid:200x150", backend="numpy")
    src, dst, _ = base.edges()
    g = Graph.from_edges(src, dst, rng.integers(1, 64, src.shape[0]).astype(np.float64),
                         num_vertices=base.num_vertices)
    out = []
    for graph in (g, g.to("cupy")):
        xp = graph.xp
        dist, marks = xp.full(graph.num_vertices, np.inf), xp.zeros(graph.num_vertices, dtype=np.int32)
        dist[0] = 0.0
        frontier, stamp = xp.asarray([0], dtype=graph.indices.dtype), 1
        while frontier.shape[0]:
            r = ops.advance_levels(graph, frontier, ops.functors.RELAX, dist, marks, stamp, level="stamp")
            frontier, stamp = r.frontier, stamp + r.levels
        out.append(cp.asnumpy(dist) if xp is cp else dist)
    np.testing.assert_array_equal(out[1], out[0])


def test_fused_bfs_through_the_primitive_equals_one_level_at_a_time():
    g = mgraph.load("grid:512x512", backend="cupy")
    fused = mgraph.bfs(g, 0)
    plain = mgraph.bfs(g.to("numpy"), 0)
    np.testing.assert_array_equal(fused.depth, plain.depth)


@pytest.mark.parametrize("spec", ["rmat:16", "grid:400x300"])
def test_direction_optimizing_bfs_fuses_as_the_twin_does(spec):
    g = mgraph.load(spec, backend="numpy")
    source = int(np.flatnonzero(np.diff(g.indptr) == 1)[0]) if spec.startswith("rmat") else 0
    cpu = mgraph.bfs(g, source, direction="auto")
    gpu = mgraph.bfs(g.to("cupy"), source, direction="auto")
    np.testing.assert_array_equal(gpu.depth, cpu.depth)
    assert gpu.stats["directions"] == cpu.stats["directions"]
    assert gpu.stats["supersteps"] == cpu.stats["supersteps"]


def hubs_graph(weighted=False):
    """A root whose first level holds 40 hubs of 1,025 to 5,000 arcs among 200 small vertices, the hubs' arcs
    overlapping, and a path of 300 levels reached through one hub: the fused kernel spreads the hubs' arcs over
    the grid in the level that holds them."""
    rng = np.random.default_rng(5)
    n, path0 = 60_000, 59_000
    src, dst = [np.zeros(240, np.int64)], [np.arange(1, 241)]
    for h in range(1, 41):
        deg = int(rng.integers(1025, 5001))
        src.append(np.full(deg, h)), dst.append(rng.choice(np.arange(1000, path0), deg, replace=False))
    for s in range(41, 241):
        src.append(np.full(3, s)), dst.append(rng.integers(241, 1000, 3))
    src.append(np.array([7])), dst.append(np.array([path0]))
    src.append(np.arange(path0, n - 1)), dst.append(np.arange(path0 + 1, n))
    src, dst = np.concatenate(src), np.concatenate(dst)
    w = rng.integers(1, 9, src.shape[0]).astype(np.float64) if weighted else None
    return Graph.from_edges(src, dst, w, num_vertices=n, directed=True)


@pytest.mark.parametrize("limit", [1 << 16, 1 << 20])
def test_fused_bfs_with_hubs_matches_the_twin(limit):
    g = hubs_graph()
    assert int(np.diff(g.indptr).max()) > ops.levels.FUSE_DEGREE
    d_cpu, _, t_cpu = run_bfs(g, 0, limit)
    d_gpu, p_gpu, t_gpu = run_bfs(g.to("cupy"), 0, limit)
    np.testing.assert_array_equal(d_gpu, d_cpu)
    assert t_gpu == t_cpu and len(t_gpu) < 10  # the hubs' level fused with the rest
    reached = np.flatnonzero(d_gpu > 0)
    assert np.all(d_gpu[p_gpu[reached]] == d_gpu[reached] - 1)


def test_fused_relax_with_hubs_matches_the_twin():
    g = hubs_graph(weighted=True)
    out = []
    for graph in (g, g.to("cupy")):
        xp = graph.xp
        dist, marks = xp.full(graph.num_vertices, np.inf), xp.zeros(graph.num_vertices, dtype=np.int32)
        dist[0] = 0.0
        frontier, stamp = xp.asarray([0], dtype=graph.indices.dtype), 1
        while frontier.shape[0]:
            r = ops.advance_levels(graph, frontier, ops.functors.RELAX, dist, marks, stamp, level="stamp")
            frontier, stamp = r.frontier, stamp + r.levels
        out.append(cp.asnumpy(dist) if xp is cp else dist)
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("direction", ["push", "auto"])
def test_bfs_on_rmat_with_hubs_fuses_as_the_twin_does_and_validates(direction):
    """R-MAT's hubs sit in small frontiers (its first and last levels) that now fuse on the GPU as in the twin."""
    host = mgraph.load("rmat:18", backend="numpy")
    source = int(np.flatnonzero(np.diff(host.indptr) == 1)[0])
    want = mgraph.bfs(host, source, direction=direction, do_a=1e-5)
    r = mgraph.bfs(host.to("cupy"), source, direction=direction, do_a=1e-5)
    np.testing.assert_array_equal(r.depth, want.depth)
    assert r.stats["supersteps"] == want.stats["supersteps"]
    validate_bfs(host, source, r.depth, r.predecessor)

"""ops.advance_levels on the GPU (one persistent cooperative kernel) against its NumPy twin."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.ops import levels

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


@pytest.mark.parametrize("spec", ["rmat:16", "directed", "grid:400x300"])
@pytest.mark.parametrize("do_a", [1e-5, 1e-2])
def test_direction_optimizing_bfs_runs_its_levels_in_one_superstep(spec, do_a):
    g = directed_graph() if spec == "directed" else mgraph.load(spec, backend="numpy")
    source = int(np.argmax(np.diff(g.indptr))) if spec != "grid:400x300" else 0
    cpu = mgraph.bfs(g, source, direction="auto", do_a=do_a)  # the host drives every level
    gpu = mgraph.bfs(g.to("cupy"), source, direction="auto", do_a=do_a)
    np.testing.assert_array_equal(gpu.depth, cpu.depth)
    assert gpu.stats["directions"] == cpu.stats["directions"]
    assert gpu.stats["iterations"] == cpu.stats["iterations"] == len(gpu.stats["directions"])
    if spec != "grid:400x300":  # a graph with hubs: one kernel (reset, every level, the end)
        assert int(np.diff(g.indptr).max()) > levels.FUSE_DEGREE
        assert gpu.stats["supersteps"] <= 3
    assert_tree(g, gpu.depth, gpu.predecessor)


def assert_tree(g, depth, pred):
    """Every reached vertex's predecessor is one level nearer the source and has an arc to it."""
    reached = np.flatnonzero(depth > 0)
    p = pred[reached].astype(np.int64)
    assert np.all(depth[p] == depth[reached] - 1)
    src = np.repeat(np.arange(g.num_vertices, dtype=np.int64), np.diff(g.indptr))
    arcs = np.sort(src * g.num_vertices + g.indices.astype(np.int64))
    want = p * g.num_vertices + reached
    found = np.searchsorted(arcs, want)
    assert np.all(arcs[np.minimum(found, arcs.shape[0] - 1)] == want)


def directed_graph(n=5000, m=30000, seed=3):
    rng = np.random.default_rng(seed)
    src = np.concatenate([(rng.zipf(1.6, m // 2) - 1) % n, rng.integers(0, n, m // 2)])  # out-hubs
    dst = np.concatenate([rng.integers(0, n, m // 2), (rng.zipf(1.6, m // 2) - 1) % n])  # and in-hubs
    return Graph.from_edges(src, dst, num_vertices=n, directed=True)


def one_call(g, source, do_a, limit):
    """One call of the direction-optimizing levels from ``source``: (depth, pred, policy, Levels), on the host."""
    from mgraph.ops import cupy_levels, numpy_ops

    xp = g.xp
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[source], pred[source] = 0, source
    policy = ops.Direction(g, "auto", do_a)
    frontier = xp.asarray([source], dtype=g.indices.dtype)
    if xp is cp:
        r = cupy_levels.visit_directions(g, g.reverse(), frontier, depth, pred, 1, policy, limit, 1 << 30)
        return cp.asnumpy(depth), cp.asnumpy(pred), policy, r._replace(frontier=cp.asnumpy(r.frontier))
    rg = g.reverse()
    r = levels.visit_directions(
        g, frontier, depth, pred, 1, policy, limit, 1 << 30,
        lambda f, level: numpy_ops.advance_visit(g, f, depth, pred, level),
        lambda f, level: numpy_ops.advance_visit_pull(rg, depth, pred, level, ops.bitmap(f, g.num_vertices)))
    return depth, pred, policy, r


@pytest.mark.parametrize("spec", ["rmat:14", "grid:300x200", "directed"])
@pytest.mark.parametrize("do_a", [1e-5, 1e-2])
@pytest.mark.parametrize("limit", [1 << 20, 64])
def test_direction_levels_match_the_twin(spec, do_a, limit):
    g = directed_graph() if spec == "directed" else mgraph.load(spec, backend="numpy")
    source = int(np.argmax(np.diff(g.indptr)))  # a hub: its arcs spread over the grid
    d_cpu, _, pol_cpu, r_cpu = one_call(g, source, do_a, limit)
    d_gpu, p_gpu, pol_gpu, r_gpu = one_call(g.to("cupy"), source, do_a, limit)
    np.testing.assert_array_equal(d_gpu, d_cpu)
    assert (r_gpu.levels, r_gpu.emitted) == (r_cpu.levels, r_cpu.emitted)
    np.testing.assert_array_equal(np.sort(r_gpu.frontier), np.sort(r_cpu.frontier))
    assert pol_gpu.directions == pol_cpu.directions
    assert (pol_gpu.visited, pol_gpu.pulling, pol_gpu.switched) == (pol_cpu.visited, pol_cpu.pulling,
                                                                    pol_cpu.switched)
    assert_tree(g, d_gpu, p_gpu)

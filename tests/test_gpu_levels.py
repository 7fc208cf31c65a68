"""ops.advance_levels on the GPU (one persistent cooperative kernel) against its NumPy twin."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
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

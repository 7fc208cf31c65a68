"""Queues on the GPU (the step kernel, counts on the device) and batched runs, against the NumPy twins."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.primitives.contract import ContractError

from test_batches import Forever, Heads, HeadsOneByOne, Relax, path_graph, stats_of

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")


def host(a):
    return cp.asnumpy(a) if isinstance(a, cp.ndarray) else np.asarray(a)


def queued_bfs(g, source):
    """BFS one level at a time with every output a Queue: the count read only to stop."""
    xp = g.xp
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[source], pred[source] = 0, source
    frontier, level, sizes = xp.asarray([source], dtype=g.indices.dtype), 1, []
    with ops.counting():
        while True:
            frontier = ops.advance_visit(g, frontier, depth, pred, level)
            assert isinstance(frontier, ops.Queue)
            sizes.append(len(frontier))
            if not sizes[-1]:
                return host(depth), host(pred), sizes
            level += 1


@pytest.mark.parametrize("spec", ["grid:300x200", "er:4000:32000"])
def test_step_kernel_matches_the_twin(spec):
    g = mgraph.load(spec, backend="numpy")
    d_cpu, _, s_cpu = queued_bfs(g, 0)
    d_gpu, p_gpu, s_gpu = queued_bfs(g.to("cupy"), 0)
    np.testing.assert_array_equal(d_gpu, d_cpu)
    assert s_gpu == s_cpu
    reached = np.flatnonzero(d_gpu > 0)
    assert np.all(d_gpu[p_gpu[reached]] == d_gpu[reached] - 1)


def test_queues_in_cupy_code():
    g = path_graph(6, paths=3).to("cupy")
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    heads = cp.asarray([0, 7, 14], dtype=g.indices.dtype)
    depth[heads], pred[heads] = 0, heads
    with ops.counting():
        q = ops.advance_visit(g, heads, depth, pred, 1)
    assert isinstance(q, ops.Queue) and not q.known
    np.testing.assert_array_equal(np.sort(host(cp.asarray(q))), [1, 8, 15])  # any order on the GPU
    np.testing.assert_array_equal(host(depth[q]), [1, 1, 1])
    np.testing.assert_array_equal(np.sort(host(q + 1)), [2, 9, 16])
    assert ops.id_range(q) == (1, 15)


@pytest.mark.parametrize("length", [1, 5, 32, 33, 300])
def test_batched_runs_match_the_twin(length):
    g = path_graph(length, paths=3)
    cpu = mgraph.run(Heads, g)
    gpu = mgraph.run(Heads, g.to("cupy"))
    one = mgraph.run(HeadsOneByOne, g.to("cupy"))
    np.testing.assert_array_equal(gpu.depth, cpu.depth)
    np.testing.assert_array_equal(gpu.predecessor, cpu.predecessor)
    assert stats_of(gpu) == stats_of(cpu) == stats_of(one)


def test_relax_and_a_users_functor_in_batches_match_the_twin():
    rng = np.random.default_rng(3)
    base = mgraph.load("grid:120x90", backend="numpy")
    src, dst, _ = base.edges()
    g = Graph.from_edges(src, dst, rng.integers(1, 64, src.shape[0]).astype(np.float64),
                         num_vertices=base.num_vertices)
    cpu, gpu = mgraph.run(Relax, g, source=0), mgraph.run(Relax, g.to("cupy"), source=0)
    np.testing.assert_array_equal(gpu.distance, cpu.distance)
    assert stats_of(gpu) == stats_of(cpu)
    ring = Graph.from_edges(np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 0, 0]), num_vertices=6,
                            directed=True)
    for graph in (ring, ring.to("cupy")):
        with pytest.raises(ContractError, match="superstep 39"):
            mgraph.run(Forever, graph, max_supersteps=40)

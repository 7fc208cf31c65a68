"""GPU twin tests of sampled hooking (ops.hook_components with arcs / skip) and of CC's sampled path."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.graph import Graph

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


def graphs():
    rng = np.random.default_rng(4)
    n, m = 50_000, 200_000
    directed = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n // 16, m), num_vertices=n, directed=True)
    return {"rmat 16": mgraph.io.generators.rmat(16, seed=5), "hubs directed": directed,
            "sparse": Graph.from_edges(rng.integers(0, n, n // 2), rng.integers(0, n, n // 2), num_vertices=n)}


@pytest.mark.parametrize("arcs, skip", [((0, 1), None), ((1, 2), None), ((2, None), None), ((0, 40), None),
                                        (None, 0), ((2, None), "largest")])
def test_sampled_hooking_matches_numpy(arcs, skip):
    for name, g in graphs().items():
        d = g.to("cupy")
        if skip == "largest":  # after a first round, as CC uses it: the root most vertices share
            host = np.arange(g.num_vertices, dtype=np.int64)
            ops.hook_components(g, host, arcs=(0, 2))
            ops.compress(host)
            skip_id = int(np.bincount(host).argmax())
        else:
            host, skip_id = np.arange(g.num_vertices, dtype=np.int64), skip
        dev = cp.asarray(host)
        ops.hook_components(g, host, arcs=arcs, skip=skip_id)
        ops.compress(host)
        ops.hook_components(d, dev, arcs=arcs, skip=skip_id)
        ops.compress(dev)
        assert cp.asnumpy(dev).tolist() == host.tolist(), name  # roots are the smallest ids: one answer


def test_cc_on_the_gpu_matches_the_cpu_on_whole_graphs_and_parts():
    for name, g in graphs().items():
        want = mgraph.connected_components(g, backend="numpy").labels
        assert mgraph.connected_components(g, backend="cupy").labels.tolist() == want.tolist(), name
        parts = mgraph.connected_components(g, backend="cupy", devices=[0, 0, 0]).labels
        assert parts.tolist() == want.tolist(), name

"""GPU twin tests of SSSP's one-pull tree (ops.tight_predecessors) and of SSSP on the GPU with it."""
import numpy as np
import pytest

import mgraph
from mgraph import ops
from mgraph.check.validate import validate_sssp

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


@pytest.mark.parametrize("directed", [False, True])
def test_tight_predecessors_matches_numpy(directed):
    g = mgraph.io.generators.rmat(16, seed=7, weights=(1, 64))
    if directed:  # keep one direction of each edge: a directed graph whose reverse differs
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
        keep = src < g.indices
        g = mgraph.Graph.from_edges(src[keep], g.indices[keep], g.weights[keep], num_vertices=g.num_vertices,
                                    directed=True)
    source = int(np.argmax(np.diff(g.indptr)))
    dist = mgraph.sssp(g, source, backend="numpy").distance
    want = np.full(g.num_vertices, -1, dtype=g.indices.dtype)
    want[source] = source
    got = cp.asarray(want)
    ops.tight_predecessors(g.reverse(), dist, want)
    d = g.to("cupy")
    ops.tight_predecessors(d.reverse(), cp.asarray(dist), got)
    assert cp.asnumpy(got).tolist() == want.tolist()  # each row's first tight in-arc: one answer


def test_sssp_on_the_gpu_gives_a_valid_tree_on_one_device_and_parts():
    g = mgraph.io.generators.rmat(15, seed=8, weights=(1, 64))
    for devices in (1, [0, 0, 0]):
        r = mgraph.sssp(g, 0, backend="cupy", devices=devices)
        validate_sssp(g, 0, r.distance, r.predecessor)

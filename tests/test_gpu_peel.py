"""The GPU's peeling kernel (mgraph.ops.cupy_peel) against its NumPy twin (mgraph.ops.peel): the same core numbers,
levels and cascade rounds, on graphs whose frontiers hold hubs walked by a block; and through mgraph.core_number."""
import numpy as np
import pytest

import mgraph
from conftest import hub_digraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.ops import peel

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")

from mgraph.ops import cupy_peel  # noqa: E402  (after the skip: it imports CuPy)


def star_of_cliques(hubs=3, leaves=3000):
    """Hubs of more than HUB arcs (a block walks each) joined in a clique, each with its own leaves."""
    src, dst = [], []
    for h in range(hubs):
        for o in range(h + 1, hubs):
            src.append(h), dst.append(o)
        first = hubs + h * leaves
        src += [h] * leaves
        dst += list(range(first, first + leaves))
    return Graph.from_edges(np.array(src), np.array(dst), num_vertices=hubs * (leaves + 1))


GRAPHS = {
    "rmat:14": lambda: mgraph.load("rmat:14", backend="numpy"),
    "grid": lambda: mgraph.load("grid:300x200", backend="numpy"),
    "directed": lambda: hub_digraph(5000, 40000),
    "hubs": star_of_cliques,
    "no arcs": lambda: Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), num_vertices=7),
    "empty": lambda: Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), num_vertices=0),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_peeling_kernel_matches_the_twin(name):
    g = GRAPHS[name]()
    want_stats, got_stats = {}, {}
    want = peel.core_numbers(g, want_stats)
    got = cupy_peel.core_numbers(g.to("cupy"), got_stats)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(cp.asnumpy(got), want)
    assert got_stats == want_stats


def test_the_hubs_are_walked_by_blocks():
    g = star_of_cliques()
    assert int(np.diff(g.indptr).max()) > cupy_peel.HUB  # the block path runs


def test_core_number_on_one_gpu_peels_in_its_reset():
    g = mgraph.load("rmat:13", backend="numpy")
    r = mgraph.core_number(g, backend="cupy")
    np.testing.assert_array_equal(r.core, peel.core_numbers(g))
    assert r.stats["iterations"] == 0 and r.stats["supersteps"] == 2  # the reset, and the phase that ends
    assert ops.whole_graph_kernel(g.to("cupy"), "core_numbers") is cupy_peel.core_numbers
    assert ops.whole_graph_kernel(g.to("cupy"), "triangle_counts") is None  # the GPU runs triangles as supersteps

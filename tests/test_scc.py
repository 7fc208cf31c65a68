"""Strongly connected components (primitives/scc.py) against scipy and networkx, on 1 to 3 devices and MPI ranks."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import mgraph
from conftest import ROOT, run_mpi
from mgraph.graph import Graph
from mgraph.io.generators import rmat_edges


def largest_members(labels):
    """Any labelling of a partition, relabelled by the largest vertex id of each part (mgraph's labels)."""
    labels = np.asarray(labels)
    _, part = np.unique(labels, return_inverse=True)
    top = np.full(part.max() + 1 if part.size else 0, -1, dtype=np.int64)
    np.maximum.at(top, part, np.arange(labels.shape[0]))
    return top[part]


def reference(g):
    if g.num_vertices == 0:
        return np.zeros(0, dtype=np.int64)
    _, labels = connected_components(g.to_scipy(), directed=True, connection="strong")
    return largest_members(labels)


def directed(src, dst, n):
    return Graph.from_edges(np.asarray(src), np.asarray(dst), num_vertices=n, directed=True)


def random_graph(n, arcs_per_vertex, seed):
    rng = np.random.default_rng(seed)
    m = int(n * arcs_per_vertex)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    return directed(src[keep], dst[keep], n)


def rmat_directed(scale, seed=0):
    src, dst, _ = rmat_edges(scale, seed=seed)
    return directed(src, dst, 1 << scale)


def graphs():
    n = 400
    ring = np.arange(n)
    yield "random sparse", random_graph(500, 0.8, 1)
    yield "random near the threshold", random_graph(500, 1.2, 2)
    yield "random dense", random_graph(300, 4.0, 3)
    yield "rmat 10", rmat_directed(10)
    yield "long cycle", directed(ring, (ring + 1) % n, n)
    yield "reverse chain", directed(ring[1:], ring[:-1], n)  # the largest id first: colouring's worst case
    yield "chain", directed(ring[:-1], ring[1:], n)
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, n, 1500), rng.integers(0, n, 1500)
    yield "dag", directed(np.minimum(a, b)[a != b], np.maximum(a, b)[a != b], n)
    # cycles joined by one-way arcs, and vertices with no arcs at all
    src = [0, 1, 2, 3, 4, 5, 2, 6, 7, 7, 9]
    dst = [1, 2, 0, 4, 5, 3, 3, 7, 6, 8, 9]
    yield "cycles and isolated vertices", directed(src, dst, 14)
    yield "no arcs", directed([], [], 6)


@pytest.mark.parametrize("devices", [1, 2, 3])
def test_labels_are_the_largest_id_of_each_strong_component(devices):
    for name, g in graphs():
        want = reference(g)
        r = mgraph.strongly_connected_components(g, devices=devices, backend="numpy")
        assert np.array_equal(r.labels, want), name
        assert r.labels.dtype == np.int64
        assert r.stats["num_components"] == np.unique(want).shape[0], name


@pytest.mark.parametrize("options", [dict(duplication="all"), dict(communication="broadcast"),
                                     dict(partitioner="biased-random"), dict(partitioner="metis", devices=2)])
def test_every_layout_and_exchange(options):
    options = {"devices": 3, **options}
    for seed in (4, 5):
        g = random_graph(300, 1.5, seed)
        assert np.array_equal(mgraph.strongly_connected_components(g, backend="numpy", **options).labels,
                              reference(g))


def test_the_partition_is_networkxs():
    g = random_graph(200, 1.3, 8)
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    G.add_edges_from(zip(src.tolist(), g.indices.tolist()))
    labels = mgraph.strongly_connected_components(g, devices=2, backend="numpy").labels
    got = {frozenset(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)}
    assert got == {frozenset(c) for c in nx.strongly_connected_components(G)}


def test_from_scipy_and_networkx_inputs():
    A = sp.csr_array(np.array([[0, 1, 0], [1, 0, 0], [0, 1, 0]]))
    assert mgraph.strongly_connected_components(mgraph.from_scipy(A, directed=True)).labels.tolist() == [1, 1, 2]
    assert mgraph.strongly_connected_components(nx.DiGraph([(0, 1), (1, 0), (2, 1)])).labels.tolist() == [1, 1, 2]


def test_an_empty_graph_has_no_components():
    r = mgraph.strongly_connected_components(directed([], [], 0))
    assert r.labels.shape == (0,) and r.stats["num_components"] == 0


def test_an_undirected_graph_is_refused_in_one_line():
    with pytest.raises(ValueError, match="needs a directed graph") as e:
        mgraph.strongly_connected_components(Graph.from_edges(np.array([0]), np.array([1]), num_vertices=2))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("ranks", [2, 3])
def test_on_mpi_ranks_equals_the_reference(tmp_path, ranks):
    g = random_graph(300, 1.4, 9)
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, g.indices)) + f"{g.num_vertices - 1} {g.num_vertices - 1}\n")
    out = tmp_path / "out.npz"
    done = run_mpi(ranks, ["python", f"{ROOT}/tests/mpi_job.py", "scc", out, path])
    assert done.returncode == 0, done.stderr[-3000:]
    got = np.load(out)
    whole = mgraph.load(str(path), directed=True)
    assert int(got["devices"]) == ranks
    assert np.array_equal(got["labels"], reference(whole))


@pytest.mark.gpu
def test_the_gpu_gives_the_cpus_labels():
    pytest.importorskip("cupy")
    for name, g in graphs():
        want = mgraph.strongly_connected_components(g, backend="numpy").labels
        for devices in ([0], [0, 0]):  # one part, and two parts on the one GPU every GPU machine has
            got = mgraph.strongly_connected_components(g, backend="cupy", devices=devices).labels
            assert np.array_equal(np.asarray(got), want), (name, devices)


def test_reference_labels_are_the_largest_ids():
    """The checker's reference (scipy's strong components, each labelled by its largest vertex) against networkx."""
    import networkx as nx

    from mgraph.check.validate import reference_strong_components

    rng = np.random.default_rng(9)
    src, dst = rng.integers(0, 60, 150), rng.integers(0, 60, 150)
    keep = src != dst
    g = directed(src[keep], dst[keep], 60)
    G = nx.DiGraph()
    G.add_nodes_from(range(60))
    G.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist()))
    want = np.empty(60, dtype=np.int64)
    for comp in nx.strongly_connected_components(G):
        want[list(comp)] = max(comp)
    assert np.array_equal(reference_strong_components(g), want)

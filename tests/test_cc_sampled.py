"""Connected components by sampled hooking (Afforest) on whole graphs, against scipy.sparse.csgraph; the
sampled hooking operator against a plain union-find over the arcs it selects."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.primitives.cc import CC


def smallest_ids(n, src, dst):
    """Each vertex's smallest vertex id of its weakly connected component (scipy)."""
    a = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    _, comp = connected_components(a, directed=True, connection="weak")
    first = np.full(comp.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, comp, np.arange(n))
    return first[comp]


def random_graph(seed, n, m, directed, hubs=False):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n // 8 if hubs else n, m)  # hubs: every arc's head among few vertices
    return Graph.from_edges(src, dst, num_vertices=n, directed=directed)


def arcs_of(g):
    return np.repeat(np.arange(g.num_vertices), np.diff(g.indptr)), g.indices.astype(np.int64)


GRAPHS = {
    "sparse undirected": lambda: random_graph(1, 3000, 1800, False),  # many small components, isolated vertices
    "sparse directed": lambda: random_graph(2, 3000, 1800, True),
    "hubs directed": lambda: random_graph(3, 4000, 30000, True, hubs=True),
    "rmat 12": lambda: mgraph.io.generators.rmat(12, 4, seed=3),
    "grid": lambda: mgraph.io.generators.grid(40, 30),
    "no arcs": lambda: Graph.from_edges([], [], num_vertices=7, directed=True),
    "empty": lambda: Graph.from_edges([], [], num_vertices=0, directed=False),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_cc_on_a_whole_graph_matches_scipy(name):
    g = GRAPHS[name]()
    src, dst = arcs_of(g)
    assert mgraph.connected_components(g).labels.tolist() == smallest_ids(g.num_vertices, src, dst).tolist()


@pytest.mark.parametrize("name", ["sparse directed", "hubs directed", "rmat 12", "grid", "no arcs"])
@pytest.mark.parametrize("devices", [2, 3])
@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_parts_hook_a_sample_first_and_agree_with_scipy(name, devices, duplication):
    g = GRAPHS[name]()
    src, dst = arcs_of(g)
    got = mgraph.connected_components(g, devices=devices, duplication=duplication).labels
    assert got.tolist() == smallest_ids(g.num_vertices, src, dst).tolist()


def test_every_part_leaves_the_pivots_tree_out_and_hooks_fewer_arcs(monkeypatch):
    """The pivot is the smallest id of the top degree bucket on every device; each part holding it skips that
    tree's rows in the full hooking, so most arcs are hooked by the sample alone."""
    g = GRAPHS["rmat 12"]()
    src, dst = arcs_of(g)
    degree = np.diff(g.indptr)
    hub = int(np.flatnonzero(degree >= 1 << (int(degree.max()).bit_length() - 1)).min())
    seen, hooked = [], []
    original = ops.hook_components

    def counting(graph, parent, pairs_below=None, *, arcs=None, skip=None):
        if arcs == (CC.SAMPLED_ARCS, None):
            rows = np.repeat(np.arange(graph.num_vertices), np.diff(graph.indptr))[: int(graph.indptr[graph.arc_rows])]
            position = np.arange(rows.shape[0]) - graph.indptr[rows]
            take = (position >= arcs[0]) & ((parent[rows] != skip) if skip is not None else True)
            seen.append(skip is not None)
            hooked.append(int(take.sum()))
        return original(graph, parent, pairs_below, arcs=arcs, skip=skip)

    monkeypatch.setattr(ops, "hook_components", counting)
    got = mgraph.connected_components(g, devices=3)
    assert got.labels.tolist() == smallest_ids(g.num_vertices, src, dst).tolist()
    assert seen == [True, True, True]  # the hub is held by every part
    assert sum(hooked) < 0.25 * g.num_arcs, (hooked, g.num_arcs, hub)


@pytest.mark.parametrize("arcs, skip", [((0, 1), None), ((1, 2), None), ((0, 2), None), ((2, None), None),
                                        (None, 0), ((1, None), 5), ((0, 0), None)])
def test_hook_components_unions_exactly_the_selected_arcs(arcs, skip):
    g = random_graph(7, 600, 2400, True)
    src, dst = arcs_of(g)
    position = np.arange(g.num_arcs) - g.indptr[src]
    parent = np.arange(g.num_vertices, dtype=np.int64)
    keep = np.ones(g.num_arcs, dtype=bool)
    if arcs is not None:
        keep &= (position >= arcs[0]) & ((position < arcs[1]) if arcs[1] is not None else True)
    if skip is not None:
        keep &= src != skip  # every parent is itself at the start: only row `skip` is left out
    ops.hook_components(g, parent, arcs=arcs, skip=skip)
    ops.compress(parent)
    assert parent.tolist() == smallest_ids(g.num_vertices, src[keep], dst[keep]).tolist()


def test_hook_components_refuses_what_does_not_combine():
    g = random_graph(8, 50, 100, False)
    parent = np.arange(50, dtype=np.int64)
    with pytest.raises(ValueError, match="pairs_below hooks half of the arcs"):
        ops.hook_components(g, parent, 50, arcs=(0, 1))
    with pytest.raises(ValueError, match="arcs must be"):
        ops.hook_components(g, parent, arcs=(2, 1))
    with pytest.raises(ValueError, match="arcs must be"):
        ops.hook_components(g, parent, arcs=(-1, None))
    with pytest.raises(ValueError, match="skip must be a vertex id below 50"):
        ops.hook_components(g, parent, skip=50)


def _hub_and_chain(directed):
    """A hub (10, with leaves 20..59 on device 0 and leaf 60 on device 1), a chain 0 - 1 - 2 - 3 - 10 whose first two
    vertices are device 1's, a pair 63 - 64 split between the devices, isolated 61 and 62, and (directed) 70 on device
    1 whose one arc comes from leaf 21.  Device 1 holds the hub's tree as {60, 10} only: the component's smallest id,
    0, lies outside the hub's tree on every device, and 70 lies in it on device 0 but not on its own device (Afforest
    skips the hub's rows, and their arcs are hooked only from their other end)."""
    src = list(range(20, 61)) + [0, 1, 2, 3, 63, 21]
    dst = [10] * 41 + [1, 2, 3, 10, 64, 70]
    owners = np.zeros(71, dtype=np.int64)
    owners[[0, 1, 60, 62, 64, 70]] = 1
    g = Graph.from_edges(np.array(src), np.array(dst), num_vertices=71, directed=directed)
    return g, (lambda graph, parts, seed: owners)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_parts_agree_where_the_hubs_trees_miss_the_smallest_id(directed, duplication):
    """Labels that must cross the devices through vertices outside the hub's tree: the component's smallest id, 0,
    reaches the hub's trees on both devices, and 70, alone in a tree of its own device, takes the label of the hub's
    tree on device 0."""
    g, owners = _hub_and_chain(directed)
    src, dst = arcs_of(g)
    want = smallest_ids(g.num_vertices, src, dst)
    assert want[10] == 0 and want[70] == 0 and want[64] == 63 and want[61] == 61
    got = mgraph.connected_components(g, devices=2, partitioner=owners,
                                      duplication=duplication).labels
    assert got.tolist() == want.tolist()

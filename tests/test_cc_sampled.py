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
    "rmat 12": lambda: mgraph.generators.rmat(12, 4, seed=3),
    "grid": lambda: mgraph.generators.grid(40, 30),
    "no arcs": lambda: Graph.from_edges([], [], num_vertices=7, directed=True),
    "empty": lambda: Graph.from_edges([], [], num_vertices=0, directed=False),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_cc_on_a_whole_graph_matches_scipy(name):
    g = GRAPHS[name]()
    src, dst = arcs_of(g)
    assert mgraph.connected_components(g).labels.tolist() == smallest_ids(g.num_vertices, src, dst).tolist()


@pytest.mark.parametrize("name", ["sparse directed", "hubs directed", "rmat 12"])
@pytest.mark.parametrize("devices", [2, 3])
def test_parts_hook_every_arc_and_agree_with_one_device(name, devices):
    g = GRAPHS[name]()
    one = mgraph.connected_components(g).labels
    assert mgraph.connected_components(g, devices=devices).labels.tolist() == one.tolist()


def test_the_sampled_path_is_taken_on_a_whole_graph_only(monkeypatch):
    calls = []
    original = CC._hook_sampled
    monkeypatch.setattr(CC, "_hook_sampled", lambda self: (calls.append(1), original(self))[1])
    g = GRAPHS["rmat 12"]()
    mgraph.connected_components(g)
    assert calls == [1]
    mgraph.connected_components(g, devices=2)
    assert calls == [1]  # the parts hooked every arc


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

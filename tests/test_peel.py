"""Core numbers of a whole graph by levels and cascade rounds (mgraph.ops.peel, the GPU peeling kernel's twin):
equal to networkx, with one level per distinct core number."""
import networkx as nx
import numpy as np
import pytest

import mgraph
from conftest import hub_digraph, to_networkx
from mgraph.graph import Graph
from mgraph.ops import peel


def networkx_cores(g):
    core = nx.core_number(to_networkx(g))
    return np.array([core[v] for v in range(g.num_vertices)], dtype=np.int64)


GRAPHS = {
    "rmat": lambda: mgraph.load("rmat:11", backend="numpy"),
    "grid": lambda: mgraph.load("grid:40x30", backend="numpy"),
    "directed": lambda: hub_digraph(3000, 20000),
    "clique and path": lambda: Graph.from_edges(np.array([0, 0, 0, 1, 1, 2, 3, 4, 5]),
                                                np.array([1, 2, 3, 2, 3, 3, 4, 5, 6]), num_vertices=9),
    "star": lambda: Graph.from_edges(np.zeros(50, dtype=np.int64), np.arange(1, 51), num_vertices=51),
    "no arcs": lambda: Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), num_vertices=5),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_core_numbers_equal_networkx_one_level_per_core_number(name):
    g = GRAPHS[name]()
    stats = {}
    core = peel.core_numbers(g, stats)
    want = networkx_cores(g)
    np.testing.assert_array_equal(core, want)
    assert core.dtype == np.int64
    assert stats["levels"] == np.unique(want).shape[0]  # each level removes the vertices of one core number
    assert stats["rounds"] >= stats["levels"]  # every level's first frontier is a round


def test_cascade_rounds_follow_a_path_one_vertex_at_a_time():
    n = 40
    g = Graph.from_edges(np.arange(n - 1), np.arange(1, n), num_vertices=n)
    stats = {}
    np.testing.assert_array_equal(peel.core_numbers(g, stats), np.ones(n, dtype=np.int64))
    # level 1 starts from the two ends; each round removes the next vertex inwards from each end
    assert stats == {"levels": 1, "rounds": n // 2}


def test_an_empty_graph_has_no_levels():
    g = Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64), num_vertices=0)
    stats = {}
    assert peel.core_numbers(g, stats).shape == (0,)
    assert stats == {"levels": 0, "rounds": 0}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_the_checkers_reference_equals_networkx(name):
    from mgraph.check.validate import reference_core_numbers

    g = GRAPHS[name]()
    np.testing.assert_array_equal(reference_core_numbers(g), networkx_cores(g))


def test_the_checkers_reference_counts_opposite_arcs_twice():
    from mgraph.check.validate import reference_core_numbers

    # a directed triangle both ways: every vertex has degree 4 (two in, two out), core number 4 in networkx
    src, dst = np.array([0, 1, 2, 1, 2, 0]), np.array([1, 2, 0, 0, 1, 2])
    g = Graph.from_edges(src, dst, num_vertices=3, directed=True)
    np.testing.assert_array_equal(reference_core_numbers(g), networkx_cores(g))
    np.testing.assert_array_equal(peel.core_numbers(g), networkx_cores(g))

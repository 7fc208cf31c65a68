"""biased_random_parts: biased-random partitioning from hash-built parts, run by P worker threads (ThreadGroup).

Every rank must return the same full owner table, within the whole-graph
partitioner's balance bound, with a border well below random's on a mesh;
the table depends on the graph, the part count and the seed only, not on the
number of ranks or the part layout.
"""
from __future__ import annotations

import functools
import threading

import numpy as np
import pytest

import mgraph
from mgraph import partitioners
from conftest import get_case
from mgraph.backend import Backend
from mgraph.io.generators import grid, rmat
from mgraph.group import ThreadGroup
from mgraph.parts.build import Owners, build_part
from mgraph.io.sources import GraphSource
from mgraph.partitioners.biased import capacity
from mgraph.partitioners.biased_parts import biased_random_parts

RANKS = (1, 2, 3, 4)


def threads(P, work):
    """``work(group)`` on P threads of one ThreadGroup; the results in rank order (a failure on any re-raised)."""
    shared = ThreadGroup.shared_state(P)
    out, errors = [None] * P, []

    def run(rank):
        try:
            out[rank] = work(ThreadGroup(shared, rank))
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
            shared["barrier"].abort()

    ts = [threading.Thread(target=run, args=(d,)) for d in range(P)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    first = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)] or errors
    if first:
        raise first[0]
    return out


def directed_random():
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 2000, 8000), rng.integers(0, 2000, 8000)
    return mgraph.Graph.from_edges(src, dst, num_vertices=2100, directed=True)  # 100 isolated, one-way arcs


GRAPHS = {
    "chesapeake": lambda: get_case("chesapeake").graph,
    "grid": lambda: grid(60, 60),
    "directed": directed_random,
    "rmat": lambda: rmat(12),
}


@functools.lru_cache(maxsize=None)
def graph(name):
    return GRAPHS[name]()


@functools.lru_cache(maxsize=None)
def parts(name, P, duplication="all"):
    """Each rank's part of a graph, built with the hash ("random") owners as an MPI run builds it."""
    g = graph(name)
    return tuple(threads(P, lambda group: build_part(group, GraphSource(g), Backend("numpy"), Owners(P, 0),
                                                     duplication)))


def partition(name, P, k, seed=0, duplication="all", **kw):
    """Every rank's owner table."""
    built = parts(name, P, duplication)
    return threads(P, lambda group: biased_random_parts(group, built[group.rank], k, seed, **kw))


def agreed(name, P, k, seed=0, **kw):
    """The one table all ranks returned (checked identical)."""
    tables = partition(name, P, k, seed, **kw)
    for t in tables[1:]:
        assert np.array_equal(t, tables[0])
    return tables[0]


def total_border(g, owner, k):
    return sum(p["border"] for p in partitioners.quality(g, owner, k))


# -- the same valid, balanced table on every rank, whatever the rank count -------------
@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_rank_same_valid_balanced_table_independent_of_ranks(name, k):
    g = graph(name)
    n = g.num_vertices
    first = None
    for P in RANKS:
        tables = partition(name, P, k, seed=1)
        for t in tables:
            assert isinstance(t, np.ndarray) and t.dtype == np.int32 and t.shape == (n,)
            assert np.array_equal(t, tables[0]), P
        owner = tables[0]
        assert owner.min() >= 0 and owner.max() < k  # every vertex placed (no -1 left)
        assert np.bincount(owner, minlength=k).max() <= capacity(n, k), P  # the hard bound
        if first is None:
            first = owner
        assert np.array_equal(owner, first), f"P={P} differs from P=1"


def test_deterministic_per_seed():
    a = agreed("grid", 3, 4, seed=7)
    assert np.array_equal(a, agreed("grid", 3, 4, seed=7))
    assert not np.array_equal(a, agreed("grid", 3, 4, seed=8))


def test_same_table_from_any_layout():
    """1-hop parts (local ids), duplicate-all parts and a whole graph on one rank give one table."""
    want = agreed("directed", 3, 4, seed=2)
    assert np.array_equal(want, agreed("directed", 3, 4, seed=2, duplication="1-hop"))
    assert np.array_equal(want, agreed("directed", 2, 4, seed=2, duplication="1-hop"))
    whole = threads(1, lambda group: biased_random_parts(group, graph("directed"), 4, 2))[0]
    assert np.array_equal(want, whole)


# -- quality -----------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 4])
def test_grid_border_well_below_random_and_near_whole_graph_biased(k):
    g = graph("grid")
    for seed in (0, 1):
        rand = total_border(g, partitioners.assign(g, k, "random", seed=seed), k)
        whole = total_border(g, partitioners.assign(g, k, "biased-random", seed=seed), k)
        mine = total_border(g, agreed("grid", 3, k, seed=seed), k)
        assert mine <= 0.75 * rand, (seed, mine, rand)  # measured about 0.45-0.55 x
        assert mine <= 1.15 * whole, (seed, mine, whole)  # the same algorithm: about the same border


def test_rmat_border_below_random_with_arcs_balanced():
    g = graph("rmat")
    for seed in (0, 1):
        owner = agreed("rmat", 4, 4, seed=seed)
        rand = total_border(g, partitioners.assign(g, 4, "random", seed=seed), 4)
        assert total_border(g, owner, 4) < 0.95 * rand  # measured about 0.89 x
        q = partitioners.quality(g, owner, 4)
        # the arc bound is soft, as in biased.py: kept (1.05) on most seeds, overshot where spills leave no choice
        # (seed 1 here: 1.19; the whole-graph partitioner reaches 1.19-1.32 on some seeds of rmat:12 too)
        assert max(p["edge_imbalance"] for p in q) < (1.1 if seed == 0 else 1.3), q


def test_directed_grid_uses_both_directions():
    src, dst, _ = grid(30, 30).edges()
    g = mgraph.Graph.from_edges(src, dst, num_vertices=900, directed=True)  # arcs only from lower to higher ids
    built = threads(2, lambda group: build_part(group, GraphSource(g), Backend("numpy"), Owners(2, 0), "all"))
    owner = threads(2, lambda group: biased_random_parts(group, built[group.rank], 4))[0]
    assert total_border(g, owner, 4) < 0.6 * total_border(g, partitioners.assign(g, 4, "random"), 4)


# -- small and awkward graphs ----------------------------------------------------------------
def run_on(g, P, k, seed=0):
    built = threads(P, lambda group: build_part(group, GraphSource(g), Backend("numpy"), Owners(P, 0), "all"))
    tables = threads(P, lambda group: biased_random_parts(group, built[group.rank], k, seed))
    for t in tables[1:]:
        assert np.array_equal(t, tables[0])
    return tables[0]


def test_star_spills_to_other_parts_within_the_bound():
    g = get_case("star300").graph  # every leaf wants the hub's part
    for P in (1, 3):
        counts = np.bincount(run_on(g, P, 4), minlength=4)
        assert counts.max() <= capacity(301, 4) and counts.sum() == 301


def test_no_edges_one_part_and_more_parts_than_vertices():
    g = mgraph.Graph.from_edges([], [], num_vertices=7)
    owner = run_on(g, 2, 3)
    assert np.bincount(owner, minlength=3).max() <= capacity(7, 3)
    assert not run_on(graph("grid"), 2, 1).any()
    g = mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3], num_vertices=5)
    owner = run_on(g, 2, 9)
    assert owner.max() < 9 and np.unique(owner).size == 5  # capacity 1: five different parts


# -- bad arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("k, seed, match", [
    (0, 0, "num_parts"), (-2, 0, "num_parts"), (2.5, 0, "num_parts"), (True, 0, "num_parts"), ("2", 0, "num_parts"),
    (2, -1, "seed"), (2, 1.5, "seed"), (2, True, "seed"), (2, None, "seed"),
])
def test_bad_arguments(k, seed, match):
    built = parts("grid", 2)
    with pytest.raises(ValueError, match=match):
        threads(2, lambda group: biased_random_parts(group, built[group.rank], k, seed))
    with pytest.raises(ValueError, match=match):  # as partitioners.assign says it
        partitioners.assign(graph("grid"), k, "biased-random", seed)


def test_a_whole_graph_needs_a_group_of_one():
    with pytest.raises(ValueError, match="its own part"):
        threads(2, lambda group: biased_random_parts(group, graph("grid"), 2))

"""Each worker's part built from a share of the edges (mgraph.parts.build) is the part cut from the whole graph.

The whole-graph cut (mgraph.parts.subgraph.build) is the reference: the same own
vertices, proxies, id maps and CSR, for every layout, with weights and
directions, in rounds small enough that every arc travels in a different one.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import mgraph
from conftest import get_case
from mgraph.parts import build, subgraph
from mgraph.backend import Backend
from mgraph.group import ThreadGroup
from mgraph.parts.build import Owners, build_graph, build_part
from mgraph.io.sources import GraphSource, SpecSource
from mgraph.partitioners.random import random_owner


def build_in_threads(source, p, duplication, chunk=64, table=None):
    shared = ThreadGroup.shared_state(p)
    parts, errors = [None] * p, []

    def work(d):
        try:
            group = ThreadGroup(shared, d)
            source.open(group)
            parts[d] = build_part(group, source, Backend("numpy"), Owners(p, 0, table), duplication, chunk=chunk)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            shared["barrier"].abort()

    threads = [threading.Thread(target=work, args=(d,)) for d in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return parts


def assert_same_part(got, want):
    arrays = want.arrays()
    assert set(got.arrays()) == set(arrays)
    for name, a in arrays.items():
        b = got.arrays()[name]
        if name.startswith("id_on_"):  # entries of proxies a third part owns are never read: -1 here
            k = int(name[len("id_on_"):])
            used = (want.owner == k) | (np.arange(want.num_vertices) < want.own_below)
            a = np.where(used, a, -1)
        assert b.dtype == a.dtype and b.shape == a.shape, name
        np.testing.assert_array_equal(b, a, err_msg=name)


@pytest.mark.parametrize("name", ["chesapeake", "rand_dir_int", "facebook"])
@pytest.mark.parametrize("p", [2, 3, 5])
@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_a_part_built_from_shares_is_the_part_cut_from_the_whole_graph(name, p, duplication):
    g = get_case(name).graph
    parts = build_in_threads(GraphSource(g), p, duplication)
    for got, want in zip(parts, subgraph.build(g, random_owner(g, p, 0), p, duplication)):
        assert_same_part(got, want)


def test_an_owner_table_partitions_as_the_hash_does():
    g = get_case("rand_dir_int").graph
    owner = (np.arange(g.num_vertices) % 3).astype(np.int32)
    parts = build_in_threads(GraphSource(g), 3, "1-hop", table=owner)
    for got, want in zip(parts, subgraph.build(g, owner, 3, "1-hop")):
        assert_same_part(got, want)


@pytest.mark.parametrize("spec", ["rmat:9", "grid:17x11", "er:300:2000"])
def test_a_generated_graph_built_in_rounds_is_the_graph_built_at_once(spec):
    whole = mgraph.io.generators.spec_edges(spec, seed=3, weights=(1, 9)).graph()
    built = build_graph(SpecSource(spec, seed=3, weights=(1, 9)), Backend("numpy"), chunk=100)
    for name in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(built, name), getattr(whole, name), err_msg=name)
    for got, want in zip(build_in_threads(SpecSource(spec, seed=3, weights=(1, 9)), 3, "1-hop", chunk=100),
                         subgraph.build(whole, random_owner(whole, 3, 0), 3, "1-hop")):
        assert_same_part(got, want)


@pytest.mark.parametrize("p", [1, 3, build.SCAN_OWNERS, build.SCAN_OWNERS + 1])
def test_arcs_are_grouped_by_owner_in_order(p):
    """The build's routing groups arcs by owner and keeps their order within each owner, by compactions for few
    owners and by a stable sort for many: both give numpy's stable argsort."""
    dest = np.random.default_rng(p).integers(0, p, 10_000).astype(np.int32)
    np.testing.assert_array_equal(build._by_owner(np, dest, p), np.argsort(dest, kind="stable"))


@pytest.mark.parametrize("counts", ["routed", "local"])
@pytest.mark.parametrize("p", [2, 3])
@pytest.mark.parametrize("name", ["rand_dir_int", "facebook"])
def test_rows_counted_where_they_are_read_or_where_they_are_owned_give_the_same_part(monkeypatch, counts, p, name):
    """The count pass either routes rows to their owners or counts each worker's share over every vertex and
    sends the counts (a block of ids at a time; blocks of 7 ids here, so the counts travel in many blocks): both
    give the part cut from the whole graph."""
    monkeypatch.setattr(build, "COUNT_BYTES_PER_VERTEX", 0 if counts == "local" else 1 << 60)
    real = build._own_degrees
    calls = []

    def small_blocks(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs, block=7)

    monkeypatch.setattr(build, "_own_degrees", small_blocks)
    g = get_case(name).graph
    parts = build_in_threads(GraphSource(g), p, "1-hop")
    assert bool(calls) == (counts == "local")
    for got, want in zip(parts, subgraph.build(g, random_owner(g, p, 0), p, "1-hop")):
        assert_same_part(got, want)


def test_a_dense_graph_counts_where_it_is_read_and_a_sparse_one_where_it_is_owned():
    """The rule: counts travel instead of rows where every worker reads at least 16 bytes of row ids per vertex."""
    class Two:
        size = 2

        def allreduce(self, value, op):
            return value

    dense = mgraph.io.generators.spec_edges("rmat:10", seed=1).graph()  # about 30 arcs a vertex
    source = GraphSource(dense)
    assert build._counts_locally(Two(), source, [(0, dense.indices.shape[0] // 2)], np.int32)
    assert not build._counts_locally(Two(), source, [(0, dense.num_vertices // 2)], np.int32)

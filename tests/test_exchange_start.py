"""A run's start is not sent: every device holding the source starts there with the same values.

The enactor hands each device its own id of the run's source (None where the part does not hold it), and BFS, SSSP
and BC start with ``ops.start_at``.  Where the start's values combine by min or max, the copies of the source that
the first superstep's hop would carry change nothing where they arrive, so no device sends them (``Exchange``'s
start); BC's path counts add up (sum), so its start still travels.  A primitive that starts elsewhere than the run's
source is exchanged as before, and a device that starts with nothing still takes part in the hop, so devices that
send and devices that do not meet in the same transport.  References: scipy.sparse.csgraph and networkx.
"""
from __future__ import annotations

import functools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from mgraph import ops
from mgraph.primitives.bfs import BFS
from conftest import get_case


def hops_from(case, s):
    hops = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=s)
    return np.where(np.isinf(hops), -1, hops).astype(np.int64)


def start_bytes(r):
    """What each device sent in the run's first superstep (its start)."""
    return [int(d["bytes"][0]) for d in r.stats["per_device"]]


@pytest.mark.parametrize("communication", ["selective", "broadcast"])
@pytest.mark.parametrize("duplication", ["1-hop", "all"])
@pytest.mark.parametrize("devices", [2, 3])
def test_a_traversal_sends_nothing_at_its_start(devices, duplication, communication):
    case = get_case("rand_dir_int")
    opts = dict(devices=devices, duplication=duplication, communication=communication, seed=4)
    for s in (0, 5, 11):
        hops = hops_from(case, s)
        for make in (BFS, functools.partial(BFS, direction="auto"), functools.partial(BFS, direction="pull")):
            r = mgraph.run(make, case.graph, s, **opts)
            np.testing.assert_array_equal(r["depth"], hops)
            assert start_bytes(r) == [0] * devices
        r = mgraph.sssp(case.graph, s, **opts)
        np.testing.assert_allclose(r.distance, csgraph.dijkstra(case.csr, directed=True, indices=s))
        assert start_bytes(r) == [0] * devices


def test_path_counts_still_send_their_start():
    """BC combines its path counts by sum: each device holding the source sends its start, as before."""
    case = get_case("chesapeake")
    sources = [0, 3]
    r = mgraph.betweenness_centrality(case.graph, sources=sources, devices=3, seed=2)
    want = nx.betweenness_centrality_subset(case.nx, sources=sources, targets=list(case.nx.nodes), normalized=False)
    np.testing.assert_allclose(r.centrality, [want[v] for v in range(case.n)], rtol=1e-9, atol=1e-9)
    assert sum(start_bytes(r)) > 0


class FromVertex(BFS):
    """A BFS that starts at a fixed vertex whatever the run's source: its start is not the run's, so it is sent."""

    needs_source = False
    origin = 7

    def reset(self, source=None):
        self.depth = ops.unvisited(self.graph, np.int32)
        self.predecessor = ops.unvisited(self.graph, self.graph.indices.dtype)
        self.level = 0
        self.direction.reset()
        here = self.graph.local_id(self.origin)
        return ops.start_at(self.graph, here, (self.depth, 0), (self.predecessor, here))


@pytest.mark.parametrize("communication", ["selective", "broadcast"])
def test_a_start_elsewhere_than_the_source_is_sent(communication):
    case = get_case("rand_dir_int")
    r = mgraph.run(FromVertex, case.graph, devices=3, communication=communication, seed=1)
    np.testing.assert_array_equal(r["depth"], hops_from(case, FromVertex.origin))
    assert sum(start_bytes(r)) > 0  # the devices holding vertex 7 sent their start

"""The exchange's plan: what each phase of the shipped primitives exchanges, derived once from their declarations
(mgraph.comm.plan), and the same results whichever plan a run follows."""
import numpy as np
import pytest

import mgraph
from mgraph import partitioners
from mgraph.parts import subgraph
from mgraph.comm import plan as planning
from mgraph.comm.exchange import Exchange
from mgraph.comm.plan import (HOLDERS_BORDERS, HOLDERS_BY_OWNER, HOLDERS_OWN_FIRST, TO_EVERY_PEER, TO_NOBODY,
                              TO_OWNERS)
from mgraph.primitives.bc import BC
from mgraph.primitives.bfs import BFS
from mgraph.primitives.cc import CC
from mgraph.primitives.pagerank import PageRank
from mgraph.primitives.sssp import SSSP


def _part(duplication, weighted=False):
    g = mgraph.io.generators.grid(6, 5, weights=(1, 9) if weighted else None)
    owner = partitioners.assign(g, 3, "random", 1)
    return subgraph.build(g, owner, 3, duplication)[0]


def _plans(prim_type, duplication, communication, phases=1, **kw):
    """The plan of each phase of a run of ``prim_type`` on part 0 of a 3-part grid (the first phase from a
    reset, the next ones after next_phase)."""
    part = _part(duplication, weighted=prim_type is SSSP)
    prim = prim_type(part, **kw)
    prim.reset(0)
    out = [planning.plan(prim, part, 3, communication)]
    for _ in range(phases - 1):
        prim.next_phase()
        out.append(planning.plan(prim, part, 3, communication))
    return out


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_push_bfs_sends_each_vertex_to_its_owner_and_never_dedupes(duplication):
    (p,) = _plans(BFS, duplication, "selective")
    assert (p.hop0, p.holders, p.track_stale) == (TO_OWNERS, None, False)
    assert p.fields == () and p.carry == ("predecessor",) and p.implied == {"depth"}
    assert not p.dedupe  # the level is implied and combined by min: a vertex changes once


def test_pulling_bfs_keeps_copies_current():
    (p,) = _plans(BFS, "1-hop", "selective", direction="auto")
    assert p.holders == HOLDERS_OWN_FIRST
    (p,) = _plans(BFS, "all", "selective", direction="auto")
    assert p.holders == HOLDERS_BY_OWNER


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_pagerank_sends_nothing_to_owners_and_fixed_lists_to_holders(duplication):
    (p,) = _plans(PageRank, duplication, "selective")
    assert (p.hop0, p.holders, p.fields, p.function) == (TO_NOBODY, HOLDERS_BORDERS, ("share",), True)
    (p,) = _plans(PageRank, duplication, "broadcast")
    assert (p.hop0, p.holders, p.as_bits) == (TO_EVERY_PEER, None, False)
    assert p.caller_ids == (duplication == "1-hop")


def test_sssp_tracks_stale_copies_while_relaxing_and_keeps_them_current_in_its_tree_walk():
    relax, tree = _plans(SSSP, "1-hop", "selective", phases=2)
    assert (relax.hop0, relax.holders, relax.track_stale, relax.fields) == (TO_OWNERS, None, True, ("distance",))
    assert relax.dedupe
    assert (tree.holders, tree.track_stale, tree.fields, tree.carry) == (HOLDERS_OWN_FIRST, False, ("label",),
                                                                           ("predecessor",))


def test_bc_forward_levels_go_as_bits_on_broadcast_and_its_backward_sweep_sends_deltas():
    forward, backward = _plans(BC, "1-hop", "broadcast", phases=2)
    assert forward.implied == {"depth"} and forward.fields == ("sigma",) and not forward.as_bits
    assert backward.implied == frozenset() and backward.fields == ("delta",)
    (forward,) = _plans(BFS, "1-hop", "broadcast")
    assert forward.as_bits and forward.caller_ids


def test_cc_labels_travel_and_merges_dedupe():
    sample, spread = _plans(CC, "1-hop", "selective", phases=2)  # the sample phase sends nothing: its frontier is empty
    for p in (sample, spread):
        assert p.fields == ("label",) and p.dedupe and p.holders == HOLDERS_OWN_FIRST


def test_an_unknown_communication_is_refused():
    part = _part("1-hop")
    with pytest.raises(ValueError, match="unknown communication 'gossip'"):
        planning.plan(BFS(part), part, 3, "gossip")


@pytest.mark.parametrize("name, phases", [("bfs", 1), ("sssp", 2), ("bc", 2), ("pagerank", 1), ("cc", 2)])
def test_a_plan_is_derived_once_per_phase_on_each_device(monkeypatch, name, phases):
    calls = []
    original = Exchange.begin_phase

    def spy(self, prim):
        calls.append(self.me)
        return original(self, prim)

    monkeypatch.setattr(Exchange, "begin_phase", spy)
    g = mgraph.io.generators.grid(8, 7, weights=(1, 9) if name == "sssp" else None)
    run = {"bfs": lambda: mgraph.bfs(g, 0, devices=3), "sssp": lambda: mgraph.sssp(g, 0, devices=3),
           "bc": lambda: mgraph.betweenness_centrality(g, sources=[0], devices=3),
           "pagerank": lambda: mgraph.pagerank(g, devices=3), "cc": lambda: mgraph.connected_components(g, devices=3)}
    run[name]()
    assert sorted(calls) == sorted(list(range(3)) * phases)


@pytest.mark.parametrize("shares, value_bytes", [("float64", 8), ("float32", 4)])
def test_border_lists_send_their_ids_once_per_phase(shares, value_bytes):
    """PageRank's fixed border lists through the host: the first superstep sends ids (int32 here) and shares, the
    later ones the shares alone, which each receiver places by the ids it kept; the ranks are those of one device
    (the border link sends the shares alone from the first: tests/test_peer_borders.py)."""
    g = mgraph.io.generators.rmat(12, 8, seed=4)
    one = mgraph.pagerank(g, shares=shares)
    r = mgraph.pagerank(g, devices=3, shares=shares, peer_borders=False)
    np.testing.assert_allclose(r.rank, one.rank, rtol=1e-6, atol=1e-12)
    for d in r.stats["per_device"]:
        first, later = d["bytes"][0], d["bytes"][1:-1]
        assert first > 0 and later and all(b * (4 + value_bytes) == first * value_bytes for b in later), d["bytes"]

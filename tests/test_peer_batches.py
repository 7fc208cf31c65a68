"""Batched supersteps on several devices joined by a link (mgraph.comm.peer): a user's level-by-level push visit
sends, waits and combines on the devices, the host reads a batch's counts once and the devices agree on them once.
CPU virtual devices run the NumPy twin (threads, and MPI ranks through their collectives); test_gpu_peer_levels
compares the GPUs' kernel with it.

Results are held to scipy.sparse.csgraph and Graph500's rules, and to the host-driven exchange
(``peer_levels=False``) on the same parts: the same depths, supersteps, iterations and frontier sizes.
"""
import re
import threading

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from mgraph.check.validate import validate_bfs
from mgraph.primitives.contract import ContractError
from mgraph.runner import enactor

import test_batches
from test_batches import Hops


def hops(g, source):
    d = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


class LevelBFS(Hops):
    """BFS one level per superstep, as a user writes it (test_batches.Hops: advance_visit and nothing else), and
    the level every frontier vertex holds (``frontier_values``, which lets the link stand in for the exchange)."""

    name = "level_bfs"
    reads_proxies = False

    def frontier_values(self):
        return {"hops": self.step}


def counts(r):
    return r.stats["supersteps"], r.stats["iterations"], r.stats["frontier_sizes"]


@pytest.mark.parametrize("spec, devices, source", [
    ("grid:40x30", 2, 0), ("grid:40x30", 3, 611), ("grid:25x25", 5, 312), ("rgg:11", 2, 5), ("rgg:11", 4, 0),
])
def test_batched_levels_equal_scipy_graph500_and_the_host_path(spec, devices, source):
    g = mgraph.load(spec)
    r = mgraph.run(LevelBFS, g, source=source, devices=devices)
    host = mgraph.run(LevelBFS, g, source=source, devices=devices, peer_levels=False)
    ref = hops(g, source)
    np.testing.assert_array_equal(r.hops, ref)
    validate_bfs(g, source, r.hops, r.via)
    np.testing.assert_array_equal(host.hops, ref)
    assert r.stats["level_path"] == "peer" and host.stats["level_path"] == "host"
    # a level per superstep, the last finding nothing; the levels run past it in the last batch are taken back
    levels = int(ref.max()) + 1
    assert r.stats["peer_levels"] == levels and r.stats["iterations"] == levels
    assert r.stats["frontier_sizes"] == [int((ref == k).sum()) for k in range(1, levels + 1)]
    assert sum(r.stats["peer_bytes"]) > 0  # the borders' claims went through the inboxes
    same_as_the_hosts(r, host)


def same_as_the_hosts(r, host):
    """The host path's counts, but for one superstep it may add at the end: a device whose merged frontier holds
    copies only (the whole frontier's size 0) has not converged, and advances them to nothing.  The link hands
    copies to their owners and keeps none."""
    (s, i, f), (hs, hi, hf) = counts(r), counts(host)
    assert hf[:len(f)] == f and not any(hf[len(f):])
    assert hs - s == hi - i == len(hf) - len(f) in (0, 1)


@pytest.mark.parametrize("length", [2, 3, 4, 31, 32, 33, 100])
def test_batches_of_every_length_end_where_one_superstep_at_a_time_ends(length):
    """A path cut across three devices: every level crosses to a peer; the run's end falls at every place in a
    batch (batches of 1, 2, 4, ... 32 supersteps)."""
    src = np.arange(length)
    g = mgraph.Graph.from_edges(src, src + 1, num_vertices=length + 1, directed=True)
    alternate = lambda graph, parts, seed: (np.arange(graph.num_vertices) % parts).astype(np.int32)  # noqa: E731
    r = mgraph.run(LevelBFS, g, source=0, devices=3, partitioner=alternate)
    host = mgraph.run(LevelBFS, g, source=0, devices=3, partitioner=alternate, peer_levels=False)
    np.testing.assert_array_equal(r.hops, np.arange(length + 1))
    np.testing.assert_array_equal(r.via, np.r_[0, np.arange(length)])
    same_as_the_hosts(r, host)
    assert r.stats["supersteps"] == length + 3
    assert r.stats["peer_levels"] == length + 1


class Heads(test_batches.Heads):
    """From every vertex without in-arcs that this device owns (each device starts its own paths), the level
    told."""

    reads_proxies = False

    def frontier_values(self):
        return {"depth": self.step}


def test_a_device_whose_frontier_empties_first_goes_on_visiting_nothing():
    """Paths of 10 and 70 edges, each on its own device: nothing crosses, device 0's frontier is empty 60
    levels before device 1's, and its kernels go on posting empty levels until the whole frontier is empty."""
    short, long_ = 10, 70
    src = np.r_[np.arange(short), short + 1 + np.arange(long_)]
    n = short + long_ + 2
    g = mgraph.Graph.from_edges(src, src + 1, num_vertices=n, directed=True)
    by_path = lambda graph, parts, seed: (np.arange(graph.num_vertices) > short).astype(np.int32)  # noqa: E731
    r = mgraph.run(Heads, g, devices=2, partitioner=by_path)
    host = mgraph.run(Heads, g, devices=2, partitioner=by_path, peer_levels=False)
    np.testing.assert_array_equal(r.depth, np.r_[np.arange(short + 1), np.arange(long_ + 1)])
    np.testing.assert_array_equal(r.depth, host.depth)
    assert r.stats["level_path"] == "peer" and r.stats["peer_bytes"] == [0, 0]
    assert r.stats["peer_levels"] == long_ + 1
    sizes = r.stats["frontier_sizes"]
    assert sizes[:short] == [2] * short and sizes[short:] == [1] * (long_ - short) + [0]
    same_as_the_hosts(r, host)


def test_several_sources_restart_the_inboxes():
    """Each source's reset begins a phase: the inboxes fill from their start again (a copy is claimed once per
    traversal, not once per run)."""
    g = mgraph.load("grid:30x30")
    sources = [0, 450, 899, 0]
    r = mgraph.run(LevelBFS, g, sources=sources, devices=3)
    np.testing.assert_array_equal(r.hops, hops(g, 0))
    validate_bfs(g, 0, r.hops, r.via)
    assert r.stats["peer_levels"] == sum(int(hops(g, s).max()) + 1 for s in sources)


class Totals(LevelBFS):
    """Reads the whole frontier's size each superstep, as a direction rule would."""

    def reset(self, source=None):
        self.seen = []
        return super().reset(source)

    def iterate(self, frontier):
        self.seen.append(int(self.frontier_total))
        return super().iterate(frontier)


def test_frontier_total_is_the_whole_frontiers_inside_a_batch():
    g = mgraph.load("grid:20x20")
    prims = {}
    for peer in (True, False):
        made = []

        class Kept(Totals):
            def __init__(self, graph):
                super().__init__(graph)
                made.append(self)

        r = mgraph.run(Kept, g, source=210, devices=3, peer_levels=peer)
        assert r.stats["level_path"] == ("peer" if peer else "host")
        prims[peer] = made
    ref = hops(g, 210)
    whole = [int((ref == k).sum()) for k in range(int(ref.max()) + 1)]
    for peer, made in prims.items():
        for prim in made:  # every device saw every level's whole frontier, the source's first
            assert prim.seen[:len(whole)] == whole, peer


def test_the_bound_on_supersteps_holds_inside_a_batch():
    g = mgraph.load("grid:60x2")
    messages = []
    for peer in (True, False):
        with pytest.raises(ContractError, match="max_supersteps=20") as e:
            mgraph.run(LevelBFS, g, source=0, devices=2, max_supersteps=20, peer_levels=peer)
        messages.append(re.sub(r"device \d", "device D", str(e.value)))  # every device raises it; one is reported
    assert messages[0] == messages[1] and "superstep 19" in messages[0]


class Failing(LevelBFS):
    def iterate(self, frontier):
        if self.step == 13 and self.graph.index == 1:
            raise RuntimeError("device 1 lost at step 13")
        return super().iterate(frontier)


def test_a_failure_inside_a_batch_ends_the_run_with_its_message():
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="device 1 lost at step 13"):
        mgraph.run(Failing, mgraph.load("grid:50x4"), source=0, devices=2)
    assert threading.active_count() == before


def test_without_frontier_values_the_host_exchanges():
    """A visit whose level the exchange is not told (no frontier_values) is not the link's: the host's path runs
    (its advances' counts still on the device until the exchange reads them), with the same results."""

    class Untold(LevelBFS):
        def frontier_values(self):
            return {}

    g = mgraph.load("grid:20x15")
    r = mgraph.run(Untold, g, source=3, devices=2)
    np.testing.assert_array_equal(r.hops, hops(g, 3))
    assert r.stats["level_path"] == "host"


def test_eligibility_on_several_devices():
    g = mgraph.load("grid:4x4")
    two = type("G", (), {"size": 2})()
    link = type("Link", (), {"gated": False})()
    assert enactor.batches(LevelBFS(g), two, link)
    assert not enactor.batches(LevelBFS(g), two)  # no link: each superstep's exchange is the host's
    link.gated = True  # a graph with hubs: the link serves no one-level visit
    assert not enactor.batches(LevelBFS(g), two, link)
    link.gated = False
    assert not enactor.batches(type("Own", (LevelBFS,), {"batches": False})(g), two, link)


MPI_SCRIPT = """
import json, sys
import numpy as np
import mgraph
sys.path.insert(0, sys.argv[4])
from test_peer_batches import LevelBFS
g = mgraph.load(sys.argv[1])
for peer in (True, False):
    r = mgraph.run(LevelBFS, g, source=int(sys.argv[2]), peer_levels=peer)
    if r.hops is not None:  # rank 0 holds the gathered result
        np.save(sys.argv[3] + ("-peer" if peer else "-host") + ".npy", np.stack([r.hops, r.via]))
        print(json.dumps({"path": r.stats["level_path"], "levels": r.stats["peer_levels"],
                          "counts": [r.stats["supersteps"], r.stats["iterations"], r.stats["frontier_sizes"]]}),
              flush=True)
"""


@pytest.mark.parametrize("ranks, spec, source", [(2, "grid:30x20", 0), (3, "rgg:10", 17)])
def test_mpi_ranks_batch_their_levels(tmp_path, ranks, spec, source):
    """CPU ranks, each building its own part: batched levels through the ranks' collectives give scipy's depths, a
    tree Graph500 accepts, and the host path's counts."""
    import json
    import os

    from conftest import run_mpi

    script = tmp_path / "ranks.py"
    script.write_text(MPI_SCRIPT)
    here = os.path.dirname(os.path.abspath(__file__))
    out = run_mpi(ranks, ["python", str(script), spec, source, str(tmp_path / "r"), here], timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    peer, host = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    g = mgraph.load(spec, backend="numpy")
    ref = hops(g, source)
    assert peer["path"] == "peer" and peer["levels"] == int(ref.max()) + 1
    assert host["path"] == "host"
    assert host["counts"][2][:len(peer["counts"][2])] == peer["counts"][2] and peer["counts"][0] <= host["counts"][0]
    for name in ("peer", "host"):
        depth, pred = np.load(tmp_path / f"r-{name}.npy")
        np.testing.assert_array_equal(depth, ref)
        validate_bfs(g, source, depth, pred)

"""Several virtual devices (NumPy backend): every primitive x partitioner x duplication x communication.

Each multi-device result is checked against references nobody here wrote
(scipy.sparse.csgraph, networkx; Graph500-style tree checks from conftest)
and against the same primitive on one device: BFS depths, SSSP distances
and CC labels exactly, PageRank and BC within floating-point tolerance.
"""
from __future__ import annotations

import functools
import io
import sys
import threading

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from mgraph.comm import kernels
from mgraph.ops import idmaps
from conftest import check_bfs_tree, check_sssp_tree, get_case
from mgraph.comm.transport import LocalTransport
from mgraph.primitives.bfs import BFS
from mgraph.primitives.sssp import SSSP

GRAPHS = ["chesapeake", "rand_dir_int", "disconnected_dir"]
PARTITIONERS = ["random", "biased-random", "metis"]
DUPLICATIONS = ["1-hop", "all"]
COMMUNICATIONS = ["selective", "broadcast"]
DEVICES = [2, 3, 5]
BC_SOURCES = [0, 3, 7]


@functools.lru_cache(maxsize=None)
@pytest.mark.filterwarnings("ignore:pagerank did not converge")
def reference(name):
    """Independent references (scipy / networkx from the raw edges) and the one-device results."""
    case = get_case(name)
    s = 0
    hops = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=s)
    dist = (csgraph.dijkstra(case.csr, directed=True, indices=s) if case.weighted else hops)
    _, labels = csgraph.connected_components(case.csr, directed=True, connection="weak")
    first = {}
    cc = np.array([first.setdefault(lab, v) for v, lab in enumerate(labels)])
    pr = nx.pagerank(case.nx, alpha=0.85, tol=1e-6, max_iter=100, weight="weight" if case.weighted else None)
    bc = nx.betweenness_centrality_subset(case.nx, sources=BC_SOURCES, targets=list(case.nx.nodes), normalized=False)
    bc = np.array([bc[v] for v in range(case.n)])
    one = {
        "bfs": mgraph.bfs(case.graph, s).depth,
        "sssp": mgraph.sssp(case.graph, s).distance,
        "cc": mgraph.connected_components(case.graph).labels,
        "pr": mgraph.pagerank(case.graph),
        "bc": mgraph.betweenness_centrality(case.graph, sources=BC_SOURCES).centrality,
        "bc_iterations": mgraph.betweenness_centrality(case.graph, sources=BC_SOURCES).stats["iterations"],
    }
    return case, {"hops": np.where(np.isinf(hops), -1, hops), "dist": dist, "cc": cc,
                  "pr": np.array([pr[v] for v in range(case.n)]), "bc": bc}, one


def check(primitive, name, opts):
    case, ref, one = reference(name)
    g, s = case.graph, 0
    if primitive in ("bfs", "dobfs"):
        r = mgraph.bfs(g, s, direction="push" if primitive == "bfs" else "auto", **opts)
        np.testing.assert_array_equal(r.depth, ref["hops"])
        np.testing.assert_array_equal(r.depth, one["bfs"])
        check_bfs_tree(case, s, r.depth, r.predecessor)
    elif primitive == "sssp":
        r = mgraph.sssp(g, s, **opts)
        np.testing.assert_array_equal(r.distance, one["sssp"])
        np.testing.assert_allclose(r.distance, ref["dist"], rtol=1e-12)
        check_sssp_tree(case, s, r.distance, r.predecessor)
    elif primitive == "cc":
        r = mgraph.connected_components(g, **opts)
        np.testing.assert_array_equal(r.labels, ref["cc"])
        np.testing.assert_array_equal(r.labels, one["cc"])
    elif primitive == "pr":
        r = mgraph.pagerank(g, **opts)
        np.testing.assert_allclose(r.rank, one["pr"].rank, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.rank, ref["pr"], rtol=0, atol=1e-9)
        assert r.stats["iterations"] == one["pr"].stats["iterations"]
        assert r.stats["converged"] == one["pr"].stats["converged"]
        assert r.stats["error"] == pytest.approx(one["pr"].stats["error"], rel=1e-9)
    else:
        r = mgraph.betweenness_centrality(g, sources=BC_SOURCES, **opts)
        np.testing.assert_allclose(r.centrality, one["bc"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r.centrality, ref["bc"], rtol=1e-10, atol=1e-9)
        assert r.stats["iterations"] == one["bc_iterations"]  # summed over the sources, as on one device
    return r


@pytest.mark.parametrize("devices", DEVICES)
@pytest.mark.parametrize("communication", COMMUNICATIONS)
@pytest.mark.parametrize("duplication", DUPLICATIONS)
@pytest.mark.parametrize("partitioner", PARTITIONERS)
@pytest.mark.parametrize("primitive", ["bfs", "dobfs", "sssp", "cc", "pr", "bc"])
def test_every_combination_matches_references(primitive, partitioner, duplication, communication, devices):
    opts = dict(devices=devices, partitioner=partitioner, duplication=duplication, communication=communication)
    for name in GRAPHS:
        r = check(primitive, name, opts)
        assert r.stats["devices"] == devices and r.stats["communication"] == communication


@pytest.mark.parametrize("opts", [dict(direction="pull"), dict(direction="auto", do_a=1e-12, do_b=1e12)],
                         ids=["pull", "flipflop"])
@pytest.mark.parametrize("communication", COMMUNICATIONS)
def test_bfs_pull_and_mixed_directions_on_devices(opts, communication):
    for name in GRAPHS + ["facebook_dir"]:
        case = get_case(name)
        r = mgraph.bfs(case.graph, 0, devices=4, communication=communication, **opts)
        np.testing.assert_array_equal(r.depth, mgraph.bfs(case.graph, 0).depth)
        check_bfs_tree(case, 0, r.depth, r.predecessor)


def test_defaults_follow_the_seed():
    g = get_case("chesapeake").graph
    assert mgraph.bfs(g, 0, devices=2).stats["communication"] == "selective"
    assert mgraph.bfs(g, 0, direction="auto", devices=2).stats["communication"] == "broadcast"
    assert mgraph.connected_components(g, devices=2).stats["communication"] == "broadcast"
    assert mgraph.sssp(g, 0, devices=2).stats["communication"] == "selective"
    r = mgraph.pagerank(g, devices=2)
    assert (r.stats["communication"], r.stats["partitioner"], r.stats["duplication"]) == ("selective", "random", "1-hop")
    assert r.stats["workers"] == "threads"  # one process: worker threads (one process per device: MPI ranks)


def test_stats_break_each_superstep_down_per_device():
    g = get_case("rand_dir_int").graph
    r = mgraph.bfs(g, 0, devices=3, peer_levels=False)  # every level through the host's exchange
    per = r.stats["per_device"]
    assert len(per) == 3
    for rec in per:
        assert set(rec) >= {"compute_s", "package_s", "push_s", "combine_s", "wait_s", "bytes", "frontier"}
        assert len(rec["bytes"]) == r.stats["supersteps"]
        assert all(t >= 0 for t in rec["compute_s"] + rec["wait_s"])
    assert sum(r.stats["bytes_sent"]) > 0  # a random 3-way partition has remote neighbours
    assert sum(r.stats["owned_vertices"]) == g.num_vertices
    assert all(m > 0 for m in r.stats["memory_bytes"])
    assert r.stats["partition_s"] >= 0 and r.stats["subgraph_s"] >= 0
    # BFS reaches the same vertices level by level as the depths say (a last superstep may find nothing new: a
    # device's frontier can hold copies that their owners had reached already); one device runs small levels
    # fused, several per superstep, so its level sizes come from its depths
    levels = [k for k in r.stats["frontier_sizes"] if k]
    depth = mgraph.bfs(g, 0).depth
    assert levels == np.bincount(depth[depth > 0]).tolist()[1:]
    # and where frontiers are broadcast through the host (the own counts come from the broadcast's read or the merge)
    for direction in ("pull", "auto"):
        depth = mgraph.bfs(g, 0, direction=direction).depth
        one = np.bincount(depth[depth > 0]).tolist()[1:]
        for duplication in ("1-hop", "all"):
            r = mgraph.bfs(g, 0, devices=3, direction=direction, communication="broadcast", duplication=duplication,
                           peer_levels=False)
            assert [k for k in r.stats["frontier_sizes"] if k] == one, (direction, duplication)


def test_broadcast_sends_more_than_selective():
    g = get_case("facebook").graph
    sel = mgraph.bfs(g, 0, devices=4, communication="selective")
    bro = mgraph.bfs(g, 0, devices=4, communication="broadcast")
    assert sum(bro.stats["bytes_sent"]) > sum(sel.stats["bytes_sent"])


def test_a_package_header_names_its_fields_dtypes_and_length():
    """MPI receivers size their buffers from each package's header (names, dtypes, length), sent as bytes."""
    from mgraph.comm.mpi import _header, _layout

    package = {"ids": np.zeros(3, np.int32), "depth": np.arange(3, dtype=np.int64), "bits": np.zeros(0, np.uint8)}
    fields, size = _layout(memoryview(_header(package)))
    assert fields == [("ids", np.dtype(np.int32), 3), ("depth", np.dtype(np.int64), 3), ("bits", np.dtype(np.uint8), 0)]
    assert size == len(_header(package))


@pytest.mark.parametrize("duplication", DUPLICATIONS)
def test_carried_values_travel_only_to_owners(monkeypatch, duplication):
    """Predecessors are read only on owners: a pull step's own discoveries and the owners' updates to copies go
    without them; a push step's remote discoveries go to their owners with them.  (The first superstep's
    packages are left out: every device holding the source starts from it, its own or not.)"""
    calls = []
    original = LocalTransport.send

    def spy(self, src, packages, tag=0):
        calls.append(["predecessor" in package for _, package in packages])
        return original(self, src, packages, tag)

    monkeypatch.setattr(LocalTransport, "send", spy)
    case = get_case("facebook_dir")
    for direction, communication, carried in [("pull", "selective", False), ("pull", "broadcast", False),
                                              ("push", "selective", True)]:
        calls.clear()
        r = mgraph.bfs(case.graph, 0, direction=direction, devices=3, communication=communication,
                       duplication=duplication, peer_levels=False)
        check_bfs_tree(case, 0, r.depth, r.predecessor)
        sent = [s for call in calls[3:] for s in call]  # after each of the 3 devices' first send
        assert sent and all(s == carried for s in sent), (direction, communication)


class _ListedBFS(BFS):
    """BFS that implies no values: its broadcast frontiers travel as lists whatever their size."""

    def frontier_values(self):
        return {}


class _DepthOnlyBFS(BFS):
    """BFS that carries no predecessors: its broadcast frontiers go as bits even where they hold copies."""

    carry = ()


class _WrongLevelBFS(BFS):
    """BFS that claims a level its frontier does not hold."""

    def frontier_values(self):
        return {"depth": 0}


def test_a_wrong_frontier_value_is_caught_on_numpy():
    """With every combine implied the merges skip their dedupe; a primitive whose claim is wrong makes a vertex
    repeat, which the NumPy merge raises instead of returning a frontier that holds it twice."""
    with pytest.raises(RuntimeError, match="repeated"):
        mgraph.run(_WrongLevelBFS, get_case("facebook").graph, 0, devices=3, communication="broadcast")


def test_implied_values_do_not_travel(monkeypatch):
    """BFS's level and BC's forward depth are the same for every vertex sent (``frontier_values``): packages carry
    only the other values, and the results do not change."""
    keys = []
    original = LocalTransport.send

    def spy(self, src, packages, tag=0):
        keys.extend(set(package) for _, package in packages)
        return original(self, src, packages, tag)

    monkeypatch.setattr(LocalTransport, "send", spy)
    case, ref, one = reference("rand_dir_int")
    opts = dict(devices=3, communication="selective", workers="threads", peer_levels=False)  # levels on the host
    r = mgraph.bfs(case.graph, 0, **opts)
    assert keys and all(k == {"ids", "predecessor"} for k in keys)
    check_bfs_tree(case, 0, r.depth, r.predecessor)
    listed = mgraph.run(_ListedBFS, case.graph, 0, **opts)
    assert sum(r.stats["bytes_sent"]) < sum(listed.stats["bytes_sent"])
    keys.clear()
    r = mgraph.betweenness_centrality(case.graph, sources=BC_SOURCES, **opts)
    np.testing.assert_allclose(r.centrality, ref["bc"], rtol=1e-9, atol=1e-9)
    assert {"ids", "sigma"} in keys and {"ids", "delta"} in keys and not any("depth" in k for k in keys)


@pytest.mark.parametrize("duplication", DUPLICATIONS)
def test_dense_broadcast_frontiers_travel_as_bits(monkeypatch, duplication):
    """A pull step's large frontier goes as one bit per vertex with its depth implied: same tree, fewer bytes.  With
    1-hop proxies, the bits of the block of copies the receiver keeps of the sender's vertices, not of the graph."""
    kinds, words = [], []
    original = LocalTransport.send

    def spy(self, src, packages, tag=0):
        kinds.extend("bits" in package or "block" in package for _, package in packages)
        words.extend(len(package.get("block", package.get("bits", ()))) for _, package in packages)
        return original(self, src, packages, tag)

    monkeypatch.setattr(LocalTransport, "send", spy)
    case = get_case("facebook")
    opts = dict(devices=3, communication="broadcast", duplication=duplication, workers="threads")
    r = mgraph.bfs(case.graph, 0, direction="pull", **opts)
    assert any(kinds) and not all(kinds)  # the source's superstep (one vertex) still goes as a list
    whole = -(-case.graph.num_vertices // 32)
    if duplication == "1-hop":  # each block holds a part's copies of one peer's vertices: about a third of them
        assert 0 < max(words) < whole / 2
    else:
        assert max(words) == whole
    check_bfs_tree(case, 0, r.depth, r.predecessor)
    np.testing.assert_array_equal(r.depth, mgraph.bfs(case.graph, 0).depth)
    kinds.clear()
    listed = mgraph.run(functools.partial(_ListedBFS, direction="pull"), case.graph, 0, **opts)
    assert not any(kinds)
    np.testing.assert_array_equal(listed.depth, r.depth)
    assert sum(r.stats["bytes_sent"]) < sum(listed.stats["bytes_sent"]) / 2


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_frontiers_with_copies_travel_as_bits_of_the_whole_graph(monkeypatch, direction):
    """A 1-hop frontier that holds copies (a push step's, with nothing carried) has no block of one receiver to be
    bits of: it goes as bits of the whole graph, mapped to local ids where it arrives; a pull step's, all own, as
    blocks."""
    kinds = set()
    original = LocalTransport.send

    def spy(self, src, packages, tag=0):
        kinds.update(key for _, package in packages for key in package if key in ("bits", "block"))
        return original(self, src, packages, tag)

    monkeypatch.setattr(LocalTransport, "send", spy)
    case = get_case("facebook")
    r = mgraph.run(functools.partial(_DepthOnlyBFS, direction=direction), case.graph, 0, devices=3,
                   communication="broadcast", workers="threads")
    assert kinds == {"bits" if direction == "push" else "block"}
    np.testing.assert_array_equal(r.depth, mgraph.bfs(case.graph, 0).depth)


def test_merges_skip_the_dedupe_only_where_no_vertex_can_repeat(monkeypatch):
    """PageRank's frontier is its own vertices, and each copy's update comes from its one owner: no merge at all.
    BFS's level is the same for every vertex that arrives or is in the frontier (``frontier_values``): none either.
    SSSP's frontier holds relaxed copies too, which an owner's update may repeat.  (The NumPy merge raises where
    a vertex repeats without the bitmap.)"""
    marked = []
    original, original_split = kernels.combine_merge, kernels.split

    def spy(frontier, received, seen, *args):
        marked.append(seen is not None)
        return original(frontier, received, seen, *args)

    monkeypatch.setattr(kernels, "combine_merge", spy)
    split = []
    monkeypatch.setattr(kernels, "split", lambda *args: split.append(1) or original_split(*args))
    case, ref, _ = reference("rand_dir_int")
    r = mgraph.pagerank(case.graph, devices=3, communication="selective")
    np.testing.assert_allclose(r.rank, ref["pr"], rtol=0, atol=1e-9)
    assert not marked  # its copies take their owners' values over the border lists (Exchange._take_borders)
    assert not split  # a frontier of the own vertices has nothing for an owner
    for direction in ("push", "auto"):
        for communication in ("selective", "broadcast"):
            marked.clear()
            r = mgraph.bfs(case.graph, 0, devices=3, direction=direction, communication=communication,
                           peer_levels=False)  # every level through the host's exchange
            np.testing.assert_array_equal(r.depth, ref["hops"])
            assert marked and not any(marked)
    marked.clear()
    r = mgraph.sssp(case.graph, 0, devices=3, communication="selective")
    np.testing.assert_array_equal(r.distance, ref["dist"])
    assert any(marked) and split


@pytest.mark.parametrize("run", ["sssp", "bc"])
def test_two_hop_supersteps_mark_the_frontier_once(monkeypatch, run):
    """BC, and SSSP in its tree walk, send to owners and then to copies each superstep: the first hop's merge keeps
    its marks and the second takes them (``marked``) instead of marking the frontier again; every bitmap is zero between
    supersteps, where the kept marks are cleared when the second hop has nothing to merge."""
    calls, bitmaps = [], {}
    original, original_unmark = kernels.combine_merge, kernels.unmark

    def spy(frontier, received, seen, owner, me, own_below=None, marked=False, keep=False):
        out = original(frontier, received, seen, owner, me, own_below, marked, keep)
        calls.append((marked, keep))
        if seen is not None:
            bitmaps[id(seen)] = seen
            assert keep or not seen.any()
        return out

    def unmark(vertices, seen):
        calls.append("unmark")
        original_unmark(vertices, seen)

    monkeypatch.setattr(kernels, "combine_merge", spy)
    monkeypatch.setattr(kernels, "unmark", unmark)
    case, ref, _ = reference("rand_dir_int")
    if run == "sssp":
        np.testing.assert_array_equal(mgraph.sssp(case.graph, 0, devices=3).distance, ref["dist"])
    else:
        np.testing.assert_allclose(mgraph.betweenness_centrality(case.graph, sources=BC_SOURCES, devices=3).centrality,
                                   ref["bc"], rtol=1e-9, atol=1e-9)
    assert (False, True) in calls and (True, False) in calls and bitmaps
    assert not any(seen.any() for seen in bitmaps.values())


class _CurrentCopiesSSSP(SSSP):
    """SSSP keeping every copy current in its relax phase too (as before reads_proxies was per phase)."""

    reads_proxies = True


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_sssp_relaxes_with_stale_copies_and_catches_up_once(monkeypatch, duplication):
    """SSSP's relax phase does not read its copies, so no owner sends its changes back while it runs; its tree walk
    does, so the framework first sends every copy's distance once, per device and source.  Distances and
    trees as with current copies, fewer bytes.  A fixed ``reads_proxies = False`` tracks nothing."""
    from mgraph.comm.exchange import Exchange

    catch_ups, noted = [], []
    original, note = Exchange._catch_up, Exchange._note_stale
    monkeypatch.setattr(Exchange, "_catch_up", lambda self, *a: catch_ups.append(self.me) or original(self, *a))
    monkeypatch.setattr(Exchange, "_note_stale", lambda self, *a: noted.append(self.me) or note(self, *a))
    case, ref, _ = reference("rand_dir_int")
    opts = {"devices": 3, "duplication": duplication, "communication": "selective"}
    mgraph.run(SSSP, case.graph, sources=[0, 3], **opts)
    assert sorted(catch_ups) == [0, 0, 1, 1, 2, 2]
    catch_ups.clear()
    mgraph.run(_CurrentCopiesSSSP, case.graph, sources=[0, 3], **opts)
    assert not catch_ups
    r, current = mgraph.sssp(case.graph, 0, **opts), mgraph.run(_CurrentCopiesSSSP, case.graph, 0, **opts)
    np.testing.assert_array_equal(r.distance, ref["dist"])
    check_sssp_tree(case, 0, r.distance, r.predecessor)
    assert sum(r.stats["bytes_sent"]) < sum(current.stats["bytes_sent"])
    noted.clear(), catch_ups.clear()
    np.testing.assert_array_equal(mgraph.bfs(case.graph, 0, **opts).depth, ref["hops"])
    assert not noted and not catch_ups  # a push BFS never reads copies: nothing to track


def test_callable_partitioner_and_repeated_ids():
    case = get_case("rand_dir_int")
    halves = lambda graph, parts, seed: np.arange(graph.num_vertices) * parts // graph.num_vertices  # noqa: E731
    r = mgraph.bfs(case.graph, 0, devices=[0, 0, 0], partitioner=halves)
    np.testing.assert_array_equal(r.depth, mgraph.bfs(case.graph, 0).depth)
    assert r.stats["owned_vertices"] == np.bincount(halves(case.graph, 3, 0)).tolist()


@pytest.mark.parametrize("bad", [
    lambda g, p, s: np.zeros(g.num_vertices - 1, dtype=np.int32),
    lambda g, p, s: np.full(g.num_vertices, p, dtype=np.int32),
    lambda g, p, s: np.full(g.num_vertices, -1, dtype=np.int32),
], ids=["short", "too-large", "negative"])
def test_bad_owner_array_is_a_value_error_before_workers_start(bad):
    g = get_case("chesapeake").graph
    before = threading.active_count()
    with pytest.raises(ValueError, match="owner"):
        mgraph.bfs(g, 0, devices=2, partitioner=bad)
    assert threading.active_count() == before  # none was started


class Hungry(BFS):
    """BFS whose second device runs out of memory (as CuPy's OutOfMemoryError, a MemoryError, would)."""

    def iterate(self, frontier):
        if getattr(self.graph, "index", 0) == 1:
            raise MemoryError("out of memory allocating 8,589,934,592 bytes")
        return super().iterate(frontier)


class Exploding(BFS):
    """BFS that fails on one device in its third superstep."""

    def iterate(self, frontier):
        if self.step == 2 and getattr(self.graph, "index", 0) == 1:
            raise ZeroDivisionError("boom on device 1")
        return super().iterate(frontier)


@pytest.mark.parametrize("communication", COMMUNICATIONS)
def test_an_error_in_one_worker_stops_all_and_reaches_the_caller(communication):
    g = get_case("facebook").graph
    before = threading.active_count()
    with pytest.raises(ZeroDivisionError, match="boom on device 1"):
        mgraph.run(Exploding, g, 0, devices=3, communication=communication, peer_levels=False)
    assert threading.active_count() == before  # every worker has stopped


def test_worker_threads_keep_their_parts_for_the_same_graph_and_options():
    case = get_case("chesapeake")
    g = case.graph
    first = mgraph.bfs(g, 0, seed=11, devices=2)  # a seed no other test uses: these parts are built now
    again = mgraph.bfs(g, 5, seed=11, devices=2)
    other = mgraph.bfs(g, 5, seed=11, devices=2, duplication="all")
    assert "parts_reused" not in first.stats and first.stats["subgraph_s"] > 0
    assert again.stats["parts_reused"] and again.stats["memory_bytes"] == first.stats["memory_bytes"]
    assert again.stats["subgraph_s"] == first.stats["subgraph_s"]  # the build's time, not redone
    assert "parts_reused" not in other.stats  # other options: built again
    np.testing.assert_array_equal(again.depth, mgraph.bfs(g, 5).depth)
    np.testing.assert_array_equal(other.depth, again.depth)
    check_bfs_tree(case, 5, again.depth, again.predecessor)


def test_parts_are_kept_in_the_one_part_cache_not_on_the_graph():
    """The parts of a run live in mgraph.parts.cache, keyed by the graph and the options that shape a part: the
    graph gains no attribute, options that do not shape a part (gather, communication) reuse them, a callable
    partitioner builds anew, and the parts go when the graph goes."""
    import gc

    from mgraph.parts import cache

    g = mgraph.Graph.from_edges(np.arange(40), (np.arange(40) + 1) % 41, num_vertices=41)
    attributes = dict(vars(g))
    mgraph.bfs(g, 0, devices=3, seed=5)
    kept = cache.held(g)
    assert vars(g).keys() == attributes.keys() and len(kept.parts) == 3 and kept.info["subgraph_s"] > 0
    again = mgraph.bfs(g, 0, devices=3, seed=5, gather=False, communication="broadcast")
    assert again.stats["parts_reused"] and cache.held(g) is kept
    halves = lambda graph, parts, seed: np.arange(graph.num_vertices) * parts // graph.num_vertices  # noqa: E731
    assert "parts_reused" not in mgraph.bfs(g, 0, devices=3, partitioner=halves).stats
    assert "parts_reused" not in mgraph.bfs(g, 0, devices=3, partitioner=halves).stats
    assert cache.held(g) is kept  # parts of a callable are not kept, so they replace nothing
    assert "parts_reused" not in mgraph.bfs(g, 0, devices=2, seed=5).stats and cache.held(g) is not kept
    gone = id(g)
    del g, kept
    gc.collect()
    assert gone not in cache._SETS  # the cache's own table: the graph's entry went with it


def test_processes_are_mpi_ranks_now_and_workers_are_checked():
    g = get_case("chesapeake").graph
    with pytest.raises(ValueError, match="mpiexec"):
        mgraph.bfs(g, 0, devices=2, workers="processes")
    with pytest.raises(ValueError, match="workers"):
        mgraph.bfs(g, 0, devices=2, workers="fibers")


def test_run_a_primitive_class_on_one_and_many_devices():
    case = get_case("chesapeake")
    one = mgraph.run(BFS, case.graph, 0)
    many = mgraph.run(BFS, case.graph, 0, devices=3)
    np.testing.assert_array_equal(one.depth, many.depth)
    check_bfs_tree(case, 0, many.depth, many.predecessor)
    with pytest.raises(ValueError, match="primitive"):
        mgraph.run("bfs", case.graph, 0)


def test_out_of_memory_names_the_device_and_what_was_allocated(monkeypatch):
    with pytest.raises(MemoryError, match=r"device 1 .*bfs allocating the arrays of its superstep: .*8,589,934,592 bytes"):
        mgraph.run(Hungry, get_case("chesapeake").graph, 0, devices=2)
    original = kernels.combine_merge

    def hungry_merge(frontier, received, seen, owner, me, *args):
        if me == 1:
            raise MemoryError("out of memory allocating 4,096 bytes")
        return original(frontier, received, seen, owner, me, *args)

    monkeypatch.setattr(kernels, "combine_merge", hungry_merge)
    with pytest.raises(MemoryError, match=r"^device 1 .*in sssp allocating the merged frontier \(\d+ vertices and what "
                                          r"arrived\): out of memory allocating 4,096 bytes$"):
        mgraph.sssp(get_case("chesapeake").graph, 0, devices=2)


class CombinedParents(BFS):
    """A BFS whose vertex-valued predecessors are combined (min) instead of carried: outside the contract."""

    @property
    def combine(self):
        return {"depth": "min", "predecessor": "min"}


@pytest.mark.parametrize("devices", [1, 2])
def test_a_combined_vertex_valued_array_is_a_value_error(devices):
    g = get_case("chesapeake").graph  # the same on one device, where nothing is renumbered, as on two
    with pytest.raises(ValueError, match="'predecessor' is combined and vertex_valued"):
        mgraph.run(CombinedParents, g, 0, devices=devices)


def test_vertex_valued_package_arrays_must_hold_integer_ids():
    vertices, table = np.array([0, 2]), np.arange(4, dtype=np.int64)
    with pytest.raises(ValueError, match="integer vertex ids"):
        kernels.gather(vertices, [np.zeros(4)], [table])
    with pytest.raises(ValueError, match="integer vertex ids"):
        kernels.split(vertices, np.array([0, 1, 1, 0], dtype=np.int32), 0, 2, [np.zeros(4)], [table])
    assert kernels.gather(vertices, [np.array([3, -1, 1, 0])], [table])[0].tolist() == [3, 1]


def test_combine_merge_on_numpy():
    from mgraph import ops
    owner = np.array([0, 1, 0, 0, 1, 1, 1])
    seen = ops.bitmap(np.array([], dtype=np.int64), 7)
    depth = np.array([5, -1, 3, 7, -1, 2, 0], dtype=np.int32)
    pred = np.zeros(7, dtype=np.int64)
    # min: -1 counts as unreached; carried values (through a table) only where the min changed
    first = (np.array([0, 1, 2, 4]), None, [(depth, "min", np.array([4, 9, 3, 1], dtype=np.int32))],
             [(pred, np.array([10, 11, 12, 13]), np.arange(20) + 100)])
    # ids through a table to local ones: -1 (a vertex this device lacks) is skipped
    second = (np.array([3, 0, 2]), np.array([-1, 1, 2, 3]), [(depth, "min", np.array([0, 1, 0], dtype=np.int32))],
              [(pred, np.array([20, 21, 22]), None)])
    out, own = kernels.combine_merge(np.array([4, 6]), [first, second], seen, owner, 1)
    assert depth.tolist() == [4, 9, 0, 0, 1, 2, 0] and pred.tolist() == [110, 111, 22, 20, 113, 0, 0]
    assert out.tolist() == [4, 6, 0, 1, 3, 2] and own == 3  # 4 (already in the frontier) appears once
    out, own = kernels.combine_merge(np.array([4, 6]), [first, second], seen, None, 1, own_below=2)
    assert out.tolist() == [4, 6] and own == 0  # nothing lower any more; own vertices are the ids 0 and 1
    # sum: every entry counts as changed unless another field says otherwise; assign: where it differs
    sigma = np.ones(7)
    out, _ = kernels.combine_merge(np.array([], dtype=np.int64), [(np.array([5, 2]), None,
                                                               [(sigma, "sum", np.array([0.5, 2.0]))], [])],
                               seen, owner, 1)
    assert sigma.tolist() == [1, 1, 3, 1, 1, 1.5, 1] and out.tolist() == [5, 2]
    out, _ = kernels.combine_merge(np.array([], dtype=np.int64), [(np.array([5, 2, 0]), None,
                                                               [(depth, "max", np.array([3, 3, 3], dtype=np.int32)),
                                                                (sigma, "sum", np.array([1.0, 1.0, 1.0]))], [])],
                               seen, owner, 1)
    assert depth[[5, 2, 0]].tolist() == [3, 3, 4] and sigma[[5, 2, 0]].tolist() == [2.5, 4, 2]
    assert out.tolist() == [5, 2]  # 0 took a sum but no larger depth
    out, _ = kernels.combine_merge(np.array([3]), [(np.array([3, 6, 1]), None,
                                                [(depth, "assign", np.array([8, 0, 2], dtype=np.int32))], [])],
                               seen, owner, 1)
    assert depth.tolist() == [4, 2, 3, 8, 1, 3, 0] and out.tolist() == [3, 1]
    # a package sent as bits: the set bits' ids (here through a table), one value per field
    bits = ops.Bits(ops.bitmap(np.array([0, 2, 5]), 7))
    out, _ = kernels.combine_merge(np.array([2]), [(bits, np.array([0, 1, 2, 3, 4, -1, 6]), [(depth, "min", 1)], [])],
                               seen, owner, 1)
    assert depth.tolist() == [1, 2, 1, 8, 1, 3, 0] and out.tolist() == [2, 0]
    # bits of a block of ids: bit i is id base + i; the sender sets them through its table of ids there
    block = ops.bitmap(np.array([0, 1, 3]), 3, table=np.array([5, -1, 9, 4]), base=4)
    assert block.tolist() == [0b11]  # vertex 0 -> id 5 -> bit 1, vertex 3 -> id 4 -> bit 0, vertex 1 not there
    out, _ = kernels.combine_merge(np.array([], dtype=np.int64), [(ops.Bits(block, 4), None, [(depth, "min", 0)], [])],
                               seen, owner, 1)
    assert depth.tolist() == [1, 2, 1, 8, 0, 0, 0] and out.tolist() == [4, 5]
    assert idmaps.translate(np.array([2, -1, 0]), np.array([10, 11, 12])).tolist() == [12, -1, 10]


def test_combine_merge_keeps_marks_for_the_next_hop_on_numpy():
    """``keep`` leaves the output's bits set and ``marked`` takes them as the frontier's, so two hops of a superstep
    mark the frontier once; the bitmap ends as the GPU's does (CuPy's compared in test_gpu_multi)."""
    from mgraph import ops
    owner = np.zeros(40, dtype=np.int32)
    seen = ops.bitmap(np.array([], dtype=np.int64), 40)
    depth = np.full(40, 9, dtype=np.int32)
    hop = (np.array([33, 2, 7]), None, [(depth, "min", np.array([1, 1, 9], dtype=np.int32))], [])
    out, _ = kernels.combine_merge(np.array([7, 1]), [hop], seen, owner, 0, keep=True)
    assert out.tolist() == [7, 1, 33, 2]
    np.testing.assert_array_equal(seen, ops.bitmap(out, 40))
    hop = (np.array([2, 5, 39]), None, [(depth, "assign", np.array([0, 0, 0], dtype=np.int32))], [])
    out, _ = kernels.combine_merge(out, [hop], seen, owner, 0, marked=True)
    assert out.tolist() == [7, 1, 33, 2, 5, 39] and not seen.any()
    out, _ = kernels.combine_merge(out, [], seen, owner, 0, keep=True)
    np.testing.assert_array_equal(seen, ops.bitmap(out, 40))
    kernels.unmark(out, seen)
    assert not seen.any()


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_own_vertices_counted_by_id_range_where_they_come_first(duplication):
    """The merge and the enactor count own vertices by ``own_below`` under 1-hop: it must agree with ``owner``."""
    from mgraph import partitioners
    from mgraph.parts import subgraph

    g = get_case("rand_dir").graph
    parts = subgraph.build(g, partitioners.assign(g, 3, "random", 2), 3, duplication)
    rng = np.random.default_rng(0)
    for part in parts:
        ids = rng.integers(0, part.num_vertices, 500)
        if duplication == "all":
            assert part.own_below is None
        else:
            assert part.own_below == part.own_vertices.shape[0]
            assert part.own_vertices.tolist() == list(range(part.own_below))
        assert part.count_own(ids) == int(np.count_nonzero(part.owner[ids] == part.index))


@pytest.mark.parametrize("name", ["rand_dir", "chesapeake"])
@pytest.mark.parametrize("duplication", DUPLICATIONS)
def test_pulls_skip_the_rows_that_hold_no_arcs(name, duplication):
    """A part's ``arc_rows`` (the pull kernels' rows) covers every row with arcs, in the graph and its reverse,
    and stays with the part when it moves."""
    from mgraph import partitioners
    from mgraph.parts import subgraph
    from mgraph.backend import Backend

    g = get_case(name).graph
    for part in subgraph.build(g, partitioners.assign(g, 3, "random", 1), 3, duplication):
        for p in (part, part.to(Backend("numpy", 0))):
            expected = part.own_vertices.shape[0] if duplication == "1-hop" else g.num_vertices
            assert p.arc_rows == p.reverse().arc_rows == expected
            for graph in (p, p.reverse()):
                assert graph.indptr[graph.arc_rows] == graph.num_arcs


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_border_lists_are_the_own_vertices_each_peer_holds(duplication):
    """PageRank's frontier is every own vertex: hop 2 sends each peer exactly the own vertices it holds."""
    from mgraph import partitioners
    from mgraph.parts import subgraph
    from mgraph.comm.exchange import Exchange
    from mgraph.comm.transport import LocalTransport

    g = get_case("rand_dir").graph
    owner = partitioners.assign(g, 3, "random", 5)
    parts = subgraph.build(g, owner, 3, duplication)
    src, dst = g.arc_sources(), g.indices
    for part in parts:
        ex = Exchange(part, 3, LocalTransport(_cpu(3), threading.Barrier(1)), "selective")
        got = {k: (part.vertex_ids[v].tolist(), ids.tolist()) for k, v, ids in ex._borders()}
        for k in ex.peers:
            mine = owner == part.index
            if duplication == "all":
                want = np.flatnonzero(mine)
            else:  # an own vertex with an in- or out-neighbour on k
                touching = np.concatenate([src[(owner[dst] == k) & mine[src]], dst[(owner[src] == k) & mine[dst]]])
                want = np.unique(touching)
            vertices, ids = got.get(k, ([], []))
            assert sorted(vertices) == want.tolist()
            on_k = parts[k].vertex_ids[ids] if duplication == "1-hop" else np.asarray(ids)
            assert on_k.tolist() == vertices  # the ids are those vertices' ids on device k


def _cpu(p):
    from mgraph.backend import Backend
    return [Backend("numpy", k) for k in range(p)]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("devices, workers", [(1, "threads"), (2, "threads")])
def test_many_sources_show_progress_on_a_terminal(monkeypatch, devices, workers):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    mgraph.betweenness_centrality(get_case("chesapeake").graph, sources=[0, 1, 2], devices=devices, workers=workers)
    assert "sources:" in terminal.getvalue() and "/3 [" in terminal.getvalue()


@pytest.mark.parametrize("devices", [2, 3])
def test_as_many_devices_as_vertices_and_graphs_without_edges(devices):
    path = mgraph.Graph.from_edges([0, 1], [1, 2], num_vertices=3)
    assert mgraph.bfs(path, 0, devices=devices, direction="auto").depth.tolist() == [0, 1, 2]
    assert mgraph.connected_components(path, devices=devices).labels.tolist() == [0, 0, 0]
    np.testing.assert_allclose(mgraph.pagerank(path, devices=devices).rank, mgraph.pagerank(path).rank, atol=1e-12)
    assert mgraph.betweenness_centrality(path, devices=devices).centrality.tolist() == [0.0, 1.0, 0.0]
    empty = mgraph.Graph.from_edges([], [], num_vertices=4)
    r = mgraph.sssp(empty, 1, devices=devices + 1)
    assert r.distance.tolist() == [np.inf, 0.0, np.inf, np.inf] and r.predecessor.tolist() == [-1, 1, -1, -1]


@pytest.mark.parametrize("devices", [4, 8, [0, 0, 0, 0]])
def test_more_devices_than_vertices_is_refused_before_any_thread(devices):
    path = mgraph.Graph.from_edges([0, 1], [1, 2], num_vertices=3)
    before = threading.active_count()
    count = devices if isinstance(devices, int) else len(devices)
    for call in (lambda: mgraph.bfs(path, 0, devices=devices), lambda: mgraph.pagerank(path, devices=devices),
                 lambda: mgraph.run(BFS, path, 0, devices=devices)):
        with pytest.raises(ValueError, match=rf"^devices={count} for a graph of 3 vertices: .* at most 3$"):
            call()
    assert threading.active_count() == before


@pytest.mark.parametrize("communication", COMMUNICATIONS)
@pytest.mark.parametrize("duplication", DUPLICATIONS)
def test_zero_weight_cycles_keep_a_valid_tree_on_devices(duplication, communication):
    case = get_case("zero_heavy_dir")
    for s in (0, 7):
        r = mgraph.sssp(case.graph, s, devices=3, duplication=duplication, communication=communication)
        np.testing.assert_array_equal(r.distance, mgraph.sssp(case.graph, s).distance)
        check_sssp_tree(case, s, r.distance, r.predecessor)

"""A traversal's levels across devices without the host (mgraph.comm.peer), on CPU virtual devices: the NumPy
twin of the GPUs' kernel, threads standing in for devices.

Results are checked against scipy.sparse.csgraph and by Graph500's rules, and against the host-driven exchange
(``peer_levels=False``) on the same parts; the tests also pin which runs take the peer path and which keep the
host's, and what a failure inside fused levels does to the other devices.
"""
import threading

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from mgraph.check.validate import validate_bfs
from mgraph.comm import peer
from mgraph.ops import levels


def hops(g, source):
    d = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@pytest.mark.parametrize("spec, devices, source", [
    ("grid:40x30", 2, 0), ("grid:40x30", 3, 611), ("grid:25x25", 4, 312), ("rgg:11", 2, 5), ("rgg:11", 3, 0),
])
def test_levels_across_devices_match_scipy_and_graph500(spec, devices, source):
    g = mgraph.load(spec)
    r = mgraph.bfs(g, source, devices=devices)
    np.testing.assert_array_equal(r.depth, hops(g, source))
    validate_bfs(g, source, r.depth, r.predecessor)
    assert r.stats["level_path"] == "peer"
    assert len(r.stats["peer_bytes"]) == devices and sum(r.stats["peer_bytes"]) > 0  # the borders' claims
    # every level after the source's ran on the devices, the last one finding nothing new
    assert r.stats["peer_levels"] == int(r.depth.max()) + 1


def test_the_host_path_gives_the_same_depths_and_many_more_supersteps():
    g = mgraph.load("grid:50x20")
    fused = mgraph.bfs(g, 7, devices=3)
    host = mgraph.bfs(g, 7, devices=3, peer_levels=False)
    np.testing.assert_array_equal(fused.depth, host.depth)
    validate_bfs(g, 7, host.depth, host.predecessor)
    assert host.stats["level_path"] == "host" and host.stats["peer_levels"] == 0
    assert host.stats["supersteps"] >= int(host.depth.max()) + 2  # a superstep per level, and reset and the last
    assert fused.stats["supersteps"] < 5


def test_a_directed_graph_and_unreached_vertices():
    # two directed paths 0 -> 1 -> ... -> 49 and 50 -> ... -> 99: from 0 half the graph stays unreached
    src = np.r_[np.arange(49), np.arange(50, 99)]
    g = mgraph.Graph.from_edges(src, src + 1, num_vertices=100, directed=True)
    for devices in (2, 3):
        r = mgraph.bfs(g, 0, devices=devices)
        np.testing.assert_array_equal(r.depth, hops(g, 0))
        assert (r.predecessor[50:] == -1).all() and (r.predecessor[1:50] == np.arange(49)).all()
        assert r.stats["level_path"] == "peer"


def test_a_source_alone_ends_at_once():
    g = mgraph.Graph.from_edges(np.array([1, 2]), np.array([2, 3]), num_vertices=6)  # vertex 0 has no arcs
    r = mgraph.bfs(g, 0, devices=2)
    assert r.depth.tolist() == [0, -1, -1, -1, -1, -1]
    assert r.predecessor.tolist() == [0, -1, -1, -1, -1, -1]


def test_several_sources_in_one_run_reuse_the_link():
    """Sources run one after another on the same primitive state: each reset makes new arrays, which the link
    serves again (its barriers' tags go on across the sources)."""
    from mgraph.primitives.bfs import BFS

    g = mgraph.load("grid:30x30")
    sources = [0, 450, 899]
    r = mgraph.run(BFS, g, sources=sources, devices=2)
    np.testing.assert_array_equal(r.depth, hops(g, sources[-1]))
    validate_bfs(g, sources[-1], r.depth, r.predecessor)
    assert r.stats["peer_levels"] == sum(int(hops(g, s).max()) + 1 for s in sources)


@pytest.mark.parametrize("what", ["all", "auto selective"])
def test_the_host_path_where_the_link_cannot_serve(what):
    """Duplicate-all parts (no id maps) and a direction-optimizing BFS whose owners keep copies current (selective,
    where the link sends no frontier to the copies): the host-driven exchange, right results."""
    g = mgraph.load("grid:30x20")
    kwargs = {"duplication": "all"} if what == "all" else {"direction": "auto", "communication": "selective"}
    r = mgraph.bfs(g, 1, devices=2, **kwargs)
    np.testing.assert_array_equal(r.depth, hops(g, 1))
    validate_bfs(g, 1, r.depth, r.predecessor)
    assert r.stats["level_path"] == "host"


# -- graphs with hubs: the link is gated ---------------------------------------------------------------------------
def test_a_hub_in_a_small_frontier_runs_on_the_devices():
    """A star's centre has more than FUSE_DEGREE arcs: the link is gated (each level agrees on its frontier's arcs
    first) and every level still runs on the devices, the hub's arcs among them."""
    n = levels.FUSE_DEGREE + 76
    g = mgraph.Graph.from_edges(np.zeros(n - 1, dtype=np.int64), np.arange(1, n), num_vertices=n)
    for devices in (2, 3):
        r = mgraph.bfs(g, 1, devices=devices)
        np.testing.assert_array_equal(r.depth, hops(g, 1))
        validate_bfs(g, 1, r.depth, r.predecessor)
        assert r.stats["level_path"] == "peer" and r.stats["peer_levels"] == 3  # the centre, the leaves, nothing


def test_a_long_diameter_graph_with_one_hub_runs_its_small_levels_gated(monkeypatch):
    """A grid with one vertex joined to 1,100 of its vertices: the link is gated, and with its bound at 2,000 arcs
    the wavefronts that stay under it run on the devices, hundreds of levels, the others through the host."""
    monkeypatch.setattr(levels, "GATED_ARCS", 2000)
    side, spokes = 60, 1100
    grid = mgraph.load(f"grid:{side}x{side}").to_scipy().tocoo()
    n = side * side
    g = mgraph.Graph.from_edges(np.r_[grid.row, np.full(spokes, n)], np.r_[grid.col, np.arange(spokes)],
                                num_vertices=n + 1)
    for devices in (2, 3):
        r = mgraph.bfs(g, n - 1, devices=devices)
        np.testing.assert_array_equal(r.depth, hops(g, n - 1))
        validate_bfs(g, n - 1, r.depth, r.predecessor)
        assert r.stats["level_path"] == "peer" and r.stats["peer_levels"] > 50 and r.stats["supersteps"] < 10


@pytest.fixture
def small_bounds(monkeypatch):
    """Bounds that make a small R-MAT graph's BFS mix the paths: vertices of more than 16 arcs are hubs, and a
    frontier of more than 2000 arcs is the load-balanced advance's.  Every call of the twin's levels is recorded
    with what it returned (None: it found the frontier over the bound before any level)."""
    monkeypatch.setattr(levels, "FUSE_DEGREE", 16)
    monkeypatch.setattr(levels, "GATED_ARCS", 2000)
    calls, real = [], peer.NumpyLink.visit_levels

    def recorded(self, *args, **kwargs):
        r = real(self, *args, **kwargs)
        calls.append(None if r is None else r.levels)
        return r

    monkeypatch.setattr(peer.NumpyLink, "visit_levels", recorded)
    return calls


@pytest.mark.parametrize("spec, devices, source", [("rmat:11", 2, 0), ("rmat:11", 3, 5), ("rmat:12:8", 2, 3)])
def test_levels_of_a_graph_with_hubs_mix_the_devices_and_the_host(small_bounds, spec, devices, source):
    """R-MAT's first levels and its tail run on the devices, its large levels through the host's exchange: scipy's
    depths, a tree Graph500 accepts, and the host path's depths; some calls declined before any level."""
    g = mgraph.load(spec)
    r = mgraph.bfs(g, source, devices=devices)
    host = mgraph.bfs(g, source, devices=devices, peer_levels=False)
    ref = hops(g, source)
    for x in (r, host):
        np.testing.assert_array_equal(x.depth, ref)
        validate_bfs(g, source, x.depth, x.predecessor)
    assert r.stats["level_path"] == "peer" and host.stats["level_path"] == "host"
    ran = [c for c in small_bounds if c]
    assert ran and 0 < r.stats["peer_levels"] < int(ref.max()) + 1  # some levels on the devices, not all
    assert r.stats["peer_levels"] * devices == sum(ran)  # every device ran the same levels
    assert r.stats["supersteps"] < host.stats["supersteps"]
    assert None in small_bounds  # a frontier of few vertices and many arcs went to the host's advance


def test_a_graph_with_hubs_gets_a_link_only_for_a_push_visit(small_bounds):
    """The link's buffers are as large as a part: on a graph with hubs only a primitive that may be a push visit
    gets one (peer.may_serve); and a user's one-level visits are not batched on a gated link (nothing bounds
    their frontiers), so they keep the host's exchange."""
    import test_peer_batches
    from mgraph.primitives.bfs import BFS
    from mgraph.primitives.cc import CC
    from mgraph.primitives.pagerank import PageRank
    from mgraph.primitives.sssp import SSSP

    g = mgraph.load("rmat:11")
    assert peer.may_serve(BFS(g)) and peer.may_serve(BFS(g, direction="auto"))  # the twin runs its levels
    assert not peer.may_serve(BFS(g, direction="pull"))
    assert not any(peer.may_serve(cls(g)) for cls in (CC, PageRank, SSSP))
    r = mgraph.sssp(g, 0, devices=2)
    assert r.stats["level_path"] == "host" and not small_bounds
    r = mgraph.run(test_peer_batches.LevelBFS, g, source=0, devices=2)
    np.testing.assert_array_equal(r.hops, hops(g, 0))
    assert r.stats["level_path"] == "host"


@pytest.mark.parametrize("spec, devices, source", [("rmat:11", 2, 0), ("rmat:12:8", 3, 3), ("rmat:14", 2, 7),
                                                   ("grid:30x20", 2, 5)])
def test_direction_optimizing_levels_run_across_the_devices(spec, devices, source):
    """A direction-optimizing BFS on linked parts runs every level across the devices in one call (pushes sending
    claimed copies to their owners, pulls reading the copies' bits their owners send): scipy's depths, a tree
    Graph500 accepts, the host path's directions level by level, in far fewer supersteps."""
    g = mgraph.load(spec)
    r = mgraph.bfs(g, source, devices=devices, direction="auto")
    host = mgraph.bfs(g, source, devices=devices, direction="auto", peer_levels=False)
    ref = hops(g, source)
    for x in (r, host):
        np.testing.assert_array_equal(x.depth, ref)
        validate_bfs(g, source, x.depth, x.predecessor)
    assert r.stats["level_path"] == "peer" and host.stats["level_path"] == "host"
    assert r.stats["directions"] == host.stats["directions"] and "pull" in r.stats["directions"]
    assert r.stats["peer_levels"] == len(host.stats["directions"]) == int(ref.max()) + 1
    assert r.stats["supersteps"] <= 3 < host.stats["supersteps"]


def test_a_failing_device_inside_fused_levels_ends_the_run_with_its_error(monkeypatch):
    """Device 1 raises inside fused levels while device 0 waits for its post: device 0's wait is broken, the
    run raises device 1's error, and no thread is left behind."""
    real = peer.NumpyLink.visit_levels

    def failing(self, frontier, label, pred, level, limit, max_levels):
        if level == 1:  # the first call returns after three levels
            return real(self, frontier, label, pred, level, limit, 3)
        if self.d == 1:  # the second: device 0 is left waiting for device 1's post
            raise RuntimeError("device 1 broke at level %d" % level)
        return real(self, frontier, label, pred, level, limit, max_levels)

    monkeypatch.setattr(peer.NumpyLink, "visit_levels", failing)
    g = mgraph.load("grid:40x10")
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="device 1 broke at level"):
        mgraph.bfs(g, 0, devices=2, max_supersteps=10_000)
    assert threading.active_count() == before


def test_a_device_failing_in_a_pull_across_the_devices_ends_the_run_with_its_error(monkeypatch):
    """Device 1 raises in a direction-optimizing traversal's first pull while device 0 is in its collectives (the
    copies' bits): the run raises device 1's error, and no thread is left behind."""
    real = peer.NumpyLink._frontier_bits

    def failing(self, f):
        if self.d == 1:
            raise RuntimeError("device 1 broke before its pull")
        return real(self, f)

    monkeypatch.setattr(peer.NumpyLink, "_frontier_bits", failing)
    g = mgraph.load("rmat:12")
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="device 1 broke before its pull"):
        mgraph.bfs(g, 3, devices=2, direction="auto")
    assert threading.active_count() == before


def test_peer_levels_is_checked():
    with pytest.raises(ValueError, match="peer_levels must be True"):
        mgraph.bfs(mgraph.load("grid:4x4"), 0, devices=2, peer_levels="yes")


def test_the_cli_takes_no_peer_levels(capsys):
    from mgraph.cli import main

    assert main(["bfs", "grid:20x20", "--devices", "2", "--no-peer-levels", "--runs", "1", "--validate",
                 "--no-warm-up"]) == 0
    assert "PASS" in capsys.readouterr().out


MPI_SCRIPT = """
import json, sys
import numpy as np
import mgraph
g = mgraph.load(sys.argv[1])
for peer in (True, False):
    r = mgraph.bfs(g, int(sys.argv[2]), peer_levels=peer)
    if r.depth is not None:  # rank 0 holds the gathered result
        np.save(sys.argv[3] + ("-peer" if peer else "-host") + ".npy", np.stack([r.depth, r.predecessor]))
        print(json.dumps({"path": r.stats["level_path"], "levels": r.stats["peer_levels"],
                          "supersteps": r.stats["supersteps"]}), flush=True)
"""


@pytest.mark.parametrize("ranks, spec, source", [(2, "grid:30x20", 0), (3, "rgg:10", 17)])
def test_mpi_ranks_run_the_levels_through_their_collectives(tmp_path, ranks, spec, source):
    """CPU ranks, each building its own part: the twin's levels through the ranks' collectives give scipy's depths
    and a tree Graph500 accepts, in a few supersteps; the host's path gives the same depths."""
    from conftest import run_mpi
    import json

    script = tmp_path / "ranks.py"
    script.write_text(MPI_SCRIPT)
    out = run_mpi(ranks, ["python", str(script), spec, source, str(tmp_path / "r")], timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    peer, host = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    g = mgraph.load(spec, backend="numpy")
    ref = hops(g, source)
    assert peer["path"] == "peer" and peer["levels"] == int(ref.max()) + 1 and peer["supersteps"] < 5
    assert host["path"] == "host" and host["supersteps"] > int(ref.max())
    for name in ("peer", "host"):
        depth, pred = np.load(tmp_path / f"r-{name}.npy")
        np.testing.assert_array_equal(depth, ref)
        validate_bfs(g, source, depth, pred)


HUBS_SCRIPT = """
import json, sys
import numpy as np
import mgraph
from mgraph.ops import levels
levels.FUSE_DEGREE, levels.GATED_ARCS = 16, 2000  # as the small_bounds fixture: R-MAT's levels mix the paths
g = mgraph.load(sys.argv[1])
for peer in (True, False):
    r = mgraph.bfs(g, int(sys.argv[2]), peer_levels=peer)
    if r.depth is not None:
        np.save(sys.argv[3] + ("-peer" if peer else "-host") + ".npy", np.stack([r.depth, r.predecessor]))
        print(json.dumps({"path": r.stats["level_path"], "levels": r.stats["peer_levels"],
                          "supersteps": r.stats["supersteps"]}), flush=True)
"""


DIRECTIONS_SCRIPT = """
import json, sys
import numpy as np
import mgraph
g = mgraph.load(sys.argv[1])
for peer in (True, False):
    r = mgraph.bfs(g, int(sys.argv[2]), direction="auto", peer_levels=peer)
    if r.depth is not None:
        np.save(sys.argv[3] + ("-peer" if peer else "-host") + ".npy", np.stack([r.depth, r.predecessor]))
        print(json.dumps({"path": r.stats["level_path"], "levels": r.stats["peer_levels"],
                          "supersteps": r.stats["supersteps"], "directions": r.stats["directions"]}), flush=True)
"""


def _peer_and_host_on_ranks(tmp_path, ranks, script, spec, source):
    """``script`` (a run with levels across the devices, then one through the host) on CPU ranks: each run's record,
    its depths and predecessors checked against scipy and Graph500's rules; the two records and scipy's depths."""
    from conftest import run_mpi
    import json

    path = tmp_path / "job.py"
    path.write_text(script)
    out = run_mpi(ranks, ["python", str(path), spec, str(source), str(tmp_path / "r")], timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    peer_run, host = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    g = mgraph.load(spec, backend="numpy")
    ref = hops(g, source)
    for name in ("peer", "host"):
        depth, pred = np.load(tmp_path / f"r-{name}.npy")
        np.testing.assert_array_equal(depth, ref)
        validate_bfs(g, source, depth, pred)
    return peer_run, host, ref


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi_ranks_run_direction_optimizing_levels_across_the_ranks(tmp_path, ranks):
    """CPU ranks, each building its own part, run a direction-optimizing BFS's levels in one call: scipy's depths,
    a tree Graph500 accepts, and the directions of the host's path."""
    peer_run, host, ref = _peer_and_host_on_ranks(tmp_path, ranks, DIRECTIONS_SCRIPT, "rmat:12", 3)
    assert peer_run["path"] == "peer" and peer_run["levels"] == int(ref.max()) + 1
    assert host["path"] == "host" and peer_run["supersteps"] < host["supersteps"]
    assert peer_run["directions"] == host["directions"] and "pull" in host["directions"]


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpi_ranks_gate_the_levels_of_a_graph_with_hubs(tmp_path, ranks):
    """CPU ranks agree that the graph has hubs (one rank's part suffices) and gate their levels alike: scipy's
    depths and a tree Graph500 accepts, with some levels on the devices and fewer supersteps than the host's."""
    peer_run, host, ref = _peer_and_host_on_ranks(tmp_path, ranks, HUBS_SCRIPT, "rmat:11", 0)
    assert peer_run["path"] == "peer" and 0 < peer_run["levels"] < int(ref.max()) + 1
    assert host["path"] == "host" and peer_run["supersteps"] < host["supersteps"]

"""Levels across GPUs through peer memory (mgraph.comm.cupy_peer) against scipy, Graph500's rules, the NumPy twin
(mgraph.comm.peer.NumpyLink) and the host-driven exchange.  Needs two GPUs that reach each other's memory."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from mgraph.check.validate import validate_bfs

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
if cp.cuda.runtime.getDeviceCount() < 2 or not cp.cuda.runtime.deviceCanAccessPeer(0, 1):
    pytest.skip("needs two GPUs with peer access", allow_module_level=True)


def hops(g, source):
    d = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@pytest.mark.parametrize("spec, source", [("grid:300x200", 0), ("grid:64x64", 2080), ("rgg:14", 3)])
def test_peer_levels_match_scipy_the_twin_and_the_host_path(spec, source):
    g = mgraph.load(spec, backend="numpy")  # on the host: each device's thread builds its part from it
    gpu = mgraph.bfs(g, source, devices=[0, 1], backend="cupy")
    twin = mgraph.bfs(g, source, devices=2, backend="numpy")
    host = mgraph.bfs(g, source, devices=[0, 1], backend="cupy", peer_levels=False)
    ref = hops(g, source)
    for r in (gpu, twin, host):
        np.testing.assert_array_equal(r.depth, ref)
        validate_bfs(g, source, r.depth, r.predecessor)
    assert gpu.stats["level_path"] == "peer" and twin.stats["level_path"] == "peer"
    assert host.stats["level_path"] == "host"
    assert gpu.stats["peer_levels"] == twin.stats["peer_levels"] == int(ref.max()) + 1
    # each copy reached is claimed once where it is, and sent once to its owner: the same entries as the twin's
    assert gpu.stats["peer_bytes"] == twin.stats["peer_bytes"] and sum(gpu.stats["peer_bytes"]) > 0


def test_a_failing_gpu_does_not_leave_its_peer_waiting():
    """Device 1 raises before its second fused call while device 0's kernel waits for its post: the host's abort
    word ends that kernel, the run raises device 1's error, and the process ends (in a child, bounded)."""
    script = textwrap.dedent("""
        import mgraph
        from mgraph.comm import cupy_peer
        real = cupy_peer.CupyLink.visit_levels
        def failing(self, frontier, label, pred, level, limit, max_levels):
            if level == 1:
                return real(self, frontier, label, pred, level, limit, 3)
            if self.d == 1:
                raise RuntimeError("device 1 broke at level %d" % level)
            return real(self, frontier, label, pred, level, limit, max_levels)
        cupy_peer.CupyLink.visit_levels = failing
        try:
            mgraph.bfs(mgraph.load("grid:200x50", backend="numpy"), 0, devices=[0, 1], backend="cupy")
        except RuntimeError as e:
            print("raised:", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "raised: device 1 broke at level 4" in out.stdout


def ranks_against_scipy(tmp_path, spec, runs, names=("depth", "predecessor")):
    """Run ``runs`` (the lines that set ``peer`` and ``host``, the same BFS with and without peer levels) on two
    MPI ranks, a GPU each, on ``spec`` from vertex 7: both give scipy's depths (the result named ``names[0]``),
    the peer run's tree (``names[1]``) passes Graph500's rules and its levels all ran on the devices; returns the
    peer run's stats as rank 0 printed them."""
    from conftest import run_mpi

    here = str(__import__("pathlib").Path(__file__).parent)
    script = tmp_path / "ranks.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {here!r})
        import numpy as np
        import mgraph
        g = mgraph.load({spec!r}, backend="cupy")
    """) + textwrap.dedent(runs) + textwrap.dedent(f"""
        level, tree = {names!r}
        if peer[level] is not None:  # rank 0 holds the gathered result
            np.save(sys.argv[1], np.stack([peer[level], peer[tree], host[level]]))
            print(json.dumps({{"peer": peer.stats["level_path"], "host": host.stats["level_path"],
                               "levels": peer.stats["peer_levels"], "sizes": peer.stats["frontier_sizes"]}}))
    """))
    out = run_mpi(2, ["python", str(script), str(tmp_path / "r.npy")], env={"MGRAPH_BACKEND": "cupy"}, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats["peer"] == "peer" and stats["host"] == "host"
    depth, pred, host_depth = np.load(tmp_path / "r.npy")
    g = mgraph.load(spec, backend="numpy")
    ref = hops(g, 7)
    np.testing.assert_array_equal(depth, ref)
    np.testing.assert_array_equal(host_depth, ref)
    validate_bfs(g, 7, depth, pred)
    assert stats["levels"] == int(ref.max()) + 1
    return stats, ref


def test_mpi_ranks_open_each_others_inboxes_through_ipc(tmp_path):
    """Two MPI ranks, a GPU each: the levels run across them through CUDA IPC handles, and the gathered result
    equals scipy's depths and passes Graph500's rules; with --no-peer-levels the host's path, the same depths."""
    ranks_against_scipy(tmp_path, "grid:300x200", """
        peer = mgraph.bfs(g, 7, backend="cupy")
        host = mgraph.bfs(g, 7, backend="cupy", peer_levels=False)
    """)


# -- batched one-level visits (a user's level-by-level BFS: tests/test_peer_batches.py's LevelBFS) ---------------
def level_bfs():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from test_peer_batches import LevelBFS

    return LevelBFS


@pytest.mark.parametrize("spec, sources", [("grid:300x200", [0]), ("rgg:14", [3]), ("grid:64x64", [2080, 0, 4095])])
def test_batched_visits_match_scipy_and_the_twin(spec, sources):
    """One kernel launch per superstep, its count on the device, the batch's counts read and agreed once: the
    depths, the supersteps and frontier sizes and the inbox bytes of the NumPy twin; several sources restart
    the inboxes."""
    LevelBFS = level_bfs()
    g = mgraph.load(spec, backend="numpy")
    gpu = mgraph.run(LevelBFS, g, sources=sources, devices=[0, 1], backend="cupy")
    twin = mgraph.run(LevelBFS, g, sources=sources, devices=2, backend="numpy")
    ref = hops(g, sources[-1])
    for r in (gpu, twin):
        np.testing.assert_array_equal(r.hops, ref)
        validate_bfs(g, sources[-1], r.hops, r.via)
        assert r.stats["level_path"] == "peer"
    assert gpu.stats["peer_levels"] == twin.stats["peer_levels"] == sum(int(hops(g, s).max()) + 1 for s in sources)
    for key in ("supersteps", "iterations", "frontier_sizes", "peer_bytes"):
        assert gpu.stats[key] == twin.stats[key], key


def test_a_failing_gpu_inside_a_batch_does_not_leave_its_peer_waiting():
    """Device 1 raises in its iterate while device 0's batched kernel waits for its post: the abort word ends that
    kernel, the later kernels of device 0's batch return at once (the failure kept in their state), and the run
    raises device 1's error (in a child, bounded)."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
        import mgraph
        from test_peer_batches import LevelBFS
        class Failing(LevelBFS):
            def iterate(self, frontier):
                if self.step == 13 and self.graph.index == 1:
                    raise RuntimeError("device 1 lost at step 13")
                return super().iterate(frontier)
        try:
            mgraph.run(Failing, mgraph.load("grid:200x50", backend="numpy"), source=0, devices=[0, 1],
                       backend="cupy")
        except RuntimeError as e:
            print("raised:", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "raised: device 1 lost at step 13" in out.stdout


def test_mpi_ranks_batch_their_visits_through_ipc(tmp_path):
    """A level per superstep, batched across two ranks through CUDA IPC: the whole frontier's sizes as agreed."""
    stats, ref = ranks_against_scipy(tmp_path, "rgg:14", """
        from test_peer_batches import LevelBFS
        peer = mgraph.run(LevelBFS, g, source=7, backend="cupy")
        host = mgraph.run(LevelBFS, g, source=7, backend="cupy", peer_levels=False)
    """, names=("hops", "via"))
    assert stats["sizes"] == [int((ref == k).sum()) for k in range(1, int(ref.max()) + 2)]


# -- graphs with hubs: the gated kernel -----------------------------------------------------------------------------
@pytest.mark.parametrize("spec, source, bounds", [("rmat:12", 0, (16, 2000)), ("rmat:12:8", 3, (16, 2000)),
                                                  ("rmat:18", 0, None)])
def test_a_graph_with_hubs_matches_scipy_and_the_twin(monkeypatch, spec, source, bounds):
    """Hubs' arcs spread over the grid and each level's arcs agreed before it runs: the GPUs' levels give scipy's
    depths and a tree Graph500 accepts, and run the same levels and send the same entries as the NumPy twin.
    ``bounds``: a hub's arcs and a gated frontier's that make a small graph mix the paths; None: the shipped ones
    (R-MAT 18 has hubs of more than FUSE_DEGREE arcs, and levels of more than GATED_ARCS)."""
    from mgraph.ops import levels

    if bounds:
        monkeypatch.setattr(levels, "FUSE_DEGREE", bounds[0])
        monkeypatch.setattr(levels, "GATED_ARCS", bounds[1])
    g = mgraph.load(spec, backend="numpy")
    assert int(g.out_degree().max()) > levels.FUSE_DEGREE
    gpu = mgraph.bfs(g, source, devices=[0, 1], backend="cupy")
    twin = mgraph.bfs(g, source, devices=2, backend="numpy")
    ref = hops(g, source)
    for r in (gpu, twin):
        np.testing.assert_array_equal(r.depth, ref)
        validate_bfs(g, source, r.depth, r.predecessor)
    assert gpu.stats["level_path"] == "peer" and 0 < gpu.stats["peer_levels"] < int(ref.max()) + 1
    assert gpu.stats["peer_levels"] == twin.stats["peer_levels"]
    assert gpu.stats["peer_bytes"] == twin.stats["peer_bytes"]
    assert gpu.stats["supersteps"] == twin.stats["supersteps"]


def test_mpi_ranks_gate_the_levels_of_a_graph_with_hubs(tmp_path):
    """Two GPU ranks through IPC on R-MAT 18 (hubs): scipy's depths, Graph500's rules, some levels on the devices."""
    from conftest import run_mpi

    script = tmp_path / "hubs.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        import numpy as np
        import mgraph
        g = mgraph.load("rmat:18", backend="cupy")
        r = mgraph.bfs(g, 0, backend="cupy")
        if r.depth is not None:
            np.save(sys.argv[1], np.stack([r.depth, r.predecessor]))
            print(json.dumps({"path": r.stats["level_path"], "levels": r.stats["peer_levels"]}))
    """))
    out = run_mpi(2, ["python", str(script), str(tmp_path / "r.npy")], env={"MGRAPH_BACKEND": "cupy"}, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    g = mgraph.load("rmat:18", backend="numpy")
    ref = hops(g, 0)
    depth, pred = np.load(tmp_path / "r.npy")
    np.testing.assert_array_equal(depth, ref)
    validate_bfs(g, 0, depth, pred)
    assert stats["path"] == "peer" and 0 < stats["levels"] < int(ref.max()) + 1


# -- direction-optimizing levels: pushes and pulls across the GPUs (mgraph.comm.cupy_directions) --------------------
@pytest.mark.parametrize("spec, source, do_a", [("rmat:14", 7, None), ("rmat:12:8", 3, 1e-2), ("rmat:18", 0, None),
                                                ("grid:30x20", 5, 1e-5), ("grid:64x64", 2080, 1e-2)])
def test_direction_optimizing_levels_match_scipy_the_twin_and_the_host_path(spec, source, do_a):
    """Every level of a direction-optimizing BFS in one kernel per GPU: scipy's depths, a tree Graph500 accepts, the
    directions of the host's path and of the NumPy twin (both given the GPU's do_a), the twin's level count and
    inbox bytes (a push sends the copies it claims, whoever claimed their owners' vertices first), in at most
    three supersteps."""
    from mgraph.ops.direction import DO_A_GPU

    do_a = DO_A_GPU if do_a is None else do_a
    g = mgraph.load(spec, backend="numpy")
    gpu = mgraph.bfs(g, source, devices=[0, 1], backend="cupy", direction="auto", do_a=do_a)
    twin = mgraph.bfs(g, source, devices=2, backend="numpy", direction="auto", do_a=do_a)
    host = mgraph.bfs(g, source, devices=[0, 1], backend="cupy", direction="auto", do_a=do_a, peer_levels=False)
    ref = hops(g, source)
    for r in (gpu, twin, host):
        np.testing.assert_array_equal(r.depth, ref)
        validate_bfs(g, source, r.depth, r.predecessor)
    assert gpu.stats["level_path"] == "peer" and host.stats["level_path"] == "host"
    assert gpu.stats["directions"] == twin.stats["directions"] == host.stats["directions"]
    assert gpu.stats["peer_levels"] == twin.stats["peer_levels"] == int(ref.max()) + 1
    assert gpu.stats["peer_bytes"] == twin.stats["peer_bytes"]
    assert gpu.stats["supersteps"] <= 3 < host.stats["supersteps"]
    if spec.startswith("rmat"):
        assert "pull" in gpu.stats["directions"] and "push" in gpu.stats["directions"]


def test_direction_optimizing_levels_run_again_from_other_sources():
    """Several sources in one run: each traversal's inboxes, bits and counts start afresh."""
    import functools

    from mgraph.primitives.bfs import BFS

    g = mgraph.load("rmat:15", backend="numpy")
    run = mgraph.run(functools.partial(BFS, direction="auto"), g, sources=[3, 0, 11], devices=[0, 1],
                     backend="cupy", communication="broadcast")
    np.testing.assert_array_equal(run.depth, hops(g, 11))
    validate_bfs(g, 11, run.depth, run.predecessor)
    assert run.stats["level_path"] == "peer"


def test_mpi_ranks_run_direction_optimizing_levels_through_ipc(tmp_path):
    """Two GPU ranks, each building its own part: every level of a direction-optimizing BFS across them through
    CUDA IPC (the copies' bits read from the peer's memory), scipy's depths and Graph500's rules."""
    stats, ref = ranks_against_scipy(tmp_path, "rmat:16", """
        peer = mgraph.bfs(g, 7, backend="cupy", direction="auto")
        host = mgraph.bfs(g, 7, backend="cupy", direction="auto", peer_levels=False)
    """)


def test_a_link_that_does_not_fit_leaves_the_levels_to_the_host(monkeypatch):
    """A GPU that refuses the link's buffers (its part fills it): the levels take the host's path, same depths."""
    from mgraph.comm import cupy_peer

    def refused(n, dtype):
        raise cp.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation, as cudaMalloc gives it

    monkeypatch.setattr(cupy_peer, "_own_allocation", refused)
    g = mgraph.load("grid:100x60", backend="numpy")
    r = mgraph.bfs(g, 0, devices=[0, 1], backend="cupy")
    np.testing.assert_array_equal(r.depth, hops(g, 0))
    validate_bfs(g, 0, r.depth, r.predecessor)
    assert r.stats["level_path"] == "host"


def test_mpi_ranks_take_the_host_path_where_one_rank_cannot_fit_the_link(tmp_path):
    """Rank 1 alone refuses the link's buffers: every rank agrees to take the host's path, and the run is right."""
    from conftest import run_mpi

    script = tmp_path / "refused.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        import cupy as cp
        import numpy as np
        import mgraph
        from mgraph.comm import cupy_peer
        from mgraph.group import world
        real = cupy_peer._own_allocation
        def refused(n, dtype):
            if world().rank == 1:
                raise cp.cuda.runtime.CUDARuntimeError(2)
            return real(n, dtype)
        cupy_peer._own_allocation = refused
        g = mgraph.load("grid:120x80", backend="cupy")
        r = mgraph.bfs(g, 7, backend="cupy")
        if r.depth is not None:
            np.save(sys.argv[1], np.stack([r.depth, r.predecessor]))
            print(json.dumps({"path": r.stats["level_path"]}))
    """))
    out = run_mpi(2, ["python", str(script), str(tmp_path / "r.npy")], env={"MGRAPH_BACKEND": "cupy"}, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["path"] == "host"
    g = mgraph.load("grid:120x80", backend="numpy")
    depth, pred = np.load(tmp_path / "r.npy")
    np.testing.assert_array_equal(depth, hops(g, 7))
    validate_bfs(g, 7, depth, pred)

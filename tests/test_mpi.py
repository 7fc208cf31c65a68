"""MPI jobs (``mpiexec -n 2|3|4``) with CPU ranks: each rank one device, building only its own part.

Every job runs tests/mpi_job.py; rank 0 writes what the job computed and the
checks run here, against one device in this process and against
scipy/networkx references.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import numpy as np
import pytest

import mgraph
import mgraph.io.loaders
from conftest import ROOT, run_mpi
from mgraph.check import validate as V
from mgraph.comm.mpi import SLOT

JOB = os.path.join(ROOT, "tests", "mpi_job.py")
CHESAPEAKE = os.path.join(ROOT, "tests", "data", "chesapeake.mtx")


@pytest.fixture(scope="module")
def directed_file(tmp_path_factory):
    """A weighted directed SNAP edge list (with a repeated arc, a self-loop and comments)."""
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 300, 1500), rng.integers(0, 300, 1500)
    w = rng.integers(1, 20, 1500)
    path = tmp_path_factory.mktemp("graphs") / "directed.txt"
    lines = ["# a directed test graph", "0 1 3", "0 1 2", "4 4 1"] + [f"{a} {b} {c}" for a, b, c in zip(src, dst, w)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def job(ranks, *args, timeout=240):
    out = run_mpi(ranks, ["python", JOB, *args], timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def references(g):
    import networkx as nx

    G = nx.from_scipy_sparse_array(g.to_scipy(), create_using=nx.DiGraph if g.directed else nx.Graph)
    pr = nx.pagerank(G, alpha=0.85, tol=1e-6)
    return {"bfs_depth": V.reference_bfs_depth(g, 0), "dobfs_depth": V.reference_bfs_depth(g, 0),
            "sssp_distance": V.reference_sssp(g, 0), "cc_labels": V.reference_components(g),
            "pr_rank": np.array([pr[i] for i in range(g.num_vertices)]),
            "bc_centrality": V.reference_betweenness(g, [0, 1, 2])}


def check_against_one_device_and_references(got, g):
    one = {"bfs_depth": mgraph.bfs(g, 0).depth, "dobfs_depth": mgraph.bfs(g, 0, direction="auto").depth,
           "sssp_distance": mgraph.sssp(g, 0).distance, "cc_labels": mgraph.connected_components(g).labels,
           "pr_rank": mgraph.pagerank(g).rank,
           "bc_centrality": mgraph.betweenness_centrality(g, sources=[0, 1, 2]).centrality}
    ref = references(g)
    for key in one:
        np.testing.assert_allclose(got[key], one[key], rtol=1e-9, atol=1e-12, err_msg=key)
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-5, atol=1e-9, err_msg=key)
    V.validate_bfs(g, 0, got["bfs_depth"], got["bfs_pred"])
    V.validate_sssp(g, 0, got["sssp_distance"], got["sssp_pred"])


@pytest.mark.parametrize("ranks", [2, 3, 4])
@pytest.mark.parametrize("partitioner", ["random", "biased-random", "metis", "callable"])
def test_every_primitive_on_ranks_equals_one_device_and_the_references(tmp_path, ranks, partitioner):
    out = tmp_path / "out.npz"
    job(ranks, "primitives", out, CHESAPEAKE, partitioner, "1-hop", "selective")
    got = np.load(out)
    assert int(got["devices"]) == ranks and str(got["workers"]) == "mpi"
    check_against_one_device_and_references(got, mgraph.load(CHESAPEAKE))


@pytest.mark.parametrize("duplication, communication", [("1-hop", "broadcast"), ("all", "selective"),
                                                        ("all", "broadcast")])
def test_every_layout_and_exchange_on_a_directed_weighted_file(tmp_path, directed_file, duplication, communication):
    out = tmp_path / "out.npz"
    job(3, "primitives", out, directed_file, "random", duplication, communication)
    got = np.load(out)
    assert got["bytes_sent"].sum() > 0
    check_against_one_device_and_references(got, mgraph.load(directed_file))


def test_a_generated_graph_on_ranks(tmp_path):
    out = tmp_path / "out.npz"
    job(4, "primitives", out, "rmat:9", "random", "1-hop", "selective")
    check_against_one_device_and_references(np.load(out), mgraph.load("rmat:9"))


@pytest.mark.parametrize("graph", ["rmat:10", "grid:30x20", "er:500:3000", "CHESAPEAKE", "DIRECTED", "GZ", "NPZ"])
@pytest.mark.parametrize("ranks", [2, 3])
def test_a_file_or_spec_gives_the_same_graph_on_any_number_of_ranks(tmp_path, directed_file, graph, ranks):
    if graph == "GZ":  # a gzip file is read whole by rank 0 and scattered by the routing
        import gzip
        import shutil

        path = tmp_path / "g.txt.gz"
        with open(directed_file, "rb") as f, gzip.open(path, "wb") as z:
            shutil.copyfileobj(f, z)
        graph = str(path)
    if graph == "NPZ":  # a cache is read by slices of rows, each undirected edge once
        graph = str(tmp_path / "g.npz")
        mgraph.io.save_npz(mgraph.load(CHESAPEAKE), graph)
    graph = {"CHESAPEAKE": CHESAPEAKE, "DIRECTED": directed_file}.get(graph, graph)
    out = tmp_path / "arcs.npz"
    job(ranks, "arcs", out, graph)
    got = np.load(out)
    whole = mgraph.load(graph)
    assert int(got["n"]) == whole.num_vertices and bool(got["directed"]) == whole.directed
    src = np.repeat(np.arange(whole.num_vertices), np.diff(whole.indptr))
    want = np.lexsort((whole.indices, src))
    have = np.lexsort((got["dst"], got["src"]))
    np.testing.assert_array_equal(got["src"][have], src[want])
    np.testing.assert_array_equal(got["dst"][have], whole.indices[want])
    if whole.weights is not None:
        np.testing.assert_array_equal(got["w"][have], whole.weights[want])


def test_without_gathering_each_rank_keeps_its_own_vertices(tmp_path):
    out = tmp_path / "own.npz"
    job(3, "own", out, CHESAPEAKE)
    got = np.load(out)
    one = mgraph.bfs(mgraph.load(CHESAPEAKE), 0)
    assert sorted(got["vertices"].tolist()) == list(range(one.depth.shape[0]))  # each vertex on one rank
    assert all(s > 0 for s in got["sizes"])
    np.testing.assert_array_equal(got["depth"], one.depth[got["vertices"]])


@pytest.mark.parametrize("ranks", [1, 3])
def test_without_gathering_vertices_and_values_align_on_one_rank_and_several(tmp_path, ranks):
    """gather=False means the same at every P: ``vertices`` and arrays aligned with it (mpiexec -n 1 runs as one
    process, which keeps every vertex)."""
    out = tmp_path / "gather.npz"
    job(ranks, "gather", out, CHESAPEAKE)
    got = np.load(out)
    assert int(got["ranks"]) == ranks and len(got["sizes"]) == ranks and all(s > 0 for s in got["sizes"])
    assert sorted(got["vertices"].tolist()) == list(range(39))  # each vertex on one rank
    if ranks == 1:
        assert got["vertices"].tolist() == list(range(39))
    np.testing.assert_array_equal(got["depth"], got["whole"][got["vertices"]])
    np.testing.assert_array_equal(got["whole"], mgraph.bfs(mgraph.load(CHESAPEAKE), 0).depth)


@pytest.mark.parametrize("ranks", [1, 3])
def test_batched_user_primitives_under_mpi_equal_one_process(tmp_path, ranks):
    """A user's primitives run their supersteps in batches on one rank (mpiexec -n 1) and one at a time on three:
    the values and the counts of supersteps are one process's, and the hops are scipy's."""
    from test_batches import Hops, Relax

    out = tmp_path / "batches.npz"
    job(ranks, "batches", out, "grid:30x20")
    got = np.load(out)
    g = mgraph.load("grid:30x20")
    hops, relax = mgraph.run(Hops, g, 0), mgraph.run(Relax, g, 0)
    np.testing.assert_array_equal(got["hops"], hops.hops)
    np.testing.assert_array_equal(got["hops"], V.reference_bfs_depth(g, 0))
    np.testing.assert_array_equal(got["distance"], relax.distance)
    assert got["steps"].tolist() == [hops.stats["supersteps"], hops.stats["iterations"], relax.stats["supersteps"],
                                     relax.stats["iterations"]]
    assert got["sizes"].tolist() == hops.stats["frontier_sizes"]


def test_bounds_and_broken_primitives_end_every_rank_alike(tmp_path):
    """A run that reaches its superstep bound, ranks that disagree on convergence, a combine function that returns
    the wrong values, a factory that returns no primitive, devices beyond the ranks or the vertices: the same
    ValueError on every rank (up to its device number), as on one device and on threads
    (tests/test_bounded_runs.py), and the job goes on."""
    out = tmp_path / "bounds.json"
    job(3, "bounds", out)
    got = json.loads(out.read_text())
    cases = got["cases"]
    assert len(cases) == 3 and all(c.keys() == cases[0].keys() for c in cases)
    expect = {
        "spin": ("ContractError", r"Spin\.iterate on device D, superstep 29, phase 0: no end after max_supersteps=30 "),
        "spin_default": ("ContractError", r"Spin\.iterate on device D, superstep 1143, phase 0: no end after "
                                          r"max_supersteps=1144 supersteps of one run \(36 vertices"),
        "phases": ("ContractError", r"Phases\.iterate on device D, superstep 29, phase 29 \('again'\): no end"),
        "bfs_bound": ("ContractError", r"BFS\.iterate on device D, superstep 4, phase 0: no end after "
                                       r"max_supersteps=5 supersteps of one run from source 0"),
        "finishing": ("ContractError", r"Finishing\.next_phase on device D, superstep 0, phase 0: the devices "
                                       r"disagree on convergence: devices \[0\] finished \(next_phase returned "
                                       r"None\) and devices \[1, 2\] began another phase"),
        "totals": ("ContractError", r"Totals\.converged on device D, superstep 0, phase 0: the devices disagree on "
                                    r"convergence: devices \[1\] shared global_sums/global_mins"),
        "first_value_only": ("ContractError", r"FirstValueOnly\.combine on device D, superstep 0: 'hops''s combine "
                                              r"function first_value_only returned shape \(1,\) for 2 local values"),
        "as_floats": ("ContractError", r"AsFloats\.combine on device D, superstep 0: .* returned float64 values for "
                                       r"a int32 array"),
        "as_list": ("ContractError", r"AsList\.combine on device D, superstep 0: .* as_list returned list"),
        "not_a_primitive": ("ValueError", r"primitive <lambda> returned NoneType, not a Primitive"),
        "devices_1000": ("ValueError", r"devices=1000 in an MPI job of 3 ranks"),
        "devices_2_63": ("ValueError", r"devices=9223372036854775808 in an MPI job of 3 ranks"),
        "too_few_vertices": ("ValueError", r"an MPI job of 3 ranks for a graph of 2 vertices: .* at most 2$"),
        "empty_sources": ("ValueError", r"sources is empty: give at least one source"),
    }
    assert sorted(expect) == sorted(cases[0])
    for name, (kind, pattern) in expect.items():
        for rank, case in enumerate(cases):
            assert case[name][0] == kind, (name, rank, case[name])
            message = re.sub(r"device \d+", "device D", case[name][1])
            assert re.match(pattern, message), (name, rank, case[name][1])
            assert f"device {rank}" in case[name][1] or kind == "ValueError", (name, rank)
    assert got["after"] == mgraph.bfs(mgraph.load("grid:6x6"), 0).depth.tolist()


def test_a_combine_function_wrong_for_what_arrives_ends_the_job_with_its_message():
    """Right for the phase-start check, wrong for a longer package: only the ranks that receive one raise, and the
    script's exception hook ends the others, which wait in a collective."""
    t = time.monotonic()
    out = run_mpi(3, ["python", JOB, "shrinks", CHESAPEAKE], timeout=120)
    assert out.returncode != 0
    assert re.search(r"ContractError: ShrinksPastTwo\.combine on device \d, superstep \d+: 'hops''s combine "
                     r"function shrinks_past_two returned shape \(\d+,\) for \d+ local values", out.stderr)
    assert "IndexError" not in out.stderr
    assert time.monotonic() - t < 60
    assert not _no_job_left(f"{JOB} shrinks")


def _no_job_left(marker, wait_s=15.0):
    """The job's processes still alive ``wait_s`` seconds after mpiexec returned (none, if nothing is orphaned).

    mpiexec may return while the ranks it killed are still being torn down (seen on a loaded 2-core CI
    machine), so a process counts as left behind only if it outlives the wait."""
    deadline = time.monotonic() + wait_s
    while True:
        ps = subprocess.run(["ps", "-eo", "stat,args"], capture_output=True, text=True).stdout
        alive = [line for line in ps.splitlines()
                 if marker in line and "ps -eo" not in line and not line.lstrip().startswith("Z")]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def test_a_rank_that_raises_ends_the_job_with_its_message_once(tmp_path):
    t = time.monotonic()
    out = run_mpi(3, ["python", JOB, "raise", CHESAPEAKE], timeout=120)
    assert out.returncode != 0
    assert out.stderr.count("boom on rank 1") >= 1
    assert "rank 1 of 3: ZeroDivisionError: boom on rank 1" in out.stderr
    assert time.monotonic() - t < 60
    assert not _no_job_left(f"{JOB} raise")


def test_a_rank_that_raises_inside_levels_across_the_ranks_ends_the_job(tmp_path):
    """The ranks run BFS's levels through their collectives (mgraph.comm.peer): one raising there while the
    others wait in the level's allgather still ends the job, with its message, leaving no rank behind."""
    t = time.monotonic()
    out = run_mpi(3, ["python", JOB, "raise_in_levels", "grid:30x20"], timeout=120)
    assert out.returncode != 0
    assert "rank 1 of 3: ZeroDivisionError: boom in levels on rank 1 at level 4" in out.stderr
    assert time.monotonic() - t < 60
    assert not _no_job_left(f"{JOB} raise_in_levels")


def test_a_contract_breach_on_one_rank_ends_the_job_with_its_message():
    """A ContractError (a ValueError) raised by one rank only still ends every rank: the others wait in a
    collective, and the script's exception hook aborts the job."""
    t = time.monotonic()
    out = run_mpi(3, ["python", JOB, "contract", CHESAPEAKE], timeout=120)
    assert out.returncode != 0
    assert "ContractError: Breaking.iterate on device 1, superstep 1: returned list" in out.stderr
    assert time.monotonic() - t < 60
    assert not _no_job_left(f"{JOB} contract")


def test_a_rank_that_dies_ends_the_whole_job_within_seconds():
    t = time.monotonic()
    out = run_mpi(3, ["python", JOB, "vanish", CHESAPEAKE], timeout=120)
    assert out.returncode != 0
    assert time.monotonic() - t < 60
    assert not _no_job_left(f"{JOB} vanish")


def test_the_command_line_under_mpi_prints_and_writes_once(tmp_path):
    record = tmp_path / "out.json"
    out = run_mpi(3, ["python", "-m", "mgraph", "bfs", "rmat:11", "--runs", "2", "--validate", "--json", record])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("graph ") == 1 and "validation  PASS" in out.stdout
    assert "3 (ids" in out.stdout and "mpi" in out.stdout
    r = json.loads(record.read_text())
    assert r["validation"]["status"] == "PASS"
    run = r["runs"][0]
    assert len(run["per_device"]) == 3 and len(run["build_peak_bytes"]) == 3 and len(run["hosts"]) == 3
    assert r["graph"]["vertices"] == 2048 and r["graph"]["edges"] == mgraph.load("rmat:11").num_edges


@pytest.mark.parametrize("command", ["sssp", "dobfs", "cc", "pr"])
def test_the_command_line_validates_distributedly(tmp_path, command):
    args = [command, "rmat:10", "--validate"] + (["--weights", "1:9"] if command == "sssp" else [])
    out = run_mpi(2, ["python", "-m", "mgraph", *args])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "validation  PASS" in out.stdout


def test_a_user_error_under_mpi_is_one_line_and_exit_status_2():
    out = run_mpi(2, ["python", "-m", "mgraph", "bfs", "rmat:10", "--source", "5000"])
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines == ["mgraph: error: source 5000 is out of range: the graph has 1024 vertices"]


def test_a_bad_line_in_one_ranks_share_of_a_file_is_a_user_error(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(200)) + "7 x\n" + "1 2\n" * 50)
    out = run_mpi(3, ["python", "-m", "mgraph", "bfs", str(path), "--source", "0"])
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("mgraph: error:") == 1 and "line 201" in out.stderr


def test_building_on_four_ranks_holds_at_most_half_of_one_ranks_peak(tmp_path):
    one, four = tmp_path / "one.json", tmp_path / "four.json"
    job(1, "peak", one, "rmat:21", timeout=600)
    job(4, "peak", four, "rmat:21", timeout=600)
    single, each = json.loads(one.read_text()), json.loads(four.read_text())
    print(f"R-MAT 21 build peak: one rank {single['peak_bytes'][0] / 2**20:.0f} MiB; four ranks "
          f"{', '.join(f'{b / 2**20:.0f}' for b in each['peak_bytes'])} MiB")
    assert single["arcs"] == each["arcs"]
    assert max(each["peak_bytes"]) <= 0.5 * single["peak_bytes"][0]


def test_ranks_and_one_process_start_from_the_same_random_roots(tmp_path):
    """Graph500 users compare runs on 1 and P ranks: the same --seed must pick the same roots either way."""
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    args = ["bfs", "rmat:10", "--runs", "4", "--seed", "3"]
    single = subprocess.run(["python", "-m", "mgraph", *args, "--json", str(one)], capture_output=True, text=True,
                            cwd=ROOT, timeout=240)
    assert single.returncode == 0, single.stderr[-3000:]
    out = run_mpi(2, ["python", "-m", "mgraph", *args, "--json", str(two)])
    assert out.returncode == 0, out.stderr[-3000:]
    roots = [[run["source"] for run in json.loads(p.read_text())["runs"]] for p in (one, two)]
    assert roots[0] == roots[1] and len(set(roots[0])) == 4


def test_arrays_beyond_one_mpi_count_go_in_rounds(tmp_path):
    """MPI counts are 32-bit: R-MAT 28's results (over 2 GiB a rank) failed in one Bcast.  gatherv, allgatherv,
    bcast_array and alltoallv go in rounds (here of 24 bytes) and deliver the same arrays, unequal and empty ones
    included (and allgatherv's dtypes promoted); a hop's one all-to-all of slots sends the rest of a longer message
    in pieces of that size."""
    out = tmp_path / "chunks.json"
    job(3, "chunks", out)
    r = json.loads(out.read_text())
    assert r["gather"] == [list(range(0, 5)), list(range(7, 15)), list(range(14, 25))]
    assert r["empty"] == [0, 0, 0] and r["bcast_everywhere"] == [True, True, True]
    every = list(range(0, 5)) + list(range(14, 25))  # rank 1 sent nothing
    assert r["allgatherv"] == [["<i8", every]] * 3
    assert r["alltoallv"] == [[s * 100 + i for i in range(s + 1)] for s in range(3)]  # what rank 0 received
    assert r["alltoallv_everywhere"] == [True, True, True]
    # a hop's messages between the 3 ranks: empty, within a slot, filling it, one byte over, and pieces of 24
    # bytes beyond it (each size on some pair), each delivered whole
    assert r["hop_everywhere"] == [True, True, True]
    assert r["hop_sizes"] == [0, 1, SLOT - 8]  # what ranks 0, 1, 2 sent rank 0


def test_nccls_transport_routes_a_build_and_a_hop_as_the_host_does(tmp_path):
    """CPU ranks run NcclTransport's own code with CuPy and NCCL stood in for (tests/fake_nccl.py: host addresses,
    NCCL's group as MPI messages, a check that every buffer lives until the group ends): each rank's part built
    through its all-to-all equals the part routed through the host, and a hop through it delivers what MPI buffers
    do; the GPU twin (tests/test_gpu_multi.py) runs the real NCCL."""
    out = tmp_path / "routes.json"
    job(3, "routes", out, "rmat:9")
    got = json.loads(out.read_text())
    assert got == {"device_move": False, "differ": [[], [], []], "hop_from": [2]}  # rank 1 sends rank 0 nothing

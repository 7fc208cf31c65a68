"""scripts/bench.py's diagnostic modes on the CPU: trace, profile, peer and hop, on NumPy devices and a tiny graph."""
from __future__ import annotations

import json
import os
import statistics

import pytest

import mgraph
from conftest import ROOT, load_script, run_mpi
from mgraph.io import generators

bench = load_script("bench")
TINY = ["--backend", "numpy", "--scale", "8", "--sources", "1"]


def _run(capsys, tmp_path, *argv):
    out_json = tmp_path / "record.json"
    code = bench.main([*TINY, *map(str, argv), "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 0, out
    return out, json.loads(out_json.read_text())


def test_trace_gives_every_superstep_of_every_device(capsys, tmp_path):
    out, record = _run(capsys, tmp_path, "--mode", "trace", "--primitives", "bfs,pr", "--devices", 2)
    assert record["mode"] == "trace" and record["devices"] == 2 and record["graph"]["scale"] == 8
    graph = generators.rmat(8, 16, seed=0)
    for name in ("bfs", "pr"):
        r = record["results"][name]
        assert r["devices"] == 2 and r["supersteps"] > 1 and r["elapsed_s"] > 0
        assert [(s["superstep"], s["device"]) for s in r["steps"]] == [
            (k, d) for k in range(r["supersteps"]) for d in (0, 1)]
        for d in (0, 1):
            mine = [s for s in r["steps"] if s["device"] == d]
            if name == "pr":  # each part has vertices the other owns (BFS's levels go through peer memory)
                assert sum(s["bytes"] for s in mine) > 0
            assert sum(s["compute_s"] for s in mine) > 0
            assert all(s[k] >= 0 for s in mine for k in ("compute_s", "package_s", "push_s", "wait_s", "combine_s"))
        assert f"{name}: 2 device(s), start {r['start'] if name == 'bfs' else None}" in out
    # the trace is the run's own record: the same run through the API takes as many supersteps and sends as much
    bfs = record["results"]["bfs"]
    again = mgraph.bfs(graph, bfs["start"], devices=2).stats
    assert (bfs["iterations"], bfs["supersteps"]) == (again["iterations"], again["supersteps"])
    assert [sum(s["bytes"] for s in bfs["steps"] if s["device"] == d) for d in (0, 1)] == again["bytes_sent"]
    assert [s["frontier"] for s in bfs["steps"]] == [
        f for k in range(again["supersteps"]) for f in (again["per_device"][0]["frontier"][k],
                                                        again["per_device"][1]["frontier"][k])]
    pr = record["results"]["pr"]
    assert pr["iterations"] == mgraph.pagerank(graph, tol=bench.PR_L1 / graph.num_vertices,
                                               devices=2).stats["iterations"]
    # one "all" row per device, summing that device's bytes
    totals = [line.split() for line in out.splitlines() if line.startswith("all")]
    assert [int(t[-1]) for t in totals[:2]] == [sum(s["bytes"] for s in bfs["steps"] if s["device"] == d)
                                                for d in (0, 1)]


def test_trace_of_one_device_sends_nothing(capsys, tmp_path):
    _, record = _run(capsys, tmp_path, "--mode", "trace", "--primitives", "sssp", "--devices", 1)
    r = record["results"]["sssp"]
    assert r["devices"] == 1 and r["supersteps"] > 1
    assert all(s["bytes"] == 0 and s["device"] == 0 for s in r["steps"])


def test_profile_names_the_worker_body_and_counts_its_calls(capsys, tmp_path):
    out, record = _run(capsys, tmp_path, "--mode", "profile", "--primitives", "bfs", "--runs", 3, "--top", 40)
    r = record["results"]["bfs"]
    assert r["runs"] == 3 and len(r["ranks"]) == 1
    rank = r["ranks"][0]
    drive = [x for x in rank["by_cumulative"]
             if x["function"].startswith("enactor.py:") and x["function"].endswith("(drive)")]
    assert len(drive) == 1 and drive[0]["calls"] == 3 and drive[0]["cumulative_us"] > 0
    own = [x["own_us"] for x in rank["by_own"]]
    assert own == sorted(own, reverse=True) and len(own) == 40
    assert "by own time" in out and "by cumulative time" in out and "(drive)" in out


def test_profile_refuses_several_devices_in_threads(capsys):
    with pytest.raises(SystemExit) as e:
        bench.main([*TINY, "--mode", "profile", "--devices", "2"])
    assert e.value.code == 2 and "mpiexec" in capsys.readouterr().err


def test_peer_times_hops_between_devices(capsys, tmp_path):
    out, record = _run(capsys, tmp_path, "--mode", "peer", "--devices", 3, "--sizes", "0.25,1", "--runs", 3)
    assert record["graph"] is None and record["devices"] == 3
    rows = record["results"]["peer"]
    assert [r["bytes"] for r in rows] == [1 << 18, 1 << 20]
    for r in rows:
        assert len(r["hops_s"]) == 3 and r["hop_s"] == statistics.median(r["hops_s"]) > 0
        assert r["gb_per_s"] == pytest.approx(r["bytes"] / r["hop_s"] / 1e9)
    assert "GB/s per peer and direction" in out


def test_hop_times_one_devices_exchange_and_reads_per_superstep(capsys, tmp_path):
    """Each exchange case checks what it packaged (nothing for an own vertex, one package for the copy's owner) before
    it is timed, so a case that timed something else fails here."""
    out, record = _run(capsys, tmp_path, "--mode", "hop", "--runs", 2)
    assert record["graph"] is None and record["devices"] == 1
    rows = record["results"]["hop"]
    assert [r["case"] for r in rows] == ["exchange, one own vertex", "exchange, one copy, sent to its owner",
                                        "count of own vertices", "id range", "advance"]
    for r in rows:
        assert len(r["batches_s"]) == 2 and 0 < r["best_us"] <= r["median_us"]
        assert r["best_us"] == pytest.approx(1e6 * min(r["batches_s"]))
    assert "exchange, one copy, sent to its owner" in out and "median us" in out


@pytest.mark.parametrize("argv", [["--mode", "peer", "--devices", "1"], ["--mode", "peer", "--sizes", "0"],
                                  ["--mode", "peer", "--sizes", "a,b"], ["--mode", "trace", "--devices", "0"],
                                  ["--mode", "hop", "--runs", "0"],
                                  ["--backend", "cupy", "--libraries"]])
def test_user_errors(capsys, argv):
    with pytest.raises(SystemExit) as e:
        bench.main([*TINY, *argv])
    assert e.value.code == 2 and "error" in capsys.readouterr().err


def test_trace_and_peer_on_mpi_ranks(tmp_path):
    script = os.path.join(ROOT, "scripts", "bench.py")
    trace_json, peer_json = tmp_path / "trace.json", tmp_path / "peer.json"
    out = run_mpi(2, ["python", script, *TINY, "--mode", "trace", "--primitives", "cc", "--json", trace_json])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("cc: 2 device(s)") == 1 and "(MPI ranks)" in out.stdout  # printed once, by rank 0
    r = json.loads(trace_json.read_text())["results"]["cc"]
    assert r["devices"] == 2 and all(sum(s["bytes"] for s in r["steps"] if s["device"] == d) > 0 for d in (0, 1))
    out = run_mpi(2, ["python", script, "--backend", "numpy", "--mode", "peer", "--sizes", "0.5", "--runs", "2",
                      "--json", peer_json])
    assert out.returncode == 0, out.stderr[-3000:]
    (row,) = json.loads(peer_json.read_text())["results"]["peer"]
    assert row["bytes"] == 1 << 19 and row["hop_s"] > 0 and len(row["hops_s"]) == 2


def test_bench_puts_the_api_call_and_the_array_library_baselines_beside_mgraph(capsys, tmp_path):
    """The default mode times the whole mgraph.bfs call next to the run's own time, and the SpMV PageRank and
    BFS a user would write, on the same graph in the same run, with their ratios to mgraph's figures."""
    out, record = _run(capsys, tmp_path, "--primitives", "bfs,pr", "--runs", 2)
    side = record["side_by_side"]
    for output in ("numpy", "device"):
        c = side["call"][output]
        assert c["wall_ms"] > 0 and c["run_ms"] > 0
        assert c["overhead_ms"] == pytest.approx(c["wall_ms"] - c["run_ms"])
    assert side["call"]["copy_ms"] >= 0
    for dtype in ("float64", "float32"):
        ms = side[f"pr_spmv_{dtype}_ms_per_iter"]
        assert ms > 0 and side[f"pr_ratio_{dtype}"] == pytest.approx(ms / record["results"]["pr"]["ms_per_iteration"])
    assert side["bfs_ratio"] == pytest.approx(side["bfs_spmv_ms"] / record["results"]["bfs"]["median_ms"])
    # mgraph's own float32 shares beside them, with how far their ranks land from float64 shares'
    assert side["pr_f32_shares_ms_per_iter"] > 0 and 0 < side["pr_f32_shares_l1_from_float64"] < 1e-6
    assert side["pr_f32_shares_ratio_float64"] == pytest.approx(
        side["pr_spmv_float64_ms_per_iter"] / side["pr_f32_shares_ms_per_iter"])
    assert "PageRank as an SpMV loop, float64" in out and "BFS as SpMV over a dense frontier" in out
    assert "mgraph PageRank, float32 shares" in out
    assert "mgraph.bfs call, output='device'" in out


def test_load_times_each_format_and_says_which_parser_took_it(capsys, tmp_path):
    folder = tmp_path / "files"
    out, record = _run(capsys, tmp_path, "--mode", "load", "--edges", 3000, "--runs", 2, "--dir", folder)
    assert record["mode"] == "load" and record["edges"] == 3000 and record["runs"] == 2
    formats = record["results"]["formats"]
    assert list(formats) == list(bench.LOAD_FORMATS)
    for fmt, r in formats.items():
        assert r["edges"] == 3000 and r["parser"] == "pyarrow"
        assert len(r["parse_s"]) == len(r["load_s"]) == len(r["line_reader_parse_s"]) == 2
        assert r["parse_median_s"] == statistics.median(r["parse_s"]) > 0
        assert r["load_medges_per_s"] == pytest.approx(3000 / statistics.median(r["load_s"]) / 1e6)
        assert (folder / r["path"]).is_file()  # --dir keeps the files
    # the files hold what they say: the same edges in every format (Matrix Market ids are 1-based)
    from mgraph.io import loaders as mio

    ref = mio.read_edges(folder / "edges.txt")
    for name in ("edges.txt.gz", "edges.csv", "edges.mtx"):
        got = mio.read_edges(folder / name)
        assert all(a.tolist() == b.tolist() for a, b in zip(got[:2], ref[:2])), name
    assert mio.read_edges(folder / "edges.mtx")[2].min() >= 0.125
    assert formats["txt"]["arcs"] <= 3000 < formats["csv"]["arcs"]  # SNAP directed, CSV undirected
    assert formats["txt"]["met"] is None and "met (n/a)" in out and "pyarrow on" in out


def test_load_without_baselines_in_a_temporary_folder(capsys, tmp_path):
    _, record = _run(capsys, tmp_path, "--mode", "load", "--edges", 500, "--runs", 1, "--formats", "csv",
                     "--no-baselines")
    (r,) = record["results"]["formats"].values()
    assert "line_reader_parse_s" not in r and r["edges"] == 500 and r["parser"] == "pyarrow"


@pytest.mark.parametrize("argv", [["--mode", "load", "--formats", "xml"], ["--mode", "load", "--edges", "0"]])
def test_load_user_errors(capsys, argv):
    with pytest.raises(SystemExit) as e:
        bench.main([*TINY, *argv])
    assert e.value.code == 2 and "error" in capsys.readouterr().err


def test_bench_runs_a_long_diameter_graph_with_its_supersteps(capsys, tmp_path):
    out, record = _run(capsys, tmp_path, "--graph", "grid:40x30", "--primitives", "bfs,sssp", "--runs", 1,
                       "--no-baselines")
    assert record["graph"]["spec"] == "grid:40x30" and record["graph"]["vertices"] == 1200
    for name in ("bfs", "sssp"):
        r = record["results"][name]
        assert r["validation"] == "PASS" and r["met"] is None  # the floors are R-MAT 24's
        assert 1 <= r["supersteps"] < r["iterations"]  # the grid's small levels run several to a superstep
        assert r["us_per_superstep"] == pytest.approx(1e3 * r["median_ms"] / r["supersteps"])
    assert "grid:40x30: 1,200 vertices" in out


def test_bench_on_the_cpu_times_the_libraries_beside_mgraph(capsys, tmp_path):
    """--backend numpy puts scipy.sparse.csgraph, networkit and igraph (those installed) beside each primitive, each
    warmed up and run after each of mgraph's runs from the same start, with mgraph's call over the fastest."""
    names = ("bfs", "sssp", "cc", "pr", "kcore", "tc")
    out, record = _run(capsys, tmp_path, "--primitives", ",".join(names), "--runs", 2, "--sources", 2,
                       "--no-baselines")
    libraries = record["libraries"]
    assert "scipy" in libraries and record["numba_threads"] >= 1
    for name in names:
        r = record["results"][name]
        assert r["validation"] == "PASS"
        expected = [lib for lib in bench.LIBRARIES[name] if lib in libraries]
        assert sorted(r.get("libraries", {})) == sorted(expected), name
        if not expected:
            continue
        starts = 2 if name in ("bfs", "sssp") else 1
        for lib in expected:
            times = r["libraries"][lib]["times_s"]
            assert len(times) == starts and all(len(t) == 2 and min(t) > 0 for t in times)
            assert r["libraries"][lib]["median_ms"] == pytest.approx(
                1e3 * statistics.median(statistics.median(t) for t in times))
        fastest = min(expected, key=lambda lib: r["libraries"][lib]["median_ms"])
        assert r["fastest_library"] == fastest
        assert r["library_ratio"] == pytest.approx(r["call_median_ms"] / r["libraries"][fastest]["median_ms"])
        assert r["library_met"] == (r["library_ratio"] <= bench.LIBRARY_FLOOR)
        assert len(r["starts"][0]["call_s"]) == 2 and r["call_median_ms"] >= r["median_ms"] > 0
    assert "mgraph / fastest" in out and "CPU libraries beside mgraph" in out
    _, record = _run(capsys, tmp_path, "--primitives", "cc", "--runs", 1, "--no-baselines", "--no-libraries")
    assert "libraries" not in record["results"]["cc"] and record["libraries"] is None


def test_the_libraries_solve_the_problem_mgraph_solves():
    """What bench.py times for each library answers the primitive's question on the same graph: levels, distances,
    components, ranks, core numbers and triangles equal mgraph's (a library that is not installed is skipped)."""
    import numpy as np

    g = generators.rmat(9, 8, seed=3)
    w = generators.with_random_weights(g, 1, 64, seed=3)
    available = bench.library_versions()
    plain, weighted = bench.LibraryGraphs(g), bench.LibraryGraphs(w)
    s = int(np.flatnonzero(np.diff(g.indptr))[0])
    depth = mgraph.bfs(g, s).depth
    dist = mgraph.sssp(w, s).distance
    labels = mgraph.connected_components(g).labels
    core = mgraph.core_number(g).core
    tri = mgraph.triangles(g).triangles
    rank = mgraph.pagerank(g, tol=1e-12).rank
    deg = np.diff(g.indptr)
    checked = 0
    for name, graph, lgraphs in (("bfs", g, plain), ("sssp", w, weighted), ("cc", g, plain), ("pr", g, plain),
                                 ("kcore", g, plain), ("tc", g, plain)):
        for lib, call in bench.library_calls(name, graph, lgraphs, available).items():
            got = call(s)
            checked += 1
            if lib == "scipy" and name == "bfs":
                order, pred = got
                assert sorted(order.tolist()) == np.flatnonzero(depth >= 0).tolist()
                assert all(depth[pred[v]] == depth[v] - 1 for v in order[1:])
            elif lib == "scipy" and name == "sssp":
                np.testing.assert_array_equal(got[0], dist)
            elif lib == "scipy" and name == "cc":
                assert got[0] == len(set(labels.tolist()))
            elif lib == "networkit" and name == "bfs":
                d = np.array(got.getDistances())
                np.testing.assert_array_equal(np.where(depth >= 0, d, -1), depth)
            elif lib == "networkit" and name == "sssp":
                d = np.array(got.getDistances())
                np.testing.assert_array_equal(d[np.isfinite(dist)], dist[np.isfinite(dist)])
            elif lib == "networkit" and name == "cc":
                assert got.numberOfComponents() == len(set(labels.tolist()))
            elif lib == "networkit" and name == "pr":
                scores = np.array(got.scores())  # on an undirected graph, a multiple of the ranks
                assert np.abs(scores / scores.sum() - rank).sum() < 1e-5  # stopped at L1 change 1e-6
            elif lib == "networkit" and name == "kcore":
                np.testing.assert_array_equal(np.array(got.scores()).astype(np.int64), core)
            elif lib == "networkit" and name == "tc":
                np.testing.assert_allclose(np.array(got.scores()) * deg * (deg - 1) / 2, tri, atol=1e-6)
            elif lib == "igraph" and name == "bfs":
                vids, _, parents = got
                assert sorted(vids) == np.flatnonzero(depth >= 0).tolist()
                assert all(depth[parents[v]] == depth[v] - 1 for v in vids if v != s)
            elif lib == "igraph" and name == "cc":
                assert len(got) == len(set(labels.tolist()))
            elif lib == "igraph" and name == "pr":
                assert np.abs(np.array(got) - rank).sum() < 1e-5
            elif lib == "igraph" and name == "kcore":
                np.testing.assert_array_equal(got, core)
            elif lib == "igraph" and name == "tc":
                np.testing.assert_allclose(np.array(got) * deg * (deg - 1) / 2, tri, atol=1e-6)
            else:
                raise AssertionError(f"no check for {lib}'s {name}")
    assert checked >= 3


def test_threads_mode_alternates_thread_counts_and_gives_speedups(capsys, tmp_path):
    numba = pytest.importorskip("numba")
    counts = "1,2" if numba.config.NUMBA_NUM_THREADS >= 2 else "1,1"
    out, record = _run(capsys, tmp_path, "--mode", "threads", "--primitives", "bfs,cc", "--threads", counts,
                       "--runs", 2)
    for name in ("bfs", "cc"):
        r = record["results"][name]
        for t in counts.split(","):
            assert len(r["times_s"][t]) == len(r["starts"]) and all(len(x) == 2 for x in r["times_s"][t])
            assert r["median_ms"][t] == pytest.approx(1e3 * statistics.median(
                statistics.median(x) for x in r["times_s"][t]))
        first, last = counts.split(",")
        assert r["speedup"][last] == pytest.approx(r["median_ms"][first] / r["median_ms"][last])
        control = r["control"]  # what the cores gave right after this primitive's rounds
        assert set(control["median_ms"]) == set(counts.split(",")) and min(control["median_ms"].values()) > 0
        assert control["speedup"][last] == pytest.approx(control["median_ms"][first] / control["median_ms"][last])
    assert "thread(s) ms" in out and f"control loop right after, {last} over {first}" in out


@pytest.mark.parametrize("argv", [["--threads", "1,2"], ["--threads", "0"], ["--threads", "x"],
                                  ["--backend", "cupy", "--threads", "2"], ["--backend", "cupy", "--mode", "threads"]])
def test_thread_count_errors(capsys, argv):
    with pytest.raises(SystemExit) as e:
        bench.main([*TINY, *argv])
    assert e.value.code == 2 and "--threads" in capsys.readouterr().err


def test_profile_and_trace_on_mpi_ranks_build_only_each_ranks_part(tmp_path):
    script = os.path.join(ROOT, "scripts", "bench.py")
    out_json = tmp_path / "profile.json"
    out = run_mpi(2, ["python", script, *TINY, "--mode", "profile", "--primitives", "sssp,cc", "--runs", "1",
                      "--top", "400", "--json", out_json])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "each rank builds its own part" in out.stderr and "generating" not in out.stderr
    results = json.loads(out_json.read_text())["results"]
    for name in ("sssp", "cc"):
        ranks = results[name]["ranks"]
        assert [r["rank"] for r in ranks] == [0, 1]
        for r in ranks:  # each rank profiled its own device's drive of the run
            assert any(row["function"].endswith("(_drive)") and row["calls"] == 1 for row in r["by_cumulative"])

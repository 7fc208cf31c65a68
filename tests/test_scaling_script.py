"""scripts/scaling.py on the CPU: tiny strong, weak and overhead experiments on virtual devices, and its user errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

import mgraph
from conftest import load_script

scaling = load_script("scaling")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("scaling")
    argv = ["--scale", "8", "--runs", "1", "--sources", "2", "--gpus-list", "1,2", "--backend", "numpy",
            "--path-length", "40", "--out", str(out)]
    code = scaling.main(argv)
    return code, out, json.loads((out / "scaling.json").read_text())


def test_runs_all_three_experiments_and_records_them(run, capsys):
    code, out, record = run
    assert code == 0
    assert {"date", "command", "version", "device", "backend", "strong", "weak", "overhead"} <= set(record)
    assert record["complete"] is True and not list(out.glob("*.partial"))
    assert record["backend"] == "numpy" and record["gpu_counts"] == [1, 2]
    assert record["version"]["git"] and "--gpus-list" in record["command"]
    for experiment in ("strong", "weak"):
        records = record[experiment]["records"]
        assert sorted((r["primitive"], r["gpus"]) for r in records) == sorted(
            (p, n) for p in ("bfs", "dobfs", "sssp", "cc", "pr", "bc") for n in (1, 2))
        for r in records:
            assert r["median_ms"] > 0 and r["y"] > 0 and r["validation"] == "PASS", r
            assert r["min_ms"] <= r["median_ms"] <= r["max_ms"]
            assert r["max_ms"] == pytest.approx(1e3 * max(t for p in r["starts"] for t in p["times_s"]))
            assert r["speedup"] > 0 and (r["speedup"] == 1 if r["gpus"] == 1 else True)
            if r["gpus"] == 2:  # partitioning and subgraph building are timed apart from the run
                assert r["partition_s"] > 0 and r["subgraph_s"] > 0 and r["supersteps"] > 0
            else:
                assert r["partition_s"] is None
            if r["primitive"] in ("bfs", "dobfs", "sssp"):
                assert len(r["starts"]) == 2 and r["graph500_gteps"] > 0
                assert r["directed_gteps"] == pytest.approx(2 * r["graph500_gteps"])  # undirected: two arcs per edge
            if r["primitive"] == "pr":
                assert r["ms_per_iteration"] > 0 and r["iterations"] < 100 and r["converged"]
    assert record["strong"]["graph"]["scale"] == 8
    assert [(g["gpus"], g["scale"]) for g in record["weak"]["graphs"]] == [(1, 8), (2, 9)]  # constant edges per GPU
    overhead = record["overhead"]["records"]
    assert [r["devices"] for r in overhead] == [1, 2]
    for r in overhead:
        assert r["us_per_superstep"] > 0 and r["validation"] == "PASS"
        assert r["supersteps"] >= r["path_length"] and r["seed_k40_us"] == scaling.SEED_OVERHEAD_US[r["devices"]]
    one = overhead[0]["breakdown_us"]  # one device runs the same worker body, with an exchange that sends nothing
    assert one["compute"] > 0 and one["split+package"] == one["push"] == one["combine"] == 0
    assert set(overhead[1]["breakdown_us"]) == {"compute", "split+package", "push", "combine", "wait"}
    assert all(v >= 0 for v in overhead[1]["breakdown_us"].values()) and overhead[1]["bytes_per_superstep"] == 0  # paths stay home
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert record["plots"] == []
    else:
        assert sorted(record["plots"]) == ["overhead.png", "strong_scaling.png", "weak_scaling.png"]
        assert all((out / p).stat().st_size > 0 for p in record["plots"])


def test_a_run_cut_short_keeps_what_it_measured(tmp_path, monkeypatch):
    """scaling.json is rewritten after every measurement: a run stopped in its third (a time limit, Ctrl-C) keeps
    the first two, marked incomplete, and no plots."""
    original, calls = scaling.measure, []

    def measure(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(scaling, "measure", measure)
    with pytest.raises(KeyboardInterrupt):
        scaling.main(["--scale", "7", "--runs", "1", "--sources", "1", "--gpus-list", "1,2", "--backend", "numpy",
                      "--experiments", "strong", "--out", str(tmp_path)])
    record = json.loads((tmp_path / "scaling.json").read_text())
    assert record["complete"] is False and record["plots"] == []
    assert [(r["primitive"], r["gpus"]) for r in record["strong"]["records"]] == [("bfs", 1), ("bfs", 2)]
    assert record["strong"]["records"][1]["speedup"] > 0 and record["strong"]["graph"]["scale"] == 7


def test_a_far_off_run_is_pointed_out(capsys):
    record = {"primitive": "dobfs", "gpus": 2, "scale": 26, "y": 1.3, "directed_gteps": 2.6, "median_ms": 801.0,
              "min_ms": 21.4, "max_ms": 3131.7, "partition_s": 0.002, "subgraph_s": 0.4, "speedup": 0.005,
              "validation": "not run"}
    scaling._progress("strong", record)
    assert "runs took 21.4 to 3132 ms" in capsys.readouterr().err
    scaling._progress("strong", dict(record, max_ms=30.0))
    assert "runs took" not in capsys.readouterr().err


def test_prints_markdown_tables_last(tmp_path, capsys):
    assert scaling.main(["--experiments", "overhead", "--backend", "numpy", "--gpus-list", "1,2", "--runs", "1",
                         "--path-length", "10"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("[scaling] overhead on") == 2  # one progress line per measurement
    last = captured.out.strip().splitlines()[-2:]
    assert last[0].startswith("| 1 | ") and last[1].startswith("| 2 | ") and "66.8" in last[0] and "124" in last[1]


def test_path_primitive_runs_one_path_per_device():
    g = scaling.paths_graph(3, 5)
    r = mgraph.run(scaling.PathBFS, g, devices=3, partitioner=scaling.path_partitioner(5))
    assert scaling.check_paths(r, 5) is None
    assert r.stats["owned_vertices"] == [6, 6, 6] and set(r.stats["frontier_sizes"][:-1]) == {3}
    np.testing.assert_array_equal(mgraph.run(scaling.PathBFS, g).depth, r.depth)


def test_weak_size_keeps_edges_per_gpu():
    assert [scaling.weak_size(20, 16, n) for n in (1, 2, 3, 4, 8)] == [(20, 16), (21, 16), (21, 24), (22, 16), (23, 16)]


@pytest.mark.parametrize("argv", [["--gpus-list", "0"], ["--gpus-list", "a,b"], ["--primitives", "bfs,nope"],
                                  ["--experiments", "fast"], ["--runs", "0"], ["--bogus"],
                                  ["--communication", "sometimes"], ["--mpiexec", ""], ["--mpiexec", " "]])
def test_a_bad_option_is_one_line_and_exit_2(argv, capsys):
    assert scaling.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("scaling.py: error: ")




def test_mpiexec_runs_one_mpi_job_per_count_and_merges_them(tmp_path):
    """--mpiexec: each count is an MPI job of that many CPU ranks, each rank drawing only its own part; the records
    come back merged, on one graph (the same edges and sources at every count), validated on the ranks' parts."""
    import os
    import subprocess
    import sys

    from conftest import ROOT, mpiexec_path

    env = dict(os.environ, MGRAPH_BACKEND="numpy", PYTHONPATH=ROOT)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "scaling.py"), "--mpiexec", mpiexec_path(), "--scale", "7",
         "--runs", "1", "--sources", "2", "--gpus-list", "1,2", "--primitives", "bfs,sssp,pr,bc", "--path-length",
         "20", "--out", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((out / "scaling.json").read_text())
    assert record["complete"] and [(j["gpus"], j["returncode"], j["complete"]) for j in record["jobs"]] == [
        (1, 0, True), (2, 0, True)]
    assert record["jobs"][1]["command"][:3] == [mpiexec_path(), "-n", "2"]
    strong = record["strong"]
    one, two = strong["graphs_by_job"]
    assert one["ranks"] is None and two["ranks"] == 2  # the 2-GPU job drew its graph as parts
    assert (one["vertices"], one["edges"], one["sources"]) == (two["vertices"], two["edges"], two["sources"])
    assert strong["graph"] == one
    records = {(r["primitive"], r["gpus"]): r for r in strong["records"]}
    assert sorted(records) == sorted((p, n) for p in ("bfs", "sssp", "pr", "bc") for n in (1, 2))
    for (name, n), r in records.items():
        assert r["median_ms"] > 0 and r["speedup"] > 0
        assert r["speedup"] == 1 if n == 1 else r["speedup"] == pytest.approx(r["rate"] / records[name, 1]["rate"])
        # BC's reference needs the whole graph, which no rank holds
        assert r["validation"] == ("not run" if (name, n) == ("bc", 2) else "PASS"), r
        assert len(r["per_device"]) == n
    for name in ("bfs", "sssp"):  # one graph, the same sources: the same traversals at both counts
        assert [s["edges_in_component"] for s in records[name, 1]["starts"]] == \
               [s["edges_in_component"] for s in records[name, 2]["starts"]]
    assert records["pr", 1]["iterations"] == records["pr", 2]["iterations"]
    assert [(g["gpus"], g["scale"]) for g in record["weak"]["graphs"]] == [(1, 7), (2, 8)]
    assert [r["devices"] for r in record["overhead"]["records"]] == [1, 2]
    assert all(r["validation"] == "PASS" for r in record["overhead"]["records"])
    table = proc.stdout.strip().splitlines()
    assert table[0].startswith("numpy on") and "one MPI job per count" in table[0]
    assert table[-1].startswith("| 2 | ")  # the merged tables are printed last; the jobs' own went to stderr


def test_under_mpiexec_the_ranks_are_the_devices():
    from conftest import run_mpi

    proc = run_mpi(2, ["python", "scripts/scaling.py", "--gpus-list", "1,2", "--scale", "6"])
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines == ["scaling.py: error: --gpus-list 1,2 in an MPI job of 2 ranks: the ranks are the GPUs; for "
                     "several counts run scaling.py --mpiexec CMD"]


def test_floors_are_judged_at_four_gpus_against_one():
    strong = {"graph": {"scale": 26}, "records": [
        {"primitive": "bfs", "gpus": 1, "speedup": 1.0}, {"primitive": "bfs", "gpus": 4, "speedup": 3.2},
        {"primitive": "dobfs", "gpus": 4, "speedup": 0.9}, {"primitive": "pr", "gpus": 2, "speedup": 1.9}]}
    weak = {"records": [{"primitive": "cc", "gpus": 4, "efficiency": 0.75}, {"primitive": "cc", "gpus": 1,
                                                                            "efficiency": 1.0}]}
    overhead = {"records": [{"devices": 1, "us_per_superstep": 65.0}, {"devices": 4, "us_per_superstep": 180.0}]}
    judged = scaling.floors({"strong": strong, "weak": weak, "overhead": overhead})
    assert [(f["what"], f["floor"], f["met"]) for f in judged] == [
        ("strong bfs speedup", ">= 3", True), ("strong dobfs speedup", ">= 1.5", False),
        ("weak cc efficiency", ">= 0.8", False), ("overhead us per superstep", "<= 100", False)]
    strong["graph"]["scale"] = 24  # strong scaling's floors are set at R-MAT 26 only
    assert [f["what"] for f in scaling.floors({"strong": strong})] == []
    assert scaling.floors({}) == []


def test_mpiexec_counts_are_capped_at_the_gpus_present(monkeypatch, capsys):
    """A job of more ranks than GPUs would have them share GPUs (and no NCCL): such counts are skipped, and none
    left is a one-line error, before anything is launched."""
    from types import SimpleNamespace

    runtime = SimpleNamespace(getDeviceCount=lambda: 2)
    fake = SimpleNamespace(is_gpu=True, xp=SimpleNamespace(cuda=SimpleNamespace(runtime=runtime)))
    monkeypatch.setattr(scaling, "resolve", lambda name: fake)
    launched = []
    monkeypatch.setattr(scaling.subprocess, "run", lambda cmd, **kw: launched.append(cmd))
    assert scaling.main(["--mpiexec", "mpiexec", "--gpus-list", "4,8"]) == 2
    assert capsys.readouterr().err.strip().endswith("--gpus-list 4,8: this machine has only 2 GPU(s)")
    assert launched == []

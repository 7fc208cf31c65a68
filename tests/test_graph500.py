"""``mgraph graph500``: the reference's statistics against hand-computed values, the report and its JSON record
in-process on the CPU, user errors, and the benchmark at scale 16 under ``mpiexec -n 2``."""
from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest

import mgraph
from conftest import run_mpi
from mgraph import api, cli
from mgraph.graph500 import choose_roots, summary_statistics, teps_statistics

ORDER = ["min", "firstquartile", "median", "thirdquartile", "max"]


def reference_keys(sssp: bool) -> list[str]:
    """Every key the reference's src/main.c prints, in its order (written out here, not taken from the module)."""
    kernels = ["bfs "] + (["sssp"] if sssp else [])
    keys = ["SCALE", "edgefactor", "NBFS", "graph_generation", "num_mpi_processes", "construction_time"]
    for k in kernels:
        keys += [f"{k} {s}_time" for s in ORDER + ["mean", "stddev"]]
    keys += [f"{s}_nedge" for s in ORDER + ["mean", "stddev"]]
    for k in kernels:
        keys += [f"{k} {s}_TEPS" for s in ORDER + ["harmonic_mean", "harmonic_stddev"]]
    for k in kernels:
        keys += [f"{k} {s}_validate" for s in ORDER + ["mean", "stddev"]]
    return keys


def parse(out: str) -> dict:
    """``key: value`` lines as {key: value text}, keys as printed (the reference pads them to column 32)."""
    rows = {}
    for line in out.splitlines():
        key, sep, value = line.partition(":")
        assert sep, f"not a key: value line: {line!r}"
        assert line[32:].strip() == value.strip() and len(key) < 31, f"value not in column 33: {line!r}"
        rows[key] = value.strip()
    return rows


def run(capsys, *argv):
    code = cli.main(["graph500", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    return code, out, err


# -- the statistics -------------------------------------------------------------------
@pytest.mark.parametrize("values, quartiles", [
    ([4, 1, 3, 2], (1.5, 2.5, 3.5)),          # n = 4: q1 = (x[0] + x[1]) / 2, q3 = (x[3] + x[2]) / 2
    ([5, 1, 4, 2, 3], (2, 3, 4)),             # n = 5: q1 = x[1], q3 = x[3]
    ([6, 1, 5, 2, 4, 3], (2, 3.5, 5)),        # n = 6: q1 = (x[1] + x[1]) / 2 (not numpy's 2.25)
    ([7, 1, 6, 2, 5, 3, 4], (2, 4, 6)),       # n = 7
    ([8, 1, 7, 2, 6, 3, 5, 4], (2.5, 4.5, 6.5)),
])
def test_summary_statistics_by_the_references_quartile_rule(values, quartiles):
    s = summary_statistics(values)
    assert (s["firstquartile"], s["median"], s["thirdquartile"]) == quartiles
    assert s["median"] == statistics.median(values)
    assert s["min"] == min(values) and s["max"] == max(values)
    assert s["mean"] == pytest.approx(statistics.mean(values))
    assert s["stddev"] == pytest.approx(statistics.stdev(values))  # the sample deviation, n - 1


def test_summary_statistics_of_one_value_and_of_4k_plus_1_values():
    one = summary_statistics([7.0])
    assert all(one[k] == 7.0 for k in ORDER + ["mean"]) and math.isnan(one["stddev"])  # 0 / 0, as the reference
    x = np.random.default_rng(3).exponential(size=65)  # n = 4k + 1: every quartile rule picks x[k] and x[3k]
    s = summary_statistics(x)
    assert s["firstquartile"] == np.quantile(x, 0.25) and s["thirdquartile"] == np.quantile(x, 0.75)
    assert s["median"] == np.median(x) and s["stddev"] == pytest.approx(np.std(x, ddof=1))
    with pytest.raises(ValueError):
        summary_statistics([])


def test_teps_statistics_invert_seconds_per_edge():
    t = teps_statistics([1.0, 2.0, 4.0], [10, 10, 10])  # TEPS 10, 5, 2.5
    assert (t["min"], t["firstquartile"], t["median"], t["thirdquartile"], t["max"]) == (2.5, 2.5, 5.0, 10.0, 10.0)
    assert t["harmonic_mean"] == pytest.approx(statistics.harmonic_mean([10, 5, 2.5]))  # = 3 / 0.7
    # Norris (1940), in the reference's octave form: sqrt(sum((1/TEPS - 1/H)^2)) / (n - 1) * H^2
    h = 3 / 0.7
    norris = math.sqrt(sum((1 / v - 1 / h) ** 2 for v in (10, 5, 2.5))) / 2 * h * h
    assert t["harmonic_stddev"] == pytest.approx(norris)


def test_teps_statistics_on_random_runs():
    rng = np.random.default_rng(1)
    times, nedges = rng.uniform(0.01, 0.1, 64), rng.integers(1000, 100000, 64)
    teps = nedges / times
    t = teps_statistics(times, nedges)
    assert t["harmonic_mean"] == pytest.approx(statistics.harmonic_mean(teps.tolist()))
    assert t["min"] == pytest.approx(teps.min()) and t["max"] == pytest.approx(teps.max())
    assert t["median"] == pytest.approx(1 / statistics.median((times / nedges).tolist()))
    h = t["harmonic_mean"]
    norris = math.sqrt(((1 / teps - 1 / h) ** 2).sum()) / 63 * h * h
    assert t["harmonic_stddev"] == pytest.approx(norris)
    assert math.isnan(teps_statistics([1.0], [5])["harmonic_stddev"])


def test_roots_are_distinct_have_edges_and_do_not_depend_on_the_batch():
    degree = np.zeros(5000, dtype=np.int64)
    degree[::3] = 1  # a third of the vertices have edges
    asked = []

    def has_edges(ids):
        asked.append(ids.size)
        return degree[ids] > 0

    roots = choose_roots(5000, 64, 7, has_edges)
    assert len(roots) == 64 == len(set(roots)) and all(degree[r] for r in roots)
    assert roots == choose_roots(5000, 64, 7, has_edges) and roots != choose_roots(5000, 64, 8, has_edges)
    assert roots[:10] == choose_roots(5000, 10, 7, has_edges)  # the same stream, taken in order
    assert choose_roots(5000, 64, 7, lambda ids: np.zeros(ids.size, bool)) == []  # gives up after 2n draws
    few = np.zeros(5000, dtype=np.int64)
    few[[3, 99]] = 1
    assert sorted(choose_roots(5000, 64, 7, lambda ids: few[ids] > 0)) == [3, 99]


# -- the command, in this process on the CPU ------------------------------------------------
def test_the_report_has_every_reference_key_and_every_search_validates(capsys):
    code, out, err = run(capsys, 10, "--roots", 8, "--backend", "numpy")
    assert code == 0, err
    assert err == ""  # progress only on a terminal
    rows = parse(out)
    keys = reference_keys(sssp=False)
    assert list(rows)[:len(keys)] == keys
    assert rows["SCALE"] == "10" and rows["edgefactor"] == "16" and rows["NBFS"] == "8"
    assert rows["num_mpi_processes"] == "1"
    assert rows["validation"] == "PASS (8 BFS searches by Graph500's rules)"
    assert float(rows["graph_generation"]) > 0 and float(rows["construction_time"]) > 0
    g = mgraph.load("rmat:10")  # the same graph
    assert int(rows["max_nedge"]) <= g.num_edges and int(rows["min_nedge"]) > 0
    stats = {k: float(rows[f"bfs  {k}_TEPS"]) for k in ORDER + ["harmonic_mean"]}
    assert stats["min"] <= stats["firstquartile"] <= stats["median"] <= stats["thirdquartile"] <= stats["max"]
    assert stats["min"] <= stats["harmonic_mean"] <= stats["max"]
    assert float(rows["bfs  mean_validate"]) > 0


def test_sssp_and_the_json_record(capsys, tmp_path):
    record_path = tmp_path / "g500.json"
    code, out, err = run(capsys, 10, "--roots", 6, "--sssp", "--seed", 3, "--json", record_path)
    assert code == 0, err
    rows = parse(out)
    keys = reference_keys(sssp=True)
    assert list(rows)[:len(keys)] == keys
    assert rows["validation"] == "PASS (6 BFS, 6 SSSP searches by Graph500's rules)"
    assert rows["sssp weights"] == "integers 1..64"

    r = json.loads(record_path.read_text())
    assert {"command", "argv", "graph", "options", "report", "roots", "runs", "validation", "backend", "devices",
            "version", "date"} <= set(r)
    assert r["command"] == "graph500" and r["argv"][:2] == ["mgraph", "graph500"]
    assert r["validation"] == {"status": "PASS", "failures": []}
    assert r["version"]["mgraph"] == mgraph.__version__ and r["version"]["git"] and r["date"][:2] == "20"
    assert r["backend"] == "numpy" and r["devices"] and r["num_mpi_processes"] == 1
    g = mgraph.load("rmat:10", seed=3, weights=(1, 64))
    assert r["graph"]["vertices"] == 1024 and r["graph"]["edges"] == g.num_edges
    assert r["graph"]["input_edges"] == 16 << 10 and r["graph"]["weights"] == [1, 64]
    # the same figures as printed, keyed with underscores; then every root's own
    assert list(r["report"]) == ["_".join(k.split()) for k in keys]
    for key, value in rows.items():
        if "_".join(key.split()) in r["report"]:
            assert f"{r['report']['_'.join(key.split())]:{'.11g' if 'nedge' in key else 'g'}}" == value
    degree = g.out_degree()
    assert len(r["roots"]) == 6 == len(set(r["roots"])) and all(degree[v] >= 1 for v in r["roots"])
    for kernel in ("bfs", "sssp"):
        runs = r["runs"][kernel]
        assert [x["root"] for x in runs] == r["roots"] and all(x["valid"] for x in runs)
        assert all(x["time_s"] > 0 and x["validate_s"] > 0 and x["nedge"] > 0 for x in runs)
        assert all(x["teps"] == pytest.approx(x["nedge"] / x["time_s"]) for x in runs)
    assert [x["nedge"] for x in r["runs"]["bfs"]] == [x["nedge"] for x in r["runs"]["sssp"]]  # one component
    times = [x["time_s"] for x in r["runs"]["sssp"]]
    assert r["report"]["sssp_median_time"] == pytest.approx(statistics.median(times))
    assert r["report"]["sssp_harmonic_mean_TEPS"] == pytest.approx(
        statistics.harmonic_mean([x["teps"] for x in r["runs"]["sssp"]]))


def test_roots_follow_the_seed_whatever_the_devices(capsys, tmp_path):
    def roots(*extra):
        path = tmp_path / "r.json"
        code, out, err = run(capsys, 9, "--roots", 5, "--json", path, *extra)
        assert code == 0, err
        assert parse(out)["validation"].startswith("PASS")
        return json.loads(path.read_text())

    one = roots()
    three = roots("--devices", 3, "--partitioner", "biased-random", "--direction", "push")
    assert one["roots"] == three["roots"] and three["device_count"] == 3
    assert roots("--seed", 1)["roots"] != one["roots"]


def test_a_small_graph_gives_fewer_roots_with_a_note(capsys):
    code, out, err = run(capsys, 2, "--roots", 64)
    assert code == 0, err
    nbfs = int(parse(out)["NBFS"])
    assert 1 <= nbfs <= 4 and err.count("\n") == 1 and f"NBFS = {nbfs}" in err


def test_an_invalid_search_withholds_the_report_and_exits_1(capsys, monkeypatch, tmp_path):
    real = api.bfs

    def wrong(graph, source, **kw):
        r = real(graph, source, **kw)
        child = int(np.flatnonzero(r.depth == 2)[0])
        r.predecessor[child] = source  # a tree edge across two levels (the warm-up's is not checked)
        return r

    monkeypatch.setattr(api, "bfs", wrong)
    path = tmp_path / "fail.json"
    code, out, err = run(capsys, 10, "--roots", 4, "--json", path)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("validation: FAIL: BFS from root ") and "rule" in lines[0]
    assert lines[1] == "No results printed for invalid run."
    r = json.loads(path.read_text())
    assert r["validation"]["status"] == "FAIL" and r["report"] is None
    assert len(r["runs"]["bfs"]) == 1 and r["runs"]["bfs"][0]["valid"] is False  # stops at the first


@pytest.mark.parametrize("argv, says", [
    (["0"], "SCALE must be between 1 and 40, got 0"),
    (["41"], "SCALE must be between 1 and 40, got 41"),
    (["x"], "invalid int value"),
    (["10", "--roots", "0"], "--roots: expected a positive integer"),
    (["10", "--edge-factor", "0"], "--edge-factor: expected a positive integer"),
    (["10", "--seed", "-1"], "--seed must be non-negative"),
    (["10", "--weights", "1:9"], "add --sssp"),
    (["10", "--sssp", "--weights", "9:1"], "0 <= LO <= HI"),
    (["1", "--edge-factor", "1", "--seed", "1"], "no vertex of degree >= 1"),  # both edges are self-loops
    (["36"], "needs about"),  # more host memory than any machine here has
    (["10", "--json", "no/such/folder/g.json"], "does not exist"),
])
def test_user_errors_are_one_line_and_exit_2(capsys, argv, says):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("mgraph: error: ") and err.count("\n") == 1 and says in err, err


@pytest.mark.gpu
def test_on_a_gpu(capsys, tmp_path):
    """Generated, built, searched and validated on the GPU (validate_parts on the device), after the warm-ups."""
    path = tmp_path / "gpu.json"
    code, out, err = run(capsys, 12, "--roots", 4, "--sssp", "--backend", "cupy", "--json", path)
    assert code == 0, out + err
    rows = parse(out)
    assert list(rows)[:len(reference_keys(True))] == reference_keys(True)
    assert rows["validation"] == "PASS (4 BFS, 4 SSSP searches by Graph500's rules)"
    r = json.loads(path.read_text())
    assert r["backend"] == "cupy" and r["graph"]["edges"] == mgraph.load("rmat:12", weights=(1, 64)).num_edges


def test_every_step_runs_in_the_device_context_of_the_searches(capsys, monkeypatch):
    """Roots are chosen (the degree check) and searches checked inside the device context that the searches use
    (under MPI the rank's device), never on whatever device happens to be current: under ``mpiexec -n 2`` on GPUs
    rank 1 once ran its degree check on GPU 0's context.  On the CPU the context is NumPy's; on GPUs see
    test_ranks_touch_only_their_own_gpu."""
    import contextlib

    from mgraph import graph500
    from mgraph.backend import Backend

    active, seen, real = [], {}, Backend.context

    @contextlib.contextmanager
    def context(self):
        with real(self):
            active.append(self)
            try:
                yield
            finally:
                active.pop()

    real_roots, real_checker = graph500.choose_roots, graph500.checker

    def roots(*a, **k):
        seen["roots"] = [b.name for b in active]
        return real_roots(*a, **k)

    def checker(*a, **k):
        check = real_checker(*a, **k)

        def run(*b, **kk):
            seen.setdefault("checks", set()).add(tuple(x.name for x in active))
            return check(*b, **kk)
        return run

    monkeypatch.setattr(Backend, "context", context)
    monkeypatch.setattr(graph500, "choose_roots", roots)
    monkeypatch.setattr(graph500, "checker", checker)
    code, out, err = run(capsys, 8, "--roots", 3, "--sssp", "--backend", "numpy")
    assert code == 0, out + err
    assert seen == {"roots": ["numpy"], "checks": {("numpy",)}}


# what each rank reports after a command: the GPUs on which it holds a CUDA context (CuPy works in primary contexts)
_CONTEXTS = """
import ctypes, json, sys
from mgraph import cli
from mgraph.group import world
code = cli.main(sys.argv[1:])
cuda = ctypes.CDLL("libcuda.so.1")
count = ctypes.c_int()
cuda.cuDeviceGetCount(ctypes.byref(count))
held = []
for d in range(count.value):
    dev, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(dev), d)
    cuda.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active))
    if active.value:
        held.append(d)
print("CONTEXTS " + json.dumps({"rank": world().rank, "code": code, "gpus": held}), file=sys.stderr, flush=True)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("argv", [["graph500", "12", "--roots", "4", "--sssp"],
                                  ["bfs", "rmat:12", "--runs", "2", "--validate"],
                                  ["pr", "rmat:12", "--validate"],
                                  ["info", "rmat:12"]])
def test_ranks_touch_only_their_own_gpu(argv):
    """Under ``mpiexec -n 2`` on two GPUs each rank holds a CUDA context on its own GPU only (rank r on GPU r):
    nothing outside the runs (roots, sources, checks, reports) opens one on GPU 0 from rank 1."""
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    out = run_mpi(2, ["python", "-c", _CONTEXTS, *argv, "--backend", "cupy"], env={"MGRAPH_BACKEND": "cupy"},
                  timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    ranks = sorted((json.loads(line.split(" ", 1)[1]) for line in out.stderr.splitlines()
                    if line.startswith("CONTEXTS ")), key=lambda r: r["rank"])
    assert ranks == [{"rank": 0, "code": 0, "gpus": [0]}, {"rank": 1, "code": 0, "gpus": [1]}], out.stderr[-3000:]


# -- under MPI ------------------------------------------------------------------------------
def test_scale_16_with_64_roots_on_two_ranks(tmp_path):
    """The done-when: ``mpiexec -n 2 mgraph graph500 16`` prints the report with 64 validated roots (about 5 s of
    searching on a 2-core machine), once, from rank 0; each rank built only its part."""
    path = tmp_path / "m.json"
    out = run_mpi(2, ["python", "-m", "mgraph", "graph500", "16", "--json", path], timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = parse(out.stdout)
    keys = reference_keys(sssp=False)
    assert list(rows)[:len(keys)] == keys  # once: a second copy would repeat keys
    assert rows["SCALE"] == "16" and rows["NBFS"] == "64" and rows["num_mpi_processes"] == "2"
    assert rows["validation"] == "PASS (64 BFS searches by Graph500's rules)"
    r = json.loads(path.read_text())
    assert r["validation"]["status"] == "PASS" and len(r["runs"]["bfs"]) == 64
    g = mgraph.load("rmat:16")
    assert r["graph"]["edges"] == g.num_edges  # the same graph as one process builds ...
    degree = g.out_degree()
    assert r["roots"] == choose_roots(g.num_vertices, 64, 0, lambda ids: degree[ids] > 0)  # ... and the same roots


def test_sssp_on_three_ranks_and_a_user_error_on_two(tmp_path):
    out = run_mpi(3, ["python", "-m", "mgraph", "graph500", "10", "--roots", "4", "--sssp"])
    assert out.returncode == 0, out.stderr[-3000:]
    rows = parse(out.stdout)
    assert list(rows)[:len(reference_keys(True))] == reference_keys(True)
    assert rows["validation"] == "PASS (4 BFS, 4 SSSP searches by Graph500's rules)"
    out = run_mpi(2, ["python", "-m", "mgraph", "graph500", "10", "--roots", "0"])
    assert out.returncode == 2 and out.stdout == ""
    assert [line for line in out.stderr.splitlines() if line.strip()] == [
        "mgraph: error: argument --roots: expected a positive integer, got '0'"]

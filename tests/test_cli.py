"""The mgraph command (in-process through cli.main, plus python -m mgraph) and a smoke run of scripts/bench.py."""
from __future__ import annotations

import ast
import contextlib
import json
import os
import subprocess
import sys
import threading

import networkx as nx
import numpy as np
import pytest

import mgraph
from mgraph import api, cli, report
from mgraph.check import validate
from mgraph.check.runs import checker
from mgraph.io import generators
from mgraph.io.generators import grid, rmat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHESAPEAKE = os.path.join(ROOT, "tests", "data", "chesapeake.mtx")


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def field(out: str, name: str) -> str:
    """The value of the summary line that starts with ``name``."""
    for line in out.splitlines():
        if line.startswith(name + " "):
            return line[len(name):].strip()
    raise AssertionError(f"no {name!r} line in:\n{out}")


def subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, *filter(None, [env.get("PYTHONPATH")])])
    env["MGRAPH_BACKEND"] = "numpy"
    return env


# -- the run commands ------------------------------------------------------------
@pytest.mark.parametrize("command", ["bfs", "dobfs", "sssp"])
def test_traversal_summary_json_and_validation(capsys, tmp_path, command):
    out_json = tmp_path / "run.json"
    code, out, err = run(capsys, command, "rmat:8", "--runs", 3, "--seed", 5, "--validate", "--json", out_json,
                         "--backend", "numpy")
    assert code == 0, err
    assert err == ""  # progress is shown on terminals only
    assert field(out, "graph").startswith("rmat:8: 256 vertices")
    assert "Graph500" in field(out, "GTEPS") and "directed-edge" in field(out, "GTEPS")
    assert field(out, "validation") == "PASS (3 runs)"
    assert "median" in field(out, "time")

    record = json.loads(out_json.read_text())
    assert {"command", "argv", "graph", "options", "runs", "times_s", "summary", "validation", "backend",
            "devices", "version", "date"} <= set(record)
    assert record["command"] == command and record["backend"] == "numpy"
    assert record["graph"]["input"] == "rmat:8" and record["graph"]["vertices"] == 256
    assert record["graph"]["edges"] > 0 and record["graph"]["directed"] is False
    assert record["options"]["runs"] == 3 and record["options"]["seed"] == 5
    assert len(record["runs"]) == 3 and len(record["times_s"]) == 3 and all(t > 0 for t in record["times_s"])
    sources = [r["source"] for r in record["runs"]]
    assert len(set(sources)) == 3  # a different random source per run ...
    g = rmat(8, seed=5)  # --seed picks the graph, as it does for MPI ranks
    assert record["graph"]["edges"] == g.num_edges != rmat(8).num_edges
    assert all(g.out_degree()[s] >= 1 for s in sources)  # ... each of out-degree >= 1
    for r in record["runs"]:
        assert r["graph500_teps"] > 0 and r["directed_edge_teps"] == pytest.approx(2 * r["graph500_teps"])
    assert record["summary"]["graph500_teps_hmean"] > 0
    assert record["validation"] == {"status": "PASS", "failures": []}
    assert record["version"]["mgraph"] == mgraph.__version__ and record["version"]["git"]
    assert record["devices"] and record["date"][:2] == "20"


def test_fixed_source_on_a_file(capsys, tmp_path):
    out_json = tmp_path / "bfs.json"
    code, out, err = run(capsys, "bfs", CHESAPEAKE, "--source", 0, "--runs", 2, "--direction", "pull",
                         "--validate", "--json", out_json)
    assert code == 0, err
    assert "39 vertices, 170 edges, undirected" in field(out, "graph")
    assert field(out, "run").startswith("bfs, pull")
    record = json.loads(out_json.read_text())
    assert [r["source"] for r in record["runs"]] == [0, 0]
    assert record["runs"][0]["edges_in_component"] == 170  # chesapeake is connected
    assert record["options"]["direction"] == "pull"


def test_sssp_random_integer_weights(capsys, tmp_path):
    out_json = tmp_path / "sssp.json"
    code, out, err = run(capsys, "sssp", "grid:12x9", "--weights", "1:64", "--validate", "--json", out_json)
    assert code == 0, err
    assert "weighted" in field(out, "graph")
    assert field(out, "validation").startswith("PASS")
    assert json.loads(out_json.read_text())["graph"]["weighted"] is True


def directed_edges(path, n=300, m=1200, seed=5):
    """A random directed edge list of ``n`` vertices (some strong components of several vertices, many of one)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src[keep], dst[keep])))
    return path


def test_scc_on_a_directed_edge_list(capsys, tmp_path):
    """``mgraph scc`` on a directed edge list: the components scipy finds, validated (against scipy's labels) on one
    device and on three; an undirected graph is a user error (above)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    path = directed_edges(tmp_path / "d.txt")
    pairs = np.loadtxt(path, dtype=np.int64)
    want, _ = connected_components(sp.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                                                 shape=(300, 300)), directed=True, connection="strong")
    for devices in (1, 3):
        code, out, err = run(capsys, "scc", path, "--directed", "--backend", "numpy", "--devices", devices, "--runs", 2,
                             "--validate")
        assert code == 0, err
        assert field(out, "components") == f"{want:,}" and field(out, "validation") == "PASS (2 runs)"


def test_cc_pr_bc_on_chesapeake(capsys):
    code, out, err = run(capsys, "cc", CHESAPEAKE, "--runs", 2, "--validate")
    assert code == 0, err
    assert field(out, "components") == "1" and field(out, "validation") == "PASS (2 runs)"

    code, out, err = run(capsys, "pr", CHESAPEAKE, "--alpha", 0.9, "--tol", 1e-9, "--validate")
    assert code == 0, err
    assert "converged" in field(out, "ms/iter") and "NOT" not in field(out, "ms/iter")
    assert field(out, "validation").startswith("PASS")

    code, out, err = run(capsys, "bc", CHESAPEAKE, "--validate")  # all 39 sources
    assert code == 0, err
    assert "over 39 sources" in field(out, "ms/source") and field(out, "validation").startswith("PASS")

    code, out, err = run(capsys, "bc", CHESAPEAKE, "--sources", 3, "--validate")
    assert code == 0, err
    assert "over 3 sources" in field(out, "ms/source") and field(out, "validation").startswith("PASS")


def test_pagerank_not_converged_is_reported_not_warned(capsys):
    code, out, err = run(capsys, "pr", "rmat:8", "--tol", 1e-12, "--max-iter", 2, "--validate")
    assert code == 0 and err == ""
    assert "NOT converged" in field(out, "ms/iter") and field(out, "iterations") == "2"
    assert field(out, "validation").startswith("PASS")  # within the error bound its last change gives


def test_validation_failure_exits_1(capsys, monkeypatch, tmp_path):
    real = api.connected_components

    def wrong(graph, **run):
        result = real(graph, **run)
        result.labels[5] = 6
        return result

    monkeypatch.setattr(api, "connected_components", wrong)
    out_json = tmp_path / "cc.json"
    code, out, err = run(capsys, "cc", CHESAPEAKE, "--validate", "--json", out_json)
    assert code == 1
    assert field(out, "validation").startswith("FAIL") and "vertex 5" in out
    assert json.loads(out_json.read_text())["validation"]["status"] == "FAIL"


@pytest.mark.gpu
@pytest.mark.parametrize("command", cli.PRIMITIVES)
def test_gpu_runs_validate(capsys, tmp_path, command):
    out_json = tmp_path / "gpu.json"
    extra = ["--sources", 2] if command == "bc" else ["--weights", "1:64"] if command == "sssp" else []
    graph = "rmat:12"
    if command == "scc":  # a directed graph
        graph, extra = directed_edges(tmp_path / "d.txt", n=4096, m=40_000), ["--directed"]
    code, out, err = run(capsys, command, graph, "--backend", "cupy", "--runs", 2, "--validate",
                         "--json", out_json, *extra)
    assert code == 0, out + err
    assert field(out, "validation").startswith("PASS")
    record = json.loads(out_json.read_text())
    assert record["backend"] == "cupy" and record["warm_up"] is True and len(record["times_s"]) == 2


# -- user errors: one line on stderr, exit status 2 ----------------------------------
@pytest.mark.parametrize("argv", [
    ["bfs", "rmat:x"],
    ["bfs", "no/such/graph.mtx"],
    ["bfs", CHESAPEAKE, "--source", "39"],
    ["frobnicate", CHESAPEAKE],
    [],
    ["bfs", CHESAPEAKE, "--runs", "0"],
    ["bfs", CHESAPEAKE, "--direction", "sideways"],
    ["sssp", CHESAPEAKE, "--weights", "9:1"],
    ["pr", "grid:4x4", "--alpha", "2"],
    ["bc", "rmat:13"],  # 8192 vertices: all-sources BC must be asked for
    ["scc", "grid:4x4"],  # generated graphs are undirected
    ["cc", CHESAPEAKE, "--json", "no/such/folder/out.json"],
    ["convert", CHESAPEAKE, "out.txt"],
    ["bfs", "grid:20x20", "--source", "0", "--devices", "2", "--max-supersteps", "5", "--no-peer-levels"],  # 38 levels
    ["bfs", "grid:20x20", "--max-supersteps", "0"],
])
def test_user_errors_are_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("mgraph: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "bfs", "--help")
    assert code == 0 and "--source" in out and "--direction" in out


# -- info and convert --------------------------------------------------------------
def test_convert_round_trip_then_info(capsys, tmp_path):
    target = tmp_path / "chesapeake.npz"
    code, out, err = run(capsys, "convert", CHESAPEAKE, target)
    assert code == 0, err
    assert target.exists() and "39 vertices, 170 edges" in out

    code, before, _ = run(capsys, "info", CHESAPEAKE)
    assert code == 0
    code, after, err = run(capsys, "info", target)
    assert code == 0, err
    for name in ("vertices", "edges", "directed", "weighted", "degree", "isolated", "memory"):
        assert field(before, name) == field(after, name)
    assert field(after, "vertices") == "39" and field(after, "edges").startswith("170 ")
    assert field(after, "degree") == "min 3, mean 8.718, max 33"
    assert field(after, "isolated") == "0 vertices"

    code, out, err = run(capsys, "bfs", target, "--validate")
    assert code == 0 and field(out, "validation").startswith("PASS"), err


def test_info_of_a_generated_graph(capsys):
    code, out, err = run(capsys, "info", "rmat:8", "--backend", "numpy")  # CuPy draws another graph
    assert code == 0, err
    g = rmat(8)
    deg = np.asarray(g.out_degree())
    assert field(out, "vertices") == "256" and field(out, "edges").startswith(f"{g.num_edges:,} ")
    assert field(out, "isolated") == f"{int((deg == 0).sum())} vertices"
    assert field(out, "degree") == f"min {deg.min()}, mean {deg.mean():.4g}, max {deg.max()}"


def test_python_dash_m(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mgraph", "info", "grid:10x10"], capture_output=True, text=True,
                          env=subprocess_env(), cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert field(proc.stdout, "vertices") == "100" and field(proc.stdout, "edges").startswith("180 ")


# -- helpers shared with the benchmark ------------------------------------------------
@pytest.mark.parametrize("directed", [False, True])
def test_random_weights(directed):
    base = rmat(8) if not directed else mgraph.Graph.from_edges(*rmat(8).edges()[:2], directed=True)
    g = generators.with_random_weights(base, 1, 64, seed=3)
    assert g.indices is base.indices and g.num_edges == base.num_edges
    w = g.weights
    assert w.min() >= 1 and w.max() <= 64 and np.all(w == np.floor(w))
    assert np.unique(w).size == 64  # all of 1..64 drawn on ~3000 edges
    m = g.to_scipy()
    if not directed:
        assert abs(m - m.T).max() == 0  # one weight per undirected edge
    assert np.array_equal(generators.with_random_weights(base, 1, 64, seed=3).weights, w)
    assert not np.array_equal(generators.with_random_weights(base, 1, 64, seed=4).weights, w)


def test_reference_betweenness_matches_networkx():
    und = grid(6, 5)
    G = nx.Graph(list(zip(*und.edges()[:2])))
    want = nx.betweenness_centrality(G, normalized=False)
    got = validate.reference_betweenness(und, range(und.num_vertices))
    np.testing.assert_allclose(got, [want[v] for v in range(und.num_vertices)], rtol=1e-12)

    src, dst, _ = rmat(7).edges()
    d = mgraph.Graph.from_edges(src, dst, num_vertices=128, directed=True)
    D = nx.DiGraph()
    D.add_nodes_from(range(128))
    D.add_edges_from(zip(src.tolist(), dst.tolist()))
    sources = cli.random_sources(d, 5, seed=1)
    want = nx.betweenness_centrality_subset(D, sources, list(D), normalized=False)
    np.testing.assert_allclose(validate.reference_betweenness(d, sources), [want[v] for v in range(128)], rtol=1e-12)


def test_pagerank_check_uses_networkx_semantics():
    src, dst, _ = rmat(7).edges()
    w = np.arange(src.size) % 5 + 1.0
    g = mgraph.Graph.from_edges(src, dst, w, num_vertices=128, directed=True)  # weighted, with dangling vertices
    G = nx.DiGraph()
    G.add_nodes_from(range(128))
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    ranks = nx.pagerank(G, alpha=0.85, tol=1e-15, max_iter=1000)
    rank = np.array([ranks[v] for v in range(128)])
    step = validate.pagerank_step(g, 0.85)
    assert np.abs(step(rank) - rank).sum() < 1e-12  # networkx's fixed point is T's

    class Fake:
        def __init__(self, rank):
            self.rank, self.stats = rank, {"error": 1e-9}

    check = checker("pr", g)
    assert check(Fake(rank)) is None
    bent = rank.copy()
    bent[[3, 4]] += [1e-4, -1e-4]
    assert "PageRank" in check(Fake(bent))


# -- scripts/bench.py ------------------------------------------------------------------
def test_bench_smoke(tmp_path):
    out_json = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench.py"), "--backend", "numpy",
                           "--scale", "8", "--runs", "1", "--sources", "2", "--json", str(out_json)],
                          capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    # on the CPU: the primitives the CPU libraries compare; mgraph's table, then the libraries' beside it, last
    cpu = ["bfs", "dobfs", "sssp", "cc", "pr", "kcore", "tc"]
    head = next(i for i, line in enumerate(lines) if line.startswith("CPU libraries beside mgraph"))
    assert [line.split()[0] for line in lines[head - 7:head]] == cpu
    assert all(line.split()[-1] == "PASS" for line in lines[head - 7:head])
    assert [line.split()[0] for line in lines[-7:]] == cpu
    record = json.loads(out_json.read_text())
    assert {"date", "command", "version", "device", "graph", "results"} <= set(record)
    assert record["graph"]["scale"] == 8 and record["graph"]["generate_s"] > 0
    bfs = record["results"]["bfs"]
    assert len(bfs["starts"]) == 2 and bfs["graph500_gteps"] > 0 and bfs["met"] is None
    assert record["results"]["pr"]["ms_per_iteration"] > 0
    assert all(r["validation"] == "PASS" for r in record["results"].values())


@pytest.mark.parametrize("command", ["bfs", "dobfs", "sssp", "cc", "pr", "bc"])
def test_multi_device_runs_validate_and_report_devices(capsys, tmp_path, command):
    out_json = tmp_path / "r.json"
    extra = ["--source", "3"] if command == "bc" else []
    code, out, _ = run(capsys, command, CHESAPEAKE, "--devices", 3, "--partitioner", "biased-random",
                       "--duplication", "all", "--communication", "broadcast", "--validate", "--json", out_json, *extra)
    assert code == 0, out
    assert field(out, "validation").startswith("PASS")
    assert field(out, "devices").startswith("3 (ids 0,1,2): biased-random partition, duplicate-all, broadcast")
    assert "split+package" in field(out, "superstep")
    record = json.loads(out_json.read_text())
    assert record["options"]["devices"] == 3 and record["options"]["communication"] == "broadcast"
    per_device = record["runs"][0]["per_device"]
    assert len(per_device) == 3 and len(per_device[0]["compute_s"]) == record["runs"][0]["supersteps"]


def test_unknown_workers_from_the_command_line(capsys):
    code, _, err = run(capsys, "bfs", CHESAPEAKE, "--devices", 2, "--workers", "fibers")
    assert code == 2 and "fibers" in err


def test_the_recorded_commit_is_mgraphs_own(tmp_path):
    """--json records the commit of mgraph's checkout, never that of a repository an install happens to sit in."""
    assert report.described(ROOT) not in ("", "unknown")  # the tests run from a checkout
    outer = tmp_path / "project"
    inside = outer / "venv" / "site-packages"
    inside.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    assert report.described(str(inside)) == "unknown"
    assert report.described(str(tmp_path)) == "unknown"  # no repository at all


def test_pagerank_on_the_command_line_stops_at_an_absolute_l1_change(capsys, tmp_path):
    """Without --tol the command line iterates until the L1 change is below 1e-6 whatever the size (networkx's
    N*1e-6 would stop a large graph after an iteration or two); --tol keeps networkx's per-vertex rule."""
    out_json = tmp_path / "pr.json"
    code, out, _ = run(capsys, "pr", "rmat:12", "--json", out_json)
    assert code == 0
    last = json.loads(out_json.read_text())["runs"][-1]
    assert last["error"] < cli.PR_L1_STOP and last["iterations"] > 10
    code, out, _ = run(capsys, "pr", "rmat:12", "--tol", 1e-6, "--json", out_json)
    loose = json.loads(out_json.read_text())["runs"][-1]
    assert loose["error"] < 4096 * 1e-6 and loose["iterations"] < last["iterations"]


def test_random_sources_complete_the_draw_on_a_graph_almost_without_edges():
    """Uniform draws rarely land on the two vertices with an arc among a million: the whole graph's list finishes
    the draw (distinct while there are enough), where the message used to say the graph had no such vertex."""
    g = mgraph.Graph.from_edges(np.array([123_456]), np.array([654_321]), num_vertices=1_000_000)
    assert sorted(cli.random_sources(g, 2, seed=0)) == [123_456, 654_321]
    three = cli.random_sources(g, 3, seed=0)
    assert len(three) == 3 and set(three) == {123_456, 654_321}
    dense = mgraph.io.generators.rmat(8, 16, seed=0)
    k = cli.random_sources(dense, 5, seed=4)
    assert len(set(k)) == 5 and all(int(dense.indptr[v + 1] - dense.indptr[v]) > 0 for v in k)
    with pytest.raises(ValueError, match="no edges"):
        cli.random_sources(mgraph.Graph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                                                   num_vertices=10), 1, seed=0)


# -- the layout: who imports whom ------------------------------------------------------
def test_report_and_checks_import_without_the_command():
    """mgraph.report and mgraph.check.runs (and graph500, which uses them) stand below the command: importing them
    loads no mgraph.cli, so nothing of theirs can reach back into it."""
    code = ("import sys; import mgraph.report, mgraph.check.runs, mgraph.graph500; "
            "assert 'mgraph.cli' not in sys.modules, sorted(m for m in sys.modules if m.startswith('mgraph'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


OPTIONAL = {"cupy", "cupyx", "mpi4py", "pymetis", "matplotlib", "pyarrow"}  # what may be imported where it is used


def _imports(tree):
    """(node, module) of every import in ``tree``, ``module`` the dotted name (a relative import's module as "")."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            yield node, node.module or ""


@pytest.mark.parametrize("module", ["mgraph/cli.py", "mgraph/graph500.py"])
def test_the_command_imports_at_the_top(module):
    """cli.py and graph500.py import what they use at the top (an import inside a function hid the circle between
    them); only optional dependencies are imported where they are used."""
    tree = ast.parse(open(os.path.join(ROOT, module)).read())
    inner = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner += [(fn.name, name) for _, name in _imports(fn) if name.split(".")[0] not in OPTIONAL]
    assert inner == []


@pytest.mark.parametrize("script", ["bench.py", "scaling.py"])
def test_scripts_use_public_names_only(script):
    """scripts/ stand above the package: nothing private of mgraph's (no ``_name``, no ``mgraph._module``, no
    ``module._name`` attribute), and no other script imported through a sys.path entry of scripts/."""
    path = os.path.join(ROOT, "scripts", script)
    tree = ast.parse(open(path).read())
    private, modules = [], set()
    for node, name in _imports(tree):
        if not name.startswith("mgraph"):
            assert name.split(".")[0] not in ("bench", "scaling"), f"{script} imports the script {name}"
            continue
        if any(part.startswith("_") for part in name.split(".")):
            private.append(name)
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_"):
                    private.append(f"{name}.{alias.name}")
                modules.add(alias.asname or alias.name)
        else:
            modules.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
    for node in ast.walk(tree):  # mgraph.x._y, or module._y of a module imported from mgraph
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, (ast.Name, ast.Attribute))):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                private.append(ast.unparse(node))
    assert private == []
    paths = [ast.unparse(node.args[-1]) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.path.insert", "sys.path.append")]
    assert set(paths) <= {"os.path.dirname(os.path.dirname(os.path.abspath(__file__)))"}  # the checkout, to run from it


# -- the device of the work outside the runs -----------------------------------------------
@pytest.fixture
def devices_entered(monkeypatch):
    """The backends whose ``context()`` is active, innermost last, kept current while a test runs."""
    from mgraph.backend import Backend

    active, real = [], Backend.context

    @contextlib.contextmanager
    def context(self):
        with real(self):
            active.append(self)
            try:
                yield
            finally:
                active.pop()

    monkeypatch.setattr(Backend, "context", context)
    return active


def test_sources_and_checks_run_on_the_graphs_device(capsys, monkeypatch, devices_entered):
    """Picking sources and checking results happen inside the device context of the graph (under MPI the rank's
    device, as the runs place it), never on whatever device happens to be current: a rank on GPU 1 once ran its
    degree check on GPU 0's context."""
    seen = {}
    real_sources, real_checker = cli.random_sources, cli.checker

    def sources(*a, **k):
        seen["sources"] = [b.name for b in devices_entered]
        return real_sources(*a, **k)

    def checker_(*a, **k):
        check = real_checker(*a, **k)

        def run(*b, **kk):
            seen["check"] = [x.name for x in devices_entered]
            return check(*b, **kk)
        return run

    monkeypatch.setattr(cli, "random_sources", sources)
    monkeypatch.setattr(cli, "checker", checker_)
    code, out, err = run(capsys, "bfs", "rmat:7", "--validate", "--backend", "numpy")
    assert code == 0, err
    assert seen == {"sources": ["numpy"], "check": ["numpy"]}
    assert cli.graph_device(rmat(5), {}).name == "numpy"


def test_process_device_is_device_0_outside_mpi():
    assert (cli.process_device("numpy").name, cli.process_device("numpy").device) == ("numpy", 0)


# -- checking on parts -----------------------------------------------------------------------
def test_checker_on_a_partitioned_graph_checks_the_part_built_for_the_last_run():
    """checker() on a PartitionedGraph checks each rank's part (PartitionedGraph.built_part()), collectively; here
    two ranks of threads, each with its part of a small graph."""
    from mgraph.backend import Backend
    from mgraph.check.runs import checker as check_of
    from mgraph.group import ThreadGroup
    from mgraph.parts import cache
    from mgraph.parts.build import Owners, build_part
    from mgraph.parts.partitioned import PartitionedGraph

    g = rmat(6, seed=2)
    s = cli.random_sources(g, 1, seed=0)[0]
    good = api.bfs(g, s)
    bent = api.bfs(g, s)
    far = int(np.flatnonzero(bent.depth > 1)[0])
    bent.depth[far] += 1
    shared = ThreadGroup.shared_state(2)
    verdicts, errors = [None] * 2, [None] * 2

    def rank(r):
        try:
            group = ThreadGroup(shared, r)
            pg = PartitionedGraph(g, group)
            assert pg.built_part() is None
            with pytest.raises(ValueError, match="run first"):
                check_of("bfs", pg)(good, s)
            cache.parts_for(pg, "key", lambda: ([build_part(group, pg.source, Backend("numpy"), Owners(2, seed=1))], {}))
            assert pg.built_part() is not None
            check = check_of("bfs", pg)
            verdicts[r] = (check(good, s), check(bent, s))
            with pytest.raises(ValueError, match="needs a reference over the whole graph"):
                check_of("bc", pg)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors[r] = e

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [None, None]
    assert verdicts[0][0] is None and verdicts[1][0] is None
    assert "BFS rule" in verdicts[0][1] and verdicts[0][1] == verdicts[1][1]


def test_cpu_runs_warm_up_first_and_take_a_thread_count(capsys, tmp_path, monkeypatch):
    """On the CPU too the timed runs come after an untimed warm-up (numba compiles, or loads its cache, at the first
    use), unless --no-warm-up; --threads is the run's threads option."""
    import mgraph.api as api_module

    calls = []
    real = api_module.connected_components
    monkeypatch.setattr(api_module, "connected_components", lambda g, **run: calls.append(run) or real(g, **run))
    out_json = tmp_path / "cc.json"
    code, out, _ = run(capsys, "cc", "grid:30x20", "--backend", "numpy", "--runs", 2, "--threads", 1,
                       "--json", out_json)
    assert code == 0 and "2 timed runs, after a warm-up" in field(out, "run")
    assert len(calls) == 3 and all(c["threads"] == 1 for c in calls)  # the warm-up, then two timed runs
    record = json.loads(out_json.read_text())
    assert record["warm_up"] is True and len(record["times_s"]) == 2 and record["runs"][0]["threads"] == 1
    calls.clear()
    code, out, _ = run(capsys, "cc", "grid:30x20", "--backend", "numpy", "--no-warm-up", "--json", out_json)
    assert code == 0 and "after a warm-up" not in field(out, "run") and len(calls) == 1 and "threads" not in calls[0]
    assert json.loads(out_json.read_text())["warm_up"] is False
    code, _, err = run(capsys, "cc", "grid:30x20", "--backend", "numpy", "--threads", 0)
    assert code == 2 and "--threads" in err

"""Results out of the CLI (``--output FILE``) and out of a Result (``Result.write``): .csv, .parquet, .npz.

Every file is read back with pandas, pyarrow or NumPy (not with mgraph) and compared with the API's result and
with a reference nobody here wrote: scipy.sparse.csgraph's BFS and Dijkstra distances and components,
networkx's PageRank, shortest paths and components.
"""
from __future__ import annotations

import json
import os

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import mgraph
from conftest import ROOT, run_mpi
from mgraph import cli, output

FORMATS = ("csv", "parquet", "npz")
# an undirected CSV edge list: a 5-vertex component, a pair, vertex 7 isolated (ids run to 9), the pair 8-9
UNDIRECTED = [(0, 1), (1, 2), (2, 3), (3, 0), (1, 4), (5, 6), (8, 9)]
# a weighted directed SNAP edge list: 4 and 5 are not reachable from 0, 5 only has a self-loop
DIRECTED = [(0, 1, 2.5), (1, 2, 1.0), (0, 2, 5.0), (2, 3, 1.0), (4, 0, 1.0), (5, 5, 1.0), (3, 1, 0.5)]


def cli_run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read(path) -> pd.DataFrame:
    """A written file as a DataFrame, read without mgraph: nulls as NaN/None, npz masks applied."""
    path = str(path)
    if path.endswith(".csv"):
        return pd.read_csv(path)
    if path.endswith(".parquet"):
        return pq.read_table(path).to_pandas()
    with np.load(path) as z:  # no pickles: np.load's default allow_pickle=False must read it
        frame = {k: z[k] for k in z.files if not k.endswith("_missing")}
        for k in z.files:
            if k.endswith("_missing"):
                column = frame[k[:-len("_missing")]].astype(object)
                column[z[k]] = None
                frame[k[:-len("_missing")]] = column
    return pd.DataFrame(frame)


@pytest.fixture(scope="module")
def undirected_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("graphs") / "two_parts.csv"
    path.write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in UNDIRECTED))
    return path


@pytest.fixture(scope="module")
def directed_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("graphs") / "directed.txt"
    path.write_text("# a directed weighted graph\n" + "".join(f"{a} {b} {w}\n" for a, b, w in DIRECTED))
    return path


def scipy_graph(edges, n, directed):
    src, dst = [e[0] for e in edges], [e[1] for e in edges]
    w = [e[2] if len(e) > 2 else 1.0 for e in edges]
    a = sp.csr_matrix((w, (src, dst)), shape=(n, n))
    return a if directed else a.maximum(a.T)


# -- every format, against the API and scipy ------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_bfs_file_holds_the_apis_values_and_scipys_depths(capsys, tmp_path, undirected_file, fmt):
    path = tmp_path / f"bfs.{fmt}"
    code, out, err = cli_run(capsys, "bfs", undirected_file, "--source", 0, "--backend", "numpy", "--output", path)
    assert code == 0, err
    assert f"output      {path}: 10 vertices; vertex, depth, predecessor" in out
    df = read(path)
    assert list(df.columns) == ["vertex", "depth", "predecessor"]
    api = mgraph.bfs(mgraph.load(str(undirected_file), backend="numpy"), 0)
    assert df["vertex"].tolist() == list(range(10))
    assert df["depth"].tolist() == api.depth.tolist() and df["predecessor"].tolist() == api.predecessor.tolist()
    # scipy's BFS: hop counts by an unweighted shortest path; unreached is -1 in the file, inf in scipy
    hops = csgraph.shortest_path(scipy_graph(UNDIRECTED, 10, False), unweighted=True, indices=0)
    assert df["depth"].tolist() == [int(h) if np.isfinite(h) else -1 for h in hops]
    assert df["depth"].tolist() == [0, 1, 2, 1, 2, -1, -1, -1, -1, -1]
    # every reached vertex's predecessor is a neighbour one level up; the unreached have none (-1)
    neighbours = {v: set() for v in range(10)}
    for a, b in UNDIRECTED:
        neighbours[a].add(b)
        neighbours[b].add(a)
    for v, d, p in zip(df["vertex"], df["depth"], df["predecessor"]):
        if d > 0:
            assert p in neighbours[v] and df["depth"][p] == d - 1
        else:
            assert p == (0 if v == 0 else -1)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sssp_on_a_directed_file_writes_scipys_distances_and_inf_where_unreached(capsys, tmp_path, directed_file,
                                                                                 fmt):
    path = tmp_path / f"sssp.{fmt}"
    code, out, err = cli_run(capsys, "sssp", directed_file, "--source", 0, "--backend", "numpy", "--output", path)
    assert code == 0, err
    df = read(path)
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    want = csgraph.dijkstra(scipy_graph(DIRECTED, 6, True), indices=0)
    np.testing.assert_allclose(df["distance"].to_numpy(float), want)  # inf (CSV "inf") where scipy has inf
    assert np.isinf(df["distance"][[4, 5]]).all()
    assert df["predecessor"].tolist() == [0, 0, 1, 2, -1, -1]  # 0->1 (2.5), 1->2 (3.5 < 5), 2->3
    api = mgraph.sssp(mgraph.load(str(directed_file), backend="numpy"), 0)
    np.testing.assert_array_equal(df["distance"].to_numpy(float), api.distance)


@pytest.mark.parametrize("fmt", FORMATS)
def test_components_file_matches_scipys_components(capsys, tmp_path, undirected_file, fmt):
    path = tmp_path / f"cc.{fmt}"
    code, out, err = cli_run(capsys, "cc", undirected_file, "--backend", "numpy", "--output", path)
    assert code == 0, err
    df = read(path)
    count, comp = csgraph.connected_components(scipy_graph(UNDIRECTED, 10, False), directed=False)
    assert count == 4 and df["labels"].nunique() == 4
    # the same partition, each labelled by its smallest vertex (the labels are vertex ids: no labels, kept as ids)
    smallest = {c: min(np.flatnonzero(comp == c)) for c in range(count)}
    assert df["labels"].tolist() == [smallest[c] for c in comp]


def test_pagerank_parquet_matches_networkx(capsys, tmp_path):
    chesapeake = os.path.join(ROOT, "tests", "data", "chesapeake.mtx")
    path = tmp_path / "pr.parquet"
    code, out, err = cli_run(capsys, "pr", chesapeake, "--backend", "numpy", "--tol", 1e-10, "--output", path)
    assert code == 0, err
    table = pq.read_table(path)
    assert table.column_names == ["vertex", "rank"] and table.num_rows == 39
    import scipy.io
    G = nx.from_scipy_sparse_array(scipy.io.mmread(chesapeake).tocsr())
    want = nx.pagerank(G, tol=1e-10)
    got = dict(zip(table.column("vertex").to_pylist(), table.column("rank").to_pylist()))
    assert got == pytest.approx(want, abs=1e-8)


def test_several_runs_write_the_first_runs_values(capsys, tmp_path):
    """Random sources, one per run: the file holds the first run's, and the summary and --json name its source."""
    path, record = tmp_path / "runs.npz", tmp_path / "runs.json"
    code, out, err = cli_run(capsys, "bfs", "rmat:7", "--runs", 3, "--seed", 4, "--backend", "numpy",
                             "--output", path, "--json", record)
    assert code == 0, err
    sources = [run["source"] for run in json.loads(record.read_text())["runs"]]
    assert len(set(sources)) == 3
    assert f"the first run's, from source {sources[0]}" in out
    df = read(path)
    g = mgraph.load("rmat:7", backend="numpy", seed=4)  # the graph --seed 4 draws
    first = mgraph.bfs(g, sources[0])
    assert df["depth"].tolist() == first.depth.tolist() and df["predecessor"].tolist() == first.predecessor.tolist()
    hops = csgraph.shortest_path(g.to_scipy(), unweighted=True, indices=sources[0])
    assert df["depth"].tolist() == [int(h) if np.isfinite(h) else -1 for h in hops]
    # bc from K sources is one run: the file is its centrality, summed over the K sources
    path = tmp_path / "bc.csv"
    code, out, err = cli_run(capsys, "bc", "rmat:7", "--sources", 3, "--seed", 4, "--backend", "numpy",
                             "--output", path, "--json", record)
    assert code == 0, err
    chosen = json.loads(record.read_text())["runs"][0]["source"]
    G = nx.from_scipy_sparse_array(g.to_scipy())
    want = nx.betweenness_centrality_subset(G, sources=chosen, targets=list(G), normalized=False)
    np.testing.assert_allclose(read(path)["centrality"], [want[v] for v in range(g.num_vertices)], atol=1e-9)


# -- labels ----------------------------------------------------------------------------
LABELLED = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("x", "y")])


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_labelled_graph_writes_labels_and_predecessors_as_labels(tmp_path, fmt):
    r = mgraph.bfs(LABELLED, "a")
    path = tmp_path / f"labels.{fmt}"
    assert r.write(path) == 6
    df = read(path)
    assert df["vertex"].tolist() == list(LABELLED)
    depth = nx.single_source_shortest_path_length(LABELLED, "a")
    assert dict(zip(df["vertex"], df["depth"])) == {v: depth.get(v, -1) for v in LABELLED}
    pred = {v: (None if pd.isna(p) else p) for v, p in zip(df["vertex"], df["predecessor"])}
    assert pred == r.to_dict("predecessor") == {"a": "a", "b": "a", "c": "a", "d": "c", "x": None, "y": None}
    # the same table to_pandas gives
    frame = r.to_pandas()
    assert frame["predecessor"].tolist() == ["a", "a", "a", "c", None, None]
    cc = mgraph.connected_components(LABELLED)
    cc.write(path)
    got = read(path)
    parts = {frozenset(c) for c in nx.connected_components(LABELLED)}
    assert {frozenset(got["vertex"][got["labels"] == label]) for label in set(got["labels"])} == parts
    assert set(got["labels"]) == {"a", "x"}  # each component's label is its smallest vertex's label


def test_npz_of_labels_keeps_a_missing_mask_and_int_labels_stay_ints(tmp_path):
    H = nx.relabel_nodes(LABELLED, {"a": 10, "b": 20, "c": 30, "d": 40, "x": -1, "y": 60})
    r = mgraph.bfs(H, 10)
    r.write(tmp_path / "ints.npz")
    with np.load(tmp_path / "ints.npz") as z:
        assert sorted(z.files) == ["depth", "predecessor", "predecessor_missing", "vertex"]
        assert z["vertex"].dtype == np.int64 and z["vertex"].tolist() == [10, 20, 30, 40, -1, 60]
        assert z["predecessor_missing"].tolist() == [False, False, False, False, True, True]
        assert z["predecessor"][~z["predecessor_missing"]].tolist() == [10, 10, 10, 30]
    r.write(tmp_path / "ints.parquet")
    col = pq.read_table(tmp_path / "ints.parquet").column("predecessor")
    assert str(col.type) == "int64" and col.to_pylist() == [10, 10, 10, 30, None, None]  # -1 a label, not a null
    # labels that are neither ints nor strings are written as their str()
    T = nx.Graph([((1, 2), "q"), ("q", 3)])
    mgraph.connected_components(T).write(tmp_path / "mixed.csv")
    assert read(tmp_path / "mixed.csv").astype(str).values.tolist() == [["(1, 2)", "(1, 2)"], ["q", "(1, 2)"],
                                                                        ["3", "(1, 2)"]]


def test_a_result_of_own_vertices_writes_those_rows():
    r = mgraph.Result({"vertices": np.array([3, 1]), "rank": np.array([0.25, 0.75])}, {},
                      vertex_labels=np.array(["a", "b", "c", "d"], dtype=object))
    cols = r.columns()
    assert cols["vertex"][0].tolist() == ["d", "b"] and cols["rank"][0].tolist() == [0.25, 0.75]


def test_result_write_of_own_vertices_and_of_an_empty_graph(tmp_path):
    own = mgraph.bfs(mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3]), 0, gather=False, devices=2)
    own.write(tmp_path / "own.csv")
    df = read(tmp_path / "own.csv")
    assert df["vertex"].tolist() == own.vertices.tolist() and df["depth"].tolist() == own.depth.tolist()
    empty = mgraph.bfs(mgraph.Graph.from_edges([0], [0]), 0)
    assert empty.write(tmp_path / "one.parquet") == 1


# -- errors: one line, exit 2, before anything is loaded or run --------------------------------
@pytest.mark.parametrize("target, message", [
    ("out.txt", "unknown output format '.txt': give a file ending in .csv, .parquet, .npz"),
    ("out", "unknown output format '(no suffix)'"),
    ("missing/out.csv", "does not exist"),
    (".", "is a folder"),
    pytest.param("/proc/mgraph-out.csv", "cannot write there",  # no file is created in /proc, not even by root
                 marks=pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")),
])
def test_a_bad_output_is_one_line_and_exit_2_before_the_graph_is_read(capsys, tmp_path, target, message):
    target = tmp_path / target if target != "." else tmp_path / "folder.csv"
    if target.name == "folder.csv":
        target.mkdir()
    # the graph file does not exist either: the output's error comes first, so nothing was loaded or run
    code, out, err = cli_run(capsys, "bfs", tmp_path / "no-such-graph.mtx", "--source", 0, "--output", target)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mgraph: error: --output ") and message in lines[0], err
    assert "Traceback" not in err and not os.path.exists(str(target) + ".partial")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_an_early_error(capsys, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        code, out, err = cli_run(capsys, "cc", "rmat:5", "--output", folder / "cc.csv")
    finally:
        folder.chmod(0o700)
    assert code == 2 and out == "" and err.count("\n") == 1 and "cannot write there" in err


def test_the_format_follows_the_suffix_and_rank_files_keep_it():
    assert [output.format_of(p) for p in ("a.csv", "b.PARQUET", "c.d.npz")] == ["csv", "parquet", "npz"]
    assert output.rank_path("out.parquet", 1) == "out.rank1.parquet"
    assert output.rank_path("/x/y.z/out.csv", 12) == "/x/y.z/out.rank12.csv"
    with pytest.raises(ValueError, match=r"^r.json: unknown output format '.json'"):
        output.format_of("r.json")


def test_every_run_command_takes_output(capsys, tmp_path, undirected_file):
    """Each command's file holds its arrays, one row per vertex, equal to the API's."""
    g = mgraph.load(str(undirected_file), backend="numpy")
    calls = {"dobfs": lambda: mgraph.bfs(g, 1, direction="auto"), "tc": lambda: mgraph.triangles(g),
             "kcore": lambda: mgraph.core_number(g), "lpa": lambda: mgraph.label_propagation(g)}
    for command, call in calls.items():
        path = tmp_path / f"{command}.csv"
        extra = ["--source", 1] if command == "dobfs" else []
        code, out, err = cli_run(capsys, command, undirected_file, "--backend", "numpy", *extra, "--output", path)
        assert code == 0, (command, err)
        df, want = read(path), call()
        assert df["vertex"].tolist() == list(range(10))
        for name in want.keys():
            assert df[name].tolist() == want[name].tolist(), (command, name)
    G = nx.Graph(UNDIRECTED)
    G.add_node(7)
    assert read(tmp_path / "tc.csv")["triangles"].tolist() == [nx.triangles(G)[v] for v in range(10)]
    assert read(tmp_path / "kcore.csv")["core"].tolist() == [nx.core_number(G)[v] for v in range(10)]


# -- MPI: rank 0 writes the gathered file, or every rank its own ---------------------------
def test_two_ranks_gathered_file_equals_one_process_file(capsys, tmp_path, directed_file):
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    code, out, err = cli_run(capsys, "sssp", directed_file, "--source", 0, "--backend", "numpy", "--output", one)
    assert code == 0, err
    job = run_mpi(2, ["python", "-m", "mgraph", "sssp", directed_file, "--source", "0", "--output", two])
    assert job.returncode == 0, job.stderr[-3000:]
    assert job.stdout.count("output      ") == 1
    assert pq.read_table(two).equals(pq.read_table(one))
    assert not list(tmp_path.glob("two.rank*"))


def test_two_ranks_without_gathering_write_every_vertex_once(capsys, tmp_path):
    one, spread = tmp_path / "one.csv", tmp_path / "spread.csv"
    code, out, err = cli_run(capsys, "bfs", "rmat:9", "--source", 3, "--backend", "numpy", "--output", one)
    assert code == 0, err
    job = run_mpi(2, ["python", "-m", "mgraph", "bfs", "rmat:9", "--source", "3", "--no-gather", "--output", spread])
    assert job.returncode == 0, job.stderr[-3000:]
    assert "spread.rank0.csv .. " in job.stdout and "512 vertices" in job.stdout
    assert not spread.exists()
    parts = [pd.read_csv(tmp_path / f"spread.rank{r}.csv") for r in (0, 1)]
    assert all(len(p) > 0 for p in parts)
    together = pd.concat(parts).sort_values("vertex").reset_index(drop=True)
    assert together["vertex"].tolist() == list(range(512))  # every vertex exactly once
    whole = pd.read_csv(one)
    assert together["depth"].tolist() == whole["depth"].tolist()
    # a predecessor may differ between layouts (any vertex one level up): each one is a neighbour a level up
    g = mgraph.load("rmat:9", backend="numpy").to_scipy().tocsr()
    depth = together["depth"].to_numpy()
    for v, d, p in zip(together["vertex"], depth, together["predecessor"]):
        assert (p == -1) if d < 0 else (p == v if d == 0 else (g[p, v] != 0 and depth[p] == d - 1))


def test_a_bad_output_under_mpi_is_one_line_and_exit_2(tmp_path):
    job = run_mpi(2, ["python", "-m", "mgraph", "bfs", "rmat:8", "--no-gather", "--output", tmp_path / "x" / "o.npz"])
    assert job.returncode == 2, job.stderr
    lines = [line for line in job.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("mgraph: error: --output ") and "does not exist" in lines[0]

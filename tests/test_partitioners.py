"""The partitioner stage: owner arrays, balance, border quality, validation, quality numbers, ``mgraph partition``."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import mgraph
from mgraph import partitioners
from conftest import get_case
from mgraph import api, cli
from mgraph.io.generators import grid, rmat
from mgraph.partitioners.biased import capacity

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHESAPEAKE = os.path.join(ROOT, "tests", "data", "chesapeake.mtx")
FACEBOOK = os.path.join(ROOT, "tests", "data", "facebook_large_edges.csv")
NAMES = tuple(partitioners.PARTITIONERS)


def total_border(graph, owner, k):
    return sum(p["border"] for p in partitioners.quality(graph, owner, k))


def graphs():
    """Small graphs of every shape a partitioner must handle."""
    return {
        "grid": grid(12, 9),
        "chesapeake": get_case("chesapeake").graph,
        "directed": get_case("small_dir").graph,  # isolated vertices, one-way arcs
        "star": get_case("star300").graph,  # one hub pulls everything
        "no_edges": mgraph.Graph.from_edges([], [], num_vertices=7),
        "empty": mgraph.Graph.from_edges([], [], num_vertices=0),
    }


def check_valid(graph, owner, k):
    assert isinstance(owner, np.ndarray) and owner.dtype == np.int32 and owner.shape == (graph.num_vertices,)
    if graph.num_vertices:
        assert owner.min() >= 0 and owner.max() < k


# -- every partitioner: a valid, reproducible owner array ------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_valid_owner_arrays(name, k):
    for label, g in graphs().items():
        owner = partitioners.assign(g, k, name, seed=3)
        check_valid(g, owner, k)
        if k == 1:
            assert not owner.any(), label


@pytest.mark.parametrize("name", NAMES)
def test_more_parts_than_vertices(name):
    g = mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3], num_vertices=5)
    owner = partitioners.assign(g, 9, name)
    check_valid(g, owner, 9)
    if name != "random":  # balanced partitioners spread the five vertices out
        assert np.unique(owner).size == 5
    parts = partitioners.quality(g, owner, 9)
    assert len(parts) == 9 and sum(p["vertices"] for p in parts) == 5


@pytest.mark.parametrize("name", NAMES)
def test_reproducible_per_seed(name):
    g = grid(20, 20)
    a = partitioners.assign(g, 4, name, seed=7)
    assert np.array_equal(a, partitioners.assign(g, 4, name, seed=7))
    assert not np.array_equal(a, partitioners.assign(g, 4, name, seed=8))


def test_random_is_uniform():
    owner = partitioners.assign(grid(100, 100), 4, "random", seed=1)
    counts = np.bincount(owner, minlength=4)
    assert np.all(np.abs(counts - 2500) < 200)  # about 4.5 standard deviations


# -- biased-random: balanced, and a smaller border than random -------------------------
@pytest.mark.parametrize("k", [2, 3, 7])
def test_biased_random_respects_the_balance_bound(k):
    for label, g in graphs().items():
        for seed in range(3):
            owner = partitioners.assign(g, k, "biased-random", seed=seed)
            if g.num_vertices:
                assert np.bincount(owner, minlength=k).max() <= capacity(g.num_vertices, k), (label, seed)
    assert capacity(1000, 4) == 263 and capacity(10, 4) == 3 and capacity(3, 4) == 1


def test_biased_random_on_a_star_spills_to_other_parts():
    g = get_case("star300").graph  # every leaf wants the hub's part
    owner = partitioners.assign(g, 4, "biased-random", seed=0)
    counts = np.bincount(owner, minlength=4)
    assert counts.max() <= capacity(301, 4) and counts.min() >= 301 - 3 * capacity(301, 4)


@pytest.mark.parametrize("spec, k, ratio", [
    ("grid:40x40", 4, 0.6),  # a mesh: random is the worst case, biased about halves it
    (FACEBOOK, 4, 0.6),  # a real social graph
    ("rmat:12", 8, 0.95),  # hubs touch every part: little to gain, but some
])
def test_biased_random_border_below_random(spec, k, ratio):
    g = mgraph.load(spec, backend="numpy")
    for seed in (0, 1):
        rand = total_border(g, partitioners.assign(g, k, "random", seed=seed), k)
        biased = total_border(g, partitioners.assign(g, k, "biased-random", seed=seed), k)
        assert biased < ratio * rand, (spec, seed, biased, rand)


@pytest.mark.parametrize("spec", ["rmat:12", FACEBOOK])
def test_biased_random_keeps_arcs_balanced_on_skewed_graphs(spec):
    # pulled toward neighbours, the part holding the hubs would gather their high-degree neighbours too
    g = mgraph.load(spec, backend="numpy")
    for k in (4, 8):
        parts = partitioners.quality(g, partitioners.assign(g, k, "biased-random"), k)
        assert max(p["edge_imbalance"] for p in parts) < 1.1, (k, parts)


def test_biased_random_on_a_directed_graph_uses_both_directions():
    src, dst, _ = grid(30, 30).edges()
    g = mgraph.Graph.from_edges(src, dst, num_vertices=900, directed=True)  # arcs only from lower to higher ids
    rand = total_border(g, partitioners.assign(g, 4, "random"), 4)
    biased = total_border(g, partitioners.assign(g, 4, "biased-random"), 4)
    assert biased < 0.6 * rand


# -- metis -----------------------------------------------------------------------------
def test_metis_border_below_random():
    for g, k in [(grid(40, 40), 4), (get_case("chesapeake").graph, 4), (rmat(10), 4)]:
        metis = total_border(g, partitioners.assign(g, k, "metis"), k)
        rand = total_border(g, partitioners.assign(g, k, "random"), k)
        biased = total_border(g, partitioners.assign(g, k, "biased-random"), k)
        assert metis < biased < rand
    g = grid(40, 40)
    assert total_border(g, partitioners.assign(g, 4, "metis"), 4) < 200  # about 4 x 40 on a mesh


@pytest.mark.parametrize("k", [2, 4])
def test_metis_balances_arcs_on_skewed_graphs(k):
    """R-MAT's degrees are skewed: balanced vertex counts left one part nearly every arc (97.5 % of them at scale
    18, 2 parts).  METIS weighs each vertex by its degree, so arcs (an advance's work) balance, and the borders
    stay below a random partition's."""
    from mgraph.partitioners.quality import quality

    g = rmat(14)
    parts = quality(g, partitioners.assign(g, k, "metis"), k)
    assert max(p["edge_imbalance"] for p in parts) < 1.1
    assert sum(p["border"] for p in parts) < total_border(g, partitioners.assign(g, k, "random"), k)


def test_metis_symmetrizes_directed_graphs():
    src, dst, _ = grid(20, 20).edges()
    g = mgraph.Graph.from_edges(src, dst, num_vertices=400, directed=True)
    owner = partitioners.assign(g, 2, "metis")
    assert np.bincount(owner, minlength=2).min() >= 190  # balanced, not one part
    assert total_border(g, owner, 2) < 60


def test_metis_missing_is_a_value_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pymetis(name, *a, **kw):
        if name == "pymetis":
            raise ImportError("no pymetis")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pymetis)
    with pytest.raises(ValueError, match="pip install"):
        partitioners.assign(grid(4, 4), 2, "metis")


# -- callables and validation ----------------------------------------------------------
def test_callable_partitioner():
    g = grid(6, 5)
    seen = []

    def halves(graph, num_parts, seed):
        seen.append((graph, num_parts, seed))
        return [v * num_parts // graph.num_vertices for v in range(graph.num_vertices)]  # a list is fine

    owner = partitioners.assign(g, 3, halves, seed=4)
    assert seen == [(g, 3, 4)]
    check_valid(g, owner, 3)
    assert np.array_equal(owner, np.arange(30) * 3 // 30)
    owner = partitioners.assign(g, 2, lambda graph, k, seed: np.ones(graph.num_vertices, dtype=np.uint8))
    assert owner.dtype == np.int32 and owner.sum() == 30


@pytest.mark.parametrize("bad, message", [
    (lambda g, k, s: np.zeros(g.num_vertices - 1, dtype=np.int64), "shape"),
    (lambda g, k, s: np.zeros((g.num_vertices, 1), dtype=np.int64), "shape"),
    (lambda g, k, s: np.full(g.num_vertices, k, dtype=np.int64), "outside"),
    (lambda g, k, s: np.full(g.num_vertices, -1, dtype=np.int64), "outside"),
    (lambda g, k, s: np.zeros(g.num_vertices, dtype=np.float64), "dtype"),
    (lambda g, k, s: np.zeros(g.num_vertices, dtype=bool), "dtype"),
    (lambda g, k, s: None, "None"),
    (lambda g, k, s: ["a"] * g.num_vertices, "dtype"),
])
def test_bad_callable_output(bad, message):
    with pytest.raises(ValueError, match=message):
        partitioners.assign(grid(4, 4), 3, bad)


@pytest.mark.parametrize("kwargs, message", [
    ({"partitioner": "kway"}, "unknown partitioner 'kway'"),
    ({"partitioner": 3}, "partitioner must be"),
    ({"num_parts": 0}, "num_parts"),
    ({"num_parts": -2}, "num_parts"),
    ({"num_parts": 2.0}, "num_parts"),
    ({"num_parts": True}, "num_parts"),
    ({"num_parts": "4"}, "num_parts"),
    ({"seed": -1}, "seed"),
    ({"seed": 1.5}, "seed"),
])
def test_bad_arguments(kwargs, message):
    calls = []

    def spy(graph, k, seed):
        calls.append(k)
        return np.zeros(graph.num_vertices, dtype=np.int32)

    args = {"num_parts": 2, "partitioner": spy, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        partitioners.assign(grid(4, 4), **args)
    assert calls == []  # checked before any work starts


def test_not_a_graph():
    with pytest.raises(ValueError, match="mgraph.Graph"):
        partitioners.assign(np.arange(4), 2)


# -- quality against a brute-force count -----------------------------------------------
def brute_quality(case, owner, k):
    arcs = [(u, v) for u, lst in case.out_arcs.items() for v, _ in lst]  # stored arcs
    out = []
    for i in range(k):
        mine = {v for v in range(case.n) if owner[v] == i}
        border = {v for u, v in arcs if u in mine and v not in mine} | {u for u, v in arcs if v in mine and u not in mine}
        out.append({"vertices": len(mine), "edges": sum(1 for u, _ in arcs if u in mine), "border": len(border),
                    "edge_cut": sum(1 for u, v in arcs if u in mine and v not in mine)})
    mean_v, mean_e = case.n / k, len(arcs) / k
    for p in out:
        p["vertex_imbalance"] = p["vertices"] / mean_v
        p["edge_imbalance"] = p["edges"] / mean_e
    return out


@pytest.mark.parametrize("name", ["small_und", "small_dir", "star300_dir", "disconnected_dir"])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_quality_matches_brute_force(name, k):
    case = get_case(name)
    owner = np.random.default_rng(k).integers(0, k, case.n)
    got = partitioners.quality(case.graph, owner, k)
    want = brute_quality(case, owner.tolist(), k)
    assert [p["part"] for p in got] == list(range(k))
    for g, w in zip(got, want):
        for key in ("vertices", "edges", "border", "edge_cut"):
            assert g[key] == w[key], (key, g, w)
        assert g["vertex_imbalance"] == pytest.approx(w["vertex_imbalance"])
        assert g["edge_imbalance"] == pytest.approx(w["edge_imbalance"])


def test_quality_by_hand():
    # path 0 - 1 - 2 - 3 (undirected), parts {0, 1} and {2, 3}: each part borders one vertex across one edge
    g = mgraph.Graph.from_edges([0, 1, 2], [1, 2, 3], num_vertices=4)
    p = partitioners.quality(g, [0, 0, 1, 1], 2)
    assert [(x["vertices"], x["edges"], x["border"], x["edge_cut"]) for x in p] == [(2, 3, 1, 1), (2, 3, 1, 1)]
    # directed star 0 -> 1..4, hub alone in part 0: part 0 stores 4 arcs, all cut, border {1..4};
    # part 1 stores none, yet vertex 0 is on its border (arcs count in either direction)
    d = mgraph.Graph.from_edges([0, 0, 0, 0], [1, 2, 3, 4], directed=True)
    p = partitioners.quality(d, [0, 1, 1, 1, 1], 2)
    assert [(x["vertices"], x["edges"], x["border"], x["edge_cut"]) for x in p] == [(1, 4, 4, 4), (4, 0, 1, 0)]
    assert p[0]["edge_imbalance"] == 2.0 and p[1]["edge_imbalance"] == 0.0
    # no edges: imbalance of edges is 1.0 (nothing to balance)
    e = partitioners.quality(mgraph.Graph.from_edges([], [], num_vertices=3), [0, 1, 1], 3)
    assert [x["edge_imbalance"] for x in e] == [1.0] * 3 and [x["vertices"] for x in e] == [1, 2, 0]


def test_quality_checks_the_owner_array():
    with pytest.raises(ValueError, match="outside"):
        partitioners.quality(grid(3, 3), np.full(9, 2), 2)


# -- mgraph partition --------------------------------------------------------------------
def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def table(out: str) -> dict:
    """The per-part table: {part label: [numbers]}."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["part"])
    rows = {}
    for line in lines[start + 1:]:
        cells = line.split()
        if not cells or not (cells[0].isdigit() or cells[0] == "total"):
            break
        rows[cells[0]] = [float(c.replace(",", "")) for c in cells[1:]]
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_cli_partition(capsys, tmp_path, name):
    out_json = tmp_path / "part.json"
    code, out, err = run(capsys, "partition", CHESAPEAKE, "--parts", 3, "--partitioner", name, "--seed", 2,
                         "--json", out_json)
    assert code == 0, err
    assert err == ""
    assert out.startswith("graph       ") and "39 vertices, 170 edges" in out
    assert f"partition   {name} into 3 parts, seed 2" in out
    assert "(partitioning only)" in out
    g = mgraph.load(CHESAPEAKE, backend="numpy")
    want = partitioners.quality(g, partitioners.assign(g, 3, name, seed=2), 3)
    rows = table(out)
    assert list(rows) == ["0", "1", "2", "total"]
    for p in want:
        assert rows[str(p["part"])][:4] == [p["vertices"], p["edges"], p["border"], p["edge_cut"]]
        assert rows[str(p["part"])][4:] == [round(p["edge_imbalance"], 3), round(p["vertex_imbalance"], 3)]
    assert rows["total"][:4] == [39, 340, sum(p["border"] for p in want), sum(p["edge_cut"] for p in want)]

    record = json.loads(out_json.read_text())
    assert record["command"] == "partition" and record["parts"] == want
    assert record["options"]["parts"] == 3 and record["options"]["partitioner"] == name
    assert record["totals"]["vertices"] == 39 and record["totals"]["border"] == sum(p["border"] for p in want)
    assert record["partition_s"] > 0 and record["graph"]["load_s"] > 0
    assert record["graph"]["vertices"] == 39 and record["version"]["mgraph"] == mgraph.__version__


def test_cli_partition_biased_beats_random_on_a_grid(capsys):
    borders = {}
    for name in ("random", "biased-random"):
        code, out, err = run(capsys, "partition", "grid:30x30", "--parts", 4, "--partitioner", name,
                             "--backend", "numpy")
        assert code == 0, err
        borders[name] = table(out)["total"][2]
    assert borders["biased-random"] < 0.7 * borders["random"]


@pytest.mark.parametrize("argv", [
    ["partition", CHESAPEAKE],  # --parts is required
    ["partition", CHESAPEAKE, "--parts", "0"],
    ["partition", CHESAPEAKE, "--parts", "two"],
    ["partition", CHESAPEAKE, "--parts", "2", "--partitioner", "kway"],
    ["partition", CHESAPEAKE, "--parts", "2", "--seed", "-1"],
    ["partition", "no/such/graph.mtx", "--parts", "2"],
    ["partition", "grid:0x3", "--parts", "2"],
    ["partition", CHESAPEAKE, "--parts", "2", "--json", "no/such/folder/out.json"],
])
def test_cli_partition_user_errors(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("mgraph: error: ") and err.count("\n") == 1, err


# -- run commands: multi-device options reach the API ----------------------------------
def test_cli_devices_1_runs_and_is_recorded(capsys, tmp_path):
    out_json = tmp_path / "bfs.json"
    code, out, err = run(capsys, "bfs", CHESAPEAKE, "--devices", 1, "--source", 0, "--validate", "--json", out_json)
    assert code == 0, err
    options = json.loads(out_json.read_text())["options"]
    assert options["devices"] == 1 and options["gpus"] is None
    assert options["partitioner"] is None and options["duplication"] is None and options["communication"] is None


@pytest.mark.parametrize("argv, want", [
    ([], {"devices": 1, "seed": 0}),
    (["--devices", "3", "--seed", "5"], {"devices": 3, "seed": 5}),
    (["--gpus", "0,1,1,3", "--partitioner", "metis", "--duplication", "all", "--communication", "broadcast"],
     {"devices": [0, 1, 1, 3], "seed": 0, "partitioner": "metis", "duplication": "all", "communication": "broadcast"}),
    (["--devices", "2", "--partitioner", "biased-random"], {"devices": 2, "seed": 0, "partitioner": "biased-random"}),
])
def test_cli_passes_multi_device_options(capsys, monkeypatch, argv, want):
    seen = {}

    def fake(graph, **run):
        seen.update(run)
        raise ValueError("stop here")

    monkeypatch.setattr(api, "connected_components", fake)
    code, out, err = run(capsys, "cc", CHESAPEAKE, "--backend", "numpy", *argv)
    assert code == 2 and "stop here" in err
    backend = seen.pop("backend")
    assert backend.name == "numpy"
    assert seen == want  # the options not given are left to the API's defaults


@pytest.mark.parametrize("argv", [
    ["--devices", "2", "--gpus", "0,1"],
    ["--gpus", ""],
    ["--gpus", "0,a"],
    ["--gpus", "0,-1"],
    ["--devices", "0"],
    ["--partitioner", "kway"],
    ["--duplication", "2-hop"],
    ["--communication", "gossip"],
])
def test_cli_multi_device_option_errors(capsys, argv):
    code, out, err = run(capsys, "bfs", CHESAPEAKE, *argv)
    assert code == 2 and out == ""
    assert err.startswith("mgraph: error: ") and err.count("\n") == 1, err


# -- on a GPU ----------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_gpu_owner_arrays_stay_on_the_gpu(name):
    import cupy

    g = mgraph.load("grid:40x40", backend="cupy")
    owner = partitioners.assign(g, 4, name, seed=1)
    assert isinstance(owner, cupy.ndarray) and owner.dtype == np.int32 and owner.shape == (1600,)
    assert int(owner.min()) >= 0 and int(owner.max()) < 4
    assert cupy.array_equal(owner, partitioners.assign(g, 4, name, seed=1))
    got = partitioners.quality(g, owner, 4)
    assert got == partitioners.quality(g.to("numpy"), owner.get(), 4)
    if name == "biased-random":
        assert int(cupy.bincount(owner).max()) <= capacity(1600, 4)
        assert total_border(g, owner, 4) < 0.6 * total_border(g, partitioners.assign(g, 4, "random"), 4)

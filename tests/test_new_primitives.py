"""Triangles, core numbers and label propagation: equal to networkx on 1..N devices, and written as a user would.

References are networkx's own functions on the case's independently built
networkx graph (conftest.Case.nx), never on mgraph's CSR.  The "user file"
tests copy each primitive's module out of the package and run the copy:
the three are written with the public operators (mgraph.ops) and the
contract only, so a user can write them the same way.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import shutil

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.community import label_propagation_communities

import mgraph
from conftest import ROOT, get_case

UNDIRECTED = ["chesapeake", "small_und", "grid8x6", "star300", "disconnected", "rand_und", "path60"]
LAYOUTS = [dict(devices=1), dict(devices=2), dict(devices=3, partitioner="biased-random"),
           dict(devices=3, duplication="all"), dict(devices=4, communication="broadcast"),
           dict(devices=2, partitioner="metis")]
MODULES = {"triangles": "Triangles", "kcore": "KCore", "lpa": "LabelPropagation"}


def per_vertex(n, mapping):
    return np.array([mapping[i] for i in range(n)], dtype=np.int64)


def communities(labels):
    return sorted(sorted(np.flatnonzero(labels == x).tolist()) for x in np.unique(labels))


@pytest.fixture(scope="module")
def references():
    out = {}
    for name in UNDIRECTED:
        c = get_case(name)
        out[name] = {"triangles": per_vertex(c.n, nx.triangles(c.nx)), "core": per_vertex(c.n, nx.core_number(c.nx)),
                     "communities": sorted(sorted(s) for s in label_propagation_communities(c.nx))}
    return out


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda d: "-".join(f"{k}={v}" for k, v in d.items()))
@pytest.mark.parametrize("name", UNDIRECTED)
def test_the_three_equal_networkx(references, name, layout):
    g, ref = get_case(name).graph, references[name]
    t = mgraph.triangles(g, **layout)
    np.testing.assert_array_equal(t.triangles, ref["triangles"])
    assert t.triangles.dtype == np.int64 and t.stats["triangles"] == ref["triangles"].sum() // 3
    np.testing.assert_array_equal(mgraph.core_number(g, **layout).core, ref["core"])
    r = mgraph.label_propagation(g, **layout)
    assert communities(r.labels) == ref["communities"]
    assert r.stats["communities"] == len(ref["communities"])


def test_a_larger_power_law_graph_on_three_devices():
    g = mgraph.load("rmat:11")
    G = nx.from_scipy_sparse_array(g.to_scipy())
    np.testing.assert_array_equal(mgraph.triangles(g, devices=3).triangles, per_vertex(g.num_vertices, nx.triangles(G)))
    np.testing.assert_array_equal(mgraph.core_number(g, devices=3).core, per_vertex(g.num_vertices, nx.core_number(G)))
    assert communities(mgraph.label_propagation(g, devices=3).labels) == \
        sorted(sorted(s) for s in label_propagation_communities(G))


@pytest.mark.parametrize("name", ["rand_dir", "small_dir", "chesapeake_dir"])
@pytest.mark.parametrize("devices", [1, 3])
def test_core_numbers_of_a_directed_graph_count_in_and_out_arcs(name, devices):
    c = get_case(name)
    np.testing.assert_array_equal(mgraph.core_number(c.graph, devices=devices).core,
                                  per_vertex(c.n, nx.core_number(c.nx)))


@pytest.mark.parametrize("call", [mgraph.triangles, mgraph.label_propagation])
def test_triangles_and_label_propagation_refuse_a_directed_graph(call):
    with pytest.raises(ValueError, match="directed"):
        call(get_case("small_dir").graph)


def test_labels_from_networkx_keep_their_names():
    G = nx.karate_club_graph()
    G = nx.relabel_nodes(G, {i: f"member {i}" for i in G})
    r = mgraph.triangles(G, devices=2)
    assert r.to_dict("triangles") == nx.triangles(G)
    assert mgraph.core_number(G, devices=3).to_dict("core") == nx.core_number(G)


def _user_module(tmp_path, module):
    """A copy of primitives/<module>.py outside the package, imported as a user's own file."""
    path = tmp_path / f"user_{module}.py"
    shutil.copy(os.path.join(ROOT, "primitives", f"{module}.py"), path)
    spec = importlib.util.spec_from_file_location(f"user_{module}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("module", MODULES)
def test_each_is_written_with_public_operators_only(module):
    """Their imports are NumPy, mgraph.ops and the primitive contract: nothing private, no CuPy, no comm."""
    tree = ast.parse(open(os.path.join(ROOT, "primitives", f"{module}.py")).read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {f"{node.module}.{a.name}" for a in node.names}
    assert imported <= {"__future__.annotations", "numpy", "mgraph.ops", "mgraph.primitives.contract.Primitive",
                        "mgraph.primitives.contract.owners_value"}


@pytest.mark.parametrize("devices", [1, 3])
def test_a_user_writes_them_in_a_file_of_their_own(tmp_path, devices):
    c = get_case("small_und")
    tri = _user_module(tmp_path, "triangles").Triangles
    core = _user_module(tmp_path, "kcore").KCore
    lpa = _user_module(tmp_path, "lpa").LabelPropagation
    np.testing.assert_array_equal(mgraph.run(tri, c.graph, devices=devices).triangles,
                                  per_vertex(c.n, nx.triangles(c.nx)))
    np.testing.assert_array_equal(mgraph.run(core, c.graph, devices=devices).core,
                                  per_vertex(c.n, nx.core_number(c.nx)))
    assert communities(mgraph.run(lpa, c.graph, devices=devices).labels) == \
        sorted(sorted(s) for s in label_propagation_communities(c.nx))


def test_without_proxy_arcs_triangles_on_parts_would_be_short(tmp_path):
    """Why the declaration matters: the same primitive, told not to fetch proxies' arcs, misses triangles."""
    Triangles = _user_module(tmp_path, "triangles").Triangles

    class Blind(Triangles):
        proxy_arcs = False

    g = get_case("chesapeake").graph
    assert mgraph.run(Blind, g).triangles.sum() == 3 * 194
    assert mgraph.run(Blind, g, devices=3, duplication="all").triangles.sum() < 3 * 194  # proxies' rows empty
    with pytest.raises(ValueError, match="increasing order"):  # 1-hop parts renumber rows: the merge would be wrong
        mgraph.run(Blind, g, devices=3)
    for duplication in ("1-hop", "all"):
        assert mgraph.run(Triangles, g, devices=3, duplication=duplication).triangles.sum() == 3 * 194


@pytest.mark.parametrize("command, key", [("tc", "triangles"), ("kcore", "max core"), ("lpa", "communities")])
def test_the_command_line_runs_and_validates_them(tmp_path, command, key):
    from mgraph.cli import main

    record = tmp_path / "out.json"
    code = main([command, os.path.join(ROOT, "tests", "data", "chesapeake.mtx"), "--devices", "3", "--runs", "2",
                 "--validate", "--json", str(record)])
    assert code == 0
    import json

    r = json.loads(record.read_text())
    assert r["validation"]["status"] == "PASS" and len(r["runs"]) == 2
    if command == "tc":
        assert r["summary"]["triangles"] == 194


def test_the_command_line_refuses_triangles_of_a_directed_graph(capsys):
    from mgraph.cli import main

    path = os.path.join(ROOT, "tests", "data", "chesapeake.mtx")
    assert main(["tc", path, "--directed"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "directed" in err[0]


def test_the_three_under_mpi_equal_networkx(tmp_path):
    from conftest import run_mpi

    out = tmp_path / "out.npz"
    job = os.path.join(ROOT, "tests", "mpi_job.py")
    done = run_mpi(3, ["python", job, "communities", out, os.path.join(ROOT, "tests", "data", "chesapeake.mtx")])
    assert done.returncode == 0, done.stderr[-3000:]
    got = np.load(out)
    c = get_case("chesapeake")
    np.testing.assert_array_equal(got["triangles"], per_vertex(c.n, nx.triangles(c.nx)))
    np.testing.assert_array_equal(got["core"], per_vertex(c.n, nx.core_number(c.nx)))
    assert communities(got["labels"]) == sorted(sorted(s) for s in label_propagation_communities(c.nx))

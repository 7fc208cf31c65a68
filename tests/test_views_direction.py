"""The graph's views of its own vertices, the own-vertex operators, and the traversal direction policy.

A primitive asks the graph for its own vertices' entries (``graph.own``, ``graph.own_mask``) and leaves the part
layout (own vertices first under 1-hop, scattered under duplicate-all) to the graph and the operators; it hands an
``ops.Direction`` to the advance, which chooses push or pull the same way on every device.
"""
from __future__ import annotations

import ast
import functools
import pathlib

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from conftest import check_bfs_tree, get_case
from mgraph import ops, partitioners
from mgraph.parts import subgraph
from mgraph.primitives.bfs import BFS
from mgraph.primitives.pagerank import PageRank

PRIMITIVES = pathlib.Path(__file__).resolve().parent.parent / "primitives"


def parts_of(name, devices, duplication):
    g = get_case(name).graph
    return g, subgraph.build(g, partitioners.assign(g, devices, "random", 5), devices, duplication)


# -- views --------------------------------------------------------------------------------------------------------
def test_a_whole_graph_owns_every_vertex_and_its_own_entries_are_a_view():
    g = get_case("rand_dir").graph
    a = np.arange(g.num_vertices, dtype=np.float64) * 3
    own = g.own(a)
    assert own.tolist() == a.tolist() and np.shares_memory(own, a)
    assert g.own_mask().tolist() == [True] * g.num_vertices


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_a_parts_own_entries_follow_its_own_vertices(duplication):
    g, parts = parts_of("rand_dir", 3, duplication)
    seen = np.zeros(g.num_vertices, dtype=int)
    for part in parts:
        own = part.own_vertices
        ids = part.own(part.vertex_ids)  # caller ids of the own vertices, in own_vertices order
        assert ids.tolist() == part.vertex_ids[own].tolist()
        seen[ids] += 1
        a = np.random.default_rng(part.index).random(part.num_vertices)
        assert part.own(a).tolist() == a[own].tolist()
        assert np.shares_memory(part.own(a), a) == (duplication == "1-hop")  # own first: a prefix view
        mask = part.own_mask()
        assert np.flatnonzero(mask).tolist() == sorted(own.tolist())
    assert seen.tolist() == [1] * g.num_vertices  # every vertex is own on exactly one part


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_own_map_writes_the_own_entries_only(duplication):
    _, parts = parts_of("chesapeake", 3, duplication)
    for part in [get_case("chesapeake").graph] + parts:
        n, own = part.num_vertices, part.own_vertices
        rng = np.random.default_rng(n)
        a, b = rng.random(n), rng.random(n)
        out = np.full(n, -7.0, dtype=np.float32)
        assert ops.own_map(part, np.multiply, a, b, out=out) is out
        want = np.full(n, -7.0, dtype=np.float32)
        want[own] = (a[own] * b[own]).astype(np.float32)
        np.testing.assert_array_equal(out, want)


def test_own_map_needs_per_vertex_arrays():
    g = get_case("chesapeake").graph
    a = np.ones(g.num_vertices)
    with pytest.raises(ValueError, match="one value per vertex"):
        ops.own_map(g, np.multiply, a, a[:-1], out=a.copy())
    with pytest.raises(ValueError, match="one value per vertex"):
        ops.own_map(g, np.multiply, a, a, out=a[:3])


@pytest.mark.parametrize("duplication", ["1-hop", "all"])
def test_tree_of_is_the_roots_where_the_vertex_is_held(duplication):
    g, parts = parts_of("rand_und", 3, duplication)
    for part in [g] + parts:
        parent = np.arange(part.num_vertices, dtype=np.int64)[::-1].copy()  # every vertex its own tree, roots moved
        held = set(part.vertex_ids.tolist())
        for v in (0, 7, g.num_vertices - 1):
            root = ops.tree_of(part, parent, v)
            if v in held:
                assert root == part.num_vertices - 1 - int(np.flatnonzero(part.vertex_ids == v)[0])
            else:
                assert root is None
        assert ops.tree_of(part, parent, None) is None
    assert any(ops.tree_of(p, np.arange(p.num_vertices), v) is None for p in parts for v in range(g.num_vertices)) \
        == (duplication == "1-hop")  # a 1-hop part lacks some vertices; a duplicate-all part holds them all


# -- the direction policy -----------------------------------------------------------------------------------------
def expected_directions(level_sizes, n, m, do_a, do_b):
    """The seed paper's rule by hand: FV = |Q|·m/n, BV = |U|·n/|P| after Q joins the visited."""
    visited, pulling, switched, out = 0, False, False, []
    for q in level_sizes:
        visited += q
        forward, backward = q * m / n, (n - visited) * n / max(visited, 1)
        if not pulling and not switched and forward > backward * do_a:
            pulling = switched = True
        elif pulling and forward < backward * do_b:
            pulling = False
        out.append("pull" if pulling else "push")
    return out


def level_sizes(case, source):
    """How many vertices each BFS level holds (scipy), one level per superstep."""
    d = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=source)
    d = d[np.isfinite(d)].astype(np.int64)
    return np.bincount(d).tolist()


@pytest.mark.parametrize("name,do_a,do_b", [("facebook", 1e-5, 0.1), ("grid20x15", 1e-12, 1e12),
                                            ("facebook_dir", 0.01, 0.1), ("path200", 1e-5, 0.1)])
@pytest.mark.parametrize("devices", [1, 3])
def test_auto_chooses_by_the_papers_rule_on_every_device(name, do_a, do_b, devices):
    case = get_case(name)
    g = case.graph
    made = []

    def make(graph):
        made.append(BFS(graph, direction="auto", do_a=do_a, do_b=do_b))
        return made[-1]

    r = mgraph.run(make, g, source=0, devices=devices, communication="broadcast")
    want = expected_directions(level_sizes(case, 0), g.num_vertices, g.num_arcs, do_a, do_b)
    assert len(made) == devices
    for prim in made:
        assert prim.directions == want
    np.testing.assert_array_equal(r.depth, mgraph.bfs(g, 0).depth)
    assert mgraph.bfs(g, 0, direction="auto", do_a=do_a, do_b=do_b, devices=devices).stats["directions"] == want


def test_do_a_by_default_is_the_backends():
    """The CPU takes the seed's 0.01: on a grid of 500 x 500, 1e-5 pulls once early (a pass over nearly every
    vertex for a frontier of a few dozen); 0.01 pulls only past the middle, where fewer vertices are unvisited."""
    g = mgraph.io.generators.grid(500, 500)
    assert ops.Direction(g, "auto").do_a == ops.direction.DO_A_CPU == 0.01
    assert ops.Direction(g, "auto", do_a=1e-5).do_a == 1e-5
    sizes = np.bincount(mgraph.bfs(g, 0).depth).tolist()
    n, m = g.num_vertices, g.num_arcs
    early, late = (expected_directions(sizes, n, m, a, 0.1) for a in (1e-5, 0.01))
    assert early.count("pull") == late.count("pull") == 1
    assert early.index("pull") < 100 and late.index("pull") > len(sizes) // 2
    assert mgraph.bfs(g, 0, direction="auto").stats["directions"] == late
    assert mgraph.bfs(g, 0, direction="auto", do_a=1e-5).stats["directions"] == early


def test_fixed_modes_never_switch_and_reset_starts_over():
    g = get_case("chesapeake").graph
    for mode in ("push", "pull"):
        policy = ops.Direction(g, mode, do_a=1e-12, do_b=1e12)
        assert [policy.choose(s) for s in (1, 30, 2)] == [mode] * 3
        assert policy.reads_proxies == (mode == "pull")
    policy = ops.Direction(g, "auto", do_a=1e-12, do_b=1e12)
    first = [policy.choose(s) for s in (1, 5, 20)]
    assert first == ["pull", "push", "push"] and policy.directions == first  # switches to pull only once
    policy.reset()
    assert policy.directions == [] and policy.visited == 0 and [policy.choose(s) for s in (1, 5, 20)] == first


@pytest.mark.parametrize("kw,match", [
    ({"mode": "sideways"}, "direction"), ({"mode": None}, "direction"), ({"mode": ["push"]}, "direction"),
    ({"mode": np.array("push")}, "direction"), ({"do_a": 0}, "do_a"), ({"do_a": True}, "do_a"),
    ({"do_a": float("inf")}, "do_a"), ({"do_b": "0.1"}, "do_b"), ({"do_b": float("nan")}, "do_b"),
])
def test_direction_refuses_bad_parameters(kw, match):
    g = get_case("chesapeake").graph
    with pytest.raises(ValueError, match=match):
        ops.Direction(g, **kw)
    args = {"direction": kw.pop("mode")} if "mode" in kw else kw
    with pytest.raises(ValueError, match=match):
        BFS(g, **args)
    with pytest.raises(ValueError, match=match):
        mgraph.run(functools.partial(BFS, **args), g, source=0, devices=2)


@pytest.mark.parametrize("name", ["rand_dir", "grid20x15", "chesapeake_dir"])
def test_advance_visit_push_and_pull_claim_the_same_levels(name):
    """Three levels from vertex 0 each way: scipy's hop counts up to 3, and a tree of arcs one level apart."""
    case = get_case(name)
    g = case.graph
    hops = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=0)
    want = np.where(hops <= 3, hops, -1).astype(np.int64)
    for direction in ("push", "pull"):
        depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
        depth[0], pred[0] = 0, 0
        frontier = np.array([0], dtype=g.indices.dtype)
        for level in range(1, 4):
            frontier = ops.advance_visit(g, frontier, depth, pred, level, direction=direction)
            assert sorted(frontier.tolist()) == np.flatnonzero(want == level).tolist()
        assert depth.tolist() == want.tolist()
        check_bfs_tree(case, 0, depth, pred)


def test_advance_visit_refuses_what_it_cannot_do():
    g = get_case("chesapeake").graph
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    frontier = np.array([0], dtype=g.indices.dtype)
    with pytest.raises(ValueError, match="ops.Direction"):
        ops.advance_visit(g, frontier, depth, pred, 1, direction="auto")
    with pytest.raises(ValueError, match="frontier_total"):
        ops.advance_visit(g, frontier, depth, pred, 1, direction=ops.Direction(g, "auto"))
    with pytest.raises(ValueError, match="dist"):
        ops.advance_visit(g, frontier, depth, pred, 1, np.zeros(g.num_vertices), direction="pull")


# -- parameters, one rule each, in the primitive ------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.0, 1, True, 1.5, -0.1, float("nan"), "0.5", None, 0.5 + 0j])
def test_pagerank_refuses_alpha_outside_0_1(alpha):
    g = get_case("chesapeake").graph
    with pytest.raises(ValueError, match="alpha"):
        PageRank(g, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        mgraph.run(functools.partial(PageRank, alpha=alpha), g, devices=2)
    with pytest.raises(ValueError, match="alpha"):
        mgraph.pagerank(g, alpha=alpha)


def test_pagerank_takes_alpha_just_below_one():
    g = get_case("chesapeake").graph
    r = mgraph.pagerank(g, alpha=np.float64(0.995), tol=1e-12, max_iter=20000)
    want = nx.pagerank(get_case("chesapeake").nx, alpha=0.995, tol=1e-12, max_iter=20000)
    np.testing.assert_allclose(r.rank, [want[v] for v in range(g.num_vertices)], rtol=1e-6, atol=1e-12)


# -- what a primitive's file says ---------------------------------------------------------------------------------
LAYOUT_WORDS = ("own_below", "own_part", "slice", "SubGraph", "mgraph.parts", "mgraph.comm", "duplication", "cupy")


@pytest.mark.parametrize("path", sorted(p.name for p in PRIMITIVES.glob("*.py") if p.name not in ("__init__.py",
                                                                                                   "contract.py")))
def test_a_primitive_knows_no_layout_and_its_iterate_is_short(path):
    source = (PRIMITIVES / path).read_text()
    for word in LAYOUT_WORDS:
        assert word not in source, f"{path} mentions {word}"
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            assert "slice" not in ast.dump(node), f"{path} tests a layout"
    iterates = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "iterate"]
    assert iterates, f"{path} has no iterate"
    for fn in iterates:
        assert fn.end_lineno - fn.lineno + 1 < 25, f"{path}: iterate has {fn.end_lineno - fn.lineno + 1} lines"



def test_a_kernel_s_switches_leave_the_policy_as_its_choices_would():
    """A levels kernel records only where it switched (the first pull, the first push after it, each plus one):
    the policy's directions, state and visited count after them are those of choosing level by level."""
    g = mgraph.load("rmat:10")
    policy = ops.Direction(g, "auto")
    policy.took_switching(5, 2, 4, 100)
    assert policy.directions == ["push", "pull", "pull", "push", "push"]
    assert not policy.pulling and policy.switched and policy.visited == 100 and policy.pushes_to_the_end()
    policy.reset()
    policy.took_switching(3, 0, 0, 7)
    assert policy.directions == ["push"] * 3 and not policy.switched and policy.visited == 7

"""Graphs from networkx, scipy.sparse and pandas (mgraph.convert), and Result indexing and tables.

Each converted graph is checked against the edges the input holds, read
with that library's own tools (G.edges, the matrix's entries, the DataFrame's
rows), not against another mgraph conversion.
"""
from __future__ import annotations

import ast
import pathlib

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import mgraph
from mgraph import api
from mgraph.convert import accepts_graphs, as_graph

pd = pytest.importorskip("pandas")


def arcs(graph):
    """{(label_u, label_v): weight} of every stored arc, through graph.labels where it has them."""
    src, dst, w = graph.edges()
    labels = getattr(graph, "labels", None)
    names = list(range(graph.num_vertices)) if labels is None else labels.tolist()
    out = {}
    for k, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        x = 1.0 if w is None else float(w[k])
        out[(names[u], names[v])] = x
        if not graph.directed:
            out[(names[v], names[u])] = x
    return out


def nx_arcs(G, weight="weight"):
    out = {}
    for u, v, d in G.edges(data=True):
        if u == v:
            continue
        x = float(d.get(weight, 1)) if weight else 1.0
        for key in ((u, v),) if G.is_directed() else ((u, v), (v, u)):
            out[key] = min(out.get(key, np.inf), x)
    return out


# ======================================================================== networkx
def test_from_networkx_string_labels_in_node_order_with_weights():
    G = nx.Graph()
    G.add_nodes_from(["z", "a", "m"])  # insertion order, not sorted
    G.add_edge("a", "z", weight=2.5)
    G.add_edge("m", "a")               # no weight attribute: weighs 1, as in networkx
    G.add_edge("q", "q", weight=7)     # a self-loop: dropped, but its node stays
    g = mgraph.from_networkx(G, weight="weight")
    assert g.labels.tolist() == ["z", "a", "m", "q"] == list(G)
    assert g.num_vertices == 4 and not g.directed and g.num_edges == 2
    assert arcs(g) == nx_arcs(G) == {("a", "z"): 2.5, ("z", "a"): 2.5, ("m", "a"): 1.0, ("a", "m"): 1.0}
    unweighted = mgraph.from_networkx(G)
    assert unweighted.weights is None and set(arcs(unweighted)) == set(nx_arcs(G))


def test_from_networkx_int_labels_directed_and_all_ones_stored_unweighted():
    G = nx.DiGraph([(10, 20), (20, 30), (30, 10), (30, 40)])
    nx.set_edge_attributes(G, 1, "weight")
    g = mgraph.from_networkx(G, weight="weight")
    assert g.labels.dtype == np.int64 and g.labels.tolist() == [10, 20, 30, 40]
    assert g.directed and g.weights is None  # every weight 1: the same numbers unweighted
    assert arcs(g) == nx_arcs(G)


def test_from_networkx_multigraph_keeps_lightest_parallel_edge_and_tuple_labels():
    G = nx.MultiGraph()
    G.add_edge((0, 0), (0, 1), weight=5)
    G.add_edge((0, 1), (0, 0), weight=2)
    G.add_edge((0, 1), (1, 1), weight=3.5)
    g = mgraph.from_networkx(G, weight="weight")
    assert g.labels.dtype == object and g.labels.tolist() == [(0, 0), (0, 1), (1, 1)]
    assert arcs(g) == nx_arcs(G)
    assert arcs(g)[((0, 0), (0, 1))] == 2.0


@pytest.mark.parametrize("bad", ["heavy", None, [1, 2]])
def test_from_networkx_non_numeric_weight_is_a_value_error(bad):
    G = nx.path_graph(3)
    G[0][1]["weight"] = bad
    with pytest.raises(ValueError, match="'weight' must hold real numbers"):
        mgraph.from_networkx(G, weight="weight")


def test_from_networkx_refuses_other_inputs():
    with pytest.raises(ValueError, match="expected a networkx graph, got list"):
        mgraph.from_networkx([(0, 1)])
    with pytest.raises(ValueError, match="weight must be None or the name"):
        mgraph.from_networkx(nx.path_graph(2), weight=lambda u, v, d: 1)


# ======================================================================== scipy
def test_from_scipy_symmetric_is_undirected_else_directed():
    A = sp.csr_array(np.array([[0, 2, 0], [2, 0, 3], [0, 3, 0]], dtype=float))
    g = mgraph.from_scipy(A)
    assert not g.directed and g.num_edges == 2 and getattr(g, "labels", None) is None  # vertex i is row i
    assert arcs(g) == {(0, 1): 2.0, (1, 0): 2.0, (1, 2): 3.0, (2, 1): 3.0}
    upper = sp.triu(A, format="csr")
    d = mgraph.from_scipy(upper)
    assert d.directed and arcs(d) == {(0, 1): 2.0, (1, 2): 3.0}
    assert mgraph.from_scipy(A, directed=True).directed
    with pytest.raises(ValueError, match="not symmetric"):
        mgraph.from_scipy(upper, directed=False)


def test_from_scipy_values_must_match_for_symmetry_and_diagonal_is_dropped():
    B = sp.coo_matrix(np.array([[9, 1, 0], [4, 0, 0], [0, 0, 0]], dtype=float))  # (0,1)=1 but (1,0)=4
    g = mgraph.from_scipy(B)
    assert g.directed and arcs(g) == {(0, 1): 1.0, (1, 0): 4.0}
    with pytest.raises(ValueError, match="not symmetric"):
        mgraph.from_scipy(B, directed=False)


def test_from_scipy_explicit_zeros_duplicates_and_patterns():
    # explicit zero entries are edges of weight 0; unsummed duplicates keep the smallest value
    coo = sp.coo_array((np.array([0.0, 0.0, 5.0, 2.0, 2.0]), (np.array([0, 1, 1, 1, 2]), np.array([1, 0, 2, 2, 1]))),
                       shape=(3, 3))
    g = mgraph.from_scipy(coo)
    assert not g.directed and arcs(g) == {(0, 1): 0.0, (1, 0): 0.0, (1, 2): 2.0, (2, 1): 2.0}
    pattern = mgraph.from_scipy(sp.csr_matrix(np.array([[0, 1], [1, 0]], dtype=bool)))
    assert pattern.weights is None and not pattern.directed and pattern.num_edges == 1


def test_from_scipy_refuses_non_sparse_and_non_square():
    with pytest.raises(ValueError, match="expected a scipy.sparse matrix"):
        mgraph.from_scipy(np.eye(3))
    with pytest.raises(ValueError, match="must be square"):
        mgraph.from_scipy(sp.csr_array((2, 3)))
    with pytest.raises(ValueError, match="directed must be None, True or False"):
        mgraph.from_scipy(sp.csr_array((2, 2)), directed="yes")


# ======================================================================== pandas
def test_from_pandas_sorted_labels_weights_and_direction():
    df = pd.DataFrame({"src": ["b", "a", "c", "a"], "dst": ["c", "b", "a", "b"], "w": [1.5, 2, 3, 0.5]})
    g = mgraph.from_pandas(df, source="src", target="dst", weight="w")
    assert g.labels.tolist() == ["a", "b", "c"] and not g.directed
    # the duplicate row a-b keeps the lighter weight
    assert arcs(g) == {("a", "b"): 0.5, ("b", "a"): 0.5, ("b", "c"): 1.5, ("c", "b"): 1.5,
                       ("a", "c"): 3.0, ("c", "a"): 3.0}
    d = mgraph.from_pandas(df, source="src", target="dst", directed=True)
    assert d.directed and d.weights is None and set(arcs(d)) == {("b", "c"), ("a", "b"), ("c", "a")}


def test_from_pandas_integer_ids_keep_their_order_and_mixed_labels_first_appearance():
    df = pd.DataFrame({"source": [30, 10, 20], "target": [10, 20, 40]})
    g = mgraph.from_pandas(df)
    assert g.labels.dtype == np.int64 and g.labels.tolist() == [10, 20, 30, 40]
    mixed = pd.DataFrame({"source": ["x", 2, "x"], "target": [(1, "a"), "x", 2]})
    m = mgraph.from_pandas(mixed)
    # numbers, strings and tuples do not sort together: the order they first appear in, row by row
    assert m.labels.tolist() == ["x", (1, "a"), 2]
    assert list(nx.from_pandas_edgelist(mixed)) == m.labels.tolist()


@pytest.mark.parametrize("df,kw,match", [
    (pd.DataFrame({"a": [1], "b": [2]}), {}, "source column 'source' is not in the DataFrame"),
    (pd.DataFrame({"source": [1], "target": [2]}), {"weight": "w"}, "weight column 'w' is not in"),
    (pd.DataFrame({"source": [1, None], "target": [2, 3]}), {}, "holds a missing value .* in row 1"),
    (pd.DataFrame({"source": ["a"], "target": [None]}), {}, "target column 'target' holds a missing value"),
    (pd.DataFrame({"source": [1], "target": [2], "w": ["x"]}), {"weight": "w"}, "must hold real numbers"),
    (pd.DataFrame({"source": [1], "target": [2], "w": [np.nan]}), {"weight": "w"}, "NaN"),
    (pd.DataFrame({"source": [1], "target": [2]}), {"directed": "no"}, "directed must be True or False"),
])
def test_from_pandas_errors(df, kw, match):
    with pytest.raises(ValueError, match=match):
        mgraph.from_pandas(df, **kw)


def test_from_pandas_refuses_non_dataframes():
    with pytest.raises(ValueError, match="expected a pandas DataFrame, got dict"):
        mgraph.from_pandas({"source": [1], "target": [2]})


# ======================================================================== as_graph / accepts_graphs
def test_as_graph_takes_every_kind_and_refuses_others():
    G = nx.karate_club_graph()
    g = mgraph.Graph.from_edges([0, 1], [1, 2])
    assert as_graph(g) is g
    from_nx = as_graph(G)
    assert from_nx.is_weighted and from_nx.num_edges == G.number_of_edges()  # karate carries "weight"
    from_sp = as_graph(nx.to_scipy_sparse_array(G, weight=None))
    assert not from_sp.directed and from_sp.num_edges == 78
    df = nx.to_pandas_edgelist(G)
    from_df = as_graph(df)
    assert from_df.is_weighted and from_df.num_edges == 78
    with pytest.raises(ValueError, match="expected an mgraph.Graph, a networkx graph, .* got ndarray"):
        as_graph(np.eye(2))


def test_accepts_graphs_maps_labelled_sources_and_results():
    G = nx.Graph([("a", "b"), ("b", "c"), ("x", "y")])
    bfs = accepts_graphs(api.bfs)
    r = bfs(G, "a")
    assert r.to_dict("depth") == {"a": 0, "b": 1, "c": 2, "x": -1, "y": -1}
    assert r.to_dict("predecessor", map_values=True) == {"a": "a", "b": "a", "c": "b", "x": None, "y": None}
    with pytest.raises(ValueError, match="source 0 is not a vertex label of this graph"):
        bfs(G, 0)
    bc = accepts_graphs(api.betweenness_centrality)
    assert bc(G, sources=["a", "c"]).to_dict("centrality") == pytest.approx(
        {"a": 0.0, "b": 1.0, "c": 0.0, "x": 0.0, "y": 0.0})  # the pair a-c, counted from both ends, halved
    unlabelled = mgraph.Graph.from_edges([0, 1], [1, 2])
    assert bfs(unlabelled, 0).vertex_labels is None


def test_run_functions_take_networkx_scipy_and_pandas():
    """What the issue observed failing: each run function takes these inputs directly (via convert.as_graph)."""
    G = nx.relabel_nodes(nx.karate_club_graph(), lambda i: f"n{i}")
    want = nx.pagerank(G)
    r = mgraph.pagerank(G)
    assert r.to_dict("rank") == pytest.approx(want, abs=1e-9)
    assert mgraph.bfs(G, "n0").to_dict("depth") == nx.single_source_shortest_path_length(G, "n0")
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), weight=None)
    assert mgraph.connected_components(A)["labels"].tolist() == [0] * 34
    df = nx.to_pandas_edgelist(G)
    dist = mgraph.sssp(df, "n0").to_dict("distance")
    assert dist == pytest.approx(nx.single_source_dijkstra_path_length(G, "n0"))


# ======================================================================== Result
def test_result_indexing_keys_and_attributes():
    g = mgraph.Graph.from_edges([0, 1], [1, 2], num_vertices=4)
    r = mgraph.bfs(g, 0)
    assert r["depth"] is r.depth and r["depth"].tolist() == [0, 1, 2, -1]
    assert set(r.keys()) == {"depth", "predecessor"} and "depth" in r and "rank" not in r
    with pytest.raises(KeyError, match="no result array 'rank': this result has depth, predecessor"):
        r["rank"]
    with pytest.raises(AttributeError):
        r.rank
    assert r.to_dict("depth") == {0: 0, 1: 1, 2: 2, 3: -1}
    assert all(type(k) is int and type(v) is int for k, v in r.to_dict("depth").items())
    assert r.to_dict("predecessor", map_values=True) == {0: 0, 1: 0, 2: 1, 3: None}
    with pytest.raises(ValueError, match="no result array 'rank'"):
        r.to_dict("rank")


def test_result_to_pandas_with_and_without_labels():
    G = nx.DiGraph([("s", "t"), ("t", "u")])
    g = mgraph.from_networkx(G)
    r = accepts_graphs(api.sssp)(g, "s")
    df = r.to_pandas()
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["vertex"].tolist() == ["s", "t", "u"] and df["distance"].tolist() == [0.0, 1.0, 2.0]
    assert df["predecessor"].tolist() == ["s", "s", "t"]  # labels, as to_dict gives them
    plain = api.pagerank(mgraph.Graph.from_edges([0], [1])).to_pandas()
    assert plain["vertex"].tolist() == [0, 1] and plain["rank"].tolist() == pytest.approx([0.5, 0.5])


def test_result_maps_vertex_valued_arrays_to_labels_in_dicts_and_tables_alike():
    """Predecessors (and components' labels, vertex ids too) come out as labels from to_dict and to_pandas alike."""
    G = nx.Graph([("a", "b"), ("b", "c"), ("x", "y")])
    r = mgraph.bfs(G, "a")
    want = {"a": "a", "b": "a", "c": "b", "x": None, "y": None}
    assert r.to_dict("predecessor") == want
    df = r.to_pandas()
    assert dict(zip(df["vertex"], df["predecessor"])) == want
    assert r.to_dict("predecessor", map_values=False) == {"a": 0, "b": 0, "c": 1, "x": -1, "y": -1}
    assert r.to_pandas(map_values=False)["predecessor"].tolist() == [0, 0, 1, -1, -1]
    cc = mgraph.connected_components(G)
    assert cc.to_dict("labels") == {"a": "a", "b": "a", "c": "a", "x": "x", "y": "x"}
    assert cc.to_pandas()["labels"].tolist() == ["a", "a", "a", "x", "x"]
    # integer labels: a nullable integer column, missing where there is no predecessor
    H = nx.relabel_nodes(G, {"a": 10, "b": 20, "c": 30, "x": 40, "y": 50})
    col = mgraph.bfs(H, 10).to_pandas()["predecessor"]
    assert str(col.dtype) == "Int64" and col.isna().tolist() == [False, False, False, True, True]
    assert col.dropna().tolist() == [10, 10, 20]
    # without labels, ids stay ids (-1 where none); map_values=True still gives None there
    plain = mgraph.bfs(mgraph.Graph.from_edges([0, 1], [1, 2], num_vertices=4), 0)
    assert plain.to_pandas()["predecessor"].tolist() == [0, 0, 1, -1]
    assert plain.to_pandas(map_values=True)["predecessor"].isna().tolist() == [False, False, False, True]
    # a result that declares its vertex-valued arrays: nothing else maps
    labels = np.array(["p", "q"], dtype=object)
    custom = mgraph.Result({"community": np.array([1, 1])}, {}, vertex_labels=labels, vertex_valued=())
    assert custom.to_dict("community") == {"p": 1, "q": 1}
    assert mgraph.Result({"labels": np.array([1, 1])}, {}, vertex_labels=labels).to_dict("labels") == {"p": "q", "q": "q"}


def test_result_does_not_import_the_converters():
    """mgraph.convert imports mgraph.result (Result, import_pandas), never the other way round."""
    tree = ast.parse(pathlib.Path(mgraph.result.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("mgraph.convert") for m in imported), imported


def test_result_tables_need_the_arrays_here():
    r = mgraph.Result({"rank": None}, {})
    with pytest.raises(ValueError, match="land on rank 0"):
        r.to_dict("rank")
    with pytest.raises(ValueError, match="land on rank 0"):
        r.to_pandas()


def test_result_with_own_vertices_only():
    """gather=False keeps each rank's own vertices: rows follow r.vertices, mapped through the labels."""
    labels = np.array(["a", "b", "c", "d"], dtype=object)
    r = mgraph.Result({"vertices": np.array([3, 1]), "rank": np.array([0.25, 0.75])}, {}, vertex_labels=labels)
    assert r.to_dict("rank") == {"d": 0.25, "b": 0.75}
    assert r.to_pandas()["vertex"].tolist() == ["d", "b"]


@pytest.mark.parametrize("nodes", ["shuffled", "negative", "sparse", "beyond_int64", "bools"])
def test_networkx_int_labels_map_to_the_ids_the_node_order_gives(nodes):
    """Integer nodes that are not 0..n-1 in order take their ids by array lookups (a table over a dense range, a
    binary search over a sparse one); ints past int64, and bools, by the dict: every way gives each arc the
    position of its target in ``list(G)``."""
    from mgraph.convert import networkx_adjacency

    rng = np.random.default_rng(4)
    base = nx.gnm_random_graph(300, 1500, seed=4)
    labels = {"shuffled": list(rng.permutation(300)), "negative": [int(x) - 150 for x in rng.permutation(300)],
              "sparse": [int(x) for x in rng.choice(10**15, 300, replace=False)],
              "beyond_int64": [2**70 + int(k) for k in rng.permutation(300)], "bools": None}[nodes]
    if labels is None:
        G = nx.Graph([(True, False), (False, 2), (2, True)])
    else:
        G = nx.relabel_nodes(base, {k: int(v) for k, v in enumerate(labels)})
    adj = networkx_adjacency(G)
    order = list(G)
    where = {v: k for k, v in enumerate(order)}
    want = [where[t] for v in order for t in G.adj[v]]
    np.testing.assert_array_equal(adj.indices, want)

"""gather=False means the same at every P: the Result holds ``vertices`` (caller ids, int64) and each array holds
the values of those vertices in that order.  In one process every vertex is here (1 device or worker threads);
under MPI each rank keeps its own (tests/test_mpi.py runs ``mpiexec -n 1`` and ``-n 3``)."""
from __future__ import annotations

import numpy as np
import pytest

import mgraph
from mgraph.primitives.cc import CC

CALLS = {
    "bfs": lambda g, **kw: mgraph.bfs(g, 0, **kw),
    "sssp": lambda g, **kw: mgraph.sssp(g, 0, **kw),
    "cc": lambda g, **kw: mgraph.connected_components(g, **kw),
    "pagerank": lambda g, **kw: mgraph.pagerank(g, **kw),
    "bc": lambda g, **kw: mgraph.betweenness_centrality(g, sources=[0, 5], **kw),
    "triangles": lambda g, **kw: mgraph.triangles(g, **kw),
    "core": lambda g, **kw: mgraph.core_number(g, **kw),
    "lpa": lambda g, **kw: mgraph.label_propagation(g, **kw),
    "run": lambda g, **kw: mgraph.run(CC, g, **kw),
}


@pytest.fixture(scope="module")
def graph():
    return mgraph.load("rmat:7", seed=3)


@pytest.mark.parametrize("devices", [1, 3])
@pytest.mark.parametrize("name", CALLS)
def test_without_gathering_one_process_keeps_every_vertex_with_its_ids(graph, name, devices):
    call = CALLS[name]
    whole = call(graph, devices=devices)
    own = call(graph, devices=devices, gather=False)
    assert "vertices" not in whole
    assert set(own.keys()) == set(whole.keys()) | {"vertices"}
    assert own.vertices.dtype == np.int64 and own.vertices.tolist() == list(range(graph.num_vertices))
    for key in whole.keys():
        np.testing.assert_allclose(own[key][own.vertices], whole[key], rtol=1e-12, atol=1e-15, err_msg=key)
    # the same stats (communities too: every label is here); the second run takes the first one's parts
    assert set(own.stats) - {"parts_reused"} == set(whole.stats) - {"parts_reused"}


def test_tables_of_a_result_without_gathering_follow_its_vertices(graph):
    own = mgraph.bfs(graph, 0, gather=False, devices=2)
    assert own.to_dict("depth") == dict(zip(own.vertices.tolist(), own.depth.tolist()))
    frame = own.to_pandas()
    assert frame["vertex"].tolist() == own.vertices.tolist() and frame["depth"].tolist() == own.depth.tolist()


def test_gather_must_be_a_bool(graph):
    with pytest.raises(ValueError, match="^gather must be True or False, got 0$"):
        mgraph.bfs(graph, 0, gather=0)

"""Fixed border lists through the border link (mgraph.comm.borders): PageRank's copies take their owners' values
without a host handshake.  CPU devices run the NumPy twin (worker threads, and MPI ranks through their
collectives); test_gpu_peer_borders compares two GPU ranks with it.

Results are held to networkx and to the host-driven exchange (``peer_borders=False``) on the same parts: the
same ranks bit for bit, the same supersteps.
"""
import json

import networkx as nx
import numpy as np
import pytest

import mgraph
from mgraph.comm import borders
from mgraph.primitives.pagerank import PageRank


def nx_ranks(g):
    G = nx.from_scipy_sparse_array(g.to_scipy(), create_using=nx.DiGraph if g.directed else nx.Graph)
    ref = nx.pagerank(G, tol=1e-10, max_iter=500, weight=None)
    return np.array([ref[v] for v in range(g.num_vertices)])


@pytest.mark.parametrize("spec, devices", [("rmat:10", 2), ("rmat:10", 3), ("grid:20x30", 5), ("rmat:9:4", 4)])
def test_border_link_gives_the_host_paths_ranks_bit_for_bit(spec, devices):
    g = mgraph.load(spec, backend="numpy")
    peer = mgraph.pagerank(g, devices=devices, tol=1e-10, max_iter=500)
    host = mgraph.pagerank(g, devices=devices, tol=1e-10, max_iter=500, peer_borders=False)
    assert peer.stats["border_path"] == "peer" and host.stats["border_path"] == "host"
    np.testing.assert_array_equal(peer.rank, host.rank)
    assert peer.stats["supersteps"] == host.stats["supersteps"]
    # one hop a superstep on every device, reset's included; the last superstep (finishing) exchanges nothing
    assert peer.stats["border_hops"] == [peer.stats["supersteps"] - 1] * devices
    assert host.stats["border_hops"] == [0] * devices
    np.testing.assert_allclose(peer.rank, nx_ranks(g), atol=1e-9)
    # the values alone travel: fewer bytes than the host's path, whose first superstep sends the lists' ids too
    assert 0 < sum(peer.stats["border_bytes"]) == sum(peer.stats["bytes_sent"]) < sum(host.stats["bytes_sent"])


def test_float32_shares_and_a_personal_stop_go_through_the_link():
    g = mgraph.load("rmat:9", backend="numpy")
    peer = mgraph.pagerank(g, devices=3, shares="float32", alpha=0.7, max_iter=7)
    host = mgraph.pagerank(g, devices=3, shares="float32", alpha=0.7, max_iter=7, peer_borders=False)
    assert peer.stats["border_path"] == "peer"
    np.testing.assert_array_equal(peer.rank, host.rank)


@pytest.mark.parametrize("run", [{"duplication": "all"}, {"communication": "broadcast"}, {"peer_borders": False},
                                 {"devices": 1}])
def test_the_host_path_where_the_link_does_not_serve(run):
    g = mgraph.load("rmat:8", backend="numpy")
    r = mgraph.pagerank(g, **{"devices": 2, **run})
    assert r.stats.get("border_path", "host") == "host"
    np.testing.assert_allclose(r.rank, mgraph.pagerank(g).rank, atol=1e-12)


def test_traversals_take_no_border_link():
    g = mgraph.load("rmat:8", backend="numpy")
    assert mgraph.bfs(g, 0, devices=2).stats["border_path"] == "host"


def test_peer_borders_must_be_a_bool():
    with pytest.raises(ValueError, match="peer_borders must be True"):
        mgraph.pagerank(mgraph.load("rmat:6", backend="numpy"), devices=2, peer_borders="yes")


@pytest.mark.parametrize("spec, p", [("rmat:9", 3), ("grid:12x9", 4)])
def test_each_list_lands_on_its_block_in_the_owners_order(spec, p):
    """What the link relies on: the copies a part keeps of a peer's vertices are one block in the peer's order, so
    a list's i-th value belongs at the block's i-th id, and the lengths agree (borders.consistent)."""
    from mgraph import partitioners
    from mgraph.parts import subgraph

    g = mgraph.load(spec, backend="numpy")
    parts = subgraph.build(g, partitioners.assign(g, p, "random", 3), p, "1-hop")
    made = [borders.layout(part, p) for part in parts]
    for d in range(p):
        for k in range(p):
            if k == d:
                continue
            lst = made[d][0][k]
            first, count = made[k][1][d]
            assert lst.shape[0] == count > 0
            np.testing.assert_array_equal(parts[d].id_on[k][lst], first + np.arange(count))
            np.testing.assert_array_equal(parts[k].vertex_ids[first:first + count], parts[d].vertex_ids[lst])
    sent = [[0 if k == d else made[d][0][k].shape[0] for k in range(p)] for d in range(p)]
    held = [[made[d][1][k][1] for k in range(p)] for d in range(p)]
    assert borders.consistent(sent, held)
    held[0][1] += 1
    assert not borders.consistent(sent, held)


class FailingPageRank(PageRank):
    name = "failing_pagerank"

    def iterate(self, frontier):
        if self.graph.index == 1 and self.step == 4:
            raise RuntimeError("device 1 broke at superstep 4")
        return super().iterate(frontier)


def test_a_failure_between_border_hops_ends_the_run_with_its_message():
    g = mgraph.load("rmat:8", backend="numpy")
    with pytest.raises(RuntimeError, match="device 1 broke at superstep 4"):
        mgraph.run(FailingPageRank, g, devices=3)


MPI_SCRIPT = """
import json, sys
import numpy as np
import mgraph
g = mgraph.load(sys.argv[1], backend="numpy")
for peer in (True, False):
    r = mgraph.pagerank(g, tol=1e-10, max_iter=500, peer_borders=peer)
    if r.rank is not None:
        np.save(sys.argv[2] + ("-peer" if peer else "-host") + ".npy", r.rank)
        print(json.dumps({"path": r.stats["border_path"], "hops": r.stats["border_hops"],
                          "supersteps": r.stats["supersteps"]}), flush=True)
"""


@pytest.mark.parametrize("ranks, spec", [(2, "rmat:9"), (3, "grid:15x20")])
def test_mpi_ranks_send_their_borders_through_the_link(tmp_path, ranks, spec):
    from conftest import run_mpi

    script = tmp_path / "ranks.py"
    script.write_text(MPI_SCRIPT)
    out = run_mpi(ranks, ["python", str(script), spec, str(tmp_path / "r")], timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    peer, host = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    assert peer["path"] == "peer" and host["path"] == "host"
    assert peer["hops"] == [peer["supersteps"] - 1] * ranks and peer["supersteps"] == host["supersteps"]
    a, b = np.load(tmp_path / "r-peer.npy"), np.load(tmp_path / "r-host.npy")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, nx_ranks(mgraph.load(spec, backend="numpy")), atol=1e-9)


def test_parts_that_share_no_border_still_take_part():
    """A path on device 0 joined to a cycle on device 1, and device 2 holding isolated vertices: lists and blocks of
    length 0 between some pairs, every device still taking each superstep's hop."""
    from mgraph.graph import Graph

    a = np.arange(0, 39)
    src = np.concatenate([a, [39], a + 40, [79]])
    dst = np.concatenate([a + 1, [40], a + 41, [40]])
    g = Graph.from_edges(src, dst, num_vertices=120)  # 0..39 a path, on to 40..79 a cycle; 80..119 alone
    thirds = lambda graph, parts, seed: np.arange(graph.num_vertices) * parts // graph.num_vertices  # noqa: E731
    peer = mgraph.pagerank(g, devices=3, partitioner=thirds, tol=1e-10, max_iter=500)
    host = mgraph.pagerank(g, devices=3, partitioner=thirds, tol=1e-10, max_iter=500, peer_borders=False)
    assert peer.stats["border_path"] == "peer"
    sent = peer.stats["border_bytes"]
    assert sent[0] > 0 and sent[1] > 0 and sent[2] == 0
    np.testing.assert_array_equal(peer.rank, host.rank)
    np.testing.assert_allclose(peer.rank, nx_ranks(g), atol=1e-9)

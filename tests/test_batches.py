"""Supersteps in batches on one device: push advances return Queues (their counts on the device), the enactor reads
a batch's counts at once, and the supersteps run past the empty frontier change nothing.  The NumPy twins run the
same paths here as the GPU (test_gpu_batches)."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import mgraph
from mgraph import ops
from mgraph.graph import Graph
from mgraph.primitives.contract import ContractError, Primitive
from mgraph.runner import enactor


def path_graph(length, paths=1):
    n = paths * (length + 1)
    v = np.arange(n, dtype=np.int64)
    tail = v[(v % (length + 1)) != length]
    return Graph.from_edges(tail, tail + 1, num_vertices=n, directed=True)


class Heads(Primitive):
    """Multi-source BFS from every vertex without in-arcs, one level per superstep (a user's primitive: advance_visit
    and nothing else)."""

    name = "heads"
    combine = {"depth": "min"}
    carry = ("predecessor",)
    vertex_valued = ("predecessor",)

    def reset(self, source=None):
        own = self.graph.own_vertices
        heads = own[self.graph.reverse().out_degree()[own] == 0]
        self.depth = ops.unvisited(self.graph, np.int32)
        self.predecessor = ops.unvisited(self.graph, self.graph.indices.dtype)
        self.depth[heads], self.predecessor[heads] = 0, heads
        return self.frontier_of(heads)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.depth, self.predecessor, self.step + 1)

    def result(self):
        return {"depth": self.depth, "predecessor": self.predecessor}


class HeadsOneByOne(Heads):
    batches = False


class Hops(Primitive):
    """BFS from a source, one level per superstep, written as a user would: advance_visit and nothing else."""

    name = "hops"
    needs_source = True
    combine = {"hops": "min"}
    carry = ("via",)
    vertex_valued = ("via",)

    def reset(self, source=None):
        self.hops = ops.unvisited(self.graph, np.int32)
        self.via = ops.unvisited(self.graph, self.graph.indices.dtype)
        if source is not None:
            self.hops[source], self.via[source] = 0, source
        return self.frontier_of(source)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.hops, self.via, self.step + 1)

    def result(self):
        return {"hops": self.hops, "via": self.via}


class Relax(Primitive):
    """Bellman-Ford from a source with advance_relax, one hop per superstep."""

    name = "relax"
    needs_source = True
    combine = {"distance": "min"}

    def reset(self, source=None):
        xp = self.xp
        self.distance = xp.full(self.num_vertices, np.inf)
        self.marks = xp.zeros(self.num_vertices, dtype=np.int32)
        if source is not None:
            self.distance[source] = 0.0
        return self.frontier_of(source)

    def iterate(self, frontier):
        return ops.advance_relax(self.graph, frontier, self.distance, self.marks, self.step + 1)

    def result(self):
        return {"distance": self.distance}


def stats_of(r):
    return r.stats["supersteps"], r.stats["iterations"], r.stats["frontier_sizes"]


@pytest.mark.parametrize("length", [1, 2, 3, 4, 7, 8, 9, 31, 32, 33, 63, 64, 65, 200])
def test_batches_change_nothing_a_superstep_at_a_time_would_not(length):
    g = path_graph(length, paths=2)
    batched, plain = mgraph.run(Heads, g), mgraph.run(HeadsOneByOne, g)
    v = np.arange(g.num_vertices)
    np.testing.assert_array_equal(batched.depth, v % (length + 1))
    np.testing.assert_array_equal(batched.predecessor, np.where(v % (length + 1) == 0, v, v - 1))
    np.testing.assert_array_equal(batched.depth, plain.depth)
    assert stats_of(batched) == stats_of(plain)  # supersteps past the end taken back: counts and sizes as before
    assert stats_of(batched)[0] == length + 3  # reset, `length` levels, the empty one, the finishing step
    assert sum(batched.stats["per_device"][0]["frontier"]) == 2 * (length + 1)  # the heads, then a vertex a level


def test_only_one_device_runs_in_batches():
    g = path_graph(40, paths=3)
    owners = lambda graph, parts, seed: (np.arange(graph.num_vertices) // 41).astype(np.int32)  # noqa: E731
    one = mgraph.run(Heads, g)
    three = mgraph.run(Heads, g, devices=3, partitioner=owners)
    np.testing.assert_array_equal(three.depth, one.depth)
    np.testing.assert_array_equal(three.predecessor, one.predecessor)
    assert stats_of(three) == stats_of(one)


def test_eligibility():
    g = path_graph(3)

    class Counting(Heads):
        def converged(self, frontier):
            return len(frontier) == 0

    class Summing(Heads):
        global_sums = ("total",)
        total = 0.0

    group = type("G", (), {"size": 1})()
    assert enactor.batches(Heads(g), group)
    assert not enactor.batches(HeadsOneByOne(g), group)
    assert not enactor.batches(Counting(g), group)  # its own stop condition is read on the host
    assert not enactor.batches(Summing(g), group)
    assert not enactor.batches(Heads(g), type("G", (), {"size": 2})())


def test_relax_in_batches_equals_dijkstra():
    rng = np.random.default_rng(5)
    base = mgraph.load("grid:30x20", backend="numpy")
    src, dst, _ = base.edges()
    w = rng.integers(1, 9, src.shape[0]).astype(np.float64)
    g = Graph.from_edges(src, dst, w, num_vertices=base.num_vertices)
    r = mgraph.run(Relax, g, source=0)
    a = sp.csr_matrix((g.weights, g.indices, g.indptr), shape=(g.num_vertices,) * 2)
    np.testing.assert_allclose(r.distance, csgraph.dijkstra(a, indices=0))
    assert r.stats["frontier_sizes"][-1] == 0 and all(s > 0 for s in r.stats["frontier_sizes"][:-1])


class Forever(Heads):
    """Never converges: a cycle re-emits its vertices (the functor claims every arc)."""

    name = "forever"
    EVERY = ops.Functor("every", "int* hits", "atomicAdd(&hits[v], 1); emit = true;",
                        lambda u, v, w, hits: (np.add.at(hits, v, 1), np.ones(v.shape, bool))[1])

    def reset(self, source=None):
        self.hits = self.xp.zeros(self.num_vertices, dtype=np.int32)
        return super().reset(source)

    def iterate(self, frontier):
        return ops.advance(self.graph, frontier, self.EVERY, self.hits)


def test_the_superstep_bound_holds_inside_a_batch():
    # vertex 5 (the head) leads into the cycle 0 -> 1 -> ... -> 4 -> 0
    g = Graph.from_edges(np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 0, 0]), num_vertices=6, directed=True)
    messages = []
    for cls in (Forever, type("ForeverOneByOne", (Forever,), {"batches": False})):
        with pytest.raises(ContractError, match="max_supersteps=50") as e:
            mgraph.run(cls, g, max_supersteps=50)
        messages.append(str(e.value).replace(cls.__name__, "X"))
    assert messages[0] == messages[1]  # the same superstep named, batches or not
    assert "superstep 49" in messages[0]


class Failing(Heads):
    def iterate(self, frontier):
        if self.step == 11:
            raise RuntimeError("lost at step 11")
        return super().iterate(frontier)


def test_a_failure_inside_a_batch_ends_the_run_with_its_message():
    with pytest.raises(RuntimeError, match="lost at step 11"):
        mgraph.run(Failing, path_graph(100))


def test_a_queue_stands_for_its_array():
    g = path_graph(6, paths=3)
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    heads = np.array([0, 7, 14], dtype=g.indices.dtype)
    depth[heads], pred[heads] = 0, heads
    with ops.counting():
        q = ops.advance_visit(g, heads, depth, pred, 1)
    assert isinstance(q, ops.Queue) and not q.known
    assert len(q) == 3 and q.known and q.shape == (3,)
    np.testing.assert_array_equal(np.asarray(q), [1, 8, 15])
    np.testing.assert_array_equal(q + 1, [2, 9, 16])
    np.testing.assert_array_equal(depth[q], [1, 1, 1])  # an index, as the array it stands for
    assert q.max() == 15 and q.reshape(1, -1).shape == (1, 3)
    q2 = ops.advance_visit(g, q, depth, pred, 2)  # a Queue in, a Queue out, with or without counting
    assert isinstance(q2, ops.Queue)
    np.testing.assert_array_equal(ops.filter(q2, np.asarray(q2) > 5), [9, 16])
    assert ops.id_range(q2) == (2, 16)
    ops.read_counts([q2])


def test_a_graph_with_a_hub_gets_plain_arrays():
    # a vertex of more than FUSE_DEGREE arcs: the GPU runs the load-balanced advance, which reads its count
    n = ops.levels.FUSE_DEGREE + 10
    g = Graph.from_edges(np.zeros(n - 1, dtype=np.int64), np.arange(1, n), num_vertices=n, directed=True)
    depth, pred = ops.unvisited(g, np.int32), ops.unvisited(g, g.indices.dtype)
    depth[0] = pred[0] = 0
    with ops.counting():
        out = ops.advance_visit(g, np.array([0], dtype=g.indices.dtype), depth, pred, 1)
    assert not isinstance(out, ops.Queue) and out.shape[0] == n - 1


def test_shipped_primitives_in_batched_runs_equal_scipy():
    g = mgraph.load("grid:60x50", backend="numpy")
    a = sp.csr_matrix((np.ones(g.num_arcs), g.indices, g.indptr), shape=(g.num_vertices,) * 2)
    ref = csgraph.shortest_path(a, unweighted=True, indices=0)
    for r in (mgraph.bfs(g, 0), mgraph.bfs(g, 0, direction="auto"), mgraph.sssp(g, 0)):
        values = r.depth if hasattr(r, "depth") else r.distance
        np.testing.assert_array_equal(values, ref)


class Watched(Heads):
    """Counts the frontiers still alive at each iterate: a batch must keep counts, not frontiers (each may be as
    large as the graph)."""

    def reset(self, source=None):
        import weakref

        self.refs, self.most, self.weakref = [], 0, weakref
        return super().reset(source)

    def iterate(self, frontier):
        self.most = max(self.most, sum(r() is not None for r in self.refs))
        out = super().iterate(frontier)
        if isinstance(out, ops.Queue):
            self.refs.append(self.weakref.ref(out))
        return out


def test_a_batch_keeps_counts_not_frontiers():
    prims = []
    r = mgraph.run(lambda graph: prims.append(Watched(graph)) or prims[-1], path_graph(300))
    assert len(prims[0].refs) >= 300 and prims[0].most <= 2  # the frontier iterated, and the one before at most
    assert r.stats["frontier_sizes"][-1] == 0 and all(isinstance(s, int) for s in r.stats["frontier_sizes"])

"""Where a graph's edges come from, read a share at a time: what lets every worker build only its own part.

An edge source gives worker ``rank`` of ``size`` its share of the edge list
as a list of chunks, each small enough to route to the owners and drop; no
worker ever reads the whole list (a gzip file excepted: worker 0 reads it
and the routing scatters it).  Three kinds:

* :class:`SpecSource`: a generator spec (``rmat:28``, ``rgg:24``), drawn by
  edge-index range with counter-based random numbers (the same graph for any
  split);
* :class:`FileSource`: a file, each worker parsing its own byte range (its
  slice of rows for an ``.npz`` cache);
* :class:`GraphSource`: a graph already in this process's memory, each
  worker taking the arcs of its range of rows.

``both_ways`` says whether each listed edge stands for both its arcs (an
undirected graph's edges, a symmetric matrix's stored triangle); a Graph
lists its arcs already, so it is False there.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from mgraph.backend import to_numpy
from mgraph.graph import Graph
from mgraph.io import generators
from mgraph.io.loaders import FileEdges, check_file

CHUNK_EDGES = 1 << 24  # edges routed per round at most: bounds a build's working memory beyond the finished part
ROUNDS_MIN = 8  # a worker routes its share in at least this many rounds, so a round stays small beside its part


def _split(total: int, rank: int, size: int) -> tuple[int, int]:
    return total * rank // size, total * (rank + 1) // size


def _chunks(start: int, stop: int, chunk: int) -> list[tuple[int, int]]:
    """[start, stop) in rounds of at most ``chunk``, and at least ROUNDS_MIN rounds where the share is large."""
    chunk = max(1, min(chunk, max(1 << 16, -(-(stop - start) // ROUNDS_MIN))))
    return [(a, min(a + chunk, stop)) for a in range(start, stop, chunk)]


class EdgeSource:
    """A graph's edge list, read by share.  ``num_vertices``, ``directed`` and ``weighted`` describe the graph built
    from it; ``simple`` says the list has no self-loops or repeated arcs (a built Graph's)."""

    num_vertices: int
    directed: bool
    weighted: bool
    both_ways: bool
    simple = False
    name = "edges"

    def open(self, group) -> None:
        """Learn, collectively, what the whole list implies (a file's vertex count); called once by every worker."""

    def ranges(self, rank: int, size: int, chunk: int = CHUNK_EDGES) -> list:
        """This worker's chunks, as descriptors for :meth:`read`."""
        raise NotImplementedError

    def read(self, chunk, xp=np):
        """One chunk: ``(src, dst, w)`` int64 ids and float64 weights (or None) on ``xp``."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"source": self.name, "num_vertices": self.num_vertices, "directed": self.directed}


class SpecSource(EdgeSource):
    """A generator spec: this worker draws the edge indices of its range, chunk by chunk.

    What the spec draws from beyond its indices (an rgg's points sorted by
    cell: :meth:`EdgeSpec.prepare <mgraph.io.generators.EdgeSpec.prepare>`)
    is made on a device's first read and kept with the source, since the
    build reads every chunk twice; threads of one process share it.  For an
    rgg ``num_edges`` counts candidate pairs, a bound on the edges.
    """

    both_ways = True

    def __init__(self, spec: str, *, seed: int = 0, weights=None):
        self.spec = generators.spec_edges(spec, seed=seed, weights=weights)
        self.name = spec
        self.num_vertices = self.spec.num_vertices
        self.num_edges = self.spec.num_edges
        self.directed = self.spec.directed
        self.weighted = self.spec.weighted
        self._prepared = {}  # device -> spec.prepare(xp) there
        self._lock = threading.Lock()

    def ranges(self, rank, size, chunk=CHUNK_EDGES):
        return _chunks(*_split(self.num_edges, rank, size), chunk)

    def read(self, chunk, xp=np):
        return self.spec.edges(chunk[0], chunk[1], xp=xp, prepared=self._prepared_on(xp))

    def _prepared_on(self, xp):
        device = None if xp is np else int(xp.cuda.Device().id)
        with self._lock:  # one thread makes it; the others wait for it rather than make their own
            if device not in self._prepared:
                self._prepared[device] = self.spec.prepare(xp)
            return self._prepared[device]

    def __getstate__(self):  # what another process receives: the spec, not this process's tables and lock
        state = dict(self.__dict__)
        state.pop("_lock")
        state["_prepared"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


class FileSource(EdgeSource):
    """A graph file: this worker parses its byte range once (its share stays in host memory; pyarrow parses it
    where it can, as for a whole file: mgraph.io.parse) and hands it out in chunks.  A gzip file cannot be cut by
    bytes: worker 0 reads it whole."""

    def __init__(self, path, *, directed=None):
        self.file = FileEdges(path)
        self.name = str(path)
        self.directed = self.file.directed if directed is None else bool(directed)
        # an undirected graph needs both arcs of every edge; so does a directed view of a stored triangle
        self.both_ways = not self.directed or self.file.one_triangle
        self._edges = None

    def open(self, group):
        error = None
        try:
            if self.file.gzipped:
                self._edges = self.file.part(0, 1) if group.rank == 0 else _empty(self.file.weighted)
            else:
                self._edges = self.file.part(group.rank, group.size)
        except ValueError as e:  # a bad line in one worker's share: every worker raises it, none waits
            error = str(e)
        errors = [e for e in group.allgather(error) if e]
        if errors:
            raise ValueError(errors[0])
        src, dst, w = self._edges
        if not self.file.gzipped and group.size > 1:
            self.file.check_count(group.allreduce(int(src.shape[0]), "sum"))
        high = int(max(src.max(), dst.max())) if src.shape[0] else -1
        high = group.allreduce(high, "max")
        weighted = group.allreduce(int(w is not None), "max")
        if weighted and w is None:  # an empty share of a weighted file
            self._edges = (src, dst, np.empty(0, dtype=np.float64))
        self.weighted = bool(weighted)
        declared = self.file.num_vertices
        if declared is not None and high >= declared:
            raise ValueError(f"{self.name}: vertex id {high} is out of range for the declared {declared} vertices")
        self.num_vertices = int(declared if declared is not None else high + 1)

    def ranges(self, rank, size, chunk=CHUNK_EDGES):
        return _chunks(0, int(self._edges[0].shape[0]), chunk)

    def read(self, chunk, xp=np):
        a, b = chunk
        src, dst, w = self._edges
        return xp.asarray(src[a:b]), xp.asarray(dst[a:b]), None if w is None else xp.asarray(w[a:b])


class GraphSource(EdgeSource):
    """A graph held in this process (a notebook's Graph): worker ``rank`` takes the arcs of its range of rows, read
    from wherever the graph lives."""

    both_ways = False
    simple = True

    def __init__(self, graph):
        self.graph = graph
        self.name = "graph"
        self.num_vertices = graph.num_vertices
        self.directed = graph.directed
        self.weighted = graph.weights is not None

    def ranges(self, rank, size, chunk=CHUNK_EDGES):
        lo, hi = _split(self.num_vertices, rank, size)
        indptr = to_numpy(self.graph.indptr[[lo, hi]])
        return _chunks(int(indptr[0]), int(indptr[1]), chunk)

    def read(self, chunk, xp=np):
        a, b = chunk
        g = self.graph
        gx = g.xp
        src = gx.searchsorted(g.indptr, gx.arange(a, b, dtype=np.int64), side="right") - 1
        dst = g.indices[a:b].astype(np.int64)
        w = None if g.weights is None else g.weights[a:b]
        if gx is not xp or (xp is not np and g.indptr.device.id != xp.cuda.Device().id):
            src, dst, w = (None if x is None else xp.asarray(to_numpy(x)) for x in (src, dst, w))
        return src, dst, w


def _empty(weighted):
    e = np.empty(0, dtype=np.int64)
    return e, e.copy(), (np.empty(0, dtype=np.float64) if weighted else None)


def source_of(graph_or_name, *, directed=None, seed=0, weights=None) -> EdgeSource:
    """The edge source of a Graph, a generator spec or a file path."""
    if isinstance(graph_or_name, EdgeSource):
        return graph_or_name
    if isinstance(graph_or_name, Graph):
        return GraphSource(graph_or_name)
    name = os.fspath(graph_or_name)
    if generators.is_spec(name) and not os.path.exists(name):
        if directed:
            raise ValueError(f"generated graphs are undirected; directed=True is not available for {name!r}")
        return SpecSource(name, seed=seed, weights=weights)
    check_file(name)  # a pipe or a device is refused as what it is (under MPI too)
    return FileSource(name, directed=directed)

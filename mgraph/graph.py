"""The graph model: a simple graph in CSR, with its reverse (CSC) for pulling.

Vertex ids are 32-bit while they fit, 64-bit otherwise; edge offsets are
always 64-bit.  Construction runs on whichever array module the edges come in
(NumPy or CuPy), so a graph generated on the GPU is built there too.
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from mgraph import memory
from mgraph.backend import Backend, array_module, resolve, to_numpy

_TOKENS = itertools.count(1)

INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = np.iinfo(np.int64).max


def index_dtype(num_vertices: int):
    """int32 ids while every id fits, else int64."""
    return np.int32 if num_vertices <= INT32_MAX else np.int64


def _as_ids(xp, a, what: str):
    """``a`` as int64 ids; ids that int64 cannot hold are refused, since casting would wrap them to other ids."""
    a = xp.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of vertex ids, got shape {a.shape}")
    if a.dtype.kind == "b":  # True and False would read as ids 1 and 0: a mask handed where ids belong
        raise ValueError(f"{what} holds booleans, not vertex ids (the ids a mask selects are np.flatnonzero(mask))")
    if a.size and a.dtype.kind == "f":
        if not bool(xp.all(a == xp.floor(a))):
            raise ValueError(f"{what} holds non-integer vertex ids")
        beyond = xp.abs(a) >= 2.0 ** 63  # inf too
        if bool(beyond.any()):
            raise ValueError(f"{what} holds vertex id {float(a[int(xp.argmax(beyond))])!r}, outside the 64-bit "
                             "integer range")
    elif a.size and a.dtype.kind == "u" and a.dtype.itemsize == 8 and int(a.max()) > INT64_MAX:
        raise ValueError(f"{what} holds vertex id {int(a.max())}, outside the 64-bit integer range")
    elif a.size and a.dtype.kind == "O" and all(isinstance(x, numbers.Integral) for x in a.tolist()):
        # NumPy keeps a list's Python ints as objects when one is beyond 64 bits
        big = next((int(x) for x in a.tolist() if not -(1 << 63) <= int(x) <= INT64_MAX), None)
        if big is not None:
            raise ValueError(f"{what} holds vertex id {big}, outside the 64-bit integer range")
    elif a.size and a.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold integer vertex ids, got dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


class Graph:
    """A simple graph (no self-loops, no duplicate edges) in CSR form.

    Attributes: ``indptr`` (int64, n+1), ``indices`` (int32/int64; each row
    sorted by column), ``weights`` (float64 or None; may be negative, which
    only SSSP refuses), ``directed``.  An undirected graph stores both arcs of
    every edge, so its CSR is its own reverse.
    """

    def __init__(self, indptr, indices, weights=None, *, directed: bool, num_input_edges: int | None = None):
        kind = getattr(getattr(weights, "dtype", None), "kind", None)
        if weights is not None and (kind is None or kind not in "fiu"):  # a dtype test only: no pass over the arcs
            raise ValueError(f"weights must be an array of real numbers, got "
                             f"{'dtype ' + str(weights.dtype) if kind else type(weights).__name__}")
        self.indptr = indptr
        self.indices = indices
        self.weights = weights
        self.directed = bool(directed)
        self.num_vertices = int(indptr.shape[0] - 1)
        self.arc_rows = self.num_vertices  # rows that may hold arcs; the rest are empty (a part's proxies)
        self.num_input_edges = num_input_edges
        self._reverse = None
        self._on = {}
        self.token = next(_TOKENS)  # names this graph object for caches outside it (worker processes keep parts)

    # -- construction -------------------------------------------------------
    @classmethod
    def from_edges(cls, src, dst, weights=None, *, num_vertices=None, directed=False) -> "Graph":
        """Build from an edge list; self-loops are dropped, duplicates merged keeping the smallest weight.

        Raises ValueError for negative ids, ids >= num_vertices, boolean ids
        (a mask, not ids), mismatched lengths, weights that are not real
        numbers (complex, strings, booleans, objects: converting them would
        drop an imaginary part or guess at text) or are NaN/inf, and a
        ``directed`` that is not a bool.
        """
        if not isinstance(directed, (bool, np.bool_)):
            raise ValueError(f"directed must be True or False, got {directed!r}")
        xp = array_module(src)
        src = _as_ids(xp, src, "src")
        dst = _as_ids(xp, xp.asarray(dst), "dst")
        if src.shape != dst.shape:
            raise ValueError(f"src and dst differ in length ({src.size} != {dst.size})")
        if weights is not None:
            weights = xp.asarray(weights)
            if weights.dtype.kind not in "fiu":
                raise ValueError(f"weights must be real numbers (integer or floating point), got dtype {weights.dtype}")
            weights = weights.astype(np.float64, copy=False)
            if weights.shape != src.shape:
                raise ValueError(f"weights and src differ in length ({weights.size} != {src.size})")
            if weights.size and not bool(xp.all(xp.isfinite(weights))):
                raise ValueError("weights contain NaN or infinite values")
        lo = int(min(src.min(), dst.min())) if src.size else 0
        if lo < 0:
            raise ValueError(f"negative vertex id {lo}")
        hi = int(max(src.max(), dst.max())) if src.size else -1
        if num_vertices is None:
            num_vertices = hi + 1
        if isinstance(num_vertices, (bool, np.bool_)) or not (
                isinstance(num_vertices, numbers.Integral)
                or (isinstance(num_vertices, numbers.Real) and float(num_vertices).is_integer())):
            raise ValueError(f"num_vertices must be an integer, got {num_vertices!r}")
        num_vertices = int(num_vertices)
        if not 0 <= num_vertices <= INT64_MAX + 1:
            raise ValueError(f"num_vertices must be >= 0 and at most 2**63 (ids are 64-bit), got {num_vertices}")
        if hi >= num_vertices:
            raise ValueError(f"vertex id {hi} is out of range for num_vertices={num_vertices}")
        num_input = int(src.size)
        arcs = num_input if directed else 2 * num_input
        memory.check(memory.whole_build_bytes(num_vertices, arcs, weighted=weights is not None),
                     f"Graph.from_edges: building {memory.describe(num_vertices, arcs)}", xp)
        indptr, indices, w = _build_csr(xp, src, dst, weights, num_vertices, directed)
        return cls(indptr, indices, w, directed=directed, num_input_edges=num_input)

    @classmethod
    def from_scipy(cls, matrix, *, directed=True) -> "Graph":
        """Build from a scipy.sparse matrix: entry (i, j) is an arc i -> j weighted by its value.

        ``directed=True`` as in scipy.sparse.csgraph; with ``directed=False``
        every entry is an undirected edge (the lighter of (i, j) and (j, i) is kept).
        A boolean matrix is a pattern: its entries weigh 1.
        """
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise ValueError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
        if matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"an adjacency matrix must be square, got shape {matrix.shape}")
        coo = matrix.tocoo()
        data = coo.data.astype(np.float64) if coo.data.dtype == np.bool_ else coo.data
        return cls.from_edges(coo.row, coo.col, data, num_vertices=matrix.shape[0], directed=directed)

    # -- views ----------------------------------------------------------------
    @property
    def xp(self):
        return array_module(self.indptr)

    @property
    def num_arcs(self) -> int:
        """Stored arcs (an undirected edge counts twice)."""
        return int(self.indices.shape[0])

    @property
    def num_edges(self) -> int:
        """Edges of the simple graph (undirected: each once)."""
        return self.num_arcs if self.directed else self.num_arcs // 2

    @property
    def is_weighted(self) -> bool:
        return self.weights is not None

    def out_degree(self):
        return self.indptr[1:] - self.indptr[:-1]

    def arc_sources(self):
        """The source vertex of every stored arc (int64, CSR order); a search, since CuPy's repeat needs host counts."""
        xp = self.xp
        return xp.searchsorted(self.indptr, xp.arange(self.num_arcs, dtype=np.int64), side="right") - 1

    # -- what a primitive may ask of the graph it runs on (a SubGraph answers for one device) --
    @property
    def own_vertices(self):
        """The vertices whose out-arcs (and in-arcs, in ``reverse()``) this graph holds: here all of them."""
        return self.xp.arange(self.num_vertices, dtype=self.indices.dtype)

    @property
    def num_global_vertices(self) -> int:
        """Vertices of the whole graph (normalisations such as PageRank's 1/N use it)."""
        return self.num_vertices

    @property
    def num_global_arcs(self) -> int:
        """Stored arcs of the whole graph."""
        return self.num_arcs

    @property
    def vertex_ids(self):
        """Each vertex's id in the caller's numbering (here the identity)."""
        return self.xp.arange(self.num_vertices, dtype=np.int64)

    @property
    def own_below(self):
        """The vertices below this id are this graph's own, all their arcs here (a whole graph: every vertex)."""
        return self.num_vertices

    def own(self, a):
        """The own vertices' entries of per-vertex array ``a``, in the order of ``own_vertices``: a view where own
        vertices come first in the numbering (a whole graph: all of ``a``), else a gather.  Write through it only
        where it is a view; :func:`mgraph.ops.own_map` writes own entries in either case."""
        below = self.own_below
        return a[:below] if below is not None else a[self.own_vertices]

    def own_mask(self):
        """A new boolean array, True at this graph's own vertices (a whole graph: everywhere)."""
        mask = self.xp.zeros(self.num_vertices, dtype=bool)
        mask[self.own_vertices] = True
        return mask

    index = 0  # a whole graph is the one part of a one-device run

    def local_id(self, vertex):
        """This graph's id of caller vertex ``vertex`` (the same; None stays None)."""
        return None if vertex is None else int(vertex)

    def reverse(self) -> "Graph":
        """The transpose (CSC as CSR): in-edges, for pulling.  Undirected graphs are their own reverse."""
        if not self.directed:
            return self
        if self._reverse is None:
            xp = self.xp
            n = self.num_vertices
            src = self.arc_sources()
            key = self.indices.astype(np.int64) * np.int64(max(n, 1)) + src
            del src
            indptr, indices, w = _csr_from_keys(xp, key, self.weights, n)
            self._reverse = Graph(indptr, indices.astype(self.indices.dtype), w, directed=True)
            self._reverse._reverse = self
        return self._reverse

    def to(self, backend: str | Backend) -> "Graph":
        """This graph with its arrays on ``backend`` (cached; the same object when already there)."""
        b = resolve(backend)
        here = "cupy" if self.xp is not np else "numpy"
        if b.name == here and (here == "numpy" or self.indptr.device.id == b.device):
            return self
        key = (b.name, b.device)
        if key not in self._on:
            g = Graph(b.asarray(self.indptr), b.asarray(self.indices),
                      None if self.weights is None else b.asarray(self.weights),
                      directed=self.directed, num_input_edges=self.num_input_edges)
            self._on[key] = g
        return self._on[key]

    def edges(self):
        """(src, dst, weights) as NumPy arrays, each stored arc once (undirected: u < v)."""
        indptr = to_numpy(self.indptr)
        dst = to_numpy(self.indices).astype(np.int64)
        src = np.repeat(np.arange(self.num_vertices, dtype=np.int64), np.diff(indptr))
        w = None if self.weights is None else to_numpy(self.weights)
        if not self.directed:
            keep = src < dst
            src, dst = src[keep], dst[keep]
            w = None if w is None else w[keep]
        return src, dst, w

    def to_scipy(self):
        """A scipy.sparse CSR matrix (weights, or ones).

        Zero weights stay as explicit entries, which csgraph treats as edges;
        sparse arithmetic on the matrix (``A + A.T``) would silently drop them.
        """
        import scipy.sparse as sp

        w = to_numpy(self.weights) if self.weights is not None else np.ones(self.num_arcs)
        n = self.num_vertices
        return sp.csr_matrix((w, to_numpy(self.indices), to_numpy(self.indptr)), shape=(n, n))

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.is_weighted else ""
        where = "gpu" if self.xp is not np else "cpu"
        return f"Graph({self.num_vertices} vertices, {self.num_edges} edges, {kind}{w}, {where})"


def _build_csr(xp, src, dst, weights, n, directed):
    """CSR of a simple graph from raw edges.

    Arcs are handled as one int64 key (src * n + dst) from the start, so the
    peak is the caller's edges plus about three keys per arc (GPU memory is
    what limits the largest graph).
    """
    keep = src != dst
    if not bool(keep.all()):
        src, dst = src[keep], dst[keep]
        weights = None if weights is None else weights[keep]
    del keep
    nn = np.int64(max(n, 1))
    key = src * nn + dst
    if not directed:
        key = xp.concatenate([key, dst * nn + src])
        weights = None if weights is None else xp.concatenate([weights, weights])
    del src, dst
    return _csr_from_keys(xp, key, weights, n)


def _csr_from_keys(xp, key, weights, n):
    """CSR from arc keys in any order: sort them, keep the lightest of duplicate arcs."""
    if weights is None:
        key.sort()
    else:
        order = xp.argsort(weights, kind="stable")
        key, weights = key[order], weights[order]
        order = xp.argsort(key, kind="stable")  # stable: lightest first within a key
        key, weights = key[order], weights[order]
        del order
    if key.size:
        first = xp.empty(key.shape, dtype=bool)
        first[0] = True
        xp.not_equal(key[1:], key[:-1], out=first[1:])
        if not bool(first.all()):
            key = key[first]
            weights = None if weights is None else weights[first]
        del first
    nn = np.int64(max(n, 1))
    indptr = xp.searchsorted(key, xp.arange(n + 1, dtype=np.int64) * nn)
    return indptr.astype(np.int64, copy=False), (key % nn).astype(index_dtype(n)), weights

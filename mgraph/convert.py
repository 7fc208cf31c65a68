"""Graphs from the libraries users already hold them in: NetworkX, scipy.sparse and pandas.

Each converter returns an :class:`~mgraph.graph.Graph` built by
:meth:`Graph.from_edges`, so the loaders' rules hold: self-loops are dropped
and duplicate (parallel) edges merge into one, keeping the smallest weight.

Vertices are numbered 0..n-1.  Where the input names its vertices with
arbitrary hashable labels (NetworkX nodes, DataFrame columns), the graph keeps
them as ``graph.labels`` (a NumPy array: int64 where every label is an int,
else objects), with ``graph.labels[i]`` the label of vertex i:

* :func:`from_networkx`: the order in which ``G`` iterates its nodes
  (``list(G)``, the order ``nx.to_scipy_sparse_array`` uses);
* :func:`from_pandas`: sorted where the labels can be ordered (numbers, or
  strings), so integer ids keep their order; otherwise in order of first
  appearance, row by row, source before target (the order
  ``nx.from_pandas_edgelist`` adds them in);
* :func:`from_scipy`: no labels; vertex i is row and column i.

The run functions map results back through the labels
(``result.to_dict(name)``, ``result.to_pandas()``) and, given a labelled
graph, take their ``source``/``sources`` as labels (see :func:`accepts_graphs`).

pandas and NetworkX stay optional: nothing here imports them until a
converter needs them, and :func:`as_graph` recognises their objects only when
the caller has already imported the library (a DataFrame cannot exist
otherwise).
"""
from __future__ import annotations

import functools
import inspect
import numbers
import sys

import numpy as np

from mgraph.graph import Graph, index_dtype
from mgraph.parts.partitioned import PartitionedGraph
from mgraph.result import Result, import_pandas

ACCEPTED = "an mgraph.Graph, a networkx graph, a scipy.sparse matrix or array, or a pandas DataFrame"


# -- labels ---------------------------------------------------------------------


def label_array(labels) -> np.ndarray:
    """``labels`` (a sequence of hashables) as a 1-D array: int64 when every label is a Python int that fits,
    else objects (filled one by one, so tuple labels stay tuples instead of becoming a 2-D array)."""
    labels = list(labels)
    if labels and all(type(x) is int for x in labels):
        try:
            return np.array(labels, dtype=np.int64)
        except OverflowError:  # an int beyond 64 bits: keep the Python ints
            pass
    elif not labels:
        return np.empty(0, dtype=np.int64)
    return np.fromiter(labels, dtype=object, count=len(labels))


def _set_labels(graph: Graph, labels: np.ndarray, index: dict | None = None) -> Graph:
    """Keep ``labels`` on ``graph`` (and the label -> id map, when the converter already built one)."""
    graph.labels = labels
    graph._label_index = index
    return graph


def label_index(graph) -> dict | None:
    """The label -> vertex id map of a labelled graph (built once, kept on it); None for an unlabelled one."""
    labels = getattr(graph, "labels", None)
    if labels is None:
        return None
    index = getattr(graph, "_label_index", None)
    if index is None:
        index = graph._label_index = {label: i for i, label in enumerate(labels.tolist())}
    return index


def _vertex_of(index: dict, label, what: str) -> int:
    try:
        return index[label]
    except (KeyError, TypeError):  # TypeError: an unhashable value is no label either
        raise ValueError(f"{what} {label!r} is not a vertex label of this graph (a graph from a converter takes "
                         f"labels as {what}, not vertex ids)") from None


def vertex_ids(graph, value, what: str = "source"):
    """``value`` (a label, or an iterable of labels) as vertex ids of labelled ``graph``.

    A value that is itself a label is one vertex, even where it is a tuple or a
    string that could also be read as a sequence; any other iterable is a
    sequence of labels (returned as a list).
    """
    index = label_index(graph)
    try:
        if value in index:
            return index[value]
    except TypeError:  # unhashable (a list of labels)
        pass
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        return _vertex_of(index, value, what)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return [_vertex_of(index, label, what) for label in value]


# -- NetworkX -------------------------------------------------------------------


def _is_networkx(obj) -> bool:
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


class NetworkxAdjacency:
    """A networkx graph's adjacency as arrays, exactly as its public ``G.adj`` (and ``G.pred``) lists it.

    Vertex i is ``nodes[i]`` (``list(G)`` order).  Row i of
    ``indptr``/``indices`` holds node i's neighbours in the order ``G.adj[node]``
    iterates them (networkx's insertion order: the order its traversals
    follow), self-loops included and each neighbour once (a multigraph's
    parallel edges are one entry, ``multiplicity`` counting them).
    ``weights`` holds each entry's weight attribute (``default`` where an
    edge has none; a multigraph's lightest parallel edge, as networkx's
    shortest paths take it), with the dtype NumPy infers (int64 for ints).
    """

    def __init__(self, nodes, index, indptr, indices, weights, multiplicity, directed):
        self.nodes = nodes
        self.index = index
        self.indptr = indptr
        self.indices = indices
        self.weights = weights
        self.multiplicity = multiplicity
        self.directed = directed

    @property
    def num_vertices(self) -> int:
        return len(self.nodes)

    def rows(self) -> np.ndarray:
        """The row (source vertex) of every entry."""
        return np.repeat(np.arange(self.num_vertices, dtype=np.int64), np.diff(self.indptr))


def _networkx_classes(nx):
    return (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph)


def networkx_mapping(G, name: str):
    """The dict-of-dicts behind ``G.<name>`` (``adj`` or ``pred``) where G's class keeps networkx's own (the public
    view then shows exactly that mapping, and reading it directly skips one view per lookup); else the public
    ``G.<name>`` itself, so that a subclass which redefines it (networkx's ``_AntiGraph``, whose ``adj`` is the
    complement of what it stores) is read as it presents itself."""
    nx = sys.modules["networkx"]
    prop = inspect.getattr_static(type(G), name, None)
    if any(prop is inspect.getattr_static(c, name, None) for c in _networkx_classes(nx)):
        return G._adj if name == "adj" else G._pred
    return getattr(G, name)


def networkx_order_is_own(G) -> bool:
    """Whether G's neighbour order is networkx's own: its class redefines none of the ways networkx's algorithms
    walk neighbours (``adj``, ``succ``, ``pred``, ``G[u]``, ``neighbors``, ``successors``, ``predecessors``,
    iteration over nodes), so that the order of ``G.adj`` is the order its BFS and Dijkstra visit them in."""
    nx = sys.modules["networkx"]
    cls = type(G)
    for name in ("adj", "succ", "pred", "__getitem__", "neighbors", "successors", "predecessors", "__iter__"):
        mine = inspect.getattr_static(cls, name, None)
        if not any(mine is inspect.getattr_static(c, name, None) for c in _networkx_classes(nx)):
            return False
    return True


def _label_ids(index: dict, nodes: list, labels: list) -> np.ndarray:
    """Vertex ids of ``labels`` (node objects): the labels themselves where the nodes are 0..n-1 in order; for
    other nodes that are all Python ints within int64, a lookup in arrays (a dict lookup per label costs about
    a third of a microsecond, most of a large graph's conversion); else the dict ``index``."""
    n = len(nodes)
    ints = bool(n) and type(nodes[0]) is int and type(nodes[-1]) is int and all(type(x) is int for x in nodes)
    if ints and nodes[0] == 0 and nodes[-1] == n - 1 and nodes == list(range(n)):
        return np.array(labels, dtype=np.int64).reshape(-1)
    if ints and labels:
        ids = _int_label_ids(nodes, labels)
        if ids is not None:
            return ids
    return np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=len(labels))


def _int_label_ids(nodes: list, labels: list):
    """:func:`_label_ids` for int nodes by arrays: a table over the labels' range where it is at most a few times
    the node count, else a binary search in the sorted nodes; None where some node or label is not an int64 or a
    label is not a node (the dict then says which)."""
    try:
        keys = np.array(nodes, dtype=np.int64)
        wanted = np.array(labels, dtype=np.int64)
    except (OverflowError, TypeError, ValueError):
        return None
    if wanted.ndim != 1:
        return None
    low, high = int(keys.min()), int(keys.max())
    if high - low < 4 * keys.shape[0] + 1024:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[keys - low] = np.arange(keys.shape[0], dtype=np.int64)
        inside = (wanted >= low) & (wanted <= high)
        ids = np.where(inside, table[np.clip(wanted - low, 0, high - low)], -1)
        return ids if ids.shape[0] == 0 or int(ids.min()) >= 0 else None
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), keys.shape[0] - 1)
    ids = order[at]
    return ids if np.array_equal(keys[ids], wanted) else None


def _weight_array(values: list, weight) -> np.ndarray:
    """Edge attribute values as a NumPy array of real numbers (a ValueError naming the attribute otherwise)."""
    try:
        w = np.asarray(values) if values else np.empty(0, dtype=np.int64)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"edge attribute {weight!r} must hold real numbers ({e})") from None
    if w.dtype.kind not in "iuf" or w.ndim != 1:
        bad = next((x for x in values if isinstance(x, bool) or not isinstance(x, numbers.Real)), w.dtype)
        raise ValueError(f"edge attribute {weight!r} must hold real numbers, got {bad!r}")
    return w


def networkx_adjacency(G, weight=None, default=1, *, mapping: str = "adj") -> NetworkxAdjacency:
    """``G``'s public adjacency (``mapping="adj"``: successors) or its predecessors (``"pred"``, directed graphs)
    as a :class:`NetworkxAdjacency`: one walk over the neighbour dicts in Python, then arrays.

    The rows are read through :func:`networkx_mapping`, node by node in
    ``list(G)`` order; ``weight`` (an edge attribute name, or None) fills
    ``weights``.  Values that are not real numbers are a ValueError.
    """
    nodes = list(G)
    index = dict(zip(nodes, range(len(nodes))))
    adj = networkx_mapping(G, mapping)
    multigraph = bool(G.is_multigraph())
    targets, ends, data = [], [0], [] if (weight is not None or multigraph) else None
    for nbrs in map(adj.__getitem__, nodes):
        targets.extend(nbrs)
        ends.append(len(targets))
        if data is not None:
            data.extend(nbrs.values())
    indptr = np.array(ends, dtype=np.int64)
    indices = _label_ids(index, nodes, targets)
    del targets
    multiplicity = w = None
    if multigraph:
        multiplicity = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
        if weight is not None:
            w = _weight_array([min(d.get(weight, default) for d in keyed.values()) for keyed in data], weight)
    elif weight is not None:
        w = _weight_array([d.get(weight, default) for d in data], weight)
    return NetworkxAdjacency(nodes, index, indptr, indices, w, multiplicity, bool(G.is_directed()))


def simple_csr(adj: NetworkxAdjacency, weights=None):
    """The simple graph of ``adj`` as mgraph stores it: (indptr, indices, weights, entry) with each row sorted by
    column, self-loops dropped and repeated entries merged keeping the lightest; ``entry[k]`` is the position in
    ``adj.indices`` of arc k, so ``entry - adj.indptr[row]`` is its place in networkx's neighbour order.
    ``weights`` (default ``adj.weights``) are per entry of ``adj``."""
    n = adj.num_vertices
    rows = adj.rows()
    cols = adj.indices
    w = adj.weights if weights is None else weights
    keep = np.flatnonzero(rows != cols)
    key = rows[keep] * np.int64(max(n, 1)) + cols[keep]
    if w is None:
        order = np.argsort(key, kind="stable")
    else:  # lightest first within a key
        order = np.lexsort((w[keep], key))
    entry = keep[order]
    key = key[order]
    if key.size > 1:
        first = np.empty(key.shape, dtype=bool)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        if not first.all():
            entry, key = entry[first], key[first]
    counts = np.bincount(rows[entry], minlength=n) if n else np.zeros(0, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = cols[entry].astype(index_dtype(n))
    weights = None if w is None else w[entry].astype(np.float64)
    return indptr, indices, weights, entry


def networkx_edges(G, weight=None, default=1):
    """(nodes, index, src, dst, weights or None) of networkx graph ``G``, vertex ids in ``list(G)`` order: every
    entry of its public adjacency once (an undirected edge from both ends), read by :func:`networkx_adjacency`."""
    adj = networkx_adjacency(G, weight, default)
    return adj.nodes, adj.index, adj.rows(), adj.indices, adj.weights


def graph_of_adjacency(adj: NetworkxAdjacency, weights=None) -> tuple:
    """(mgraph Graph, entry) of ``adj``: the simple graph (see :func:`simple_csr`), weights as given (default
    ``adj.weights``; None stores it unweighted, as does an array of ones), labelled by ``adj.nodes``."""
    indptr, indices, w, entry = simple_csr(adj, weights)
    if w is not None and not bool(np.isfinite(w).all()):
        raise ValueError("weights contain NaN or infinite values")
    if w is not None and bool(np.all(w == 1)):
        w = None  # every weight 1: the unweighted graph gives the same numbers with less memory
    arcs = int(indices.shape[0])
    graph = Graph(indptr, indices, w, directed=adj.directed, num_input_edges=arcs if adj.directed else arcs // 2)
    return _set_labels(graph, label_array(adj.nodes), adj.index), entry


def from_networkx(G, weight=None) -> Graph:
    """An mgraph Graph of networkx graph ``G`` (Graph, DiGraph, MultiGraph or MultiDiGraph), labelled by its nodes.

    Vertex i is ``list(G)[i]`` (``graph.labels``).  ``G`` is read through its
    public adjacency ``G.adj``, so a subclass that redefines it is converted
    as it presents itself.  ``weight`` names the edge attribute holding
    weights; an edge without it weighs 1, as in networkx, and a graph where
    every weight is 1 is stored unweighted (the same results, less memory).
    None (the default): unweighted.  Self-loops are dropped and the parallel
    edges of a multigraph merge into one with the smallest weight (what
    shortest paths use; networkx's pagerank instead sums parallel edges, so
    the NetworkX backend declines pagerank on multigraphs).
    """
    if not _is_networkx(G):
        raise ValueError(f"expected a networkx graph, got {type(G).__name__}")
    if weight is not None and not isinstance(weight, str):
        raise ValueError(f"weight must be None or the name of an edge attribute, got {weight!r}")
    graph, _ = graph_of_adjacency(networkx_adjacency(G, weight))
    return graph


# -- scipy.sparse ---------------------------------------------------------------


def _is_scipy_sparse(obj) -> bool:
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(obj)


def _is_symmetric(graph: Graph) -> bool:
    """Whether directed ``graph`` holds every arc both ways with equal weights: its CSR equals its transpose's."""
    rev = graph.reverse()
    if not (np.array_equal(graph.indptr, rev.indptr) and np.array_equal(graph.indices, rev.indices)):
        return False
    return graph.weights is None or bool(np.array_equal(graph.weights, rev.weights))


def from_scipy(matrix, directed=None) -> Graph:
    """An mgraph Graph of a scipy.sparse adjacency matrix or array: entry (i, j) is an arc i -> j, its value the weight.

    ``directed=None`` reads the matrix: undirected where it is symmetric
    (pattern and values), else directed.  ``directed=False`` on a matrix that
    is not symmetric is a ValueError (taking it as undirected would have to
    pick one of two weights, or invent edges).  Every stored entry is an arc,
    explicit zeros too (weight 0); a boolean matrix is a pattern (unweighted).
    The diagonal (self-loops) is dropped and duplicate entries of an
    unsummed COO matrix keep the smallest value, as mgraph's loaders do;
    symmetry is judged after both.  No labels: vertex i is row and column i.
    """
    if not _is_scipy_sparse(matrix):
        raise ValueError(f"expected a scipy.sparse matrix or array, got {type(matrix).__name__}")
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise ValueError(f"directed must be None, True or False, got {directed!r}")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"an adjacency matrix must be square, got shape {matrix.shape}")
    coo = matrix.tocoo()
    w = None if coo.data.dtype == np.bool_ else coo.data
    graph = Graph.from_edges(coo.row, coo.col, w, num_vertices=matrix.shape[0], directed=True)
    if directed:
        return graph
    if not _is_symmetric(graph):
        if directed is None:
            return graph
        raise ValueError("directed=False, but the matrix is not symmetric (entry (i, j) without an equal (j, i)); "
                         "pass directed=True, or directed=None to let the matrix decide")
    return Graph(graph.indptr, graph.indices, graph.weights, directed=False, num_input_edges=graph.num_arcs // 2)


# -- pandas ---------------------------------------------------------------------


def _is_pandas(obj) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def from_pandas(df, source="source", target="target", weight=None, directed=False) -> Graph:
    """An mgraph Graph of an edge list in a pandas DataFrame: one edge per row, from ``source`` to ``target``.

    The two columns hold labels (any hashable values); ``graph.labels`` keeps
    them, sorted where they can be ordered (all numbers, or all strings),
    else in order of first appearance row by row.  ``weight`` names a numeric
    column of weights (None: unweighted).  ``directed=False``: each row is an
    undirected edge.  Self-loops are dropped and duplicate rows merge keeping
    the smallest weight.  A missing value (NaN, None) in a column is a ValueError.
    """
    pd = import_pandas("mgraph.from_pandas")
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if not isinstance(directed, (bool, np.bool_)):
        raise ValueError(f"directed must be True or False, got {directed!r}")
    for role, col in (("source", source), ("target", target)) + ((("weight", weight),) if weight is not None else ()):
        if col not in df.columns:
            raise ValueError(f"{role} column {col!r} is not in the DataFrame (its columns: "
                             f"{', '.join(map(repr, df.columns))})")
    s, t = df[source].to_numpy(), df[target].to_numpy()
    # row by row (s0, t0, s1, t1, ...) for the first-appearance order; numbers stay numbers (fast to hash), anything
    # else goes as objects
    same_numbers = s.dtype == t.dtype and s.dtype.kind in "iuf"
    ends = np.empty((len(df), 2), dtype=s.dtype if same_numbers else object)
    ends[:, 0], ends[:, 1] = s, t
    flat = ends.ravel()
    try:
        codes, uniques = pd.factorize(flat, sort=True)
    except TypeError:  # labels that cannot be ordered together (numbers and strings, tuples of both)
        codes, uniques = pd.factorize(flat, sort=False)
    if codes.size and codes.min() < 0:
        pos = int(np.argmax(codes < 0))
        raise ValueError(f"{('source', 'target')[pos % 2]} column {(source, target)[pos % 2]!r} holds a missing value "
                         f"(NaN or None) in row {pos // 2}")
    w = None
    if weight is not None:
        col = df[weight]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            raise ValueError(f"weight column {weight!r} must hold real numbers, got dtype {col.dtype}")
        w = col.to_numpy(dtype=np.float64, na_value=np.nan)
    codes = codes.astype(np.int64, copy=False)
    graph = Graph.from_edges(codes[0::2], codes[1::2], w, num_vertices=len(uniques), directed=bool(directed))
    return _set_labels(graph, label_array(np.asarray(uniques, dtype=object).tolist()))


# -- any of them ----------------------------------------------------------------


def as_graph(obj):
    """``obj`` as a graph the run functions take: an mgraph Graph (or PartitionedGraph) as it is, else converted.

    A networkx graph converts with :func:`from_networkx` using its ``"weight"``
    edge attribute (networkx's default for weighted algorithms; a graph without
    it is unweighted); a scipy.sparse matrix with :func:`from_scipy`
    (directed unless symmetric); a DataFrame with :func:`from_pandas` (columns
    ``source``, ``target`` and, where present, ``weight``; undirected).  The
    converters themselves take the other choices.  Anything else is a ValueError.
    """
    if isinstance(obj, (Graph, PartitionedGraph)):
        return obj
    if getattr(obj, "__networkx_backend__", None) == "mgraph":  # a graph the NetworkX backend converted
        return obj.graph
    if _is_networkx(obj):
        return from_networkx(obj, weight="weight")
    if _is_scipy_sparse(obj):
        return from_scipy(obj)
    if _is_pandas(obj):
        return from_pandas(obj, weight="weight" if "weight" in obj.columns else None)
    raise ValueError(f"expected {ACCEPTED}, got {type(obj).__name__}")


def accepts_graphs(fn):
    """Decorate a run function so that it takes any graph :func:`as_graph` converts, labelled ones by their labels.

    The function's ``graph`` argument goes through :func:`as_graph`.  When the
    graph carries labels (from a converter), ``source`` and ``sources`` are
    labels, mapped to vertex ids here, and the returned :class:`Result`
    keeps the labels, so ``to_dict``/``to_pandas`` key results by them.
    Code that runs on vertex ids (the NetworkX backend) passes unlabelled graphs.
    """
    if getattr(fn, "accepts_graphs", False):  # already wrapped: mapping labels twice would read ids as labels
        return fn
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:  # a wrong call: let the function say so itself
            return fn(*args, **kwargs)
        graph = as_graph(bound.arguments.get("graph"))
        bound.arguments["graph"] = graph
        labels = getattr(graph, "labels", None)
        if labels is not None:
            for key in ("source", "sources"):
                if bound.arguments.get(key) is not None:
                    bound.arguments[key] = vertex_ids(graph, bound.arguments[key], key)
        result = fn(*bound.args, **bound.kwargs)
        if labels is not None and isinstance(result, Result):
            result._vertex_labels = labels
        return result

    call.accepts_graphs = True
    return call

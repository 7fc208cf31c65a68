"""Shared test graphs, independent reference conversions and result checks.

Every test graph is a :class:`Case`: the raw input edge list (possibly with
self-loops and duplicates), the :class:`mgraph.Graph` built from it, and
reference structures (networkx, scipy) built *independently* from the raw
input by :func:`simple_edges` -- not from the mgraph CSR -- so that a bug in
graph construction shows up as a wrong answer rather than being copied into
the reference.

The real graphs in tests/data are read with scipy.io.mmread / numpy.loadtxt
here, not with mgraph.io.
"""
from __future__ import annotations

import functools
import inspect
import os
import re
from collections import deque

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import mgraph
from mgraph.backend import gpu_available

DATA = os.path.join(os.path.dirname(__file__), "data")


# -- pytest hooks --------------------------------------------------------------
SPAWNS = re.compile(r"\b(run_mpi|subprocess\.|Popen|mpiexec_path)\b")  # what starts a process of its own


def _spawners(module) -> set:
    """The names of ``module``'s functions that start a process (directly, or through another such function)."""
    funcs = {name: f for name, f in vars(module).items() if inspect.isfunction(f) and f.__module__ == module.__name__}
    sources = {}
    for name, f in funcs.items():
        try:
            sources[name] = inspect.getsource(f)
        except (OSError, TypeError):
            sources[name] = ""
    found = {name for name, src in sources.items() if SPAWNS.search(src)}
    while True:
        more = {name for name, src in sources.items() if name not in found
                and any(re.search(rf"\b{re.escape(f)}\(", src) for f in found)}
        if not more:
            return found
        found |= more


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test that starts a process (an MPI job, the CLI or a script in a subprocess), so that
    ``-m "not slow"`` is the quick loop; skip ``gpu``-marked tests on machines without CuPy and a CUDA device."""
    spawners = {}
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        module = inspect.getmodule(fn)
        if module not in spawners:
            spawners[module] = _spawners(module) if module is not None else set()
        if fn.__name__ in spawners[module]:
            item.add_marker(pytest.mark.slow)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and CuPy (mgraph.backend.gpu_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _gpu_warnings_are_errors(request):
    """In a GPU test, CuPy's PerformanceWarning is an error: it says that an array was used on a device other than
    its own (peer access switched on behind the code's back), which is a worker or rank on the wrong device."""
    if "gpu" not in request.keywords or not gpu_available():
        yield
        return
    import warnings

    from cupy._util import PerformanceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        yield


# -- independent simplification and conversions --------------------------------
def simple_edges(src, dst, weights=None, directed=False):
    """The simple graph of an edge list, computed with plain Python dicts.

    Self-loops dropped; duplicates (for undirected graphs, in either
    orientation) merged keeping the smallest weight.  Returns a dict
    {(u, v): w} with u < v for undirected graphs (w is 1.0 when unweighted).
    """
    out = {}
    ws = [1.0] * len(src) if weights is None else [float(x) for x in weights]
    for u, v, w in zip(np.asarray(src).tolist(), np.asarray(dst).tolist(), ws):
        u, v = int(u), int(v)
        if u == v:
            continue
        if not directed and u > v:
            u, v = v, u
        if (u, v) not in out or w < out[(u, v)]:
            out[(u, v)] = w
    return out


def edges_to_networkx(edges: dict, n: int, directed: bool, weighted: bool):
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    if weighted:
        G.add_weighted_edges_from((u, v, w) for (u, v), w in edges.items())
    else:
        G.add_edges_from(edges)
    return G


def edges_to_scipy(edges: dict, n: int, directed: bool):
    """CSR with explicit zeros kept (scipy.sparse.csgraph treats them as zero-weight edges)."""
    if edges:
        uv = np.array(list(edges.keys()), dtype=np.int64)
        w = np.array(list(edges.values()), dtype=np.float64)
    else:
        uv, w = np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    r, c = uv[:, 0], uv[:, 1]
    if not directed:
        r, c, w = np.concatenate([r, c]), np.concatenate([c, r]), np.concatenate([w, w])
    # no duplicates remain, so COO -> CSR sums nothing; explicit zeros stay stored
    return sp.csr_matrix((w, (r, c)), shape=(n, n))


def to_networkx(graph: mgraph.Graph):
    """An mgraph Graph as a networkx (Di)Graph, via ``graph.edges()`` (weights as 'weight')."""
    src, dst, w = graph.edges()
    G = nx.DiGraph() if graph.directed else nx.Graph()
    G.add_nodes_from(range(graph.num_vertices))
    if w is None:
        G.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    return G


def hub_digraph(n, m, seed=3):
    """A directed graph of ``n`` vertices and about ``m`` arcs, half from Zipf-drawn out-hubs and half into Zipf-drawn
    in-hubs (no self-loops): rows and reverse rows far longer than the rest."""
    rng = np.random.default_rng(seed)
    src = np.concatenate([(rng.zipf(1.6, m // 2) - 1) % n, rng.integers(0, n, m // 2)])
    dst = np.concatenate([rng.integers(0, n, m // 2), (rng.zipf(1.6, m // 2) - 1) % n])
    keep = src != dst
    return mgraph.Graph.from_edges(src[keep], dst[keep], num_vertices=n, directed=True)


class Case:
    """A named test graph: raw input, the mgraph Graph, and independent references."""

    def __init__(self, name, src, dst, weights=None, *, num_vertices=None, directed=False):
        self.name = name
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.directed = directed
        hi = int(max(self.src.max(), self.dst.max())) if self.src.size else -1
        self.n = int(num_vertices) if num_vertices is not None else hi + 1
        self.graph = mgraph.Graph.from_edges(self.src, self.dst, self.weights, num_vertices=num_vertices,
                                             directed=directed)
        self.weighted = self.weights is not None

    @functools.cached_property
    def edges(self) -> dict:
        return simple_edges(self.src, self.dst, self.weights, self.directed)

    @functools.cached_property
    def nx(self):
        return edges_to_networkx(self.edges, self.n, self.directed, self.weighted)

    @functools.cached_property
    def csr(self):
        """scipy CSR (weights, or ones) built from the independent simplification."""
        return edges_to_scipy(self.edges, self.n, self.directed)

    @functools.cached_property
    def out_arcs(self):
        """{u: [(v, w), ...]} over stored arcs (both directions for undirected)."""
        adj = {u: [] for u in range(self.n)}
        for (u, v), w in self.edges.items():
            adj[u].append((v, w))
            if not self.directed:
                adj[v].append((u, w))
        return adj

    @functools.cached_property
    def arc_weight(self) -> dict:
        d = {}
        for u, lst in self.out_arcs.items():
            for v, w in lst:
                d[(u, v)] = w
        return d

    def __repr__(self):
        return f"Case({self.name})"


# -- graph builders -------------------------------------------------------------
def path_graph(n=200, directed=False, weighted=False):
    src, dst = np.arange(n - 1), np.arange(1, n)
    w = (np.arange(n - 1) % 3 + 0.5) if weighted else None
    return Case(f"path{n}{'_dir' if directed else ''}{'_w' if weighted else ''}", src, dst, w, directed=directed)


def star_graph(leaves=300, directed=False):
    """Hub 0 joined to leaves 1..leaves (directed: hub -> leaf, so leaves dangle)."""
    src, dst = np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1)
    return Case(f"star{leaves}{'_dir' if directed else ''}", src, dst, directed=directed)


def grid_graph(w=20, h=15, weighted=False, seed=3):
    ids = np.arange(w * h).reshape(h, w)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    wt = np.random.default_rng(seed).uniform(0.1, 2.0, src.size) if weighted else None
    return Case(f"grid{w}x{h}{'_w' if weighted else ''}", src, dst, wt)


def random_graph(n=400, m=1600, *, directed, extra_isolated=25, weights=None, seed=0, name=None):
    """Random multigraph input (self-loops and duplicates included) with isolated vertices.

    Vertices ``n .. n+extra_isolated-1`` never appear in the edge list
    (num_vertices > max id + 1); some ids below n are isolated too.
    ``weights``: None, "int" (0..9, zeros included) or "float" (uniform).
    """
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    # isolate a few ids below n as well
    lonely = rng.choice(n, size=max(n // 40, 1), replace=False)
    keep = ~(np.isin(src, lonely) | np.isin(dst, lonely))
    src, dst = src[keep], dst[keep]
    # deliberate self-loops and duplicate edges (with different weights)
    src = np.concatenate([src, src[:10], [src[0], src[1]]])
    dst = np.concatenate([dst, dst[:10], [src[0], src[1]]])
    if weights == "int":
        w = rng.integers(0, 10, src.size).astype(np.float64)
    elif weights == "float":
        w = rng.uniform(0.0, 5.0, src.size)
    else:
        w = None
    name = name or f"rand{n}_{'dir' if directed else 'und'}{'_' + weights if weights else ''}"
    return Case(name, src, dst, w, num_vertices=n + extra_isolated, directed=directed)


def zero_weight_graph(directed=True):
    """Zero-weight edges and zero-weight cycles, reachable and unreachable, plus a tie.

    0 -1-> 1 -0-> 2 -0-> 3 -0-> 1   (zero cycle 1-2-3)
    3 -2-> 4 <-5- 1                 (4 at distance 3 via the cycle, not 6)
    4 -0-> 5 -0-> 4                 (zero 2-cycle)
    5 -0-> 6, 0 -4-> 6              (6 at distance 3, not 4)
    7 -0-> 8 -0-> 7 -1-> 6          (a zero cycle unreachable from 0)
    0 -3-> 9, 2 -2-> 9              (a tie: two shortest paths into 9, both of length 3)
    9 -0-> 0                        (a zero arc back into the source)
    10 isolated
    """
    e = [(0, 1, 1), (1, 2, 0), (2, 3, 0), (3, 1, 0), (3, 4, 2), (1, 4, 5), (4, 5, 0), (5, 4, 0),
         (5, 6, 0), (0, 6, 4), (7, 8, 0), (8, 7, 0), (7, 6, 1), (0, 9, 3), (2, 9, 2), (9, 0, 0)]
    src, dst, w = (np.array(c) for c in zip(*e))
    return Case(f"zero_{'dir' if directed else 'und'}", src, dst, w.astype(float), num_vertices=11,
                directed=directed)


def zero_heavy_random(n=300, m=1200, directed=True, seed=11):
    """A random graph whose weights are mostly 0 (many zero-weight cycles)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.choice([0.0, 0.0, 0.0, 1.0, 2.5], size=m)
    return Case(f"zero_heavy_{'dir' if directed else 'und'}", src, dst, w, num_vertices=n + 5, directed=directed)


def disconnected_graph():
    """Components: a triangle {0,1,2}, a path {3..7}, a star {10..15} whose smallest id is reached late,
    isolated 8, 9, 16..19; edges given out of order so labels are not trivially the first vertex seen."""
    e = [(2, 1), (1, 0), (0, 2), (7, 6), (6, 5), (5, 4), (4, 3), (15, 11), (15, 12), (15, 13), (15, 14), (14, 10)]
    src, dst = (np.array(c) for c in zip(*e))
    return Case("disconnected", src, dst, num_vertices=20)


def disconnected_directed_graph():
    """Weak components whose smallest id is not a source of any arc (tests *weak* connectivity)."""
    e = [(5, 0), (5, 1), (2, 5), (9, 8), (7, 8), (12, 11), (11, 10), (3, 12)]
    src, dst = (np.array(c) for c in zip(*e))
    return Case("disconnected_dir", src, dst, num_vertices=14, directed=True)


def _read_chesapeake():
    m = scipy.io.mmread(os.path.join(DATA, "chesapeake.mtx"), spmatrix=False).tocoo()
    # 1-based vertices 1..39 in the file; mmread makes them 0-based
    return m.row.astype(np.int64), m.col.astype(np.int64), m.shape[0]


def chesapeake(directed=False):
    r, c, n = _read_chesapeake()
    if directed:  # one orientation per edge: a DAG
        keep = r < c
        r, c = r[keep], c[keep]
    return Case(f"chesapeake{'_dir' if directed else ''}", r, c, num_vertices=n, directed=directed)


@functools.lru_cache(maxsize=1)
def _read_facebook():
    a = np.loadtxt(os.path.join(DATA, "facebook_large_edges.csv"), delimiter=",", skiprows=1, dtype=np.int64)
    return a[:, 0].copy(), a[:, 1].copy()


def facebook(directed=False, weighted=False):
    """musae facebook page-page graph: 22,470 vertices, 171,002 input edges (179 self-loops)."""
    s, d = _read_facebook()
    w = np.random.default_rng(7).integers(1, 20, s.size).astype(float) if weighted else None
    return Case(f"facebook{'_dir' if directed else ''}{'_w' if weighted else ''}", s, d, w, directed=directed)


BUILDERS = {
    "path200": lambda: path_graph(200),
    "path200_dir": lambda: path_graph(200, directed=True),
    "path200_w": lambda: path_graph(200, weighted=True),
    "path60": lambda: path_graph(60),
    "star300": lambda: star_graph(300),
    "star300_dir": lambda: star_graph(300, directed=True),
    "grid20x15": lambda: grid_graph(20, 15),
    "grid20x15_w": lambda: grid_graph(20, 15, weighted=True),
    "grid8x6": lambda: grid_graph(8, 6),
    "rand_und": lambda: random_graph(400, 1600, directed=False, seed=1),
    "rand_dir": lambda: random_graph(400, 1600, directed=True, seed=2),
    "rand_und_int": lambda: random_graph(400, 1600, directed=False, weights="int", seed=3),
    "rand_dir_int": lambda: random_graph(400, 1600, directed=True, weights="int", seed=4),
    "rand_und_float": lambda: random_graph(400, 1600, directed=False, weights="float", seed=5),
    "rand_dir_float": lambda: random_graph(400, 1600, directed=True, weights="float", seed=6),
    "rand_dir_sparse": lambda: random_graph(500, 700, directed=True, seed=8, name="rand_dir_sparse"),
    "small_und": lambda: random_graph(90, 260, directed=False, extra_isolated=5, seed=9, name="small_und"),
    "small_dir": lambda: random_graph(90, 330, directed=True, extra_isolated=5, seed=10, name="small_dir"),
    "zero_dir": lambda: zero_weight_graph(directed=True),
    "zero_und": lambda: zero_weight_graph(directed=False),
    "zero_heavy_dir": lambda: zero_heavy_random(directed=True),
    "zero_heavy_und": lambda: zero_heavy_random(directed=False, seed=12),
    "disconnected": disconnected_graph,
    "disconnected_dir": disconnected_directed_graph,
    "chesapeake": lambda: chesapeake(),
    "chesapeake_dir": lambda: chesapeake(directed=True),
    "facebook": lambda: facebook(),
    "facebook_dir": lambda: facebook(directed=True),
    "facebook_w": lambda: facebook(weighted=True),
}


@functools.lru_cache(maxsize=None)
def get_case(name: str) -> Case:
    return BUILDERS[name]()


@pytest.fixture
def case(request):
    """Indirect fixture: ``@pytest.mark.parametrize("case", ["path200", ...], indirect=True)``."""
    return get_case(request.param)


# -- independent checks of results -----------------------------------------------
def bfs_reference(case: Case, source: int) -> np.ndarray:
    """Hop distances by a plain Python BFS over the independent adjacency (-1 unreached)."""
    depth = np.full(case.n, -1, dtype=np.int64)
    depth[source] = 0
    q = deque([source])
    adj = case.out_arcs
    while q:
        u = q.popleft()
        for v, _ in adj[u]:
            if depth[v] < 0:
                depth[v] = depth[u] + 1
                q.append(v)
    return depth


def check_bfs_tree(case: Case, source: int, depth, pred):
    """Graph500-style: pred[source]==source; each reached v != source has pred an in-neighbour one level up;
    unreached vertices have depth -1 and pred -1; following preds reaches the source."""
    depth, pred = np.asarray(depth), np.asarray(pred)
    assert pred[source] == source and depth[source] == 0
    unreached = depth < 0
    assert np.all(depth[unreached] == -1), "unreached depth must be -1"
    assert np.all(pred[unreached] == -1), f"unreached vertices with a predecessor: {np.flatnonzero(unreached & (pred != -1))[:10]}"
    for v in np.flatnonzero(~unreached).tolist():
        if v == source:
            continue
        u = int(pred[v])
        assert 0 <= u < case.n, f"vertex {v}: predecessor {u} out of range"
        assert (u, v) in case.arc_weight, f"vertex {v}: predecessor {u} is not an in-neighbour"
        assert depth[u] == depth[v] - 1, f"vertex {v} depth {depth[v]}: predecessor {u} has depth {depth[u]}"
    # depth strictly decreases along predecessor links, so the walk ends at the source (no cycles)


def check_sssp_tree(case: Case, source: int, dist, pred, rtol=1e-12, atol=1e-12):
    """pred is a shortest-path tree: tight arcs (dist[u] + w == dist[v]), acyclic, rooted at source,
    defined exactly on the reached vertices."""
    dist, pred = np.asarray(dist), np.asarray(pred)
    assert pred[source] == source and dist[source] == 0.0
    reached = np.isfinite(dist)
    assert np.all(pred[~reached] == -1), "unreached vertices must have predecessor -1"
    for v in np.flatnonzero(reached).tolist():
        if v == source:
            continue
        u = int(pred[v])
        assert 0 <= u < case.n and reached[u], f"vertex {v}: bad predecessor {u}"
        w = case.arc_weight.get((u, v))
        assert w is not None, f"vertex {v}: predecessor {u} is not an in-neighbour"
        assert np.isclose(dist[u] + w, dist[v], rtol=rtol, atol=atol), \
            f"arc {u}->{v} not tight: {dist[u]} + {w} != {dist[v]}"
    # acyclic: walk every reached vertex to the root with memoisation
    state = np.zeros(case.n, dtype=np.int8)  # 0 unknown, 1 on current walk, 2 reaches source
    state[source] = 2
    for v in np.flatnonzero(reached).tolist():
        walk = []
        x = v
        while state[x] == 0:
            state[x] = 1
            walk.append(x)
            x = int(pred[x])
        assert state[x] == 2, f"predecessor cycle through vertex {x} (walk from {v})"
        for y in walk:
            state[y] = 2


# -- MPI jobs ------------------------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mpiexec_path():
    """The ``mpiexec`` beside this Python (the test extra installs MPICH's into the virtual environment), else
    the one on PATH; None when there is none."""
    import shutil
    import sys

    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


def load_script(name: str):
    """scripts/NAME.py as a module (the scripts are not a package: they run from a checkout)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_script", os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_mpi(ranks: int, args, *, cwd=None, timeout=240, env=None):
    """``mpiexec -n ranks args`` with this Python and the source tree on PYTHONPATH; the CompletedProcess.

    The job runs on the CPU (MGRAPH_BACKEND=numpy): each rank one virtual device.
    """
    import subprocess
    import sys

    exe = mpiexec_path()
    if exe is None:
        pytest.fail("mpiexec not found: install the test extra (pip install -e '.[test]' brings mpich and mpi4py)")
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
                    MGRAPH_BACKEND="numpy", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    full_env.update(env or {})
    cmd = [exe, "-n", str(ranks)] + [sys.executable if a == "python" else str(a) for a in args]
    return subprocess.run(cmd, cwd=cwd or ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)


# -- a user's functor, shared by the operator tests on the CPU and their GPU twins ------------------------------
def _reach_twin(u, v, w, label, level):
    claim = mgraph.ops.first_claims(v, label[v] == -1)
    label[v[claim]] = level
    return claim


REACH = mgraph.ops.Functor("reach", "int* label, int level",
                           "if (label[v] == -1 && atomicCAS(&label[v], -1, level) == -1) emit = true;", _reach_twin)
"""Claims each unvisited out-neighbour once, with label ``level``, as a user's reachability would."""

"""The public run functions: one call from a Graph to results with ``.stats``.

Results are NumPy arrays by default; ``output="device"`` keeps them where the
run's device has them (CuPy arrays on a GPU), so a pipeline that goes on on
the GPU pays no copy to the host.

Every function takes the run options by keyword (checked once, in
mgraph.runner.options.RunOptions): ``backend``, ``devices``, ``partitioner``,
``duplication``, ``communication``, ``seed``, ``workers``, ``gather``,
``output``, ``threads`` (the CPU threads of the compiled kernels for this
run: default ``NUMBA_NUM_THREADS`` where set, else this process's cores
divided among the MPI ranks of its node; ``devices=P`` worker threads divide
them, each device taking threads // P) and ``max_supersteps``, the supersteps one source's run may take
(default ``4 * num_vertices + 1000``, at least what the primitive's own limit
needs, such as PageRank's ``max_iter``): a run that reaches it ends with a
ContractError (a ValueError) naming the primitive, the phase and the
superstep.  Sources, where a function takes a list of them, must name at
least one vertex (an empty list is a ValueError everywhere).
"""
from __future__ import annotations

import functools
import math
import numbers
import time
import warnings

import numpy as np

from mgraph.backend import array_module
from mgraph.graph import Graph, index_dtype
from mgraph.primitives.bc import BC
from mgraph.primitives.bfs import BFS
from mgraph.primitives.cc import CC
from mgraph.primitives.kcore import KCore
from mgraph.primitives.louvain import Leiden, Louvain, check_resolution
from mgraph.primitives.lpa import LabelPropagation
from mgraph.primitives.pagerank import PageRank
from mgraph.primitives.scc import SCC
from mgraph.primitives.sssp import SSSP
from mgraph.primitives.triangles import Triangles

from mgraph.convert import accepts_graphs
from mgraph.runner import launch
from mgraph.runner.launch import check_primitive, declared, deliver, primitive_name, run_alone
from mgraph.runner.launch import run as run_on
from mgraph.runner.options import RUN_OPTIONS, WORKERS, RunOptions  # noqa: F401 - the run options' names, public here
from mgraph.result import Result

SELECTIVE, BROADCAST = "selective", "broadcast"  # the seed's defaults: broadcast where every device needs the whole frontier


def _check_vertex(graph, v, what="source"):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{what} must be an integer vertex id, got {v!r}")
    if not 0 <= v < graph.num_vertices:
        raise ValueError(f"{what} {v} is out of range: the graph has {graph.num_vertices} vertices")
    return int(v)


def _check_sources(graph, sources, empty_hint) -> list:
    """``sources`` (an int vertex id, or a 1-D sequence or integer array of them) as a non-empty list of ints.

    Floats are refused even where whole (``1.0``): a vertex id computed in
    floating point has usually lost something on the way, and ``int()`` would
    hide it.  A string is refused rather than read as a sequence of characters.
    An empty sequence is refused the same way by every function (``empty_hint``
    says what to pass instead): a run from no source has no defined result.
    """
    if isinstance(sources, numbers.Integral) and not isinstance(sources, bool):
        return [_check_vertex(graph, sources, "sources")]
    if isinstance(sources, np.ndarray):
        if sources.ndim != 1:
            raise ValueError(f"sources must be a vertex id or a 1-D sequence of them, "
                             f"got an array of shape {sources.shape}")
        if sources.size and sources.dtype.kind not in "iu":
            raise ValueError(f"sources must hold integer vertex ids, got dtype {sources.dtype}")
        sources = sources.tolist()
    elif isinstance(sources, (str, bytes)) or not hasattr(sources, "__iter__"):
        raise ValueError(f"sources must be None, a vertex id or a sequence of vertex ids, got {sources!r}")
    checked = [_check_vertex(graph, s, "source") for s in sources]
    if not checked:
        raise ValueError(f"sources is empty: give at least one source ({empty_hint})")
    return checked


def _check_real(value, what: str) -> float:
    """A finite real number (bool, strings, None and NaN refused) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite real number, got {value!r}")
    return float(value)


def _check_positive(value, what: str) -> float:
    value = _check_real(value, what)
    if value <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return value


def _place(graph, run: dict, communication: str, least_supersteps: int = 0) -> RunOptions:
    return RunOptions(graph, run, communication, least_supersteps=least_supersteps)


def prepare(graph, **run):
    """This MPI rank's part of ``graph`` (a PartitionedGraph) for the run options ``run``, built now or kept from
    an earlier run with the same options: what a caller needs before a run, such as the degrees of its own
    vertices to pick sources (PartitionedGraph.random_sources).  A ValueError outside an MPI job of several
    ranks, where the graph is whole in this process."""
    return launch.prepare(graph, run)


def run_backend(graph, **run):
    """The Backend (array module and device) of this process's first device in a run of ``graph`` with the run
    options ``run``; under MPI this rank's device, as the runs pick it."""
    return _place(graph, run, "selective").backends[0]


def _reached_arcs(key, reached):
    """A ``count`` for mgraph.runner.launch.run: the arcs out of a worker's own vertices that ``reached`` accepts
    (summed over the workers: the arcs of the traversed component), computed where the values live."""
    def count(part, own):
        # a product, not a mask's compaction: a compaction's size is a read before its gather (one read here)
        return {"arcs_traversed": int((_own_degrees(part) * reached(own[key])).sum())}
    return count


def _own_degrees(part):
    """Out-degrees of a worker's own vertices, in their order: a prefix where own vertices come first (a whole
    graph, a 1-hop part), so no gather; else gathered."""
    deg = part.out_degree()
    below = part.own_below
    return deg[:below] if below is not None else deg[part.own_vertices]


def _traversal_stats(graph, stats):
    """Graph500 TEPS (undirected input edges within the traversed component / time) and Gunrock's directed-edge TEPS."""
    arcs = stats["arcs_traversed"]
    edges = arcs if graph.directed else arcs // 2
    t = stats["elapsed_s"]
    stats.update(
        edges_in_component=edges,
        graph500_teps=edges / t if t > 0 else float("inf"),
        directed_edge_teps=arcs / t if t > 0 else float("inf"),
    )
    return stats


@accepts_graphs
def run(primitive, graph, source=None, *, sources=None, **run) -> Result:
    """Run a primitive of your own: ``primitive`` is a Primitive subclass or any ``graph -> Primitive``.

    The same single-device program runs on one device or, with ``devices=``,
    on several (see docs/write-a-primitive.md).  ``source`` (or a list of
    ``sources``, run one after another on the same primitive state) is a
    vertex in your numbering.  ``.stats`` as for the built-ins; the result
    arrays are the primitive's ``result()``, in your numbering.
    """
    check_primitive(primitive)
    place = _place(graph, run, SELECTIVE)
    if sources is None:
        sources = [None if source is None else _check_vertex(graph, source)]
    elif source is not None:
        raise ValueError("give source or sources, not both")
    else:  # nothing would run from no source, and a primitive's result() before any reset() is not defined
        sources = _check_sources(graph, sources, "or source=None for a run without one")
    wants = declared(primitive, "needs_source", None)
    if wants is True and sources == [None]:
        raise ValueError(f"{primitive_name(primitive)} needs a source (needs_source = True): give source= or sources=")
    if wants is False and sources != [None]:
        raise ValueError(f"{primitive_name(primitive)} takes no source (needs_source = False), got {sources}")
    arrays, stats, _ = run_on(place, primitive, sources)
    return Result(deliver(place, arrays), stats)



@accepts_graphs
def bfs(graph, source, *, direction="push", do_a=None, do_b=0.1, **run) -> Result:
    """Breadth-first search: ``.depth`` (-1 unreached) and ``.predecessor`` (source's is itself).

    ``direction``: "push" (top-down), "pull" (bottom-up) or "auto"
    (direction-optimizing with the seed paper's do_a/do_b switch rule);
    ``do_a`` and ``do_b`` are positive real numbers, ``do_a`` None the backend's (1e-5 on a GPU, 0.01 on the CPU:
    :class:`mgraph.ops.Direction`).
    """
    do_a = None if do_a is None else _check_positive(do_a, "do_a")
    do_b = _check_positive(do_b, "do_b")
    place = _place(graph, run, SELECTIVE if direction == "push" else BROADCAST)
    source = _check_vertex(graph, source)
    arrays, stats, prim = run_on(place, functools.partial(BFS, direction=direction, do_a=do_a, do_b=do_b), [source],
                                 count=_reached_arcs("depth", lambda depth: depth >= 0))
    stats["directions"] = prim.directions
    _traversal_stats(place.graph, stats)
    return Result(deliver(place, arrays, {"depth": np.int64, "predecessor": np.int64}), stats)


@accepts_graphs
def sssp(graph, source, **run) -> Result:
    """Single-source shortest paths: ``.distance`` (inf unreached) and a shortest-path-tree ``.predecessor``."""
    place = _place(graph, run, SELECTIVE)
    source = _check_vertex(graph, source)

    def negative(part):
        if part.weights is not None and part.num_arcs and bool((part.weights < 0).any()):
            return "sssp needs non-negative edge weights; this graph has negative weights"

    arrays, stats, _ = run_on(place, SSSP, [source], check=negative,
                              count=_reached_arcs("distance", _finite))
    _traversal_stats(place.graph, stats)
    return Result(deliver(place, arrays, {"distance": np.float64, "predecessor": np.int64}), stats)


def _finite(values):
    """Reached vertices of an SSSP (finite distance), on the values' own array module."""
    return array_module(values).isfinite(values)


@accepts_graphs
def connected_components(graph, **run) -> Result:
    """Weakly connected components: ``.labels`` is the smallest vertex id of each vertex's component."""
    place = _place(graph, run, BROADCAST)

    def roots(part, own):  # a component's label is its smallest vertex: count the vertices that are their label
        below = part.own_below
        ids = part.vertex_ids[:below] if below is not None else part.vertex_ids[part.own_vertices]
        return {"num_components": int((own["labels"] == ids).sum())}

    arrays, stats, _ = run_on(place, CC, count=roots)
    return Result(deliver(place, arrays, {"labels": np.int64}), stats)


@accepts_graphs
def strongly_connected_components(graph, **run) -> Result:
    """Strongly connected components of a directed graph: ``.labels`` is the largest vertex id of each vertex's
    component; ``.stats["num_components"]`` counts them, ``.stats["rounds"]`` the colouring rounds.  An
    undirected graph is a ValueError (its components are connected_components')."""
    if not graph.directed:
        raise ValueError("strongly_connected_components needs a directed graph; for an undirected one use "
                         "connected_components")
    # the bound the rounds provably stay within: each round assigns a component, and with k vertices left its
    # trimming, colouring and reach take at most k + 1 supersteps each (colours and labels only rise), so a graph
    # of one long colour chain after another may need about 3·n²/2; the default bound stays where it is larger
    n = graph.num_vertices
    place = _place(graph, run, SELECTIVE, least_supersteps=(n + 1) * (3 * n + 6) // 2 + 4)

    def roots(part, own):  # a component's label is its largest vertex: count the vertices that are their label
        below = part.own_below
        ids = part.vertex_ids[:below] if below is not None else part.vertex_ids[part.own_vertices]
        return {"num_components": int((own["labels"] == ids).sum())}

    arrays, stats, prim = run_on(place, SCC, count=roots)
    stats["rounds"] = prim.rounds
    return Result(deliver(place, arrays, {"labels": np.int64}), stats)


@accepts_graphs
def pagerank(graph, *, alpha=0.85, tol=1e-6, max_iter=100, shares="float64", **run) -> Result:
    """PageRank: ``.rank`` as networkx.pagerank computes it (uniform dangling redistribution, L1 stop at N·tol).

    ``alpha`` is a real number in [0, 1): 0 gives the uniform ranks, and 1
    (no teleport) is refused, since the undamped walk has no unique rank where
    the graph has several closed parts.  ``tol`` is a positive real number,
    ``max_iter`` a positive integer.  A graph without vertices is a ValueError.

    ``shares="float32"`` rounds the values each iteration gathers (rank /
    out-weight) to float32, halving the bytes of the gathers; ranks, sums and
    the stop test stay float64.  Each share is then within 2**-24 of itself
    (relative), so an iteration moves the ranks by at most alpha * 2**-24 in
    L1 (the ranks sum to 1) and the fixed point by at most
    alpha * 2**-24 / (1 - alpha): 3.4e-7 at alpha = 0.85, below the stop
    test's N * tol for any N at the default tol.
    """
    tol = _check_positive(tol, "tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    max_iter = int(max_iter)
    if not isinstance(shares, str) or shares not in PageRank.SHARES:
        raise ValueError(f"shares must be one of {', '.join(PageRank.SHARES)}, got {shares!r}")
    # one superstep to start, max_iter iterations, one to finish: the default superstep bound allows them
    place = _place(graph, run, SELECTIVE, least_supersteps=max_iter + 2)
    if graph.num_vertices == 0:
        raise ValueError("pagerank of an empty graph (0 vertices)")
    arrays, stats, prim = run_on(place, functools.partial(PageRank, alpha=alpha, tol=tol, max_iter=max_iter,
                                                          shares=shares))
    converged = prim.error < graph.num_vertices * prim.tol
    if not converged:
        warnings.warn(f"pagerank did not converge in {max_iter} iterations (L1 change {prim.error:.3g})", RuntimeWarning)
    stats.update(converged=converged, error=prim.error, shares=shares,
                 ms_per_iteration=1e3 * stats["elapsed_s"] / max(stats["iterations"], 1))
    return Result(deliver(place, arrays, {"rank": np.float64}), stats)


@accepts_graphs
def betweenness_centrality(graph, *, sources=None, **run) -> Result:
    """Unnormalized betweenness: ``.centrality`` summed over ``sources`` (all vertices when None).

    ``sources`` is None (every vertex), a vertex id, or a non-empty 1-D
    sequence (or integer array) of vertex ids; an empty one is a ValueError,
    as in every function that takes sources.  A graph without vertices gives
    an empty centrality array, with ``stats["sources"] == 0``.
    """
    place = _place(graph, run, SELECTIVE)
    if sources is None:
        sources = list(range(graph.num_vertices))
    else:
        sources = _check_sources(graph, sources, "or sources=None for every vertex")
    # a graph without vertices: one run from no vertex, which leaves the (empty) centrality at zero
    arrays, stats, _ = run_on(place, BC, sources or [None])
    stats["sources"] = len(sources)
    if len(sources) == 1:
        stats["last_source_frontier_sizes"] = stats["frontier_sizes"]
    stats.pop("frontier_sizes", None)
    return Result(deliver(place, arrays, {"centrality": np.float64}), stats)


@accepts_graphs
def triangles(graph, **run) -> Result:
    """Triangles through each vertex: ``.triangles`` (int64), as ``networkx.triangles``; ``stats["triangles"]`` is
    the graph's total.  Undirected graphs only (a directed one is a ValueError, as in networkx).  On several
    devices each part first fetches its proxies' arcs among the vertices it holds (``proxy_arcs``)."""
    place = _place(graph, run, SELECTIVE)
    arrays, stats, _ = run_on(place, Triangles, count=_own_sum("triangles"))
    stats["triangles"] = stats.pop("triangles_sum") // 3
    return Result(deliver(place, arrays, {"triangles": np.int64}), stats)


@accepts_graphs
def core_number(graph, **run) -> Result:
    """Core numbers: ``.core`` (int64), the largest k of a k-core that holds each vertex, as
    ``networkx.core_number`` (a directed graph's degree is in-degree plus out-degree)."""
    place = _place(graph, run, SELECTIVE)
    arrays, stats, _ = run_on(place, KCore)
    return Result(deliver(place, arrays, {"core": np.int64}), stats)


@accepts_graphs
def label_propagation(graph, **run) -> Result:
    """Communities by semi-synchronous label propagation: ``.labels`` (int64: the id of the vertex whose starting
    label the community kept), the communities ``networkx.algorithms.community.label_propagation_communities``
    finds (the same deterministic colouring and tie rule); ``stats["communities"]`` counts them where the labels
    are gathered.  Undirected graphs only."""
    place = _place(graph, run, SELECTIVE)
    arrays, stats, _ = run_on(place, LabelPropagation)
    labels = arrays.get("labels")
    if labels is not None and (place.gather or place.world is None):  # every vertex's label is here
        stats["communities"] = int(np.unique(labels).shape[0])
    return Result(deliver(place, arrays, {"labels": np.int64}), stats)


def _own_sum(key):
    def count(part, own):
        return {key + "_sum": int(own[key].sum())}
    return count



@accepts_graphs
def louvain(graph, *, resolution=1.0, threshold=1e-7, max_level=None, self_loops=None, **run) -> Result:
    """Communities by the Louvain method, as ``networkx.community.louvain_communities``: ``.community`` (int64, a
    community number per vertex, 0 .. communities - 1 in the order of the communities' labels; numbers, not vertex
    ids), ``stats["modularity"]`` (networkx's, with ``resolution``), ``stats["communities"]``,
    ``stats["level_modularity"]`` and ``stats["level_rounds"]`` (each level's rounds of local moving).

    ``resolution`` is networkx's gamma (a real number >= 0; above 1 favours
    smaller communities); a level whose modularity gain is at most
    ``threshold`` ends the run, as does ``max_level`` levels (a positive
    integer, or None).  Edge weights, where the graph has them, weigh the
    modularity; a directed graph gets the directed modularity (Dugué and
    Perez), as networkx does.  ``self_loops`` (one weight per vertex, or
    None) gives the self-loops that an mgraph Graph does not keep: networkx
    counts them, as communities reduced before.  Vertices move at once, ordered by priorities that
    ``seed`` (a run option, which also seeds the partitioner) draws: one
    seed gives the same communities on any number of devices.

    On several devices (or MPI ranks) the first level, the one over the whole
    graph, runs on the parts: each device moves its own vertices, the
    community labels of border vertices travel like CC's labels, and every
    device keeps the communities' degree totals, changed by the moves all
    devices publish each superstep.  The level ends with the coarse graph's
    arcs (one per pair of communities joined by an arc) on every device; the
    coarser levels, whose graphs are that small, run whole on one device in
    every process.
    """
    return _communities(graph, Louvain, resolution, threshold, max_level, self_loops, run)


@accepts_graphs
def leiden(graph, *, resolution=1.0, threshold=1e-7, max_level=None, self_loops=None, **run) -> Result:
    """Communities by the Leiden method (Traag, Waltman and van Eck 2019): Louvain's levels, each with a
    refinement of the communities into well-connected sub-communities, the coarser graph built on those (each
    starting in its community).  Arguments, result and devices as :func:`louvain`; undirected graphs only, as
    ``networkx.community.leiden_communities``."""
    if graph.directed:
        raise ValueError("leiden runs on undirected graphs, and this graph is directed (networkx's "
                         "leiden_communities refuses directed graphs too)")
    return _communities(graph, Leiden, resolution, threshold, max_level, self_loops, run)


def _communities(graph, cls, resolution, threshold, max_level, self_loops, run):
    """The levels of Louvain or Leiden: the first on the run's devices, the coarser ones whole on one device in
    every process (:func:`mgraph.runner.launch.run_alone`), each from the coarse graph the level before left on
    every device."""
    resolution = check_resolution(resolution)
    threshold = _check_real(threshold, "threshold")
    if max_level is not None and (isinstance(max_level, bool) or not isinstance(max_level, numbers.Integral)
                                  or max_level < 1):
        raise ValueError(f"max_level must be a positive integer or None, got {max_level!r}")
    seed = run.get("seed", 0)
    # a level's supersteps: two a round of moves, one a superstep of refinement, a few to start and end phases
    place = _place(graph, run, SELECTIVE, least_supersteps=3 * cls.MAX_SUPERSTEPS + 10)
    if graph.num_vertices == 0:
        raise ValueError(f"{cls.name} of an empty graph (0 vertices)")
    if self_loops is not None:
        self_loops = np.asarray(self_loops)
        if self_loops.shape != (graph.num_vertices,) or self_loops.dtype.kind not in "fiu" \
                or not np.isfinite(self_loops).all():
            raise ValueError(f"self_loops must be one finite real weight per vertex ({graph.num_vertices}), got "
                             f"{self_loops.dtype} of shape {self_loops.shape}")
        self_loops = self_loops.astype(np.float64)
    make = functools.partial(cls, resolution=resolution, seed=seed, loops=self_loops)
    def negative(part):
        if part.weights is not None and part.num_arcs and bool((part.weights < 0).any()):
            return f"{cls.name} needs non-negative edge weights (modularity's degrees); this graph has negative weights"

    arrays, stats, prim = run_on(place, make, check=negative)
    with place.backends[0].context():  # the coarse levels stay on the first device (its primitive's arrays)
        return _coarse_levels(place, arrays, stats, prim, cls, graph, resolution, threshold, max_level, seed)


def _coarse_levels(place, arrays, stats, prim, cls, graph, resolution, threshold, max_level, seed):
    """The levels after the first, each on the coarse graph the level before left, where the first device keeps it
    (on a GPU the coarse graphs, modularity and mapping never reach the host, where a level's arrays would be
    copied and worked on by one core), and each vertex's community through them."""
    t0 = time.perf_counter()
    directed = graph.directed
    M, q0 = prim.M, prim.history[0][1]
    mod, qs = q0, []
    rounds = [len(prim.history)]
    levels = [_level(prim)]  # (coarse graph pieces, partition of this level's vertices)
    while True:
        a, b, w, labels, part = levels[-1][:5]
        ends = _positions(labels, a, b)  # each arc's ends among the level's vertices: for Q and the coarse graph
        new_mod = _modularity(*ends, w, part, M, resolution)
        qs.append(new_mod)
        if new_mod - mod <= threshold or (max_level is not None and len(levels) >= max_level) \
                or labels.shape[0] == (levels[-2][3].shape[0] if len(levels) > 1 else graph.num_vertices):
            break
        mod = new_mod
        coarse, loops, start = _coarse_graph(*ends, w, labels, part, directed, cls.refine)
        levels[-1] = (None, None, None, *levels[-1][3:])  # its arcs are the coarse graph's now: not kept twice
        del a, b, w, ends
        results, prim = run_alone(coarse, place.backends[0],
                                  functools.partial(cls, resolution=resolution, seed=seed, loops=loops, start=start,
                                                    coarse=True))
        prim.M = M  # the coarse graph's weight is the graph's: Q's normalisation
        rounds.append(len(prim.history))
        levels.append(_level(prim, results))
    # each vertex's community: its label at level 1, then through each coarser graph's vertices
    first = place.backends[0]
    xp = first.xp
    final = xp.unique(levels[-1][4])
    community = arrays.get("community")
    if community is not None:
        label = first.asarray(community)
        sub = first.asarray(arrays.get("refined", community))
        for k in range(1, len(levels)):
            at, = _positions(levels[k - 1][3], sub)  # the coarse vertex of each vertex's sub-community
            label, sub = levels[k][5][at], levels[k][6][at]
        arrays = {name: a for name, a in arrays.items() if name != "refined"}
        arrays["community"] = xp.searchsorted(final, label).astype(np.int64)
    stats.update(modularity=qs[-1], resolution=resolution, level_modularity=qs, levels=len(levels), communities=int(final.shape[0]),
                 level_rounds=rounds,
                 coarse_levels_s=time.perf_counter() - t0)
    stats["elapsed_s"] += stats["coarse_levels_s"]
    return Result(deliver(place, arrays, {"community": np.int64}), stats, vertex_valued=())


def _level(prim, results=None):
    """A finished level, where its primitive's device keeps it: its coarse graph's arcs (a, b, w), vertices (labels)
    and each one's community, and the level's own per-vertex community and sub-community (a coarse level's; the
    first level's come from the run's arrays)."""
    out = list(prim.coarse_graph())
    if results is None:
        return (*out, None, None)
    return (*out, results["community"], results.get("refined", results["community"]))


def _positions(labels, *values):
    """Where each of every array of ``values`` is in ``labels`` (sorted, distinct, non-negative; every value is one
    of them), one array each: a table indexed by label where the labels are dense enough, a binary search per value
    elsewhere (over a coarse graph's tens of millions of arcs the searches took most of a GPU run's time).  One
    table and one read of the labels' bounds for all of them: a level's arcs' two ends are looked up once, for its
    modularity and its coarse graph both."""
    xp = array_module(labels)
    n = labels.shape[0]
    if n == 0:
        return tuple(xp.zeros(v.shape, dtype=np.int64) for v in values)
    low, top = (int(x) for x in labels[xp.asarray([0, n - 1])].tolist())
    top += 1
    if low < 0 or top > 4 * n + (1 << 20):
        return tuple(xp.searchsorted(labels, v) for v in values)
    table = xp.empty(top, dtype=np.int32 if n < 2**31 else np.int64)  # read only at the labels
    table[labels] = xp.arange(n, dtype=table.dtype)
    return tuple(table[v] for v in values)


def _modularity(ia, ib, w, part, M, resolution):
    """Q of the partition ``part`` (one community label per vertex) of the graph whose arcs, summed per pair of
    vertices, go from vertex ``ia`` to ``ib`` (positions; loops as ia == ib, weighed as the modularity counts
    them), with weights ``w``.  Its two sums in one read."""
    if M <= 0:
        return 0.0
    xp = array_module(ia)
    keys, inv = xp.unique(part, return_inverse=True)
    inv = inv.reshape(-1)
    ca, cb = inv[ia], inv[ib]  # each arc's ends' communities, numbered
    out = xp.bincount(ca, weights=w, minlength=keys.shape[0])
    into = xp.bincount(cb, weights=w, minlength=keys.shape[0])
    inside, square = xp.stack([w[ca == cb].sum(), (out * into).sum()]).tolist()
    return inside / M - resolution * square / M ** 2


def _coarse_graph(ia, ib, w, labels, part, directed, refined):
    """The next level's graph (vertices: ``labels`` in order; its arcs from ``ia`` to ``ib``, positions among them),
    its loops (per vertex, the weight of an edge from the vertex to itself) and, after Leiden's refinement, where
    each vertex starts (the smallest vertex of its community); None for Louvain, where each starts alone."""
    xp = array_module(ia)
    n = labels.shape[0]
    loop = ia == ib
    loops = xp.bincount(ia[loop], weights=w[loop], minlength=n) / (1.0 if directed else 2.0)
    ia, ib, w = ia[~loop], ib[~loop], w[~loop]  # sorted by (a, b): rows in order, each row's columns increasing
    indptr = xp.zeros(n + 1, dtype=np.int64)
    indptr[1:] = xp.cumsum(xp.bincount(ia, minlength=n))
    g = Graph(indptr, ib.astype(index_dtype(n)), w.astype(np.float64), directed=directed)
    start = None
    if refined:
        keys, inv = xp.unique(part, return_inverse=True)
        inv = inv.reshape(-1)
        first = xp.full(keys.shape[0], n, dtype=np.int64)
        xp.minimum.at(first, inv, xp.arange(n, dtype=np.int64))
        start = first[inv]
    return g, loops, start

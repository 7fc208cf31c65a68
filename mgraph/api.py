"""The public run functions: one call from a Graph to NumPy results with ``.stats``."""
from __future__ import annotations

import functools
import numbers
import warnings

import numpy as np

from primitives.bc import BC
from primitives.bfs import BFS
from primitives.cc import CC
from primitives.pagerank import PageRank
from primitives.sssp import SSSP

from .backend import to_numpy
from .launch import Placement
from .launch import run as run_on
from .result import Result

SELECTIVE, BROADCAST = "selective", "broadcast"  # the seed's defaults: broadcast where every device needs the whole frontier


def _check_vertex(graph, v, what="source"):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{what} must be an integer vertex id, got {v!r}")
    if not 0 <= v < graph.num_vertices:
        raise ValueError(f"{what} {v} is out of range: the graph has {graph.num_vertices} vertices")
    return int(v)


def _traversal_stats(graph, reached, stats):
    """Graph500 TEPS (undirected input edges within the traversed component / time) and Gunrock's directed-edge TEPS."""
    deg = to_numpy(graph.out_degree())
    arcs = int(deg[reached].sum())
    edges = arcs if graph.directed else arcs // 2
    t = stats["elapsed_s"]
    stats.update(
        edges_in_component=edges,
        arcs_traversed=arcs,
        graph500_teps=edges / t if t > 0 else float("inf"),
        directed_edge_teps=arcs / t if t > 0 else float("inf"),
    )
    return stats


def run(primitive, graph, source=None, *, sources=None, **run) -> Result:
    """Run a primitive of your own: ``primitive`` is a Primitive subclass or any ``graph -> Primitive``.

    The same single-device program runs on one device or, with ``devices=``,
    on several (see docs/write-a-primitive.md).  ``source`` (or a list of
    ``sources``, run one after another on the same primitive state) is a
    vertex in your numbering.  ``.stats`` as for the built-ins; the result
    arrays are the primitive's ``result()``, in your numbering.
    """
    if not callable(primitive):
        raise ValueError(f"primitive must be a Primitive subclass or a function graph -> Primitive, got {primitive!r}")
    place = Placement(graph, run, SELECTIVE)
    if sources is None:
        sources = [None if source is None else _check_vertex(graph, source)]
    elif source is not None:
        raise ValueError("give source or sources, not both")
    else:
        sources = [_check_vertex(graph, s) for s in sources]
    arrays, stats, _ = run_on(place, primitive, sources)
    return Result(arrays, stats)


def bfs(graph, source, *, direction="push", do_a=1e-5, do_b=0.1, **run) -> Result:
    """Breadth-first search: ``.depth`` (-1 unreached) and ``.predecessor`` (source's is itself).

    ``direction``: "push" (top-down), "pull" (bottom-up) or "auto"
    (direction-optimizing with the seed paper's do_a/do_b switch rule).
    """
    place = Placement(graph, run, SELECTIVE if direction == "push" else BROADCAST)
    source = _check_vertex(graph, source)
    arrays, stats, prim = run_on(place, functools.partial(BFS, direction=direction, do_a=do_a, do_b=do_b), [source])
    stats["directions"] = prim.directions
    depth = arrays["depth"].astype(np.int64)
    _traversal_stats(place.graph, depth >= 0, stats)
    return Result({"depth": depth, "predecessor": arrays["predecessor"].astype(np.int64)}, stats)


def sssp(graph, source, **run) -> Result:
    """Single-source shortest paths: ``.distance`` (inf unreached) and a shortest-path-tree ``.predecessor``."""
    place = Placement(graph, run, SELECTIVE)
    source = _check_vertex(graph, source)
    g = place.graph
    if g.weights is not None and bool((g.weights < 0).any()):
        raise ValueError("sssp needs non-negative edge weights; this graph has negative weights")
    arrays, stats, _ = run_on(place, SSSP, [source])
    dist = arrays["distance"].astype(np.float64)
    _traversal_stats(g, np.isfinite(dist), stats)
    return Result({"distance": dist, "predecessor": arrays["predecessor"].astype(np.int64)}, stats)


def connected_components(graph, **run) -> Result:
    """Weakly connected components: ``.labels`` is the smallest vertex id of each vertex's component."""
    place = Placement(graph, run, BROADCAST)
    arrays, stats, _ = run_on(place, CC)
    labels = arrays["labels"].astype(np.int64)
    stats["num_components"] = int(np.count_nonzero(labels == np.arange(labels.size)))
    return Result({"labels": labels}, stats)


def pagerank(graph, *, alpha=0.85, tol=1e-6, max_iter=100, **run) -> Result:
    """PageRank: ``.rank`` as networkx.pagerank computes it (uniform dangling redistribution, L1 stop at N·tol)."""
    place = Placement(graph, run, SELECTIVE)
    if graph.num_vertices == 0:
        raise ValueError("pagerank of an empty graph (0 vertices)")
    arrays, stats, prim = run_on(place, functools.partial(PageRank, alpha=alpha, tol=tol, max_iter=max_iter))
    converged = prim.error < graph.num_vertices * prim.tol
    if not converged:
        warnings.warn(f"pagerank did not converge in {max_iter} iterations (L1 change {prim.error:.3g})", RuntimeWarning)
    stats.update(converged=converged, error=prim.error,
                 ms_per_iteration=1e3 * stats["elapsed_s"] / max(stats["iterations"], 1))
    return Result({"rank": arrays["rank"].astype(np.float64)}, stats)


def betweenness_centrality(graph, *, sources=None, **run) -> Result:
    """Unnormalized betweenness: ``.centrality`` summed over ``sources`` (all vertices when None)."""
    place = Placement(graph, run, SELECTIVE)
    if sources is None:
        sources = range(graph.num_vertices)
    elif isinstance(sources, numbers.Integral):
        sources = [sources]
    sources = [_check_vertex(graph, s, "source") for s in list(sources)]
    arrays, stats, _ = run_on(place, BC, sources)
    stats["sources"] = len(sources)
    if len(sources) == 1:
        stats["last_source_frontier_sizes"] = stats["frontier_sizes"]
    stats.pop("frontier_sizes", None)
    return Result({"centrality": arrays["centrality"].astype(np.float64)}, stats)

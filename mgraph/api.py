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


def _reached_arcs(key, reached):
    """A ``count`` for mgraph.launch.run: the arcs out of a worker's own vertices that ``reached`` accepts
    (summed over the workers: the arcs of the traversed component), computed where the values live."""
    def count(part, own):
        deg = part.out_degree()[part.own_vertices]
        return {"arcs_traversed": int(deg[reached(own[key])].sum())}
    return count


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


def _typed(arrays, dtypes):
    """The result arrays in the API's dtypes (None off rank 0 under MPI); ``vertices`` kept where a rank keeps
    only its own (gather=False)."""
    out = {name: None if arrays[name] is None else arrays[name].astype(dtype) for name, dtype in dtypes.items()}
    if "vertices" in arrays:
        out["vertices"] = arrays["vertices"].astype(np.int64)
    return out


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
    arrays, stats, prim = run_on(place, functools.partial(BFS, direction=direction, do_a=do_a, do_b=do_b), [source],
                                 count=_reached_arcs("depth", lambda depth: depth >= 0))
    stats["directions"] = prim.directions
    _traversal_stats(place.graph, stats)
    return Result(_typed(arrays, {"depth": np.int64, "predecessor": np.int64}), stats)


def sssp(graph, source, **run) -> Result:
    """Single-source shortest paths: ``.distance`` (inf unreached) and a shortest-path-tree ``.predecessor``."""
    place = Placement(graph, run, SELECTIVE)
    source = _check_vertex(graph, source)

    def negative(part):
        if part.weights is not None and part.num_arcs and bool((part.weights < 0).any()):
            return "sssp needs non-negative edge weights; this graph has negative weights"

    arrays, stats, _ = run_on(place, SSSP, [source], check=negative,
                              count=_reached_arcs("distance", _finite))
    _traversal_stats(place.graph, stats)
    return Result(_typed(arrays, {"distance": np.float64, "predecessor": np.int64}), stats)


def _finite(values):
    """Reached vertices of an SSSP (finite distance), on the values' own array module."""
    from .backend import array_module

    return array_module(values).isfinite(values)


def connected_components(graph, **run) -> Result:
    """Weakly connected components: ``.labels`` is the smallest vertex id of each vertex's component."""
    place = Placement(graph, run, BROADCAST)

    def roots(part, own):  # a component's label is its smallest vertex: count the vertices that are their label
        ids = part.vertex_ids[part.own_vertices]
        return {"num_components": int((own["labels"] == ids).sum())}

    arrays, stats, _ = run_on(place, CC, count=roots)
    return Result(_typed(arrays, {"labels": np.int64}), stats)


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
    return Result(_typed(arrays, {"rank": np.float64}), stats)


def betweenness_centrality(graph, *, sources=None, **run) -> Result:
    """Unnormalized betweenness: ``.centrality`` summed over ``sources`` (all vertices when None)."""
    place = Placement(graph, run, SELECTIVE)
    if sources is None:
        sources = range(graph.num_vertices)
    elif isinstance(sources, numbers.Integral):
        sources = [sources]
    sources = [_check_vertex(graph, s, "source") for s in list(sources)]
    if not sources:
        raise ValueError("betweenness_centrality needs at least one source (sources=None means all vertices)")
    arrays, stats, _ = run_on(place, BC, sources)
    stats["sources"] = len(sources)
    if len(sources) == 1:
        stats["last_source_frontier_sizes"] = stats["frontier_sizes"]
    stats.pop("frontier_sizes", None)
    return Result(_typed(arrays, {"centrality": np.float64}), stats)

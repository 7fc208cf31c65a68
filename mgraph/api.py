"""The public run functions: one call from a Graph to NumPy results with ``.stats``."""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from primitives.bc import BC
from primitives.bfs import BFS
from primitives.cc import CC
from primitives.pagerank import PageRank
from primitives.sssp import SSSP

from .backend import resolve, to_numpy
from .enactor import enact
from .graph import Graph
from .result import Result

RUN_OPTIONS = ("backend", "devices", "seed")


def _prepare(graph, run: dict):
    """Validate the run options shared by every function; the backend and the graph on it."""
    unknown = sorted(set(run) - set(RUN_OPTIONS))
    if unknown:
        raise ValueError(f"unknown option {unknown[0]!r}: run options are {', '.join(RUN_OPTIONS)}")
    if not isinstance(graph, Graph):
        raise ValueError(f"expected an mgraph.Graph, got {type(graph).__name__}")
    devices = run.get("devices", 1)
    if isinstance(devices, (list, tuple)):
        ids = list(devices)
    elif isinstance(devices, numbers.Integral) and not isinstance(devices, bool):
        ids = list(range(int(devices)))
    else:
        raise ValueError(f"devices must be an int or a list of GPU ids, got {devices!r}")
    if len(ids) != 1:
        raise ValueError(f"devices={devices!r}: this version runs on one device (devices=1)")
    if not isinstance(run.get("seed", 0), numbers.Integral):
        raise ValueError(f"seed must be an integer, got {run.get('seed')!r}")
    device = ids[0]
    if not isinstance(device, numbers.Integral) or device < 0:
        raise ValueError(f"device ids must be non-negative integers, got {device!r}")
    backend = resolve(run.get("backend", "auto"), int(device))
    return backend, graph.to(backend)


def _check_vertex(graph, v, what="source"):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{what} must be an integer vertex id, got {v!r}")
    if not 0 <= v < graph.num_vertices:
        raise ValueError(f"{what} {v} is out of range: the graph has {graph.num_vertices} vertices")
    return int(v)


def _base_stats(backend, stats):
    stats.update(backend=backend.name, device=backend.device_name())
    return stats


def _traversal_stats(graph, reached, stats):
    """Graph500 TEPS (undirected input edges within the traversed component / time) and Gunrock's directed-edge TEPS."""
    deg = graph.out_degree()
    arcs = int(deg[graph.xp.asarray(reached)].sum())
    edges = arcs if graph.directed else arcs // 2
    t = stats["elapsed_s"]
    stats.update(
        edges_in_component=edges,
        arcs_traversed=arcs,
        graph500_teps=edges / t if t > 0 else float("inf"),
        directed_edge_teps=arcs / t if t > 0 else float("inf"),
    )
    return stats


def bfs(graph, source, *, direction="push", do_a=1e-5, do_b=0.1, **run) -> Result:
    """Breadth-first search: ``.depth`` (-1 unreached) and ``.predecessor`` (source's is itself).

    ``direction``: "push" (top-down), "pull" (bottom-up) or "auto"
    (direction-optimizing with the seed paper's do_a/do_b switch rule).
    """
    backend, g = _prepare(graph, run)
    source = _check_vertex(graph, source)
    prim = BFS(g, direction=direction, do_a=do_a, do_b=do_b)
    arrays, stats = enact(prim, backend, source)
    depth = to_numpy(arrays["depth"]).astype(np.int64)
    pred = to_numpy(arrays["predecessor"]).astype(np.int64)
    stats["directions"] = prim.directions
    _traversal_stats(g, depth >= 0, _base_stats(backend, stats))
    return Result({"depth": depth, "predecessor": pred}, stats)


def sssp(graph, source, **run) -> Result:
    """Single-source shortest paths: ``.distance`` (inf unreached) and a shortest-path-tree ``.predecessor``."""
    backend, g = _prepare(graph, run)
    source = _check_vertex(graph, source)
    if g.weights is not None and bool((g.weights < 0).any()):
        raise ValueError("sssp needs non-negative edge weights; this graph has negative weights")
    arrays, stats = enact(SSSP(g), backend, source)
    dist = to_numpy(arrays["distance"]).astype(np.float64)
    pred = to_numpy(arrays["predecessor"]).astype(np.int64)
    _traversal_stats(g, np.isfinite(dist), _base_stats(backend, stats))
    return Result({"distance": dist, "predecessor": pred}, stats)


def connected_components(graph, **run) -> Result:
    """Weakly connected components: ``.labels`` is the smallest vertex id of each vertex's component."""
    backend, g = _prepare(graph, run)
    arrays, stats = enact(CC(g), backend)
    labels = to_numpy(arrays["labels"]).astype(np.int64)
    stats["num_components"] = int(np.count_nonzero(labels == np.arange(labels.size)))
    return Result({"labels": labels}, _base_stats(backend, stats))


def pagerank(graph, *, alpha=0.85, tol=1e-6, max_iter=100, **run) -> Result:
    """PageRank: ``.rank`` as networkx.pagerank computes it (uniform dangling redistribution, L1 stop at N·tol)."""
    backend, g = _prepare(graph, run)
    if graph.num_vertices == 0:
        raise ValueError("pagerank of an empty graph (0 vertices)")
    prim = PageRank(g, alpha=alpha, tol=tol, max_iter=max_iter)
    arrays, stats = enact(prim, backend)
    converged = prim.error < graph.num_vertices * prim.tol
    if not converged:
        warnings.warn(f"pagerank did not converge in {max_iter} iterations (L1 change {prim.error:.3g})", RuntimeWarning)
    stats.update(converged=converged, error=prim.error,
                 ms_per_iteration=1e3 * stats["elapsed_s"] / max(stats["iterations"], 1))
    return Result({"rank": to_numpy(arrays["rank"]).astype(np.float64)}, _base_stats(backend, stats))


def betweenness_centrality(graph, *, sources=None, **run) -> Result:
    """Unnormalized betweenness: ``.centrality`` summed over ``sources`` (all vertices when None)."""
    backend, g = _prepare(graph, run)
    if sources is None:
        sources = range(graph.num_vertices)
    elif isinstance(sources, numbers.Integral):
        sources = [sources]
    sources = [_check_vertex(graph, s, "source") for s in list(sources)]
    prim = BC(g)
    stats = {"iterations": 0, "elapsed_s": 0.0, "host_elapsed_s": 0.0, "sources": len(sources)}
    for s in sources:
        _, one = enact(prim, backend, s)
        for key in ("iterations", "elapsed_s", "host_elapsed_s"):
            stats[key] += one[key]
    if len(sources) == 1:
        stats["last_source_frontier_sizes"] = one["frontier_sizes"]
    return Result({"centrality": to_numpy(prim.centrality).astype(np.float64)}, _base_stats(backend, stats))

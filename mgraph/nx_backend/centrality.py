"""Centralities: PageRank, betweenness, degree, eigenvector, Katz and HITS, as networkx gives them.

PageRank and betweenness run mgraph's primitives; eigenvector, Katz and HITS
run the power iterations of ``primitives/spectral.py`` through
``mgraph.api.run`` (on several devices where configured); the degree
centralities are networkx's degrees (counted at conversion, self-loops and
parallel edges as networkx counts them) times 1/(n-1).
"""
from __future__ import annotations

import functools
import math
import random
import warnings

import networkx as nx
import numpy as np

from mgraph import api
from mgraph.primitives.spectral import HITS, EigenvectorCentrality, KatzCentrality

from mgraph.nx_backend.common import declines, graph_of, has_self_loops, host, integer, options, real, weight_name


# -- PageRank -------------------------------------------------------------------


def _pagerank_declines(a):
    """Why mgraph cannot give networkx's pagerank for these arguments, or None when it can."""
    for name in ("personalization", "nstart", "dangling"):
        if a.get(name) is not None:
            return f"{name} is not supported: mgraph's PageRank starts uniform and teleports uniformly"
    reason = weight_name(a.get("weight"))
    if reason:
        return reason
    G = a["G"]
    if G.is_multigraph():
        return "networkx's pagerank sums parallel edges' weights; mgraph merges them keeping the lightest"
    if has_self_loops(G):
        return "networkx's pagerank counts self-loops; mgraph graphs drop them"
    alpha = a.get("alpha")
    if not (real(alpha) and 0 <= alpha < 1):
        return "mgraph's PageRank needs 0 <= alpha < 1"
    if not (real(a.get("tol")) and a["tol"] > 0):
        return "mgraph's PageRank needs tol > 0"
    if not integer(a.get("max_iter")):
        return "max_iter must be an integer"
    return None


@declines(_pagerank_declines)
def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None, weight="weight",
             dangling=None, **run):
    """networkx's: ``{node: rank}``, the same power iteration and stop rule; PowerIterationFailedConvergence
    where networkx raises it."""
    reason = _pagerank_declines(dict(G=G, alpha=alpha, personalization=personalization, max_iter=max_iter, tol=tol,
                                     nstart=nstart, weight=weight, dangling=dangling))
    if reason is not None:
        raise NotImplementedError(reason)
    G = graph_of(G, weight)
    if len(G) == 0:
        return {}
    if max_iter < 1:  # networkx's loop runs no iteration, then gives up
        raise nx.PowerIterationFailedConvergence(max_iter)
    with warnings.catch_warnings():  # mgraph warns where it stops unconverged; networkx raises
        warnings.filterwarnings("ignore", message="pagerank did not converge", category=RuntimeWarning)
        r = api.pagerank(G.for_weight(weight), alpha=alpha, tol=tol, max_iter=int(max_iter), **options(run, G))
    if not r.stats["converged"]:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.node_list, host(r.rank).tolist()))


# -- betweenness ----------------------------------------------------------------


def _betweenness_declines(a):
    if a.get("weight") is not None:
        return "mgraph's betweenness is unweighted (weight=None only)"
    if a.get("endpoints"):
        return "mgraph's betweenness leaves out endpoints (endpoints=False only)"
    k = a.get("k")
    if k is not None and not integer(k):
        return "k must be None or an integer"
    if k == 0:  # no source: mgraph refuses empty sources, networkx's scaling divides by zero
        return "k=0 samples no source"
    return None


@declines(_betweenness_declines)
def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False, seed=None, **run):
    """networkx's: ``{node: centrality}`` from all sources, or from the ``k`` that ``seed`` samples as networkx
    does, scaled as networkx scales it (Brandes' BFS on mgraph; unweighted, endpoints excluded)."""
    reason = _betweenness_declines(dict(k=k, weight=weight, endpoints=endpoints))
    if reason is not None:
        raise NotImplementedError(reason)
    G = graph_of(G)
    n = len(G)
    if k == n:  # networkx does the same: every source, no sampling
        k = None
    sampled = None
    if k is not None:
        rng = seed if isinstance(seed, random.Random) else nx.utils.create_py_random_state(seed)
        sampled = np.array([G.index[v] for v in rng.sample(G.node_list, k)], dtype=np.int64)
    r = api.betweenness_centrality(G.for_weight(None), sources=sampled, **options(run, G))
    # mgraph halves an undirected graph's sum (each pair counted from both ends): networkx's raw sum is twice it
    raw = host(r.centrality) * (1.0 if G.is_directed() else 2.0)
    b = _rescale(raw, n, normalized=normalized, directed=G.is_directed(), sampled=sampled)
    return dict(zip(G.node_list, b.tolist()))


def _rescale(b: np.ndarray, n: int, *, normalized, directed: bool, sampled) -> np.ndarray:
    """networkx's ``_rescale`` (endpoints=False) on the raw sums ``b``: the same scale factors, computed the same
    way in Python floats (so k=0 divides by zero as networkx does), applied to the array."""
    N = n - 1
    if N < 2:
        return b
    k = None if sampled is None else len(sampled)
    K = N if k is None else k
    correction = 1 if directed else 2
    if k is None:
        scale = 1 / (K * (N - 1)) if normalized else N / (K * correction)
        return b * scale if scale != 1 else b
    if normalized:
        s_source = 1 / ((K - 1) * (N - 1)) if K > 1 else math.nan
        s_other = 1 / (K * (N - 1))
    else:
        s_source = N / ((K - 1) * correction) if K > 1 else math.nan
        s_other = N / (K * correction)
    scale = np.full(n, s_other)
    scale[sampled] = s_source
    return b * scale


# -- degree centralities (thin: the degrees counted at conversion) ------------------------


def _degree_centrality(G, degree: np.ndarray) -> dict:
    n = len(G)
    if n <= 1:
        return {v: 1 for v in G.node_list}
    s = 1.0 / (n - 1.0)
    return dict(zip(G.node_list, (degree * s).tolist()))


def degree_centrality(G, **run):
    """networkx's: ``{node: degree / (n - 1)}`` (a self-loop counts twice, each parallel edge once)."""
    G = graph_of(G)
    return _degree_centrality(G, G.degree)


def in_degree_centrality(G, **run):
    """networkx's: ``{node: in-degree / (n - 1)}`` of a directed graph."""
    G = graph_of(G)
    return _degree_centrality(G, G.in_degree)


def out_degree_centrality(G, **run):
    """networkx's: ``{node: out-degree / (n - 1)}`` of a directed graph."""
    G = graph_of(G)
    return _degree_centrality(G, G.out_degree)


# -- power iterations (primitives/spectral.py) -------------------------------------------


def _spectral_declines(a):
    if a.get("nstart") is not None:
        return "nstart is not supported: mgraph's iteration starts where networkx's does by default"
    reason = weight_name(a.get("weight"))
    if reason:
        return reason
    G = a["G"]
    if G.is_multigraph():
        return "networkx's power iterations sum parallel edges; mgraph merges them"
    if has_self_loops(G):
        return "networkx's power iterations count self-loops; mgraph graphs drop them"
    if not (real(a.get("tol")) and a["tol"] > 0):
        return "tol must be a positive real number"
    if not integer(a.get("max_iter")):
        return "max_iter must be an integer"
    return None


def _iterate(primitive, G, weight, run):
    """Run a power-iteration primitive on G's graph with ``weight``: its result arrays on the host, and whether it
    met its tolerance."""
    r = api.run(primitive, G.for_weight(weight), **options(run, G))
    converged = host(r["converged"])
    return r, bool(converged.size == 0 or converged[0])


@declines(_spectral_declines)
def eigenvector_centrality(G, max_iter=100, tol=1.0e-6, nstart=None, weight=None, **run):
    """networkx's: ``{node: centrality}`` by networkx's own iteration (x + A^T x, normalised; the L1 stop rule),
    run as a primitive on mgraph; PowerIterationFailedConvergence where networkx raises it."""
    G = graph_of(G, weight)
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("cannot compute centrality for the null graph")
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    r, ok = _iterate(functools.partial(EigenvectorCentrality, tol=tol, max_iter=int(max_iter)), G, weight, run)
    if not ok:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.node_list, host(r["centrality"]).tolist()))


def _katz_declines(a):
    reason = _spectral_declines(a)
    if reason:
        return reason
    if not real(a.get("alpha")):
        return "alpha must be a real number"
    if a.get("normalized") not in (True, False):
        return "normalized must be True or False"
    return None


@declines(_katz_declines)
def katz_centrality(G, alpha=0.1, beta=1.0, max_iter=1000, tol=1.0e-6, nstart=None, normalized=True, weight=None,
                    **run):
    """networkx's: ``{node: centrality}`` by networkx's own iteration (alpha A^T x + beta from 0, the L1 stop rule,
    the final L2 normalisation), run as a primitive on mgraph; ``beta`` a number or a dict over every node."""
    G = graph_of(G, weight)
    if len(G) == 0:
        return {}
    try:
        b = float(beta)
    except (TypeError, ValueError, AttributeError):
        if set(beta) != set(G.node_list):
            raise nx.NetworkXError("beta dictionary must have a value for every node") from None
        b = np.array([beta[v] for v in G.node_list], dtype=np.float64)
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    prim = functools.partial(KatzCentrality, alpha=alpha, beta=b, tol=tol, max_iter=int(max_iter))
    r, ok = _iterate(prim, G, weight, run)
    if not ok:
        raise nx.PowerIterationFailedConvergence(max_iter)
    x = host(r["centrality"]).tolist()
    if normalized:
        try:
            s = 1.0 / math.hypot(*x)
        except ZeroDivisionError:
            s = 1.0
        x = [v * s for v in x]
    return dict(zip(G.node_list, x))


def _hits_declines(a):
    G = a["G"]
    if a.get("normalized") is not True:
        return ("normalized=False gives ARPACK's unit vector, whose sign and scale mgraph's iteration does not "
                "reproduce")
    if G.is_multigraph():
        return "networkx's hits sums parallel edges' weights; mgraph merges them"
    if has_self_loops(G):
        return "networkx's hits counts self-loops; mgraph graphs drop them"
    if not (real(a.get("tol")) and a["tol"] > 0):
        return "tol must be a positive real number"
    if not integer(a.get("max_iter")):
        return "max_iter must be an integer"
    return None


@declines(_hits_declines)
def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True, **run):
    """networkx's: (hubs, authorities), the leading singular vectors of the adjacency matrix (weights "weight"),
    each scaled to sum 1 (``normalized=True``), by power iteration on mgraph (``nstart`` only seeds networkx's
    ARPACK and changes nothing here).  Where ``max_iter`` power iterations do not reach ``tol`` the call goes to networkx, whose
    ARPACK converges differently (NotImplementedError)."""
    G = graph_of(G, "weight")
    if len(G) == 0:
        return {}, {}
    if max_iter <= 0:
        raise nx.PowerIterationFailedConvergence(max_iter)
    if G.graph.num_arcs == 0:
        raise NotImplementedError("a graph without edges: networkx's ARPACK decides what its singular vectors are")
    r, ok = _iterate(functools.partial(HITS, tol=tol, max_iter=int(max_iter)), G, "weight", run)
    if not ok:
        raise NotImplementedError(f"mgraph's power iteration did not reach tol={tol} in {max_iter} iterations")
    h, a = host(r["hubs"]), host(r["authorities"])
    h, a = h / h.sum(), a / a.sum()
    return dict(zip(G.node_list, h.tolist())), dict(zip(G.node_list, a.tolist()))


FUNCTIONS = [pagerank, betweenness_centrality, degree_centrality, in_degree_centrality, out_degree_centrality,
             eigenvector_centrality, katz_centrality, hits]

"""CPU reference checks for traversal results (Graph500's rules, scipy references).

The CLI's ``--validate`` and the tests share these.  Every check is vectorized
NumPy/scipy so that it stays usable on graphs of tens of millions of edges;
inputs may be NumPy or CuPy arrays, results are NumPy.

Conventions checked (those of :mod:`mgraph.api`): a BFS depth is -1 where
unreached, a distance is inf where unreached, a predecessor is -1 where
unreached and the source's predecessor is the source itself.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components, dijkstra

from mgraph.backend import to_numpy
from mgraph.graph import index_dtype

__all__ = ["ValidationError", "validate_bfs", "validate_sssp", "validate_communities",
           "reference_bfs_depth", "reference_sssp", "reference_components"]


class ValidationError(Exception):
    """A result broke a correctness rule; the one-line message names the rule and a sample vertex."""


# -- public checks -----------------------------------------------------------
def validate_bfs(graph, source, depth, predecessor) -> None:
    """Check a BFS result by Graph500's five rules; raise ValidationError at the first one broken.

    ``depth`` may be None: Graph500 results carry parents only, and levels are
    taken from the parent tree anyway.  Rules run in the order 1, 2, 5, 4, 3 so
    that a fault is reported by the most specific rule it breaks (a vertex
    missed by the search also puts an edge across two levels, say).
    """
    source = _check_source(graph, source)
    n = graph.num_vertices
    pred = _ids(predecessor, n, "BFS predecessor")
    level = _tree_levels(pred, source, "BFS rule 1 (tree)")
    if depth is not None:
        d = _ids(depth, n, "BFS depth")
        bad = np.flatnonzero(d != level)
        if bad.size:
            v = int(bad[0])
            parent = f", parent {pred[v]} at level {level[pred[v]]}" if pred[v] >= 0 and v != source else ""
            _fail(f"BFS rule 2 (tree edges span one level): vertex {v} has depth {d[v]} "
                  f"but level {level[v]} in the parent tree{parent}")
    src, dst, _ = _arcs(graph)
    reached = level >= 0
    child = np.flatnonzero(reached)
    child = child[child != source]
    missing = child[_arc_index(src, dst, n, pred[child], child) < 0]
    if missing.size:
        v = int(missing[0])
        _fail(f"BFS rule 5 (parent edges exist): vertex {v} has parent {pred[v]} but there is no edge {pred[v]}->{v}")
    reachable = np.zeros(n, dtype=bool)
    reachable[breadth_first_order(_matrix(graph), source, directed=True, return_predecessors=False)] = True
    bad = np.flatnonzero(reachable != reached)
    if bad.size:
        v = int(bad[0])
        _fail(f"BFS rule 4 (spans the component): vertex {v} is {'' if reachable[v] else 'not '}reachable "
              f"from {source} but {'unreached' if reachable[v] else 'reached'}")
    lev = level.astype(index_dtype(n))  # half the bytes to gather when ids fit in 32 bits
    lu, lv = np.take(lev, src), np.take(lev, dst)
    bad = np.flatnonzero((lu >= 0) & ((lv < 0) | (lv > lu + 1)))
    if bad.size:
        e = int(bad[0])
        _fail(f"BFS rule 3 (edges span at most one level): edge {src[e]}->{dst[e]} "
              f"joins levels {lu[e]} and {lv[e]}")


def validate_sssp(graph, source, distance, predecessor, *, rtol=1e-9) -> None:
    """Check an SSSP result: Graph500's rules, then, unless they were checked exactly, scipy's Dijkstra.

    Graph500's rules (a rooted tree of tight arcs, no arc that could still
    relax) certify the distances on their own when every sum is exact: integer
    weights and distances below 2**52 are checked exactly and need no
    reference (Dijkstra on the host is the slow part at scale 24).  Otherwise
    each arc is checked within ``rtol`` and the comparison with Dijkstra bounds
    the drift along long paths.
    """
    source = _check_source(graph, source)
    n = graph.num_vertices
    dist = to_numpy(distance)
    if dist.shape != (n,) or dist.dtype.kind not in "iuf":
        _fail(f"SSSP distance: expected {n} numbers, got shape {dist.shape} dtype {dist.dtype}")
    dist = dist.astype(np.float64, copy=False)
    bad = np.flatnonzero(np.isnan(dist) | (dist < 0))
    if bad.size:
        _fail(f"SSSP distance: vertex {bad[0]} has distance {_num(dist[bad[0]])}")
    pred = _ids(predecessor, n, "SSSP predecessor")
    _tree_levels(pred, source, "SSSP tree")  # also catches cycles of zero-weight tight arcs
    reached = pred >= 0
    bad = np.flatnonzero(reached == np.isinf(dist))
    if bad.size:
        v = int(bad[0])
        _fail(f"SSSP tree: vertex {v} has distance {dist[v]} and predecessor {pred[v]} "
              f"(unreached must be inf and -1 together)")
    if dist[source] != 0:
        _fail(f"SSSP tree: the source {source} has distance {dist[source]}, not 0")
    src, dst, w = _arcs(graph)
    if w is None:
        w = np.ones(src.size)
    exact = _integral(w) and _integral(dist[reached])
    if exact:
        rtol = 0.0
    child = np.flatnonzero(reached)
    child = child[child != source]
    arc = _arc_index(src, dst, n, pred[child], child)
    if (arc < 0).any():
        v = int(child[np.argmax(arc < 0)])
        _fail(f"SSSP tree edge: vertex {v} has predecessor {pred[v]} but there is no arc {pred[v]}->{v}")
    through = dist[pred[child]] + w[arc]
    bad = np.flatnonzero(~(np.abs(dist[child] - through) <= rtol * through))
    if bad.size:
        v, e = int(child[bad[0]]), arc[bad[0]]
        _fail(f"SSSP tree edge: d({v}) = {_num(dist[v])} but d({pred[v]}) + w = {_num(dist[pred[v]])} + {_num(w[e])}")
    du, dv = np.take(dist, src), np.take(dist, dst)
    bad = np.flatnonzero(~(dv <= (du + w) * (1 + rtol)))  # inf + w = inf: arcs out of unreached u pass
    if bad.size:
        e = int(bad[0])
        _fail(f"SSSP edge rule: arc {src[e]}->{dst[e]} of weight {_num(w[e])} could still relax "
              f"d({dst[e]}) = {_num(dv[e])} from d({src[e]}) = {_num(du[e])}")
    if exact:
        return
    ref = reference_sssp(graph, source)
    with np.errstate(invalid="ignore"):  # inf - inf
        bad = np.flatnonzero(~((dist == ref) | (np.abs(dist - ref) <= rtol * ref)))
    if bad.size:
        v = int(bad[0])
        _fail(f"SSSP reference: vertex {v} has distance {_num(dist[v])}, Dijkstra gives {_num(ref[v])}")


# -- references ----------------------------------------------------------------
def reference_bfs_depth(graph, source) -> np.ndarray:
    """Hop distance from ``source`` along arc directions (int64, -1 unreached), from scipy's BFS tree."""
    source = _check_source(graph, source)
    _, pred = breadth_first_order(_matrix(graph), source, directed=True, return_predecessors=True)
    pred = np.where(pred < 0, -1, pred).astype(np.int64)
    pred[source] = source
    return _tree_levels(pred, source, "scipy BFS tree")


def reference_sssp(graph, source) -> np.ndarray:
    """Shortest-path distances from ``source`` (float64, inf unreached); unweighted edges weigh 1.

    Zero weights stay explicit entries, which csgraph takes as edges; the
    matrix is never summed or symmetrised (sparse arithmetic drops explicit
    zeros), and passing it as directed is exact because an undirected graph
    stores both arcs.
    """
    source = _check_source(graph, source)
    w = None if graph.weights is None else to_numpy(graph.weights)
    if w is not None and w.size and w.min() < 0:
        raise ValueError("sssp needs non-negative edge weights; this graph has negative weights")
    return dijkstra(_matrix(graph, w), directed=True, indices=source)


def reference_components(graph) -> np.ndarray:
    """Weakly connected components, each vertex labelled with its component's smallest id (int64)."""
    _, comp = connected_components(_matrix(graph), directed=True, connection="weak")
    _, first = np.unique(comp, return_index=True)  # vertex ids ascend, so first = smallest
    return first.astype(np.int64)[comp]


def reference_strong_components(graph) -> np.ndarray:
    """Strongly connected components (scipy's), each vertex labelled with its component's largest id (int64), as
    mgraph's SCC labels them."""
    k, comp = connected_components(_matrix(graph), directed=True, connection="strong")
    last = np.zeros(k, dtype=np.int64)
    np.maximum.at(last, comp, np.arange(comp.shape[0], dtype=np.int64))
    return last[comp]


def reference_triangles(graph, rows_per_block: int = 4096) -> np.ndarray:
    """Triangles through each vertex of an undirected graph (int64), by scipy's sparse products over the graph
    oriented from lower to higher (degree, id): each triangle u -> v -> w (u -> w) is found once, as an entry of
    (D @ D) * D for its first corner u and last w, and of (D^T @ D) * D for its middle v.  Orienting bounds a
    row's out-degree by sqrt(2m), and the products go in blocks of rows, so hubs do not fill memory."""
    a = _matrix(graph, np.ones(graph.num_arcs)).tocoo()
    deg = np.diff(to_numpy(graph.indptr))
    rank = np.lexsort((np.arange(graph.num_vertices), deg))  # vertices by (degree, id)
    order = np.empty_like(rank)
    order[rank] = np.arange(rank.shape[0])
    up = order[a.row] < order[a.col]
    n = graph.num_vertices
    d = sp.csr_matrix((np.ones(int(up.sum())), (a.row[up], a.col[up])), shape=(n, n))
    dt = d.T.tocsr()
    t = np.zeros(n)
    for lo in range(0, n, rows_per_block):
        block = d[lo:lo + rows_per_block]
        ends = (block @ d).multiply(block)  # (u, w): the triangles with first corner u and last w
        t[lo:lo + rows_per_block] += np.asarray(ends.sum(axis=1)).ravel()
        t += np.asarray(ends.sum(axis=0)).ravel()
        middle = (dt[lo:lo + rows_per_block] @ d).multiply(block)  # (v, w): the triangles with middle v
        t[lo:lo + rows_per_block] += np.asarray(middle.sum(axis=1)).ravel()
    return np.rint(t).astype(np.int64)


def reference_core_numbers(graph) -> np.ndarray:
    """Core numbers by peeling over scipy's CSR rows: every vertex of degree <= k leaves at level k, each arc of
    its row takes one from its neighbour's degree, and the level rises to the smallest remaining degree when none
    is left to peel.  A directed graph's degree counts in-arcs and out-arcs, as networkx.core_number does.  Each
    round touches the rows of the vertices it peels and their neighbours only, so a run costs about the graph's
    arcs plus a pass over the vertices per level (a sparse product per round cost the arcs every round)."""
    a = _matrix(graph, np.ones(graph.num_arcs))
    if graph.directed:
        a = (a + a.T).tocsr()  # a pair of opposite arcs is an entry of 2: two degrees, two losses
    n = graph.num_vertices
    deg = np.rint(np.asarray(a.sum(axis=1)).ravel()).astype(np.int64)
    core = np.full(n, -1, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    level = 0
    while alive.any():
        level = max(level, int(deg[alive].min()))
        peel = np.flatnonzero(alive & (deg <= level))
        while peel.shape[0]:
            core[peel] = level
            alive[peel] = False
            rows = a[peel]
            heads, first = np.unique(rows.indices, return_inverse=True)
            deg[heads] -= np.rint(np.bincount(first, weights=rows.data, minlength=heads.shape[0])).astype(np.int64)
            peel = heads[alive[heads] & (deg[heads] <= level)]
    return core


def validate_label_propagation(graph, labels) -> None:
    """Converged label propagation: every vertex with neighbours holds one of its neighbours' most frequent labels
    (what ends networkx's semi-synchronous rounds).  A check of the end state, not of equality with networkx."""
    labels = _ids(labels, graph.num_vertices, "label")
    src, dst, _ = _arcs(graph)
    if not src.size:
        return
    pairs, counts = np.unique(np.stack([src, labels[dst]]), axis=1, return_counts=True)
    best = np.zeros(graph.num_vertices, dtype=np.int64)
    np.maximum.at(best, pairs[0], counts)
    mine = np.zeros(graph.num_vertices, dtype=np.int64)
    own = pairs[1] == labels[pairs[0]]
    mine[pairs[0][own]] = counts[own]
    bad = np.flatnonzero((np.bincount(src, minlength=graph.num_vertices) > 0) & (mine < best))
    if bad.size:
        v = int(bad[0])
        _fail(f"label propagation: vertex {v}'s label {int(labels[v])} is not among its neighbours' most frequent "
              f"({int(mine[v])} of them hold it, {int(best[v])} hold another); {bad.size} such vertices")


def validate_communities(graph, community, modularity, resolution=1.0) -> None:
    """Louvain's or Leiden's result: a community number 0 .. C-1 for every vertex, each number used, and the
    modularity it reports that of these communities, computed here apart (networkx's definition, the directed one
    for a directed graph), to 1e-9."""
    n = graph.num_vertices
    community = np.asarray(to_numpy(community))
    if community.shape != (n,) or community.dtype.kind not in "iu":
        _fail(f"communities: expected {n} integer community numbers, got {community.dtype} of shape {community.shape}")
    used = np.unique(community)
    if used.size and (used[0] != 0 or used[-1] != used.size - 1):
        _fail(f"communities: the numbers are not 0 .. {used.size - 1} (from {int(used[0])} to {int(used[-1])})")
    src, dst, w = _arcs(graph)
    w = np.ones(src.size) if w is None else np.asarray(w, dtype=np.float64)
    m = float(w.sum())
    if m == 0:
        q = 0.0
    else:
        out = np.bincount(community[src], weights=w, minlength=used.size)
        into = np.bincount(community[dst], weights=w, minlength=used.size)
        q = float(w[community[src] == community[dst]].sum()) / m - resolution * float((out * into).sum()) / m ** 2
    if not abs(q - float(modularity)) <= 1e-9:
        _fail(f"communities: the run reports modularity {_num(modularity)}, these communities have {_num(q)}")


# -- helpers -------------------------------------------------------------------
def _fail(message: str):
    raise ValidationError(message)


def _num(x) -> str:
    """A float as repr writes it (all the digits that matter), without NumPy 2's np.float64(...)."""
    return repr(float(x))


def _integral(a) -> bool:
    """Whether every value is a whole number small enough that sums of two stay exact in float64."""
    a = np.asarray(a)
    if not a.size:
        return True
    if a.dtype.kind == "f" and not (np.isfinite(a).all() and (a == np.floor(a)).all()):
        return False
    return float(np.abs(a).max()) < 2.0 ** 52


def _check_source(graph, source) -> int:
    n = graph.num_vertices
    if not 0 <= int(source) < n:
        raise ValueError(f"source {source} is not a vertex of a graph with {n} vertices")
    return int(source)


def _ids(a, n, what) -> np.ndarray:
    a = to_numpy(a)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        _fail(f"{what}: expected {n} integers, got shape {a.shape} dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def _arcs(graph):
    """Every stored arc (an undirected edge both ways) as int64 (src, dst) and weights or None."""
    indptr = to_numpy(graph.indptr).astype(np.int64, copy=False)
    dst = to_numpy(graph.indices).astype(np.int64)
    src = np.repeat(np.arange(graph.num_vertices, dtype=np.int64), np.diff(indptr))
    return src, dst, None if graph.weights is None else to_numpy(graph.weights)


def _arc_index(src, dst, n, u, v) -> np.ndarray:
    """Position of arc u[i]->v[i] among (src, dst), or -1 where there is none."""
    keys = src * np.int64(n) + dst
    order = None
    if keys.size and not (keys[1:] >= keys[:-1]).all():  # CSR rows not sorted
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
    want = u * np.int64(n) + v
    q = np.argsort(want)  # sorted needles: searchsorted walks keys once instead of a cache miss per probe
    pos = np.empty(want.shape, dtype=np.int64)
    pos[q] = np.minimum(np.searchsorted(keys, want[q]), max(keys.size - 1, 0))
    found = keys[pos] == want if keys.size else np.zeros(want.shape, dtype=bool)
    if order is not None:
        pos = order[pos]
    return np.where(found, pos, -1)


def _tree_levels(pred, source, rule) -> np.ndarray:
    """Hops from each vertex to ``source`` along ``pred`` (-1 unreached), or fail if pred is no tree.

    Pointer jumping: every round each vertex adds its ancestor's hop count and
    jumps to that ancestor's ancestor, so chains of any length resolve in
    log2(n) vectorized rounds; a vertex still short of the root after that
    lies on, or hangs from, a cycle.
    """
    n = pred.size
    bad = np.flatnonzero((pred < -1) | (pred >= n))
    if bad.size:
        _fail(f"{rule}: vertex {bad[0]} has parent {pred[bad[0]]}, neither a vertex nor -1")
    if pred[source] != source:
        _fail(f"{rule}: the root {source} has parent {pred[source]}, not itself")
    reached = pred >= 0
    bad = np.flatnonzero(reached & ~reached[pred])  # pred -1 reads reached[-1], masked off
    if bad.size:
        _fail(f"{rule}: vertex {bad[0]} has parent {pred[bad[0]]}, which is unreached (parent -1)")
    level = np.where(reached, 1, -1).astype(np.int64)
    level[source] = 0
    up = pred.copy()
    active = np.flatnonzero(reached & (up != source))
    for _ in range(n.bit_length()):
        if not active.size:
            break
        hop = up[active]
        level[active] += level[hop]
        up[active] = up[hop]
        active = active[up[active] != source]
    if active.size:
        _fail(f"{rule}: vertex {active.min()} never reaches the root {source} by following parents (a cycle)")
    return level


def _matrix(graph, data=None):
    """The graph as a scipy CSR matrix over all stored arcs; ``data`` defaults to ones (structure only)."""
    n = graph.num_vertices
    if data is None:
        data = np.ones(graph.num_arcs)
    return sp.csr_matrix((data, to_numpy(graph.indices), to_numpy(graph.indptr)), shape=(n, n))


def pagerank_step(graph, alpha: float):
    """networkx.pagerank's map T (uniform teleport, dangling mass spread uniformly, weights weight), with scipy."""
    n = graph.num_vertices
    a = graph.to_scipy()
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    inv_out = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
    at = a.T.tocsr()
    return lambda x: alpha * (at @ (x * inv_out) + x[dangling].sum() / n) + (1.0 - alpha) / n


def reference_betweenness(graph, sources) -> np.ndarray:
    """Brandes' betweenness over ``sources`` with scipy BFS levels and vectorized NumPy per level.

    Unnormalized, undirected sums halved (networkx's normalized=False).
    NumPy rather than networkx so that --validate needs no test-only
    dependency and stays usable on large graphs (one source of R-MAT scale 24).
    """
    n = graph.num_vertices
    indptr = to_numpy(graph.indptr)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    dst = to_numpy(graph.indices).astype(np.int64)
    total = np.zeros(n)
    for s in sources:
        depth = reference_bfs_depth(graph, s)
        du = depth[src]
        on_dag = (du >= 0) & (depth[dst] == du + 1)
        order = np.argsort(du[on_dag], kind="stable")
        u, v = src[on_dag][order], dst[on_dag][order]
        bounds = np.searchsorted(du[on_dag][order], np.arange(int(depth.max()) + 2))
        levels = [slice(bounds[d], bounds[d + 1]) for d in range(len(bounds) - 1)]
        sigma = np.zeros(n)
        sigma[s] = 1.0
        for lv in levels:
            np.add.at(sigma, v[lv], sigma[u[lv]])
        delta = np.zeros(n)
        for lv in reversed(levels):
            np.add.at(delta, u[lv], sigma[u[lv]] / sigma[v[lv]] * (1.0 + delta[v[lv]]))
        delta[s] = 0.0
        total += delta
    return total if graph.directed else total / 2

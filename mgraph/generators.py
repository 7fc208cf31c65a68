"""Synthetic graphs: Graph500 Kronecker (R-MAT), 2-D grids and Erdos-Renyi.

Real graphs with 10M+ edges are not available offline, so scaling runs use
these.  Every generator is written against an array module ``xp`` (NumPy or
CuPy) and builds its :class:`~mgraph.graph.Graph` with that module, so on a
GPU node a scale-26 R-MAT is drawn and turned into CSR on the device without
a host round trip.  A seed fixes the graph for a given ``xp``; NumPy and CuPy
draw from different bit generators, so the same seed gives different (equally
distributed) graphs on the two.
"""
from __future__ import annotations

import re

import numpy as np

from .graph import Graph

# Graph500 initiator probabilities (D = 1 - A - B - C = 0.05).
RMAT_A, RMAT_B, RMAT_C = 0.57, 0.19, 0.19
EDGE_FACTOR = 16

SPEC_FORMS = "rmat:SCALE[:EDGEFACTOR], grid:WIDTHxHEIGHT or er:N:M"
_SPEC_PATTERNS = {
    "rmat": re.compile(r"rmat:(\d+)(?::(\d+))?", re.IGNORECASE),
    "grid": re.compile(r"grid:(\d+)x(\d+)", re.IGNORECASE),
    "er": re.compile(r"er:(\d+):(\d+)", re.IGNORECASE),
}


def rmat_edges(scale: int, edge_factor: int = EDGE_FACTOR, *, xp=np, seed: int = 0,
               a: float = RMAT_A, b: float = RMAT_B, c: float = RMAT_C,
               weights: tuple[int, int] | None = None, shuffle: bool = True):
    """The Graph500 Kronecker edge list: ``edge_factor * 2**scale`` edges on ``2**scale`` vertices.

    As in the Graph500 reference generator, each of the ``scale`` levels picks
    one bit of every endpoint for all edges at once; one uniform draw per edge
    and level chooses the quadrant (A, B, C or D), which has the same
    distribution as the reference's two draws and needs half the random
    numbers.  Vertex ids are then randomly permuted (so high degree is not
    tied to low ids) and, with ``shuffle``, the edge order too.  Self-loops
    and duplicates are kept, as Graph500 does.  Returns ``(src, dst, w)``
    (int64 arrays and float64 weights or None) on ``xp``.
    """
    _check_int("scale", scale, 1)
    _check_int("edge_factor", edge_factor, 1)
    if min(a, b, c) <= 0 or a + b + c >= 1:
        raise ValueError(f"R-MAT probabilities need a, b, c > 0 and a + b + c < 1, got {a}, {b}, {c}")
    n, m = 1 << scale, edge_factor << scale
    rng = xp.random.default_rng(seed)
    src = xp.zeros(m, dtype=np.int64)
    dst = xp.zeros(m, dtype=np.int64)
    # Buffers reused across levels: fresh temporaries of this size cost page
    # faults on the CPU (about 2x slower) and allocator churn on the GPU.
    r = xp.empty(m, dtype=np.float32)  # float32: half the memory, ample resolution for 4 quadrants
    row, col, tmp = (xp.empty(m, dtype=bool) for _ in range(3))
    step = xp.empty(m, dtype=np.int64)
    for level in range(scale):
        rng.random(m, dtype=np.float32, out=r)
        xp.greater_equal(r, a + b, out=row)            # quadrant C or D: the row bit
        xp.greater_equal(r, a, out=col)                # quadrant B or D: the column bit
        xp.less(r, a + b, out=tmp)
        col &= tmp
        xp.greater_equal(r, a + b + c, out=tmp)
        col |= tmp
        bit = np.int64(1 << level)
        src += xp.multiply(row, bit, out=step)
        dst += xp.multiply(col, bit, out=step)
    del r, row, col, tmp, step
    w = _draw_weights(xp, rng, m, weights)
    perm = _permutation(xp, rng, n)
    src, dst = perm[src], perm[dst]
    if shuffle:
        order = _permutation(xp, rng, m)
        src, dst = src[order], dst[order]
        w = None if w is None else w[order]
    return src, dst, w


def rmat(scale: int, edge_factor: int = EDGE_FACTOR, *, xp=np, seed: int = 0,
         a: float = RMAT_A, b: float = RMAT_B, c: float = RMAT_C,
         weights: tuple[int, int] | None = None) -> Graph:
    """An undirected Graph500 R-MAT graph (self-loops dropped, duplicates merged keeping the lightest)."""
    # CSR construction sorts the edges, so the Graph500 edge shuffle (the last
    # draw, which changes nothing else) would be wasted work here.
    src, dst, w = rmat_edges(scale, edge_factor, xp=xp, seed=seed, a=a, b=b, c=c, weights=weights, shuffle=False)
    return Graph.from_edges(src, dst, w, num_vertices=1 << scale, directed=False)


def grid(width: int, height: int, *, xp=np, seed: int = 0, weights: tuple[int, int] | None = None) -> Graph:
    """A ``width x height`` 4-neighbour lattice, undirected: road-like, diameter ``width + height - 2``.

    Vertex ``(x, y)`` has id ``y * width + x``.  ``seed`` only matters with ``weights``.
    """
    _check_int("width", width, 1)
    _check_int("height", height, 1)
    ids = xp.arange(width * height, dtype=np.int64).reshape(height, width)
    src = xp.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = xp.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    w = _draw_weights(xp, xp.random.default_rng(seed), src.size, weights)
    return Graph.from_edges(src, dst, w, num_vertices=width * height, directed=False)


def erdos_renyi(n: int, m: int, seed: int = 0, *, xp=np, weights: tuple[int, int] | None = None) -> Graph:
    """An undirected G(n, m)-like graph: ``m`` uniformly random vertex pairs on ``n`` vertices.

    Self-loops and repeated pairs are merged by construction, so the graph
    has slightly fewer than ``m`` edges (about ``m * m / n**2`` fewer).
    """
    _check_int("n", n, 1)
    _check_int("m", m, 0)
    rng = xp.random.default_rng(seed)
    src = rng.integers(0, n, size=m, dtype=np.int64)
    dst = rng.integers(0, n, size=m, dtype=np.int64)
    w = _draw_weights(xp, rng, m, weights)
    return Graph.from_edges(src, dst, w, num_vertices=n, directed=False)


def is_spec(text: str) -> bool:
    """True when ``text`` names a generator (``rmat:``, ``grid:`` or ``er:``), well-formed or not."""
    return text.split(":", 1)[0].lower() in _SPEC_PATTERNS and ":" in text


def from_spec(spec: str, *, xp=np, seed: int = 0, weights: tuple[int, int] | None = None) -> Graph:
    """The graph a spec string names: ``rmat:SCALE[:EDGEFACTOR]``, ``grid:WxH`` or ``er:N:M``.

    Raises ValueError with a one-line message for anything else.
    """
    kind = spec.split(":", 1)[0].lower()
    match = _SPEC_PATTERNS[kind].fullmatch(spec.strip()) if kind in _SPEC_PATTERNS else None
    if match is None:
        raise ValueError(f"bad graph spec {spec!r}: expected {SPEC_FORMS} with integers,"
                         " e.g. rmat:20, grid:100x200, er:1000:5000")
    args = [int(g) for g in match.groups() if g is not None]
    try:
        if kind == "rmat":
            return rmat(*args, xp=xp, seed=seed, weights=weights)
        if kind == "grid":
            return grid(*args, xp=xp, seed=seed, weights=weights)
        return erdos_renyi(*args, seed=seed, xp=xp, weights=weights)
    except ValueError as e:
        raise ValueError(f"bad graph spec {spec!r}: {e}") from None


def _permutation(xp, rng, n: int):
    """A uniformly random permutation of ``range(n)``.

    NumPy's Generator shuffles in O(n); CuPy's has no ``permutation``, so
    there the permutation sorts random keys, which is fast on a GPU.
    """
    if hasattr(rng, "permutation"):
        return rng.permutation(n)
    return xp.argsort(rng.random(n))


def _draw_weights(xp, rng, m: int, weights):
    """Integer weights uniform in ``[lo, hi]`` as float64 (the SSSP benchmarks use 1..64), or None."""
    if weights is None:
        return None
    lo, hi = (int(v) for v in weights)
    if lo > hi:
        raise ValueError(f"weights=(lo, hi) needs lo <= hi, got ({lo}, {hi})")
    return rng.integers(lo, hi + 1, size=m, dtype=np.int64).astype(np.float64)


def _check_int(name: str, value, lowest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lowest:
        raise ValueError(f"{name} must be an integer >= {lowest}, got {value!r}")


def with_random_weights(graph: Graph, lo: int, hi: int, seed: int = 0) -> Graph:
    """``graph`` with integer edge weights uniform in lo..hi; both arcs of an undirected edge weigh the same.

    Each weight is a SplitMix64 hash of the edge's endpoint pair and the seed,
    so no sort or rebuild is needed, the CSR arrays are shared, and it runs
    on the GPU as it is (the same weights on either backend).
    """
    if not 0 <= lo <= hi:
        raise ValueError(f"weights {lo}:{hi}: need 0 <= LO <= HI")
    xp, n, m = graph.xp, graph.num_vertices, graph.num_arcs
    src = xp.searchsorted(graph.indptr, xp.arange(m, dtype=np.int64), side="right") - 1
    dst = graph.indices.astype(np.int64)
    if not graph.directed:
        src, dst = xp.minimum(src, dst), xp.maximum(src, dst)
    z = (src * np.int64(n) + dst).astype(np.uint64)
    del src, dst
    z += np.uint64((seed + 1) * 0x9E3779B97F4A7C15 % 2**64)  # the seed shifts keys by SplitMix64's increment
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    weights = (z % np.uint64(hi - lo + 1)).astype(np.float64) + lo
    return Graph(graph.indptr, graph.indices, weights, directed=graph.directed, num_input_edges=graph.num_input_edges)

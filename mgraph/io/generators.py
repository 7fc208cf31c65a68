"""Synthetic graphs: Graph500 Kronecker (R-MAT), 2-D grids and Erdos-Renyi.

Real graphs with 10M+ edges are not available offline, so scaling runs use
these.  Each generator defines its edge list *by edge index*: edge ``e`` is a
pure function of ``(seed, e)``, so any process can draw exactly the edges
``[start, stop)`` of the whole list without drawing the others, and the
graph is the same however the list is split among processes.  That is what
lets each of P ranks build only its share of an R-MAT at scale 28-31
(billions of edges), as Graph500's reference generator does; the
``*_edges`` functions and :func:`spec_edges` expose that form.

The random numbers come from a counter-based generator: draw ``s`` of edge
``e`` is output number ``e * 32 + s`` of SplitMix64 seeded with ``seed``
(Steele, Lea & Flood 2014; Vigna's ``splitmix64.c``), computed directly as
``mix64(seed + (e * 32 + s + 1) * 0x9E3779B97F4A7C15)``.  The computation
is written once against an array module ``xp`` (NumPy or CuPy) in
elementwise uint64 arithmetic (wrap-around multiply, add, xor, shift) and
integer comparisons only, so NumPy and CuPy give bit-identical edges for
the same seed, and a graph drawn on a GPU can be checked on the CPU.

Draws per edge (``s`` below 32): R-MAT uses draws ``0 .. ceil(scale/2)-1``,
each 64-bit output giving two levels' 32-bit uniforms; Erdos-Renyi uses
draws 0 and 1 for its endpoints; every generator takes weights from
draw 31.  R-MAT vertex ids are then relabelled by a seeded bijection on
``[0, 2**scale)`` (:func:`_scramble`) computed arithmetically, so high degree
is not tied to low ids without a permutation table.

Memory is O(stop - start) per call: edges are drawn in blocks into the
output arrays, whose size the caller picks through ``[start, stop)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from mgraph import memory
from mgraph.graph import Graph

# Graph500 initiator probabilities (D = 1 - A - B - C = 0.05).
RMAT_A, RMAT_B, RMAT_C = 0.57, 0.19, 0.19
EDGE_FACTOR = 16

# Size limits: ids stay far inside int64 and the per-draw counter e * 32 + s
# far inside uint64.  Beyond these a graph could not be stored anywhere
# (2**48 edges are 4 PiB of int64 endpoint pairs), so asking for one is a
# mistake best reported before any allocation.
MAX_SCALE = 40
MAX_VERTICES = 1 << MAX_SCALE
MAX_EDGES = 1 << 48

SPEC_FORMS = "rmat:SCALE[:EDGEFACTOR], grid:WIDTHxHEIGHT or er:N:M"
_SPEC_PATTERNS = {
    "rmat": re.compile(r"rmat:(\d+)(?::(\d+))?", re.IGNORECASE),
    "grid": re.compile(r"grid:(\d+)x(\d+)", re.IGNORECASE),
    "er": re.compile(r"er:(\d+):(\d+)", re.IGNORECASE),
}

# -- the counter-based generator ------------------------------------------------------

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15   # SplitMix64's Weyl increment (odd)
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_STREAMS = 32                 # draws reserved per edge: counter = e * 32 + stream
_WEIGHT_STREAM = 31
_U32 = np.uint64(0xFFFFFFFF)
_SHIFT = {k: np.uint64(k) for k in (1, 27, 30, 31, 32)}


def _mix64_host(z: int) -> int:
    """SplitMix64's output function on a Python int (the host twin of :func:`_mix64`)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK64
    return z ^ (z >> 31)


def _mix64(xp, z, tmp) -> None:
    """SplitMix64's output function (Stafford's Mix13), in place on a uint64 array; ``tmp`` is scratch.

    Array-only uint64 arithmetic: it wraps mod 2**64 without warnings and
    without promotion to float, identically on NumPy and CuPy.
    """
    xp.right_shift(z, _SHIFT[30], out=tmp)
    z ^= tmp
    z *= np.uint64(_MIX1)
    xp.right_shift(z, _SHIFT[27], out=tmp)
    z ^= tmp
    z *= np.uint64(_MIX2)
    xp.right_shift(z, _SHIFT[31], out=tmp)
    z ^= tmp


class _Counter:
    """Draws ``hash(seed, e, stream)`` for a block of edge indices ``e``.

    The output is SplitMix64's output number ``e * 32 + stream`` for state
    ``seed``: ``mix64(seed + (e * 32 + stream + 1) * GAMMA)``.  ``e * 32 *
    GAMMA`` is computed once per block and each stream adds its constant.
    """

    def __init__(self, xp, seed: int, start: int, stop: int):
        self.xp = xp
        self.seed = int(seed) & _MASK64
        self.base = xp.arange(start, stop, dtype=np.uint64)
        self.base *= np.uint64(_STREAMS * _GAMMA & _MASK64)
        self.tmp = xp.empty_like(self.base)

    def draw(self, stream: int, out):
        """The 64-bit draws of ``stream`` for the block's edges, into ``out`` (uint64, the block's length)."""
        self.xp.add(self.base, np.uint64((self.seed + (stream + 1) * _GAMMA) & _MASK64), out=out)
        _mix64(self.xp, out, self.tmp)
        return out


def _host_draw(seed: int, counter: int) -> int:
    """SplitMix64 output number ``counter`` for ``seed``, on the host (for per-graph constants)."""
    return _mix64_host((int(seed) + (counter + 1) * _GAMMA) & _MASK64)


# Per-graph constants (the scramble's) are host draws at counters from 2**60
# on, far past any edge's (e * 32 + s < 2**53), so they are independent of
# the edge draws of the same seed.
_HOST_COUNTER = 1 << 60


def _block_size(xp) -> int:
    """Edges drawn per pass: cache-sized on the CPU; on a GPU large enough to hide kernel launches."""
    return 1 << 16 if xp is np else 1 << 23


# -- vertex scramble ------------------------------------------------------------------


def _scramble_constants(scale: int, seed: int):
    """Odd multipliers, addends and the xor-shift of the scramble for ``scale`` bits and ``seed``."""
    mask = (1 << scale) - 1
    d = [_host_draw(seed, _HOST_COUNTER + i) for i in range(4)]
    return ((d[0] | 1) & mask, d[1] & mask, (d[2] | 1) & mask, d[3] & mask, max(1, (scale + 1) // 2))


def _scramble(xp, v, scale: int, seed: int, tmp=None):
    """Relabel uint64 ids in ``[0, 2**scale)`` by a seeded bijection of that range, in place.

    Two rounds of ``v = v * M + K mod 2**scale`` (M odd: invertible mod a
    power of two; carries move information from low bits up) followed by
    ``v ^= v >> r`` (invertible; moves high bits down), with ``r`` about
    half the bits.  Graph500's reference scrambles the same way (a
    bit-reversal and multiplies by odd constants); no table of 2**scale
    entries is needed, and every process computes the same labels.
    """
    m1, k1, m2, k2, r = _scramble_constants(scale, seed)
    mask, shift = np.uint64((1 << scale) - 1), np.uint64(r)
    tmp = xp.empty_like(v) if tmp is None else tmp
    for m, k in ((m1, k1), (m2, k2)):
        v *= np.uint64(m)
        v += np.uint64(k)
        v &= mask
        xp.right_shift(v, shift, out=tmp)
        v ^= tmp
    return v


# -- validation -----------------------------------------------------------------------


def _check_int(name: str, value, lowest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lowest:
        raise ValueError(f"{name} must be an integer >= {lowest}, got {value!r}")


def _check_range(start, stop, m: int) -> tuple[int, int]:
    """``(start, stop)`` as ints, ``stop`` None meaning ``m``; ValueError unless ``0 <= start <= stop <= m``."""
    stop = m if stop is None else stop
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    start, stop = int(start), int(stop)
    if not 0 <= start <= stop <= m:
        raise ValueError(f"edge range [{start}, {stop}) must lie within [0, {m}]")
    return start, stop


def _check_edges_memory(name: str, k: int, weighted: bool, xp) -> None:
    """The ``k`` edges about to be drawn (int64 endpoints, float64 weights) must fit on ``xp``'s device: a range of
    a big list asked for at once would otherwise end in NumPy's allocation error or the OOM killer."""
    memory.check(k * (24 if weighted else 16), f"{name}: drawing {k:,} edges", xp)


def _check_graph_memory(name: str, n: int, m: int, weighted: bool, xp) -> None:
    """A whole undirected graph of ``m`` drawn edges built at once (the edges, then Graph.from_edges) must fit."""
    need = m * (24 if weighted else 16) + memory.whole_build_bytes(n, 2 * m, weighted=weighted)
    memory.check(need, f"{name}: building {memory.describe(n, 2 * m, bound=True)}", xp)


def _check_weights(weights) -> tuple[int, int] | None:
    if weights is None:
        return None
    lo, hi = (int(v) for v in weights)
    if lo > hi:
        raise ValueError(f"weights=(lo, hi) needs lo <= hi, got ({lo}, {hi})")
    if hi - lo >= 1 << 53:
        raise ValueError(f"weights=(lo, hi) needs hi - lo < 2**53 (exact in float64), got ({lo}, {hi})")
    return lo, hi


def _check_rmat(scale, edge_factor, a, b, c) -> int:
    """Validates R-MAT parameters; returns the number of edges."""
    _check_int("scale", scale, 1)
    _check_int("edge_factor", edge_factor, 1)
    if scale > MAX_SCALE:
        raise ValueError(f"scale must be at most {MAX_SCALE} (MAX_SCALE: vertex ids below 2**{MAX_SCALE}),"
                         f" got {scale}")
    m = int(edge_factor) << int(scale)
    if m > MAX_EDGES:
        raise ValueError(f"edge_factor * 2**scale = {m} edges is more than MAX_EDGES = 2**48")
    if min(a, b, c) <= 0 or a + b + c >= 1:
        raise ValueError(f"R-MAT probabilities need a, b, c > 0 and a + b + c < 1, got {a}, {b}, {c}")
    return m


def _check_grid(width, height) -> int:
    """Validates grid sides; returns the number of edges."""
    _check_int("width", width, 1)
    _check_int("height", height, 1)
    if int(width) * int(height) > MAX_VERTICES:
        raise ValueError(f"width * height = {int(width) * int(height)} vertices is more than"
                         f" MAX_VERTICES = 2**{MAX_SCALE}")
    return (int(width) - 1) * int(height) + int(width) * (int(height) - 1)


def _check_er(n, m) -> int:
    _check_int("n", n, 1)
    _check_int("m", m, 0)
    if n > MAX_VERTICES:
        raise ValueError(f"n = {n} vertices is more than MAX_VERTICES = 2**{MAX_SCALE}")
    if m > MAX_EDGES:
        raise ValueError(f"m = {m} edges is more than MAX_EDGES = 2**48")
    return int(m)


# -- edge lists -----------------------------------------------------------------------


def _weights_into(counter: _Counter, span_lo, out, z) -> None:
    """Integer weights uniform in ``[lo, hi]`` (as float64) into ``out``, from the weight draw.

    ``z % (hi - lo + 1)`` has a modulo bias below ``(hi - lo + 1) / 2**64``.
    """
    lo, hi = span_lo
    counter.draw(_WEIGHT_STREAM, out=z)
    z %= np.uint64(hi - lo + 1)
    out[...] = z          # uint64 -> float64, exact below 2**53
    out += float(lo)


def _blocks(xp, start: int, stop: int):
    size = _block_size(xp)
    for lo in range(start, stop, size):
        yield lo, min(lo + size, stop)


def rmat_edges(scale: int, edge_factor: int = EDGE_FACTOR, *, start: int = 0, stop: int | None = None,
               xp=np, seed: int = 0, a: float = RMAT_A, b: float = RMAT_B, c: float = RMAT_C,
               weights: tuple[int, int] | None = None):
    """Edges ``[start, stop)`` of the Graph500 Kronecker list of ``edge_factor * 2**scale`` edges on ``2**scale`` vertices.

    Each of the ``scale`` levels sets one bit of both endpoints: a uniform
    32-bit draw per edge and level picks the quadrant A, B, C or D by
    integer thresholds ``round(p * 2**32)`` (the distribution of the
    reference's two draws, with half the random numbers; integer
    comparisons keep NumPy and CuPy identical).  Level ``l`` sets bit
    ``scale - 1 - l``.  The ids are then relabelled by the seeded bijection
    :func:`_scramble`, so high degree is not tied to low ids.  Self-loops and
    duplicates are kept, as in Graph500; the reference's shuffle of the edge
    order is not done, since the order does not change the graph.

    ``stop`` defaults to the whole list.  Edge ``e`` depends only on
    ``(seed, e)``, so concatenating the ranges of any split gives the whole
    list.  Returns ``(src, dst, w)`` on ``xp``: int64 arrays of length
    ``stop - start`` and float64 weights (integers in ``[lo, hi]``) or None.
    """
    m = _check_rmat(scale, edge_factor, a, b, c)
    start, stop = _check_range(start, stop, m)
    weights = _check_weights(weights)
    _check_edges_memory(f"rmat_edges({scale}, {edge_factor})", stop - start, weights is not None, xp)
    src, dst, w = _rmat_raw(xp, scale, start, stop, seed, (a, b, c), weights, scramble=True)
    return src, dst, w


def _rmat_raw(xp, scale: int, start: int, stop: int, seed: int, abc, weights, *, scramble: bool):
    """The R-MAT edges of :func:`rmat_edges`; ``scramble=False`` leaves the Kronecker ids (tests use it)."""
    a, b, c = abc
    thresholds = [np.uint64(min(round(p * 2 ** 32), 2 ** 32)) for p in (a, a + b, a + b + c)]
    k = stop - start
    src = xp.empty(k, dtype=np.int64)
    dst = xp.empty(k, dtype=np.int64)
    w = None if weights is None else xp.empty(k, dtype=np.float64)
    for lo, hi in _blocks(xp, start, stop):
        counter = _Counter(xp, seed, lo, hi)
        z, u, s, d = (xp.empty(hi - lo, dtype=np.uint64) for _ in range(4))
        t1, t2, t3 = (xp.empty(hi - lo, dtype=bool) for _ in range(3))
        s.fill(0)
        d.fill(0)
        for level in range(scale):
            if level % 2 == 0:
                counter.draw(level // 2, out=z)
                xp.right_shift(z, _SHIFT[32], out=u)     # even levels: the high 32 bits
            else:
                xp.bitwise_and(z, _U32, out=u)           # odd levels: the low 32 bits
            xp.greater_equal(u, thresholds[0], out=t1)   # B, C or D
            xp.greater_equal(u, thresholds[1], out=t2)   # C or D: the row (src) bit
            xp.greater_equal(u, thresholds[2], out=t3)   # D
            t1 ^= t2
            t1 ^= t3                                     # B or D: the column (dst) bit
            xp.left_shift(s, _SHIFT[1], out=s)
            xp.left_shift(d, _SHIFT[1], out=d)
            s += t2
            d += t1
        if scramble:
            _scramble(xp, s, scale, seed, tmp=u)
            _scramble(xp, d, scale, seed, tmp=u)
        src[lo - start:hi - start] = s.view(np.int64)   # ids < 2**40: the same bits as int64
        dst[lo - start:hi - start] = d.view(np.int64)
        if w is not None:
            _weights_into(counter, weights, w[lo - start:hi - start], z)
    return src, dst, w


def grid_edges(width: int, height: int, *, start: int = 0, stop: int | None = None, xp=np, seed: int = 0,
               weights: tuple[int, int] | None = None):
    """Edges ``[start, stop)`` of the ``width x height`` 4-neighbour lattice; vertex ``(x, y)`` has id ``y * width + x``.

    Edge ``e`` is computed arithmetically: the ``(width - 1) * height``
    horizontal edges ``(y * width + x, y * width + x + 1)`` come first, row
    by row, then the ``width * (height - 1)`` vertical ones ``(v, v +
    width)`` in order of ``v``.  ``seed`` only matters with ``weights``.
    Returns ``(src, dst, w)`` as :func:`rmat_edges` does.
    """
    m = _check_grid(width, height)
    start, stop = _check_range(start, stop, m)
    weights = _check_weights(weights)
    _check_edges_memory(f"grid_edges({width}, {height})", stop - start, weights is not None, xp)
    horizontal = (width - 1) * height
    k = stop - start
    src = xp.empty(k, dtype=np.int64)
    dst = xp.empty(k, dtype=np.int64)
    split = min(max(horizontal, start), stop)   # the first vertical edge in the range
    if split > start:
        e = xp.arange(start, split, dtype=np.int64)
        xp.floor_divide(e, np.int64(width - 1), out=src[:split - start])   # row y
        src[:split - start] += e                                           # y * (width - 1) + x + y
        dst[:split - start] = src[:split - start] + np.int64(1)
        del e
    if stop > split:
        src[split - start:] = xp.arange(split - horizontal, stop - horizontal, dtype=np.int64)
        dst[split - start:] = src[split - start:] + np.int64(width)
    w = None
    if weights is not None:
        w = xp.empty(k, dtype=np.float64)
        for lo, hi in _blocks(xp, start, stop):
            _weights_into(_Counter(xp, seed, lo, hi), weights, w[lo - start:hi - start],
                          xp.empty(hi - lo, dtype=np.uint64))
    return src, dst, w


def erdos_renyi_edges(n: int, m: int, *, start: int = 0, stop: int | None = None, xp=np, seed: int = 0,
                      weights: tuple[int, int] | None = None):
    """Edges ``[start, stop)`` of ``m`` uniformly random vertex pairs on ``n`` vertices.

    Both endpoints of edge ``e`` are 64-bit draws reduced mod ``n``; the
    modulo bias is below ``n / 2**64`` (at most 2**-24 relative, as ``n <=
    2**40``).  Returns ``(src, dst, w)`` as :func:`rmat_edges` does.
    """
    m = _check_er(n, m)
    start, stop = _check_range(start, stop, m)
    weights = _check_weights(weights)
    _check_edges_memory(f"erdos_renyi_edges({n}, {m})", stop - start, weights is not None, xp)
    k = stop - start
    src = xp.empty(k, dtype=np.int64)
    dst = xp.empty(k, dtype=np.int64)
    w = None if weights is None else xp.empty(k, dtype=np.float64)
    nn = np.uint64(n)
    for lo, hi in _blocks(xp, start, stop):
        counter = _Counter(xp, seed, lo, hi)
        z = xp.empty(hi - lo, dtype=np.uint64)
        for stream, out in ((0, src), (1, dst)):
            counter.draw(stream, out=z)
            z %= nn
            out[lo - start:hi - start] = z.view(np.int64)
        if w is not None:
            _weights_into(counter, weights, w[lo - start:hi - start], z)
    return src, dst, w


# -- whole graphs ---------------------------------------------------------------------


def rmat(scale: int, edge_factor: int = EDGE_FACTOR, *, xp=np, seed: int = 0,
         a: float = RMAT_A, b: float = RMAT_B, c: float = RMAT_C,
         weights: tuple[int, int] | None = None) -> Graph:
    """An undirected Graph500 R-MAT graph (self-loops dropped, duplicates merged keeping the lightest)."""
    m = _check_rmat(scale, edge_factor, a, b, c)
    _check_graph_memory(f"rmat({scale}, {edge_factor})", 1 << int(scale), m, weights is not None, xp)
    src, dst, w = rmat_edges(scale, edge_factor, xp=xp, seed=seed, a=a, b=b, c=c, weights=weights)
    return Graph.from_edges(src, dst, w, num_vertices=1 << scale, directed=False)


def grid(width: int, height: int, *, xp=np, seed: int = 0, weights: tuple[int, int] | None = None) -> Graph:
    """A ``width x height`` 4-neighbour lattice, undirected: road-like, diameter ``width + height - 2``.

    Vertex ``(x, y)`` has id ``y * width + x``.  ``seed`` only matters with ``weights``.
    """
    m = _check_grid(width, height)
    _check_graph_memory(f"grid({width}, {height})", int(width) * int(height), m, weights is not None, xp)
    src, dst, w = grid_edges(width, height, xp=xp, seed=seed, weights=weights)
    return Graph.from_edges(src, dst, w, num_vertices=width * height, directed=False)


def erdos_renyi(n: int, m: int, seed: int = 0, *, xp=np, weights: tuple[int, int] | None = None) -> Graph:
    """An undirected G(n, m)-like graph: ``m`` uniformly random vertex pairs on ``n`` vertices.

    Self-loops and repeated pairs are merged by construction, so the graph
    has slightly fewer than ``m`` edges (about ``m * m / n**2`` fewer).
    """
    _check_graph_memory(f"erdos_renyi({n}, {m})", int(n), _check_er(n, m), weights is not None, xp)
    src, dst, w = erdos_renyi_edges(n, m, xp=xp, seed=seed, weights=weights)
    return Graph.from_edges(src, dst, w, num_vertices=n, directed=False)


# -- specs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeSpec:
    """A generated edge list described by its spec, from which any range of edges can be drawn.

    A distributed builder gives each rank a range ``[start, stop)`` of
    ``range(num_edges)``; the ranks' edges together are the whole list,
    whatever the split.  ``num_edges`` counts the generated list, before
    self-loops and duplicates are removed.  Small and picklable: ranks can
    receive it instead of edges.
    """

    name: str
    num_vertices: int
    num_edges: int
    weighted: bool
    directed: bool = False
    seed: int = 0
    weight_range: tuple[int, int] | None = None
    kind: str = field(default="", repr=False)
    args: tuple[int, ...] = field(default=(), repr=False)

    def edges(self, start: int = 0, stop: int | None = None, xp=np):
        """Edges ``[start, stop)`` (``stop`` defaults to ``num_edges``) as ``(src, dst, w)`` on ``xp``."""
        make = {"rmat": rmat_edges, "grid": grid_edges, "er": erdos_renyi_edges}[self.kind]
        return make(*self.args, start=start, stop=stop, xp=xp, seed=self.seed, weights=self.weight_range)

    def graph(self, xp=np) -> Graph:
        """The whole undirected graph, built from all the edges at once."""
        _check_graph_memory(self.name, self.num_vertices, self.num_edges, self.weighted, xp)
        src, dst, w = self.edges(0, self.num_edges, xp)
        return Graph.from_edges(src, dst, w, num_vertices=self.num_vertices, directed=self.directed)


def is_spec(text: str) -> bool:
    """True when ``text`` names a generator (``rmat:``, ``grid:`` or ``er:``), well-formed or not."""
    return text.split(":", 1)[0].lower() in _SPEC_PATTERNS and ":" in text


def spec_edges(spec: str, *, seed: int = 0, weights: tuple[int, int] | None = None) -> EdgeSpec:
    """The edge list a spec string names: ``rmat:SCALE[:EDGEFACTOR]``, ``grid:WxH`` or ``er:N:M``.

    Validates everything (form, parameters, size limits MAX_SCALE,
    MAX_VERTICES and MAX_EDGES, weights) without drawing an edge; raises
    ValueError with a one-line message naming the spec.
    """
    kind = spec.split(":", 1)[0].lower()
    match = _SPEC_PATTERNS[kind].fullmatch(spec.strip()) if kind in _SPEC_PATTERNS else None
    if match is None:
        raise ValueError(f"bad graph spec {spec!r}: expected {SPEC_FORMS} with integers,"
                         " e.g. rmat:20, grid:100x200, er:1000:5000")
    args = tuple(int(g) for g in match.groups() if g is not None)
    try:
        if kind == "rmat":
            args = (args[0], args[1] if len(args) > 1 else EDGE_FACTOR)
            num_edges, n = _check_rmat(*args, RMAT_A, RMAT_B, RMAT_C), 1 << args[0]
        elif kind == "grid":
            num_edges, n = _check_grid(*args), args[0] * args[1]
        else:
            num_edges, n = _check_er(*args), args[0]
        weight_range = _check_weights(weights)
    except ValueError as e:
        raise ValueError(f"bad graph spec {spec!r}: {e}") from None
    return EdgeSpec(name=spec, num_vertices=n, num_edges=num_edges, weighted=weight_range is not None,
                    directed=False, seed=int(seed), weight_range=weight_range, kind=kind, args=args)


def from_spec(spec: str, *, xp=np, seed: int = 0, weights: tuple[int, int] | None = None) -> Graph:
    """The graph a spec string names: ``rmat:SCALE[:EDGEFACTOR]``, ``grid:WxH`` or ``er:N:M``.

    Raises ValueError with a one-line message for anything else.
    """
    return spec_edges(spec, seed=seed, weights=weights).graph(xp)


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

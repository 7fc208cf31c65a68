"""Synthetic graphs: Graph500 Kronecker (R-MAT), 2-D grids, Erdos-Renyi and random geometric graphs.

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
draw 31.  A random geometric graph draws its points, not its edges: point
``i``'s coordinates are draws 0 and 1 of index ``i``, and its "edge index"
runs over candidate pairs of points in neighbouring cells (see
:class:`RggPoints`), each of which becomes an edge when the two points lie
within the radius.  R-MAT vertex ids are then relabelled by a seeded bijection on
``[0, 2**scale)`` (:func:`_scramble`) computed arithmetically, so high degree
is not tied to low ids without a permutation table.

Memory is O(stop - start) per call: edges are drawn in blocks into the
output arrays, whose size the caller picks through ``[start, stop)``.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

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

SPEC_FORMS = "rmat:SCALE[:EDGEFACTOR], grid:WIDTHxHEIGHT, er:N:M or rgg:SCALE[:RADIUS]"
_SPEC_PATTERNS = {
    "rmat": re.compile(r"rmat:(\d+)(?::(\d+))?", re.IGNORECASE),
    "grid": re.compile(r"grid:(\d+)x(\d+)", re.IGNORECASE),
    "er": re.compile(r"er:(\d+):(\d+)", re.IGNORECASE),
    "rgg": re.compile(r"rgg:(\d+)(?::((?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?))?", re.IGNORECASE),
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


def _draw_at(xp, seed: int, index, stream: int, out, tmp):
    """The draws of ``stream`` for arbitrary uint64 indices ``index`` (what :class:`_Counter` gives for a range),
    into ``out``; ``tmp`` is scratch of the same length."""
    xp.multiply(index, np.uint64(_STREAMS * _GAMMA & _MASK64), out=out)
    out += np.uint64((int(seed) + (stream + 1) * _GAMMA) & _MASK64)
    _mix64(xp, out, tmp)
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


# -- random geometric graphs ----------------------------------------------------------

RGG_RADIUS_FACTOR = 0.55  # DIMACS10's rgg_n_2_S and Gunrock's rgg_n_24: r = 0.55 * sqrt(ln n / n)
# Every worker holds all 2**S points sorted by cell (about 30 bytes each, RggPoints); 2**30 points are 30 GiB
# of it, beyond what a GPU beside its part can spare.  Ids, cells and coordinates then fit in 32 bits.
MAX_RGG_SCALE = 30
_COORD_BITS = 31          # coordinates are integers below 2**31: point (X, Y) is (X / 2**31, Y / 2**31)
_COORD_SHIFT = np.uint64(64 - _COORD_BITS)
_RGG_COUNT_BLOCK = 1 << 20  # points counted per pass on the host when sizing the candidate list


def rgg_radius(scale: int) -> float:
    """The default radius of ``rgg:scale``: ``0.55 * sqrt(ln n / n)`` for ``n = 2**scale`` points.

    DIMACS10's ``rgg_n_2_S`` graphs (Gunrock's ``rgg_n_24``) use it: just
    below the connectivity threshold ``sqrt(ln n / (pi n))``, so a giant
    component holds nearly every point, each with about ``pi r**2 n = 0.95
    ln n`` neighbours (15.8 at scale 24) and a hop diameter of order ``1 / r``.
    """
    n = 1 << int(scale)
    return RGG_RADIUS_FACTOR * math.sqrt(math.log(n) / n)


def _check_rgg(scale, radius) -> float:
    """Validates an rgg's scale and radius (None: the default); returns the radius."""
    _check_int("scale", scale, 1)
    if scale > MAX_RGG_SCALE:
        raise ValueError(f"scale must be at most {MAX_RGG_SCALE} for rgg (MAX_RGG_SCALE: every worker holds all"
                         f" 2**scale points), got {scale}")
    if radius is None:
        return rgg_radius(scale)
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)) \
            or not math.isfinite(radius) or radius <= 0:
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    return float(radius)


def _rgg_geometry(scale: int, radius: float) -> tuple[int, int]:
    """``(side, r2)``: cells per side of the unit square, and the squared radius in coordinate units.

    Cells are at least ``radius`` wide (``side <= 1 / radius``, exactly), so
    points more than one cell apart in x or in y are farther apart than the
    radius and only neighbouring cells hold candidate pairs.  At most ``n``
    cells (a tiny radius would ask for more cells than points).  ``r2 =
    floor(radius**2 * 2**62)``, computed exactly: two points join when
    ``dx**2 + dy**2 <= r2`` in integer coordinates (below 2**63, so int64
    holds it), the same test on every device.
    """
    exact = Fraction(radius)
    side = max(1, min(int(1 / exact), math.isqrt(1 << scale)))
    r2 = min(int(exact * exact * (1 << (2 * _COORD_BITS))), (1 << 63) - 1)
    return side, r2


def _rgg_cells(xp, seed: int, index, side: int, out, tmp, tmp2):
    """The cell ``cy * side + cx`` of points ``index`` (uint64), into ``out`` (uint64); the coordinates' draws go
    through ``tmp`` and ``tmp2``."""
    _draw_at(xp, seed, index, 1, tmp2, tmp)
    xp.right_shift(tmp2, _COORD_SHIFT, out=tmp2)   # Y
    tmp2 *= np.uint64(side)
    xp.right_shift(tmp2, np.uint64(_COORD_BITS), out=tmp2)   # cy
    _draw_at(xp, seed, index, 0, out, tmp)
    xp.right_shift(out, _COORD_SHIFT, out=out)     # X
    out *= np.uint64(side)
    xp.right_shift(out, np.uint64(_COORD_BITS), out=out)     # cx
    tmp2 *= np.uint64(side)
    out += tmp2
    return out


def _candidates_of_counts(counts) -> int:
    """The candidate pairs of a ``side x side`` grid of point counts (NumPy, indexed [cy, cx]): pairs within a
    cell, and every pair of points in cells next to each other (across, up, and both diagonals), once."""
    c = counts.astype(np.int64)
    total = int(np.sum(c * (c - 1) // 2))
    total += int(np.sum(c[:, :-1] * c[:, 1:]))    # (cx, cy) with (cx + 1, cy)
    total += int(np.sum(c[:-1, :] * c[1:, :]))    # with (cx, cy + 1)
    total += int(np.sum(c[:-1, :-1] * c[1:, 1:]))  # with (cx + 1, cy + 1)
    total += int(np.sum(c[:-1, 1:] * c[1:, :-1]))  # with (cx - 1, cy + 1)
    return total


@functools.lru_cache(maxsize=16)
def _rgg_num_candidates(scale: int, radius: float, seed: int) -> int:
    """The length of an rgg's candidate list, counted on the host from its points' cells (no sort, no table).

    What a spec needs to size and split the list before any worker draws;
    O(2**scale) work, kept for the process (a spec is made more than once:
    the command line checks memory before it builds).
    """
    n = 1 << scale
    side, _ = _rgg_geometry(scale, radius)
    if side == 1:  # one cell: every pair is a candidate
        return n * (n - 1) // 2
    # the counts and one block's bincount of them; per point of a block its index, cell and two draws
    memory.check(16 * side * side + 32 * min(n, _RGG_COUNT_BLOCK), f"rgg:{scale}: counting the cells of its points")
    counts = np.zeros(side * side, dtype=np.int64)
    for lo in range(0, n, _RGG_COUNT_BLOCK):
        hi = min(lo + _RGG_COUNT_BLOCK, n)
        index = np.arange(lo, hi, dtype=np.uint64)
        cells = _rgg_cells(np, seed, index, side, np.empty_like(index), np.empty_like(index), np.empty_like(index))
        counts += np.bincount(cells.view(np.int64), minlength=side * side)
    return _candidates_of_counts(counts.reshape(side, side))


def rgg_points(scale: int, *, xp=np, seed: int = 0, start: int = 0, stop: int | None = None):
    """Integer coordinates ``(X, Y)`` (int64, below 2**31) of points ``[start, stop)`` of ``rgg:scale``.

    Point ``i`` lies at ``(X / 2**31, Y / 2**31)`` in the unit square, uniform:
    ``X`` is the top 31 bits of draw 0 of index ``i`` (SplitMix64 output
    number ``i * 32``), ``Y`` those of draw 1.  The radius does not move the
    points.
    """
    _check_rgg(scale, None)
    start, stop = _check_range(start, stop, 1 << scale)
    index = xp.arange(start, stop, dtype=np.uint64)
    tmp = xp.empty_like(index)
    out = []
    for stream in (0, 1):
        z = _draw_at(xp, seed, index, stream, xp.empty_like(index), tmp)
        xp.right_shift(z, _COORD_SHIFT, out=z)
        out.append(z.view(np.int64))
    return out[0], out[1]


class RggPoints:
    """All points of an rgg on one device, sorted by cell: what a worker draws any range of candidate pairs from.

    The unit square is cut into ``side x side`` cells of side at least the
    radius (:func:`_rgg_geometry`); cell ``cy * side + cx``.  Points are
    sorted by cell, then by id, and each sorted point ``k`` in cell ``(cx,
    cy)`` lists as candidates the points after it that could lie within the
    radius, in two runs that are contiguous in this order:

    * A: the rest of its own cell, then the cell at ``(cx + 1, cy)``;
    * B: the cells ``(cx - 1 .. cx + 1, cy + 1)`` of the row above.

    Every pair of points in the same or neighbouring cells is listed once, by
    the one that comes first in this order.  Candidate ``e`` of the whole
    list is ``first[k] + t``: the ``t``-th candidate of point ``k``, A before
    B.  That index depends on the points alone, so ranges of it split the
    pairs the same way for any number of workers; an edge is a candidate
    pair at distance at most the radius.  About 2.9 candidates per edge
    (cells of side r hold 9 r**2 around a point, the disc pi r**2).

    Held per point: its id, cell and coordinates (int32 each) and its first
    candidate (int64); per cell its first point (int64).
    """

    def __init__(self, xp, scale: int, radius: float, seed: int = 0):
        n = 1 << scale
        self.xp, self.scale, self.radius, self.seed = xp, scale, radius, int(seed)
        self.num_points = n
        self.side, self.r2 = _rgg_geometry(scale, radius)
        cells = self.side * self.side
        memory.check(memory.rgg_points_bytes(n, cells), f"rgg:{scale}: the table of its {n:,} points", xp)
        key = xp.empty(n, dtype=np.uint64)   # cell << scale | id: unique, so any sort gives one order
        for lo, hi in _blocks(xp, 0, n):
            index = xp.arange(lo, hi, dtype=np.uint64)
            scratch = xp.empty_like(index)
            cell = _rgg_cells(xp, self.seed, index, self.side, key[lo:hi], scratch, xp.empty_like(index))
            xp.left_shift(cell, np.uint64(scale), out=cell)
            cell |= index
        key.sort()
        self.ids = (key & np.uint64(n - 1)).astype(np.int32)
        xp.right_shift(key, np.uint64(scale), out=key)
        self.cell = key.astype(np.int32)
        del key
        self.x = xp.empty(n, dtype=np.int32)
        self.y = xp.empty(n, dtype=np.int32)
        for lo, hi in _blocks(xp, 0, n):
            index = self.ids[lo:hi].astype(np.uint64)
            z, scratch = xp.empty_like(index), xp.empty_like(index)
            for stream, coord in ((0, self.x), (1, self.y)):
                _draw_at(xp, self.seed, index, stream, z, scratch)
                xp.right_shift(z, _COORD_SHIFT, out=z)
                coord[lo:hi] = z.astype(np.int32)
        self.cell_start = xp.zeros(cells + 1, dtype=np.int64)
        xp.cumsum(xp.bincount(self.cell, minlength=cells), out=self.cell_start[1:])
        counts = xp.empty(n, dtype=np.int64)
        for lo, hi in _blocks(xp, 0, n):
            k = xp.arange(lo, hi, dtype=np.int64)
            a_end, b_start, b_end = self._runs(k)
            counts[lo:hi] = (a_end - k - 1) + (b_end - b_start)
        self.first = xp.zeros(n + 1, dtype=np.int64)
        xp.cumsum(counts, out=self.first[1:])
        del counts
        self.num_candidates = int(self.first[-1])

    def _runs(self, k):
        """For sorted points ``k`` (int64): the end of run A (it starts at ``k + 1``) and run B's ``[start, end)``."""
        xp, side, cells = self.xp, self.side, self.side * self.side
        c = self.cell[k].astype(np.int64)
        cx = c % np.int64(side)
        right = (cx < side - 1).astype(np.int64)       # a cell to the right
        left = (cx > 0).astype(np.int64)
        a_end = self.cell_start[c + 1 + right]
        up = c < cells - side                          # a row above
        lo = xp.minimum(c + side - left, cells)
        hi = xp.minimum(c + side + 1 + right, cells)
        b_start = self.cell_start[lo]
        b_end = xp.where(up, self.cell_start[hi], b_start)
        return a_end, b_start, b_end

    def pairs(self, lo: int, hi: int):
        """The sorted positions ``(k, j)`` of candidates ``[lo, hi)`` (int64 arrays): ``k`` lists ``j``."""
        xp = self.xp
        e = xp.arange(lo, hi, dtype=np.int64)
        k = xp.searchsorted(self.first, e, side="right") - 1
        t = e - self.first[k]
        del e
        a_end, b_start, _ = self._runs(k)
        len_a = a_end - k - 1
        j = xp.where(t < len_a, k + 1 + t, b_start + (t - len_a))
        return k, j

    def within(self, k, j):
        """Which candidate pairs ``(k, j)`` lie within the radius (a bool array): integer arithmetic only."""
        dx = self.x[k].astype(np.int64) - self.x[j]
        dx *= dx
        dy = self.y[k].astype(np.int64) - self.y[j]
        dy *= dy
        dx += dy
        return dx <= np.int64(self.r2)

    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.ids, self.cell, self.x, self.y, self.cell_start, self.first))


def rgg_edges(scale: int, radius: float | None = None, *, start: int = 0, stop: int | None = None, xp=np,
              seed: int = 0, weights: tuple[int, int] | None = None, points: RggPoints | None = None):
    """The edges among candidates ``[start, stop)`` of the random geometric graph on ``2**scale`` points.

    Points are uniform in the unit square (:func:`rgg_points`; vertex ``i``
    is point ``i``) and two are joined when at most ``radius`` apart
    (default :func:`rgg_radius`).  The list runs over candidate pairs
    (:class:`RggPoints`); ``stop`` defaults to its end, ``num_candidates``.
    A range gives the edges among its candidates, in candidate order: at most
    ``stop - start`` of them, each pair once, no self-loops.  Concatenating
    the ranges of any split gives the whole edge list.  The weight of an edge
    is draw 31 of its candidate index.  ``points`` is the table of this
    graph on ``xp`` when the caller keeps one (drawing many ranges); else it
    is built here.  Returns ``(src, dst, w)`` as :func:`rmat_edges` does.
    """
    radius = _check_rgg(scale, radius)
    weights = _check_weights(weights)
    if points is None:
        points = RggPoints(xp, scale, radius, seed)
    elif (points.xp, points.scale, points.radius, points.seed) != (xp, scale, radius, int(seed)):
        raise ValueError(f"points are those of rgg:{points.scale}:{points.radius} seed {points.seed} on"
                         f" {points.xp.__name__}, not of rgg:{scale}:{radius} seed {seed} on {xp.__name__}")
    start, stop = _check_range(start, stop, points.num_candidates)
    _check_edges_memory(f"rgg_edges({scale}, {radius})", stop - start, weights is not None, xp)
    pieces = []
    for lo, hi in _blocks(xp, start, stop):
        k, j = points.pairs(lo, hi)
        keep = points.within(k, j)
        src = points.ids[k[keep]].astype(np.int64)
        dst = points.ids[j[keep]].astype(np.int64)
        del k, j
        w = None
        if weights is not None:
            w = xp.empty(hi - lo, dtype=np.float64)
            _weights_into(_Counter(xp, seed, lo, hi), weights, w, xp.empty(hi - lo, dtype=np.uint64))
            w = w[keep]
        pieces.append((src, dst, w))
    if not pieces:
        empty = xp.empty(0, dtype=np.int64)
        return empty, empty.copy(), None if weights is None else xp.empty(0, dtype=np.float64)
    src, dst, w = (xp.concatenate([p[i] for p in pieces]) if weights is not None or i < 2 else None
                   for i in range(3))
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


def rgg(scale: int, radius: float | None = None, *, xp=np, seed: int = 0,
        weights: tuple[int, int] | None = None) -> Graph:
    """A random geometric graph: ``2**scale`` points uniform in the unit square, joined within ``radius``.

    The default radius is :func:`rgg_radius` (``0.55 * sqrt(ln n / n)``, as
    DIMACS10's and Gunrock's ``rgg_n_2_S``); vertex ``i`` is point ``i`` of
    :func:`rgg_points`.  Undirected and simple by construction.
    """
    radius = _check_rgg(scale, radius)
    points = RggPoints(xp, scale, radius, seed)
    _check_graph_memory(f"rgg({scale}, {radius})", 1 << scale, points.num_candidates, weights is not None, xp)
    src, dst, w = rgg_edges(scale, radius, xp=xp, seed=seed, weights=weights, points=points)
    del points
    return Graph.from_edges(src, dst, w, num_vertices=1 << scale, directed=False)


# -- specs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeSpec:
    """A generated edge list described by its spec, from which any range of edges can be drawn.

    A distributed builder gives each rank a range ``[start, stop)`` of
    ``range(num_edges)``; the ranks' edges together are the whole list,
    whatever the split.  ``num_edges`` counts the generated list, before
    self-loops and duplicates are removed; for ``rgg`` it counts the
    candidate pairs, a range of which gives only those within the radius
    (about one in 2.9), so it bounds the edges.  Small and picklable: ranks
    can receive it instead of edges.
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

    def prepare(self, xp=np):
        """What drawing ranges of this list on ``xp``'s device needs beyond the spec, for :meth:`edges`'
        ``prepared``: an rgg's points sorted by cell (:class:`RggPoints`), None for the other kinds.  A caller
        drawing many ranges keeps it, so the points are drawn and sorted once."""
        if self.kind != "rgg":
            return None
        points = RggPoints(xp, *self.args, seed=self.seed)
        if points.num_candidates != self.num_edges:  # the host's count and the device's table disagree
            raise RuntimeError(f"{self.name}: {points.num_candidates} candidate pairs on {xp.__name__},"
                               f" {self.num_edges} counted on the host")
        return points

    def edges(self, start: int = 0, stop: int | None = None, xp=np, prepared=None):
        """Edges ``[start, stop)`` (``stop`` defaults to ``num_edges``) as ``(src, dst, w)`` on ``xp``.

        ``prepared`` is :meth:`prepare`'s result on ``xp``, or None to make it
        here (an rgg's points, drawn and sorted for this call alone).
        """
        if self.kind == "rgg":
            return rgg_edges(*self.args, start=start, stop=stop, xp=xp, seed=self.seed, weights=self.weight_range,
                             points=self.prepare(xp) if prepared is None else prepared)
        make = {"rmat": rmat_edges, "grid": grid_edges, "er": erdos_renyi_edges}[self.kind]
        return make(*self.args, start=start, stop=stop, xp=xp, seed=self.seed, weights=self.weight_range)

    def graph(self, xp=np) -> Graph:
        """The whole undirected graph, built from all the edges at once."""
        _check_graph_memory(self.name, self.num_vertices, self.num_edges, self.weighted, xp)
        src, dst, w = self.edges(0, self.num_edges, xp)
        return Graph.from_edges(src, dst, w, num_vertices=self.num_vertices, directed=self.directed)


def is_spec(text: str) -> bool:
    """True when ``text`` names a generator (``rmat:``, ``grid:``, ``er:`` or ``rgg:``), well-formed or not."""
    return text.split(":", 1)[0].lower() in _SPEC_PATTERNS and ":" in text


def spec_edges(spec: str, *, seed: int = 0, weights: tuple[int, int] | None = None) -> EdgeSpec:
    """The edge list a spec string names: ``rmat:SCALE[:EDGEFACTOR]``, ``grid:WxH``, ``er:N:M`` or
    ``rgg:SCALE[:RADIUS]``.

    Validates everything (form, parameters, size limits MAX_SCALE,
    MAX_VERTICES, MAX_EDGES and MAX_RGG_SCALE, weights) without drawing an
    edge; raises ValueError with a one-line message naming the spec.  An rgg
    spec counts its candidate pairs here (its points' cells, on the host:
    about a second per 2**24 points, once per process).
    """
    kind = spec.split(":", 1)[0].lower()
    match = _SPEC_PATTERNS[kind].fullmatch(spec.strip()) if kind in _SPEC_PATTERNS else None
    if match is None:
        raise ValueError(f"bad graph spec {spec!r}: expected {SPEC_FORMS} (integers; RADIUS a positive number),"
                         " e.g. rmat:20, grid:100x200, er:1000:5000, rgg:16, rgg:16:0.01")
    groups = [g for g in match.groups() if g is not None]
    args = tuple(float(g) if kind == "rgg" and i == 1 else int(g) for i, g in enumerate(groups))
    try:
        weight_range = _check_weights(weights)
        if kind == "rmat":
            args = (args[0], args[1] if len(args) > 1 else EDGE_FACTOR)
            num_edges, n = _check_rmat(*args, RMAT_A, RMAT_B, RMAT_C), 1 << args[0]
        elif kind == "grid":
            num_edges, n = _check_grid(*args), args[0] * args[1]
        elif kind == "rgg":
            args = (args[0], _check_rgg(args[0], args[1] if len(args) > 1 else None))
            num_edges, n = _rgg_num_candidates(*args, int(seed)), 1 << args[0]
            if num_edges > MAX_EDGES:
                raise ValueError(f"{num_edges} candidate pairs is more than MAX_EDGES = 2**48: the radius is too"
                                 " large for this many points")
        else:
            num_edges, n = _check_er(*args), args[0]
    except ValueError as e:
        raise ValueError(f"bad graph spec {spec!r}: {e}") from None
    return EdgeSpec(name=spec, num_vertices=n, num_edges=num_edges, weighted=weight_range is not None,
                    directed=False, seed=int(seed), weight_range=weight_range, kind=kind, args=args)


def from_spec(spec: str, *, xp=np, seed: int = 0, weights: tuple[int, int] | None = None) -> Graph:
    """The graph a spec string names: ``rmat:SCALE[:EDGEFACTOR]``, ``grid:WxH``, ``er:N:M`` or ``rgg:SCALE[:RADIUS]``.

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

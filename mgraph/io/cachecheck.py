"""Checks that an .npz graph cache holds a graph the primitives can run on.

A cache is an input like any other file: a disk, a copy or another tool may
damage it, and nothing but its name says mgraph wrote it.  The primitives
trust what :func:`mgraph.io.save_npz` writes (``indptr`` monotone from 0 to
the arc count, ids in range, each row sorted without repeats or self-loops,
finite real weights, a boolean ``directed``, both arcs of every undirected
edge with one weight) and go wrong quietly where it does not hold: a NaN
weight gives SSSP distances that look fine, an unsorted or repeated row a
wrong PageRank, a half-stored undirected edge a graph that is not the one
the file shows.  So a cache is checked on load like any input, each rule a
vectorized pass over the arcs (symmetry also one sort of half of them), and
any breach is a :class:`CacheError` saying what is wrong; :mod:`mgraph.io`
adds the file's name (``GraphFormatError``).

Reading is checked as well.  Each member's ``.npy`` header is read and its
dtype, shape and size compared with the member's size in the zip directory
and with the file's length before anything of that size is allocated, so a
forged header cannot ask for terabytes; and what the members declare
together, which a deflated member may make about 1000 times its stored bytes,
is checked against the memory (:func:`load_bytes`) before any is inflated,
scalars against a few KiB.  Arrays are read with
``allow_pickle=False`` (a cache never holds Python objects); and whatever the
zip or ``.npy`` readers raise on a damaged archive (a bad zip, a CRC or zlib
error, an encrypted member, a truncated array) becomes one CacheError.

Readers of a share (:class:`mgraph.io.FileEdges`, one per MPI rank) check
what their rows show: :func:`check_offsets`, :func:`check_rows`,
:func:`check_weights`, and :func:`check_symmetric_between` on the arcs between
their own rows; see ``FileEdges.part`` for what needs the whole graph.
"""
from __future__ import annotations

import contextlib
import struct
import tokenize
import zipfile
import zlib

import numpy as np

from mgraph import memory

REQUIRED = ("format", "indptr", "indices", "directed", "num_input_edges")
SCALARS = ("format", "directed", "num_input_edges")
ARRAYS = ("indptr", "indices", "weights")

# Deflate cannot expand data by more than about 1032:1, so a deflated member that declares more is forged.
DEFLATE_MAX_RATIO = 1032
# The scalars of a cache are a few dozen bytes (format is 'mgraph-csr-1', 48 bytes as UTF-32); a scalar member that
# declares more (a string dtype of gigabytes) is refused before it is inflated.
SCALAR_MAX_BYTES = 1 << 16
_ENCRYPTED = 0x1 | 0x40  # zip flag bits: traditional and strong encryption


class CacheError(ValueError):
    """What is wrong with a cache, in one line and without the file's name (the caller adds it)."""


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


@contextlib.contextmanager
def readable():
    """Turn every error the zip and ``.npy`` readers raise on a damaged archive into one CacheError.

    The standard library and NumPy signal damage with many types (BadZipFile,
    zlib.error, NotImplementedError for an unsupported or strongly encrypted
    member, RuntimeError for a password, EOFError, ValueError or TypeError from
    the header parser, struct.error...); a caller should see one.
    """
    try:
        yield
    except CacheError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError,
            RuntimeError, ValueError, TypeError, KeyError, IndexError, OverflowError, struct.error) as e:
        raise CacheError(f"not a readable .npz archive ({_one_line(e)})") from None


def members(zf: zipfile.ZipFile, expected_format: str) -> dict:
    """The archive's ``.npy`` members by array name; CacheError unless every member a cache needs is there."""
    infos = {i.filename[:-4]: i for i in zf.infolist() if i.filename.endswith(".npy")}
    missing = sorted(set(REQUIRED) - set(infos))
    if missing:
        raise CacheError(f"not an mgraph graph cache (expected format {expected_format!r}, "
                         f"missing {', '.join(missing)})")
    return infos


def member_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive_size: int):
    """``(dtype, shape, data_start)`` of a ``.npy`` member, checked before any array of that size exists.

    ``data_start`` is where the array's bytes begin inside the member.  The
    header must describe a plain array (no objects, no fields) whose bytes are
    exactly the rest of the member, and the member must fit in the file: a
    header that lies about its size is refused here, not when a huge
    allocation fails or an OOM killer ends the process.
    """
    name = info.filename
    if info.flag_bits & _ENCRYPTED:
        raise CacheError(f"member {name} is encrypted; a graph cache is not")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise CacheError(f"member {name} uses zip compression method {info.compress_type}; "
                         "a graph cache is stored or deflated")
    if info.header_offset + info.compress_size > archive_size:
        raise CacheError(f"member {name} runs past the end of the file (a truncated archive)")
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        raise CacheError(f"member {name} is stored uncompressed but its sizes differ "
                         f"({info.file_size} != {info.compress_size} bytes)")
    if info.file_size > DEFLATE_MAX_RATIO * info.compress_size + 4096:
        raise CacheError(f"member {name} declares {info.file_size} bytes in {info.compress_size} compressed bytes, "
                         "more than deflate can expand to")
    with zf.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        try:
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
            else:
                raise CacheError(f"member {name} has .npy format version {version}; a graph cache uses 1.0 or 2.0")
        except (tokenize.TokenError, SyntaxError) as e:  # NumPy tokenizes the header: a damaged one fails there
            raise CacheError(f"member {name} has a damaged .npy header ({type(e).__name__}: {e})") from None
        data_start = fp.tell()
    if dtype.hasobject:
        raise CacheError(f"member {name} holds Python objects (a pickle), which a graph cache never does")
    if dtype.fields is not None or dtype.subdtype is not None:
        raise CacheError(f"member {name} has the structured dtype {dtype}; a graph cache holds plain arrays")
    if fortran and len(shape) > 1:
        raise CacheError(f"member {name} is a Fortran-ordered array; a graph cache holds 1-D arrays and scalars")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if data_start + nbytes != info.file_size:
        raise CacheError(f"member {name}: its header declares {dtype} {tuple(shape)} ({nbytes} bytes), "
                         f"but the member holds {info.file_size - data_start} bytes of data")
    return dtype, tuple(shape), data_start


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive_size: int) -> np.ndarray:
    """A member's array (header checked first, never unpickled), in native byte order."""
    member_header(zf, info, archive_size)
    with zf.open(info) as fp:
        a = np.lib.format.read_array(fp, allow_pickle=False)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def read_scalars(zf: zipfile.ZipFile, infos: dict, archive_size: int) -> dict:
    """The members ``format``, ``directed`` and ``num_input_edges``, each refused before it is inflated when it
    declares more than :data:`SCALAR_MAX_BYTES` (after :func:`member_header`'s checks, which name other breaches)."""
    for name in SCALARS:
        member_header(zf, infos[name], archive_size)
        if infos[name].file_size > SCALAR_MAX_BYTES:
            raise CacheError(f"member {infos[name].filename} declares {infos[name].file_size:,} bytes; a cache's "
                             f"scalars take less than {SCALAR_MAX_BYTES:,}")
    return {name: read_member(zf, infos[name], archive_size) for name in SCALARS}


def load_bytes(headers: dict, directed: bool) -> int:
    """What :func:`read_cache` and the Graph made of it hold at the peak, from the arrays' ``(dtype, shape)`` headers
    (:func:`mgraph.memory.cache_load_bytes`): the arrays as they are declared, their copies where the CSR keeps
    another type (offsets as int64, ids signed and as wide as the vertex count needs, weights as float64), and the
    checks' working set."""
    n, m = check_layout(headers)
    held = declared_bytes(headers)
    offsets, ids = headers["indptr"][0], headers["indices"][0]
    if offsets != np.int64:
        held += 8 * (n + 1)
    signed = ids.itemsize if ids in (np.int32, np.int64) else 8
    if ids not in (np.int32, np.int64):
        held += 8 * m
    if signed != memory.id_bytes(n):
        held += memory.id_bytes(n) * m
    if "weights" in headers and headers["weights"][0] != np.float64:
        held += 8 * m
    wide = "weights" in headers or n > _KEY_MAX
    return memory.cache_load_bytes(held, m, BLOCK_ARCS, directed=directed, wide=wide)


def declared_bytes(headers: dict) -> int:
    """The bytes the arrays' ``(dtype, shape)`` headers declare together."""
    return sum(int(np.prod(shape, dtype=object)) * dtype.itemsize for dtype, shape in headers.values())


def check_scalars(small: dict, expected_format: str):
    """``(directed, num_input_edges or None)`` from the members ``format``, ``directed`` and ``num_input_edges``.

    ``directed`` must be a boolean scalar: ``bool(np.array("no"))`` is True,
    so anything else would silently read as directed.
    """
    fmt = small["format"]
    if fmt.shape != () or fmt.dtype.kind != "U" or str(fmt) != expected_format:
        raise CacheError(f"not an mgraph graph cache (expected format {expected_format!r})")
    directed = small["directed"]
    if directed.shape != () or directed.dtype != np.bool_:
        raise CacheError(f"directed must be a boolean scalar, got {directed.dtype} {_shape(directed.shape)}")
    num_input = small["num_input_edges"]
    if num_input.shape != () or num_input.dtype.kind not in "iu" or int(num_input) < -1:
        raise CacheError(f"num_input_edges must be an integer scalar >= -1 (-1: unknown), "
                         f"got {num_input.dtype} {_shape(num_input.shape)}")
    num_input = int(num_input)
    return bool(directed), None if num_input < 0 else num_input


def _shape(shape) -> str:
    return "scalar" if shape == () else f"of shape {shape}"


def check_layout(headers: dict):
    """``(num_vertices, num_arcs)`` from the ``(dtype, shape)`` of ``indptr``, ``indices`` and ``weights`` (if any).

    Ids and offsets must be integers and weights real numbers (integer or
    floating; complex, boolean, strings and dates are not weights), with
    ``indptr`` one longer than the vertex count and weights aligned with the
    arcs.  Checked from the headers, before the arrays are read.
    """
    (pd, ps), (id_, is_) = headers["indptr"], headers["indices"]
    if len(ps) != 1 or ps[0] < 1 or pd.kind not in "iu":
        raise CacheError(f"inconsistent CSR arrays: indptr must be a non-empty 1-D integer array, got {pd} {ps}")
    if len(is_) != 1 or id_.kind not in "iu":
        raise CacheError(f"inconsistent CSR arrays: indices must be a 1-D integer array, got {id_} {is_}")
    if "weights" in headers:
        wd, ws = headers["weights"]
        if wd.kind not in "fiu":
            raise CacheError(f"weights must be real numbers, got dtype {wd}")
        if ws != is_:
            raise CacheError(f"inconsistent CSR arrays: weights has shape {ws} but indices {is_}")
    return ps[0] - 1, is_[0]


def as_signed(a: np.ndarray) -> np.ndarray:
    """Offsets or ids as int32 or int64, copied only when they are of another integer type (uint64 values past
    int64's range turn negative, which the range checks refuse)."""
    return a if a.dtype in (np.int32, np.int64) else a.astype(np.int64)


def check_offsets(indptr: np.ndarray, first_row: int, num_arcs: int) -> None:
    """``indptr[first_row:...]`` (int64) never decreases and stays within ``[0, num_arcs]``."""
    if indptr.size == 0:
        return
    down = indptr[1:] < indptr[:-1]
    if down.any():
        k = int(np.argmax(down))
        row = first_row + k
        raise CacheError(f"inconsistent CSR arrays: row {row} ends before it starts "
                         f"(indptr[{row}] = {int(indptr[k])}, indptr[{row + 1}] = {int(indptr[k + 1])})")
    if indptr[0] < 0 or indptr[-1] > num_arcs:
        raise CacheError(f"inconsistent CSR arrays: indptr holds offsets outside 0..{num_arcs} (the arc count)")


def check_ends(first: int, last: int, num_arcs: int) -> None:
    """A whole ``indptr`` starts at 0 and ends at the arc count."""
    if first != 0 or last != num_arcs:
        raise CacheError(f"inconsistent CSR arrays: indptr runs from {first} to {last}; "
                         f"it must run from 0 to the arc count {num_arcs}")


def check_rows(indptr: np.ndarray, indices: np.ndarray, first_row: int, num_vertices: int) -> np.ndarray:
    """The arcs of rows ``first_row ..`` (``indptr`` int64 and checked; ``indices`` signed, those rows' arcs).

    Ids must lie in ``0 .. num_vertices - 1`` and each row be strictly
    increasing: sorted (the operators search rows and merge them) without a
    repeated neighbour (which PageRank and BC would count twice) and without
    a self-loop (which a graph never holds after construction).  Returns the
    source of every arc (int64), which the other checks reuse.
    """
    if indices.size:
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0 or hi >= num_vertices:
            bad = lo if lo < 0 else hi
            raise CacheError(f"inconsistent CSR arrays: vertex id {bad} in indices is outside 0..{num_vertices - 1}")
    rows = indptr.shape[0] - 1
    src = np.repeat(np.arange(first_row, first_row + rows, dtype=np.int64), np.diff(indptr))
    loops = src == indices
    if loops.any():
        v = int(src[np.argmax(loops)])
        raise CacheError(f"inconsistent CSR arrays: self-loop {v}->{v} (a graph is simple after construction)")
    del loops
    bad = (src[1:] == src[:-1]) & (indices[1:] <= indices[:-1])
    if bad.any():
        k = int(np.argmax(bad))
        u, a, b = int(src[k]), int(indices[k]), int(indices[k + 1])
        if a == b:
            raise CacheError(f"inconsistent CSR arrays: row {u} holds arc {u}->{a} twice")
        raise CacheError(f"inconsistent CSR arrays: row {u} is not sorted ({a} before {b})")
    return src


def as_float64(weights):
    """Weights as float64 (None stays None); CacheError unless they are real numbers (integer or floating)."""
    if weights is None:
        return None
    if weights.dtype.kind not in "fiu":
        raise CacheError(f"weights must be real numbers, got dtype {weights.dtype}")
    return weights.astype(np.float64, copy=False)


def check_weights(weights, src: np.ndarray, indices: np.ndarray) -> None:
    """Finite float64 weights of the arcs ``src -> indices`` (None: none): NaN and infinity are a CacheError, since
    no primitive handles them (SSSP would report distances that look fine)."""
    if weights is None:
        return
    finite = np.isfinite(weights)
    if not finite.all():
        k = int(np.argmax(~finite))
        raise CacheError(f"weight {weights[k]} of arc {int(src[k])}->{int(indices[k])} is not finite")


_KEY_MAX = 3_037_000_499  # ids below this pair into one int64 key (id * base + id)
BLOCK_ARCS = 1 << 24  # arcs checked at a time: the checks' temporaries stay small beside the arrays


def check_symmetric(arcs, base: int, weighted: bool) -> None:
    """An undirected cache stores both arcs of every edge with one weight: its CSR equals its transpose.

    ``arcs()`` yields the arcs in CSR order, in blocks ``(src, dst, weights
    or None)``, ids below ``base``; it is called twice (counting, then
    filling), so that only the arcs' ids (and weights) are held, not their
    per-block temporaries.  Rows are already checked: sorted, no repeats or
    self-loops.  The arcs with src < dst, in CSR order, list the edges sorted
    by (smaller id, larger id); so must the arcs with src > dst once sorted by
    (dst, src), and with the same weights.  Unweighted, that sort is one
    ``np.sort`` of int64 keys (8 bytes per arc held); weighted, a stable
    argsort by dst of those arcs, which come sorted by src, brings the weights
    along (about 28 bytes per arc at the peak).
    """
    n_up = n_low = 0
    for src, dst, _ in arcs():
        k = int(np.count_nonzero(src < dst))
        n_up, n_low = n_up + k, n_low + src.shape[0] - k
    keyed = not weighted and base <= _KEY_MAX
    ids = np.int64 if keyed or base > np.iinfo(np.int32).max else np.int32
    upper = tuple(np.empty(n_up, ids) for _ in range(1 if keyed else 2))
    lower = tuple(np.empty(n_low, ids) for _ in range(1 if keyed else 2))
    w_up, w_low = (np.empty(n_up), np.empty(n_low)) if weighted else (None, None)
    i = j = 0
    for src, dst, w in arcs():
        up = src < dst
        low = ~up
        ku, kl = int(np.count_nonzero(up)), int(np.count_nonzero(low))
        if keyed:
            upper[0][i:i + ku] = src[up].astype(np.int64) * base + dst[up]
            lower[0][j:j + kl] = dst[low].astype(np.int64) * base + src[low]
        else:
            upper[0][i:i + ku], upper[1][i:i + ku] = src[up], dst[up]
            lower[0][j:j + kl], lower[1][j:j + kl] = dst[low], src[low]
            if weighted:
                w_up[i:i + ku], w_low[j:j + kl] = w[up], w[low]
        i, j = i + ku, j + kl
    if keyed:
        lower[0].sort()
    else:
        order = np.argsort(lower[0], kind="stable")
        lower = tuple(x[order] for x in lower)
        if weighted:
            w_low = w_low[order]
        del order
    k, upper_lacks = _first_difference(upper, lower)
    if k is not None:
        side = upper if upper_lacks else lower
        a, b = divmod(int(side[0][k]), base) if keyed else (int(side[0][k]), int(side[1][k]))
        _unpaired(a, b, upper_lacks)
    if weighted:
        differ = w_up != w_low
        if differ.any():
            k = int(np.argmax(differ))
            raise CacheError(f"undirected, but edge {int(upper[0][k])}-{int(upper[1][k])} weighs {w_up[k]} one way "
                             f"and {w_low[k]} the other")


def _first_difference(upper: tuple, lower: tuple):
    """Where two sorted sequences of distinct items (tuples of arrays, compared lexicographically) first differ:
    ``(k, True)`` when item k of ``upper`` is missing from ``lower``, ``(k, False)`` the other way, ``(None, None)``
    when they are equal."""
    nu, nl = upper[0].shape[0], lower[0].shape[0]
    common = min(nu, nl)
    differ = np.zeros(common, dtype=bool)
    for x, y in zip(upper, lower):
        differ |= x[:common] != y[:common]
    if differ.any():
        k = int(np.argmax(differ))
    elif nu == nl:
        return None, None
    else:
        k = common
    if k >= nl:
        return k, True
    if k >= nu:
        return k, False
    return k, tuple(int(x[k]) for x in upper) < tuple(int(y[k]) for y in lower)


def _unpaired(a: int, b: int, upper_lacks: bool):
    """The breach for edge (a, b), a < b, stored one way only."""
    x, y = (a, b) if upper_lacks else (b, a)
    raise CacheError(f"undirected, but arc {x}->{y} has no reverse arc {y}->{x}: "
                     "an undirected cache stores both arcs of every edge")


def row_blocks(indptr: np.ndarray, block: int = BLOCK_ARCS):
    """Row ranges ``(r0, r1)`` covering all rows, each of about ``block`` arcs (a longer row is a block of its own)."""
    n = indptr.shape[0] - 1
    r0 = 0
    while r0 < n:
        r1 = int(np.searchsorted(indptr, indptr[r0] + block, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n)
        yield r0, r1
        r0 = r1


def check_graph(indptr: np.ndarray, indices: np.ndarray, weights, directed: bool, block: int = BLOCK_ARCS):
    """Every rule for a whole graph; returns ``(indptr int64, indices int32 or int64, weights float64 or None)``.

    Rows are checked a block of about ``block`` arcs at a time, so that the
    temporaries of a check (each arc's source, masks) stay small beside the
    graph; symmetry holds the arcs' ids once more (:func:`check_symmetric`).
    """
    indptr, indices = as_signed(indptr).astype(np.int64, copy=False), as_signed(indices)
    weights = as_float64(weights)
    n, m = indptr.shape[0] - 1, indices.shape[0]
    check_ends(int(indptr[0]), int(indptr[-1]), m)
    check_offsets(indptr, 0, m)
    blocks = list(row_blocks(indptr, block))

    def arcs():
        for r0, r1 in blocks:
            a, b = int(indptr[r0]), int(indptr[r1])
            src = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr[r0:r1 + 1]))
            yield src, indices[a:b], None if weights is None else weights[a:b]

    for r0, r1 in blocks:
        a, b = int(indptr[r0]), int(indptr[r1])
        src = check_rows(indptr[r0:r1 + 1], indices[a:b], r0, n)
        check_weights(None if weights is None else weights[a:b], src, indices[a:b])
        del src
    if not directed:
        check_symmetric(arcs, max(n, 1), weights is not None)
    return indptr, indices, weights


def read_cache(path: str, archive_size: int, expected_format: str):
    """``(indptr, indices, weights or None, directed, num_input_edges or None)`` of a cache, every rule checked.

    Members are read one by one through the zip reader (its CRC check
    included), the small ones and every header first, so that a file that is
    not a cache, or whose arrays do not fit together, is refused before the
    large arrays are read.  ``indptr`` is int64, ``indices`` int32 or int64
    (the caller sets the graph's id type), weights float64.
    """
    with readable(), zipfile.ZipFile(path) as zf:
        infos = members(zf, expected_format)
        directed, num_input = check_scalars(read_scalars(zf, infos, archive_size), expected_format)
        names = [name for name in ARRAYS if name in infos]
        headers = {name: member_header(zf, infos[name], archive_size)[:2] for name in names}
        n, m = check_layout(headers)
        # a deflated member may declare ~1000 times its compressed size: what the arrays declare must fit first
        memory.check(load_bytes(headers, directed), f"loading {memory.describe(n, m)}, whose arrays declare "
                     f"{memory.fmt_bytes(declared_bytes(headers))},", error=CacheError)
        arrays = {name: read_member(zf, infos[name], archive_size) for name in names}
    indptr, indices, weights = check_graph(arrays["indptr"], arrays["indices"], arrays.get("weights"), directed)
    return indptr, indices, weights, directed, num_input


def check_symmetric_between(indices: np.ndarray, weights, src: np.ndarray, first_row: int, stop_row: int) -> None:
    """:func:`check_symmetric` for the arcs that run between rows ``first_row .. stop_row - 1`` (a share's own rows).

    A share holds only its rows' out-arcs; the reverse of an arc to a row
    elsewhere is in another share, so only the arcs between its own rows can be
    compared here.  With one share (all rows) this is the whole check.
    """
    if indices.size and (int(indices.min()) < first_row or int(indices.max()) >= stop_row):
        inside = (indices >= first_row) & (indices < stop_row)
        indices, src = indices[inside], src[inside]
        weights = None if weights is None else weights[inside]
    check_symmetric(lambda: iter([(src, indices, weights)]), max(stop_row, 1), weights is not None)

"""Graph loaders: Matrix Market, SNAP and CSV edge lists, and an .npz CSR cache.

Text is parsed vectorized: the file is read whole (gunzipped when it starts
with the gzip magic bytes, a block at a time and only as far as the memory
allows: :func:`_gunzip`), its header read line by line, and the table of
edges after it handed to pyarrow's multithreaded CSV reader
(:mod:`mgraph.io.parse`), with options under which it reads every token as the
line-aware reader below does.  Where pyarrow is absent, declines the text
(comment lines between the edges, a carriage return inside a line, ...),
refuses a line, or the parsed edges break a check (a negative or
out-of-range id, a weight that is not finite), the line-aware reader parses
the text again: it cuts it into chunks at line ends and hands each to NumPy's
C ``loadtxt``, and only when a chunk fails does a Python loop walk that
chunk's lines to name the bad one.  So a malformed file costs time only on
the error path, and every format error is a :class:`GraphFormatError` with
the one-line message ``FILE, line N: problem`` the line-aware reader gives
(see docs/loaders.md).

:class:`FileEdges` reads a share of a file instead, so that P readers (MPI
ranks) together read it once and none holds the whole graph: a byte range of
a plain text file cut at line ends, or a row range of an .npz cache.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import numbers
import os
import operator
import re
import stat
import struct
import sys
import warnings
import zipfile
import zlib

import numpy as np

from mgraph import memory
from mgraph.io import cachecheck, generators, parse
from mgraph.backend import Backend, resolve, to_numpy
from mgraph.graph import Graph, index_dtype

GZIP_MAGIC = b"\x1f\x8b"
# Extension -> format; the text formats may also end in ".gz".
FORMATS = {".mtx": "mtx", ".txt": "snap", ".edges": "snap", ".el": "snap", ".csv": "csv", ".npz": "npz"}
SUFFIXES = tuple(FORMATS) + tuple(ext + ".gz" for ext, fmt in FORMATS.items() if fmt != "npz")
NPZ_FORMAT = "mgraph-csr-1"

_CHUNK_BYTES = 64 << 20        # parse granularity: bounds the slow error scan and feeds the progress bar
_PROGRESS_MIN_BYTES = 32 << 20  # smaller files load too fast for a bar to help


class GraphFormatError(ValueError):
    """A malformed graph file; the message names the file and, where known, the 1-based line.

    Where the line is not known but the byte offset of the bad line's start is
    (a :meth:`FileEdges.part` far into a big file), the message reads
    ``FILE, byte offset B: problem`` and ``offset`` holds B.
    """

    def __init__(self, path, line: int | None, problem: str, *, offset: int | None = None):
        self.path, self.line, self.problem, self.offset = str(path), line, problem, offset
        where = (f"{self.path}, line {line}" if line else
                 f"{self.path}, byte offset {offset}" if offset is not None else self.path)
        super().__init__(f"{where}: {problem}")


# -- public API -----------------------------------------------------------------


def load(path_or_spec, *, directed: bool | None = None, backend: str | Backend = "auto", seed: int = 0,
         weights: tuple[int, int] | None = None) -> Graph:
    """A graph from a file, its format from its extension (:func:`mgraph.load` also draws generator specs).

    ``directed=None`` keeps what the file says (see :func:`read_edges`);
    ``True`` on an undirected source gives both arcs of every edge, ``False``
    on a directed one symmetrizes it.  Files are parsed on the CPU and the
    graph is built on ``backend``'s device.
    """
    name = check_load_args(path_or_spec, directed=directed, seed=seed, weights=weights)
    b = resolve(backend)
    if generators.is_spec(name) and not os.path.exists(name):
        raise ValueError(f"{name!r} is a generator spec, not a file: mgraph.load draws it")
    if weights is not None:
        raise ValueError(f"weights=(lo, hi) draws weights for a generated graph; {name} is a file")
    fmt = format_of(name)
    if fmt == "npz":
        graph = _load_npz(name)
        if directed is None or directed == graph.directed:
            return graph.to(b)
        src, dst, w = graph.edges()
        graph = _build(src, dst, w, graph.num_vertices, directed, not graph.directed, b)
    else:
        src, dst, w, n, file_directed, one_triangle = _read(name, fmt, where=b)
        graph = _build(src, dst, w, n, file_directed if directed is None else directed, one_triangle, b, name=name)
    return graph.to(b)


def check_load_args(path_or_spec, *, directed=None, seed=0, weights=None) -> str:
    """:func:`load`'s arguments checked (mgraph.load calls it under MPI too); returns the path or spec as a str.

    ``os.fspath(123)`` would be a TypeError, ``bool("no")`` True, ``int(1.5)``
    a silently different seed: each is a ValueError naming the argument.
    """
    name = os.fspath(path_or_spec) if isinstance(path_or_spec, (str, os.PathLike)) else None
    if not isinstance(name, str):
        raise ValueError(f"path_or_spec must be a file path (str or os.PathLike) or a generator spec such as "
                         f"'rmat:20', got {path_or_spec!r}")
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise ValueError(f"directed must be None, True or False, got {directed!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if weights is not None and (not isinstance(weights, (tuple, list)) or len(weights) != 2 or any(
            isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) for v in weights)):
        raise ValueError(f"weights must be None or a pair of integers (lo, hi), got {weights!r}")
    return name


def read_edges(path):
    """The edge list of a graph file: ``(src, dst, weights or None, num_vertices or None, directed)``.

    Ids are 0-based int64 NumPy arrays, weights float64.  ``num_vertices`` is
    set where the file declares it (Matrix Market), else None (max id + 1).
    ``directed`` is the file's default: Matrix Market general => True,
    symmetric => False (and only the stored triangle is returned); SNAP edge
    lists => True; CSV => False; .npz => as saved (each undirected edge once).
    """
    name = os.fspath(path)
    fmt = format_of(name)
    if fmt == "npz":
        graph = _load_npz(name)
        src, dst, w = graph.edges()
        return src, dst, w, graph.num_vertices, graph.directed
    return _read(name, fmt)[:5]


def save_npz(graph: Graph, path) -> None:
    """Write ``graph``'s CSR to ``path`` (.npz) so :func:`load` restores it exactly, without rebuilding.

    Written to a temporary file and renamed, so a crash never leaves a
    half-written cache behind.  ``np.savez`` stores the arrays uncompressed
    (ZIP_STORED), so :meth:`FileEdges.part` reads a slice of them in place.
    """
    if not isinstance(graph, Graph):  # a PartitionedGraph (under MPI) holds no whole CSR to write
        raise ValueError(f"save_npz needs a Graph (the whole graph in this process), got {type(graph).__name__}")
    name = os.fspath(path)
    if not name.lower().endswith(".npz"):
        raise ValueError(f"{name}: a graph cache needs the .npz extension")
    arrays = {
        "format": np.array(NPZ_FORMAT),
        "indptr": to_numpy(graph.indptr),
        "indices": to_numpy(graph.indices),
        "directed": np.array(graph.directed),
        "num_input_edges": np.array(-1 if graph.num_input_edges is None else graph.num_input_edges, dtype=np.int64),
    }
    if graph.weights is not None:
        arrays["weights"] = to_numpy(graph.weights)
    tmp = f"{name}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


_SPECIAL_FILES = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                  (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_file(path: str) -> int:
    """The size of ``path``, a regular file (through any symbolic links); else a ValueError saying what it is.

    The loaders take a file's size before reading it and may read it more
    than once (a reader's byte range, a gzip stream counted before it is
    held), so a pipe, a device such as /dev/zero or a directory is refused
    as what it is, not reported missing, and never read on without end.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except OSError as e:  # permission denied on a folder, a loop of links, a name too long ...
        raise ValueError(f"{path}: {e.strerror or type(e).__name__}") from None
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    kind = next((name for test, name in _SPECIAL_FILES if test(st.st_mode)), "a special file")
    if kind == "a directory":
        raise ValueError(f"{path}: a directory, not a graph file")
    raise ValueError(f"{path}: {kind}, not a regular file; the loaders take a file's size and may read it twice, so "
                     "save what it gives to a file first")


def format_of(path: str) -> str:
    """The format ('mtx', 'snap', 'csv' or 'npz') a file name's extension implies; ValueError if none."""
    lower = path.lower()
    for ext, fmt in FORMATS.items():
        if lower.endswith(ext) or (fmt != "npz" and lower.endswith(ext + ".gz")):
            return fmt
    raise ValueError(f"{path}: unknown graph file extension; expected one of {', '.join(SUFFIXES)}"
                     f" or a generator spec ({generators.SPEC_FORMS})")


# -- building -------------------------------------------------------------------


def _build(src, dst, w, n, directed: bool, one_triangle: bool, b: Backend, *, name=None) -> Graph:
    """The Graph, built on ``b``'s device (sorting there is the fast half of a load on a GPU).

    A directed view of a one-triangle source needs both arcs of every edge.
    With ``name`` (the file) the build's memory is checked first, so that a
    file too big for the device is an error naming it, before the copies.
    """
    if name is not None:
        n_all = n if n is not None else (int(max(src.max(), dst.max())) + 1 if src.size else 0)
        arcs = src.size * (1 if directed and not one_triangle else 2)
        edges = arcs if directed and one_triangle else src.size  # the edge list handed to from_edges
        listed = edges * (16 + (8 if w is not None else 0))
        need = memory.whole_build_bytes(n_all, arcs, weighted=w is not None)
        need += listed * ((directed and one_triangle) + b.is_gpu)  # both arcs listed first; the copy on a GPU
        memory.check(need, f"{name}: building {memory.describe(n_all, arcs, bound=True)}", b)
    if directed and one_triangle:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = None if w is None else np.concatenate([w, w])
    with _on_device(b):
        return Graph.from_edges(b.asarray(src), b.asarray(dst), None if w is None else b.asarray(w),
                                num_vertices=n, directed=directed)


def _on_device(b: Backend):
    return b.xp.cuda.Device(b.device) if b.is_gpu else contextlib.nullcontext()


def _read(path: str, fmt: str, *, where=None):
    """``read_edges`` plus whether only one triangle of a symmetric matrix was stored.

    ``where`` (a Backend, None: the host) is the device the graph will be
    built on, against whose memory the vertex count the file implies is
    checked (see :func:`_check_vertex_count`).
    """
    check_file(path)
    data = _read_bytes(path)
    if fmt == "mtx":
        return _parse_mtx(path, data, where=where)
    if fmt == "snap":
        src, dst, w = _parse_edge_list(path, data, delimiter=None, comments=_snap_comments(data), where=where)
        return src, dst, w, None, True, False
    src, dst, w = _parse_edge_list(path, data, delimiter=",", comments="#", where=where)
    return src, dst, w, None, False, False


# -- reading --------------------------------------------------------------------


@contextlib.contextmanager
def _progress(total: int, desc: str):
    """A tqdm byte bar on an interactive stderr for big inputs, else None."""
    if total < _PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, leave=False) as bar:
        yield bar


def _read_bytes(path: str):
    """The whole file (bytes), or its text gunzipped (a bytearray) when it starts with the gzip magic bytes,
    whatever its suffix."""
    size = os.path.getsize(path)
    with open(path, "rb", buffering=0) as raw:
        gz = raw.read(2) == GZIP_MAGIC
    if gz:
        return _gunzip(path, size)
    memory.check(size, f"{path}: reading its {size:,} bytes")
    # Unbuffered: a buffered reader's read() joins its read-ahead to the rest, a copy of the whole file
    with open(path, "rb", buffering=0) as raw, _progress(size, f"reading {os.path.basename(path)}") as bar:
        if bar is None:
            return raw.read()
        from tqdm.utils import CallbackIOWrapper

        src = CallbackIOWrapper(bar.update, raw, "read")
        return b"".join(iter(lambda: src.read(1 << 24), b""))


_INFLATE_BYTES = 16 << 20  # gzip text inflated and counted this much at a time
LINE_COLUMN_BYTES = 16     # what the parse allocates per line at least: two int64 ids (the line-aware reader's bound)
KEEP_SHARE = 8             # a gzip stream is held while its parse needs under 1/8 of the memory; beyond, it is counted


def _gunzip(path: str, size: int) -> bytearray:
    """The text of a gzip file, never inflated whole before it is known to fit.

    Deflate expands up to about 1032 times, so a small file may hold more
    text than the machine has memory (a "decompression bomb"), and the gzip
    trailer's length is only the last member's, modulo 4 GiB.  So the stream
    is inflated a block at a time, its bytes and lines counted, and the least
    a parse of them needs (the text and two ids a line,
    :data:`LINE_COLUMN_BYTES`) compared with the memory there was before it
    began: more is the usual one-line error.  The text is kept while that
    need stays under 1/:data:`KEEP_SHARE` of the memory, so a file well
    within it is inflated once; past that the kept text is dropped and the
    rest only counted, and a stream that fits is inflated again, into one
    buffer of its exact length.  So a bomb never holds more than that share
    of the memory, and only files that need more than it inflate twice.
    """
    room = memory.available()
    keep = room // KEEP_SHARE
    out, text, lines = bytearray(), 0, 0
    try:
        with _progress(size, f"reading {os.path.basename(path)}") as bar:
            with open(path, "rb", buffering=0) as raw, gzip.GzipFile(fileobj=_counted(raw, bar)) as f:
                for block in iter(lambda: f.read(_INFLATE_BYTES), b""):
                    text, lines = text + len(block), lines + block.count(b"\n")
                    need = text + LINE_COLUMN_BYTES * (lines + 1)
                    if out is not None and need <= keep:
                        out += block
                        continue
                    out = None  # from here on the stream is only counted
                    short = memory.shortfall(need, at_least=True, room=room)
                    if short is not None:
                        more = "" if f.read(1) == b"" else "more than "
                        raise ValueError(f"{path}: its {size:,} bytes of gzip inflate to {more}{text:,} bytes of "
                                         f"text in {lines:,} lines; parsing them {short}")
            if out is not None:
                return out
            if bar is not None:
                bar.reset(total=size)
            out = bytearray(text)
            with open(path, "rb", buffering=0) as raw, gzip.GzipFile(fileobj=_counted(raw, bar)) as f:
                got = 0
                with memoryview(out) as view:
                    while got < text:
                        k = f.readinto(view[got:])
                        if not k:
                            break
                        got += k
                if got != text or f.read(1):
                    raise GraphFormatError(path, None, "file changed while being read (its gzip text inflated to "
                                           f"{text:,} bytes, then to {'fewer' if got < text else 'more'})")
    except (OSError, EOFError, zlib.error) as e:
        raise GraphFormatError(path, None, f"corrupt or truncated gzip data ({e})") from None
    return out


def _counted(raw, bar):
    """``raw``, its reads counted on the progress ``bar`` when there is one."""
    if bar is None:
        return raw
    from tqdm.utils import CallbackIOWrapper

    return CallbackIOWrapper(bar.update, raw, "read")


def _snap_comments(data: bytes):
    """'#' alone unless the file has '%' comment lines: loadtxt is ~3x slower with two comment markers."""
    if b"%" not in data:  # a memchr scan, far faster than searching for b"\n%"
        return "#"
    return ("#", "%") if data.startswith(b"%") or b"\n%" in data else "#"


def _lines(data: bytes, start: int, first_line: int, stop: int | None = None):
    """(line number, line, offset after it) from ``start`` to ``stop``: the slow path for headers and errors."""
    stop = len(data) if stop is None else stop
    line_no, pos = first_line, start
    while pos < stop:
        end = data.find(b"\n", pos, stop)
        end = stop if end < 0 else end + 1
        yield line_no, data[pos:end], end
        line_no, pos = line_no + 1, end


def _cut_comment(line: bytes, comments) -> bytes:
    """``line`` up to its first comment marker."""
    for mark in (comments,) if isinstance(comments, str) else comments:
        cut = line.find(mark.encode())
        if cut >= 0:
            line = line[:cut]
    return line


def _strip_comment(line: bytes, comments) -> bytes:
    return _cut_comment(line, comments).strip()


def _parse_edge_list(path, data: bytes, *, delimiter, comments, where=None):
    """SNAP (whitespace) or CSV edge lists: 2 or 3 columns, 0-based ids.

    A CSV's first line is its header unless it is all numbers; the header or
    the first data line fixes the column count.
    """
    first = next(((no, line, end) for no, line, end in _lines(data, 0, 1) if _strip_comment(line, comments)), None)
    if first is None:
        return np.empty(0, np.int64), np.empty(0, np.int64), None
    ncols, start, first_line = _edge_list_layout(path, first, delimiter, comments)
    fast = _fast_columns(data, start, ncols, delimiter, "f8")
    if fast is not None and _edge_list_fits(*fast, where=where):
        return fast
    table = _Table(path, data, start, first_line, ncols, delimiter, comments, weight_kind="f8")
    src, dst, w = table.columns()
    _check_edge_list_ids(path, table, src, dst, where=where)
    return src, dst, w


def _fast_columns(data, start: int, ncols: int, delimiter, weight_kind):
    """The table after ``start`` parsed by pyarrow (mgraph.io.parse), or None: the line-aware reader (_Table) parses it."""
    return parse.columns(data, start, len(data), ncols, delimiter, weight_kind)


def _edge_list_fits(src, dst, w, *, where=None) -> bool:
    """Whether an edge list passes every check of the line-aware path (_Table.columns, _check_edge_list_ids).

    When it does not, the caller parses the text again with that path, whose
    message names the line; so the vertex count is checked here exactly as
    :func:`_check_vertex_count` checks it.
    """
    if w is not None and not np.isfinite(w).all():
        return False
    if not src.size:
        return True
    if min(int(src.min()), int(dst.min())) < 0:
        return False
    top = max(int(src.max()), int(dst.max()))
    return memory.shortfall(memory.vertex_bytes(top + 1), where, at_least=True) is None


def _mtx_fits(src, dst, w, rows: int, nnz: int | None) -> bool:
    """Whether Matrix Market entries pass every check of the line-aware path (_Table.columns, _check_mtx_entries)."""
    if w is not None and not np.isfinite(w).all():
        return False
    if nnz is not None and src.size != nnz:
        return False
    return not src.size or (min(int(src.min()), int(dst.min())) >= 1 and max(int(src.max()), int(dst.max())) <= rows)


def _edge_list_layout(path, first, delimiter, comments):
    """(columns, offset where the data starts, its line) from the first non-comment line (line, text, end)."""
    line_no, line, end = first
    fields = _strip_comment(line, comments).split(delimiter.encode() if delimiter else None)
    header = delimiter is not None and not all(_is_number(f) for f in fields)
    if len(fields) not in (2, 3):
        raise GraphFormatError(path, line_no, f"{'header' if header else 'line'} has {len(fields)} columns;"
                               " expected 2 (src, dst) or 3 (src, dst, weight)")
    start, first_line = (end, line_no + 1) if header else (end - len(line), line_no)
    return len(fields), start, first_line


def _check_edge_list_ids(path, table, src, dst, *, where=None):
    """Ids are non-negative, and the vertex count the largest implies fits on the device ``where`` (None: host)."""
    for ids, what in ((src, "source"), (dst, "target")):
        if ids.size and ids.min() < 0:
            row = int(np.argmax(ids < 0))
            raise GraphFormatError(path, table.line_of_row(row), f"negative {what} vertex id {int(ids[row])}")
    if src.size:
        top = max(int(src.max()), int(dst.max()))

        def line():  # only on the error path: finding a row's line may walk its chunk
            return table.line_of_row(int(np.argmax((src == top) | (dst == top))))

        _check_vertex_count(path, line, f"vertex id {top}", top + 1, where)


def _check_vertex_count(path, line, what: str, n: int, where=None) -> None:
    """GraphFormatError at ``line`` (a number, or a function giving it) when no build of ``n`` vertices fits on the
    device ``where`` (None: the host).

    The vertex count comes from one line (a size line, a largest id), and
    every build allocates per vertex whatever the edges: a 13-byte file with
    the id 2**31 asks for 32 GiB.  So it is checked against the least any
    build needs (:func:`mgraph.memory.vertex_bytes`) before anything sized by
    it, and the message names the line that asked.
    """
    short = memory.shortfall(memory.vertex_bytes(n), where, at_least=True)
    if short is not None:
        at = line() if callable(line) else line
        raise GraphFormatError(path, at, f"{what}: building {memory.describe(n)} {short}")


def _is_number(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


_MTX_FIELDS = {"pattern": None, "integer": "i8", "real": "f8"}
_MTX_SYMMETRY = ("general", "symmetric")
_MTX_BANNER = "%%MatrixMarket matrix coordinate <field> <symmetry>"


def _parse_mtx(path, data: bytes, *, where=None):
    """Matrix Market coordinate files: pattern/integer/real, general/symmetric, 1-based ids."""
    rows, nnz, weight_kind, symmetric, line_no, end = _mtx_header(path, _lines(data, 0, 1), where=where)
    ncols = 2 if weight_kind is None else 3
    fast = _fast_columns(data, end, ncols, None, weight_kind)
    if fast is not None and _mtx_fits(*fast, rows, nnz):
        src, dst, w = fast
        src -= 1
        dst -= 1
        return src, dst, w, rows, not symmetric, symmetric
    table = _Table(path, data, end, line_no + 1, ncols, None, "%", weight_kind)
    src, dst, w = table.columns()
    _check_mtx_entries(path, table, src, dst, rows, nnz)
    return src, dst, w, rows, not symmetric, symmetric


def _mtx_header(path, lines, *, where=None):
    """(rows, entries, weight kind, symmetric, size line number, offset after it) from (line, text, end) lines.

    The size line's vertex count is checked against the memory of the device
    ``where`` (None: the host) before anything is sized by it.
    """
    first = next(lines, None)
    banner = first[1].split() if first else []
    if not banner or banner[0].lower() != b"%%matrixmarket":
        raise GraphFormatError(path, 1, f"missing Matrix Market header {_MTX_BANNER!r}")
    if len(banner) != 5:
        raise GraphFormatError(path, 1, f"malformed Matrix Market header {_show(first[1].strip())}; expected {_MTX_BANNER!r}")
    obj, layout, field, symmetry = (t.decode("ascii", "replace").lower() for t in banner[1:])
    if obj != "matrix" or layout != "coordinate":
        raise GraphFormatError(path, 1, f"'{obj} {layout}' Matrix Market files are not graphs; expected 'matrix coordinate'")
    if field not in _MTX_FIELDS:
        raise GraphFormatError(path, 1, f"unsupported Matrix Market field {field!r}; expected one of {', '.join(_MTX_FIELDS)}")
    if symmetry not in _MTX_SYMMETRY:
        raise GraphFormatError(path, 1, f"unsupported Matrix Market symmetry {symmetry!r}; expected general or symmetric")
    for line_no, line, end in lines:
        text = line.strip()
        if not text or text.startswith(b"%"):
            continue
        size = text.split()
        if len(size) != 3 or not all(t.isdigit() for t in size):
            raise GraphFormatError(path, line_no, f"expected the size line 'rows cols entries', found {_show(text)}")
        rows, cols, nnz = (int(t) for t in size)
        break
    else:
        raise GraphFormatError(path, None, "no size line 'rows cols entries' after the header")
    if rows != cols:
        raise GraphFormatError(path, line_no, f"matrix is {rows} x {cols}; a graph's adjacency matrix must be square")
    _check_vertex_count(path, line_no, f"a {rows} x {cols} matrix", rows, where)
    return rows, nnz, _MTX_FIELDS[field], symmetry == "symmetric", line_no, end


def _check_mtx_entries(path, table, src, dst, rows: int, nnz: int | None):
    """Entry count (unless ``nnz`` is None: a share of the file) and index range; then ids to 0-based, in place."""
    if nnz is not None and src.size < nnz:
        raise GraphFormatError(path, table.last_line + 1,
                               f"file ends after {src.size} of the {nnz} entries the size line declares")
    if nnz is not None and src.size > nnz:
        raise GraphFormatError(path, table.line_of_row(nnz), f"more entries than the {nnz} the size line declares")
    for ids, what in ((src, "row"), (dst, "column")):
        bad = (ids < 1) | (ids > rows)
        if bad.any():
            row = int(np.argmax(bad))
            raise GraphFormatError(path, table.line_of_row(row), f"{what} index {int(ids[row])} is outside 1..{rows}")
    src -= 1
    dst -= 1


class _Table:
    """Rows of ``ncols`` numbers (id, id[, weight]) from ``data[start:]``, parsed chunk by chunk."""

    def __init__(self, path, data, start, first_line, ncols, delimiter, comments, weight_kind):
        self.path, self.data, self.start, self.first_line = path, data, start, first_line
        self.ncols, self.delimiter, self.comments = ncols, delimiter, comments
        self.weight_kind = weight_kind if ncols == 3 else None
        fields = [("s", "<i8"), ("d", "<i8")] + ([("w", self.weight_kind)] if self.weight_kind else [])
        self.dtype = np.dtype(fields)
        self.chunks = []  # (first row, rows, byte start, byte end, first line, lines) per chunk
        self.last_line = first_line - 1

    def columns(self):
        """(src, dst, weights or None): int64 ids and float64 weights."""
        data, pieces, pos = self.data, [], self.start
        while pos < len(data):  # cut into chunks at line ends; a line longer than a chunk stays whole
            end = len(data)
            if pos + _CHUNK_BYTES < len(data):
                end = data.rfind(b"\n", pos, pos + _CHUNK_BYTES) + 1 or data.find(b"\n", pos + _CHUNK_BYTES) + 1 or end
            pieces.append((pos, end, data.count(b"\n", pos, end) + (not data.endswith(b"\n", pos, end))))
            pos = end
        # Columns sized by the line count (a bound on the rows) and filled chunk
        # by chunk: concatenating per-chunk tables would copy everything again.
        bound = sum(lines for _, _, lines in pieces)
        memory.check(bound * (24 if self.weight_kind else 16), f"{self.path}: parsing {bound:,} lines")
        src, dst = np.empty(bound, np.int64), np.empty(bound, np.int64)
        w = np.empty(bound, np.float64) if self.weight_kind else None
        row, line = 0, self.first_line
        with _progress(len(data) - self.start, f"parsing {os.path.basename(self.path)}") as bar:
            for start, end, lines in pieces:
                part = self._parse_chunk(start, end, line)
                self.chunks.append((row, part.size, start, end, line, lines))
                src[row:row + part.size], dst[row:row + part.size] = part["s"], part["d"]
                if w is not None:
                    w[row:row + part.size] = part["w"]
                if bar is not None:
                    bar.update(end - start)
                row, line = row + part.size, line + lines
        self.last_line = line - 1
        src, dst = src[:row], dst[:row]
        if w is not None:
            w = w[:row]
            if not np.isfinite(w).all():
                row = int(np.argmax(~np.isfinite(w)))
                raise GraphFormatError(self.path, self.line_of_row(row), f"weight {w[row]} is not finite")
        return src, dst, w

    def _parse_chunk(self, start: int, end: int, first_line: int):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "input contained no data": an empty chunk is fine
                return np.loadtxt(io.BytesIO(self.data[start:end]), dtype=self.dtype, delimiter=self.delimiter,
                                  comments=self.comments, ndmin=1, encoding="latin1")
        except ValueError as e:
            line_no, problem = self._find_bad_line(start, end, first_line)
            raise GraphFormatError(self.path, line_no, problem or f"cannot parse ({e})") from None

    def _find_bad_line(self, start: int, end: int, first_line: int):
        """(line, problem) of the first line loadtxt would refuse; (None, None) when none is found."""
        sep = self.delimiter.encode() if self.delimiter else None
        for line_no, line, _ in _lines(self.data, start, first_line, end):
            body = line[:-1] if line.endswith(b"\n") else line
            if b"\r" in (body[:-1] if body.endswith(b"\r") else body):  # loadtxt breaks lines there too
                return line_no, "a carriage return inside the line"
            text = _strip_comment(line, self.comments)
            if not text:
                blank = _cut_comment(body[:-1] if body.endswith(b"\r") else body, self.comments)
                if sep is not None and blank:  # loadtxt skips an empty line, but reads whitespace as a value
                    return line_no, (f"a line of only whitespace {_show(blank)}; a line of this file is empty or "
                                     f"holds {self.ncols} values separated by {self.delimiter!r}")
                continue
            fields = [f.strip() for f in text.split(sep)]
            if len(fields) != self.ncols:
                return line_no, f"expected {self.ncols} columns, found {len(fields)} in {_show(text)}"
            for token in fields[:2]:
                if not _is_int64(token):
                    return line_no, f"vertex id {_show(token)} is {_not_int64(token)}"
            if self.weight_kind == "i8" and not _is_int64(fields[2]):
                return line_no, f"weight {_show(fields[2])} is {_not_int64(fields[2])}"
            if self.weight_kind == "f8" and not _is_number(fields[2]):
                return line_no, f"weight {_show(fields[2])} is not a number"
        return None, None

    def line_of_row(self, row: int) -> int | None:
        """The file line of data row ``row`` (0-based): arithmetic unless its chunk has blank or comment lines."""
        for first_row, rows, start, end, first_line, lines in self.chunks:
            if first_row <= row < first_row + rows:
                if rows == lines:
                    return first_line + row - first_row
                data_lines = (no for no, line, _ in _lines(self.data, start, first_line, end)
                              if _strip_comment(line, self.comments))
                return next(no for k, no in enumerate(data_lines, first_row) if k == row)
        return None


_INT = re.compile(rb"[+-]?[0-9]+")


def _is_int64(token: bytes) -> bool:
    return _INT.fullmatch(token) is not None and -(1 << 63) <= int(token) < (1 << 63)


def _not_int64(token: bytes) -> str:
    """Why a token is no int64: an integer out of range is not 'not an integer'."""
    return "outside the 64-bit integer range" if _INT.fullmatch(token) else "not an integer"


def _show(token: bytes, limit: int = 40) -> str:
    """A token for a one-line message: quoted, printable, shortened."""
    text = token.decode("latin1")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# -- .npz cache -------------------------------------------------------------------


def _load_npz(path: str) -> Graph:
    """The Graph a :func:`save_npz` file holds, after every check of :mod:`mgraph.io.cachecheck`.

    A cache is an input like any other: a damaged or hand-made one is a
    GraphFormatError naming the file and the breach, never a graph that
    misleads the primitives.
    """
    size = check_file(path)
    try:
        indptr, indices, weights, directed, num_input = cachecheck.read_cache(path, size, NPZ_FORMAT)
    except cachecheck.CacheError as e:
        raise GraphFormatError(path, None, str(e)) from None
    n = indptr.shape[0] - 1
    return Graph(indptr, indices.astype(index_dtype(n), copy=False), weights, directed=directed,
                 num_input_edges=num_input)


# -- reading a share of a file ------------------------------------------------------

_LINE_COUNT_MAX_BYTES = 1 << 30  # a part's error counts the newlines before it up to here, else gives the byte offset
_SCAN_BYTES = 16 << 20           # block size of the streaming scans (header, '%' lines, newline count)
_TAIL_BYTES = 4096               # block size for reading on past a part's range to the end of its last line
_LINE_MAX_BYTES = 16 << 20       # a header line read from a stream may be this long
_NPZ_ARRAYS = ("indptr", "indices", "weights")


class FileEdges:
    """A graph file that P readers (MPI ranks) each read a share of, so that none holds the whole graph.

    ``FileEdges(path)`` checks that the file exists and its format, and reads
    only the header (the Matrix Market banner and size line, or the first
    non-comment line of a SNAP or CSV edge list; the small members of an .npz)
    to describe the file.  Header errors are raised here, with their exact line.

    Attributes:

    - ``path`` (str), ``format`` ('mtx', 'snap', 'csv' or 'npz');
    - ``gzipped``: the file starts with the gzip magic bytes (whatever its
      suffix, as :func:`read_edges` decides); ``splittable``: not gzip, so
      :meth:`part` reads only its share of the file;
    - ``directed``: the file's default, as :func:`read_edges` returns it
      (Matrix Market general True, symmetric False; SNAP True; CSV False;
      .npz as saved);
    - ``one_triangle``: the parts hold each undirected edge once (a
      symmetric Matrix Market file, an undirected .npz), so a directed view
      needs both arcs of each (as :func:`load` does);
    - ``num_vertices``: what the file declares (Matrix Market size line,
      .npz), else None: the caller takes max id + 1 over all readers;
    - ``weighted``: parts return weights.  Known for every format without
      parsing the data: the field type of a Matrix Market file, the column
      count of the first data line (or CSV header) of an edge list (an edge
      list without data lines is unweighted), the members of an .npz;
    - ``num_entries``: the entries a Matrix Market size line declares, else
      None (see :meth:`check_count`).

    Instances hold no open file and pickle, so one rank may describe the file
    and send the description to the others.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self.format = format_of(self.path)
        self.size = check_file(self.path)
        self.num_vertices = self.num_entries = None
        self.one_triangle = False
        if self.format == "npz":
            self.gzipped = False
            self._describe_npz()
        else:
            with open(self.path, "rb") as f:
                self.gzipped = f.read(2) == GZIP_MAGIC
            self._describe_text()
        self.splittable = not self.gzipped

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"FileEdges({self.path!r}, {self.format}{', gzip' if self.gzipped else ''}, {kind},"
                f" weighted={self.weighted}, num_vertices={self.num_vertices})")

    # -- the share --------------------------------------------------------------

    def part(self, index: int, count: int):
        """Reader ``index``'s share of ``count`` readers: ``(src, dst, weights or None)`` NumPy arrays.

        Ids are 0-based int64, weights float64 (an empty float64 array where
        a weighted file's share is empty).  Concatenated in index order, the
        parts of any ``count >= 1`` are exactly ``read_edges(path)``'s edge
        list, in its order; a part may be empty.

        - Plain text (.mtx, SNAP, .csv): the bytes ``[size*index/count,
          size*(index+1)/count)`` of the data after the header (``size``: the
          data's bytes), cut at line ends: the reader owns every line that
          starts in its range, and reads its range (with one byte before it)
          and the rest of its last line, nothing else.  Parsed (by pyarrow
          where it can, as :func:`read_edges`) and checked as
          :func:`read_edges` does, with the same messages; ids are checked per
          part, and the Matrix Market entry count only with ``count == 1``
          (else see :meth:`check_count`).  Line numbers: exact for a part that
          starts where the data starts (reader 0); for the others, counted on
          the error path by reading the file up to the bad line when that is
          at most 1 GiB in, else the message names the bad line's byte offset
          instead (``FILE, byte offset B: problem``).
        - gzip: cannot be cut by bytes, so every call decompresses and parses
          the whole file and returns rows ``[m*index/count, m*(index+1)/count)``
          of its ``m`` edges: let one reader per gzip file read it and scatter.
        - .npz (:func:`save_npz`): CSR rows ``[n*index/count, n*(index+1)/count)``,
          read as slices of the stored arrays at their offsets in the archive
          (an uncompressed member is read in place; a compressed one is
          decompressed up to the slice, streaming); an undirected cache gives
          each edge once (the arc with src < dst), as ``Graph.edges()`` does.
          Checked as :func:`load` checks a cache (mgraph.io.cachecheck), as far as
          the share shows it: on describing, the members, their headers and
          ``indptr``'s ends; per share, its offsets, its rows (ids in range,
          sorted, no repeats or self-loops, finite real weights) and, when the
          cache is undirected, that the arcs between its own rows come in pairs
          of equal weight.  The reverse of an arc to another share's row is not
          read here: with ``count == 1`` the symmetry check is whole, with more
          readers :meth:`check_count` compares the arcs each way over all
          shares (a count), so an undirected cache whose arcs pair up wrongly
          across shares in equal numbers passes; the graph built from the
          shares is then the one its src < dst arcs describe, still undirected.
          Nor is the zip's CRC checked (it covers a whole member, and a share
          reads a slice in place): damaged bytes show only where they break a
          rule.  :func:`load` checks symmetry and the CRC whole.
        """
        index, count = operator.index(index), operator.index(count)
        if count < 1 or not 0 <= index < count:
            raise ValueError(f"part({index}, {count}): need count >= 1 and 0 <= index < count")
        if self.format == "npz":
            return self._npz_part(index, count)
        if self.gzipped:
            return self._gzip_part(index, count)
        return self._text_part(index, count)

    def check_count(self, total: int) -> None:
        """The count check for a file read in several parts: Matrix Market entries, undirected .npz arcs.

        ``total`` is the rows of all parts together; GraphFormatError (without
        a line) unless it is the size line's count, or for an undirected .npz
        half its arcs (the parts give the arcs with src < dst, and a cache
        without self-loops that stores both arcs of every edge has as many the
        other way).  A no-op for other formats.
        """
        if self.format == "npz" and not self.directed:
            arcs = self._arrays["indices"].shape[0]
            if 2 * total != arcs:
                raise GraphFormatError(self.path, None, f"undirected, but {total} of its {arcs} arcs run from a "
                                       "smaller to a larger id: an undirected cache stores both arcs of every edge")
            return
        nnz = self.num_entries
        if nnz is None or total == nnz:
            return
        if total < nnz:
            raise GraphFormatError(self.path, None, f"file ends after {total} of the {nnz} entries the size line declares")
        raise GraphFormatError(self.path, None, f"more entries than the {nnz} the size line declares")

    def _empty(self):
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64) if self.weighted else None

    # -- text -------------------------------------------------------------------

    def _describe_text(self):
        try:
            with self._open() as f:
                lines = _stream_lines(f, self.path)
                if self.format == "mtx":
                    rows, nnz, kind, symmetric, line_no, end = _mtx_header(self.path, lines)
                    self.num_vertices, self.num_entries = rows, nnz
                    self.directed, self.one_triangle = not symmetric, symmetric
                    self._ncols, self._kind, self._delimiter = 2 if kind is None else 3, kind, None
                    self._data_start, self._first_line = end, line_no + 1
                else:
                    self.directed = self.format == "snap"
                    self._kind, self._delimiter = "f8", None if self.format == "snap" else ","
                    self._percent = None  # SNAP: whether the file has '%' comment lines (None: not known yet)
                    first = self._first_data_line(lines)
                    if first is None:
                        self._ncols, self._data_start, self._first_line = None, self.size, None
                    else:
                        comments = self._comments(b"")
                        self._ncols, self._data_start, self._first_line = _edge_list_layout(
                            self.path, first, self._delimiter, comments)
        except (OSError, EOFError, zlib.error) as e:
            if not self.gzipped:
                raise
            raise GraphFormatError(self.path, None, f"corrupt or truncated gzip data ({e})") from None
        self.weighted = self._ncols == 3

    def _open(self):
        return gzip.GzipFile(self.path, "rb") if self.gzipped else open(self.path, "rb")

    def _first_data_line(self, lines):
        """The first line that is not blank or a comment, as read_edges decides it; None if there is none."""
        for no, line, end in lines:
            if self.format == "snap" and line.startswith(b"%"):
                self._percent = True
            text = _strip_comment(line, "#")
            if not text:
                continue
            if self.format == "snap" and b"%" in text and self._percent is None:
                self._percent = self._has_percent_lines()
            if _strip_comment(line, self._comments(b"")):
                return no, line, end
        return None

    def _comments(self, data):
        """The comment markers read_edges uses for the whole file, as far as ``data`` and the header tell.

        SNAP files take '%' comments too when any line starts with '%'; a part
        that has none and no '%' at all parses the same either way, and one
        with a '%' elsewhere that fails with '#' alone asks the whole file.
        """
        if self.format == "mtx":
            return "%"
        if self.format == "csv" or self._percent is False:
            return "#"
        return ("#", "%") if self._percent or b"\n%" in data else "#"

    def _has_percent_lines(self) -> bool:
        """Whether some line of the file starts with '%': a streaming scan, cached (rarely needed)."""
        if self._percent is None:
            found, last = False, b"\n"
            with self._open() as f:
                for block in iter(lambda: f.read(_SCAN_BYTES), b""):
                    if (last == b"\n" and block.startswith(b"%")) or b"\n%" in block:
                        found = True
                        break
                    last = block[-1:]
            self._percent = found
        return self._percent

    def _text_part(self, index: int, count: int):
        begin, size = self._data_start, self.size - self._data_start
        a, b = begin + size * index // count, begin + size * (index + 1) // count
        if a >= b:
            return self._empty()
        lead = 0 if a == begin else 1  # the byte before the range tells whether a line starts at a
        with open(self.path, "rb") as f:
            f.seek(a - lead)
            buf = bytearray(b - a + lead)
            if f.readinto(buf) != len(buf):
                raise GraphFormatError(self.path, None, f"file shrank while being read (expected {self.size} bytes)")
            start = lead
            if lead and buf[0] != 0x0A:
                start = buf.find(b"\n", 1) + 1
                if start == 0 or start == len(buf):  # no line starts in the range
                    return self._empty()
            if buf[-1] != 0x0A:  # read on to the end of the last line
                for block in iter(lambda: f.read(_TAIL_BYTES), b""):
                    nl = block.find(b"\n")
                    buf += block if nl < 0 else block[:nl + 1]
                    if nl >= 0:
                        break
        exact = a == begin
        try:
            return self._parse(buf, start, self._first_line if exact else 1, count == 1)
        except GraphFormatError as e:
            if exact or e.line is None:
                raise
            raise self._locate(e, buf, start, a - lead) from None

    def _parse(self, data, start: int, first_line: int, whole: bool):
        fast = _fast_columns(data, start, self._ncols, self._delimiter, self._kind)
        if fast is not None:
            if self.format != "mtx" and _edge_list_fits(*fast):
                return fast
            if self.format == "mtx" and _mtx_fits(*fast, self.num_vertices, self.num_entries if whole else None):
                src, dst, w = fast
                src -= 1
                dst -= 1
                return src, dst, w
        comments = self._comments(data)
        try:
            table = _Table(self.path, data, start, first_line, self._ncols, self._delimiter, comments, self._kind)
            src, dst, w = table.columns()
        except GraphFormatError:
            if comments != "#" or self.format != "snap" or b"%" not in data or not self._has_percent_lines():
                raise
            comments = ("#", "%")
            table = _Table(self.path, data, start, first_line, self._ncols, self._delimiter, comments, self._kind)
            src, dst, w = table.columns()
        if self.format == "mtx":
            _check_mtx_entries(self.path, table, src, dst, self.num_vertices, self.num_entries if whole else None)
        else:
            _check_edge_list_ids(self.path, table, src, dst)
        return src, dst, w

    def _locate(self, err: GraphFormatError, data, start: int, data_offset: int) -> GraphFormatError:
        """``err`` (line numbered from ``data[start]``) with the file's line, or the line's byte offset."""
        pos = start
        for _ in range(err.line - 1):
            pos = data.find(b"\n", pos) + 1
        offset = data_offset + pos
        if offset > _LINE_COUNT_MAX_BYTES:
            return GraphFormatError(self.path, None, err.problem, offset=offset)
        newlines = 0
        with open(self.path, "rb") as f:
            while offset - f.tell() > 0:
                block = f.read(min(_SCAN_BYTES, offset - f.tell()))
                if not block:
                    break
                newlines += block.count(b"\n")
        return GraphFormatError(self.path, newlines + 1, err.problem)

    # -- gzip -------------------------------------------------------------------

    def _gzip_part(self, index: int, count: int):
        src, dst, w = _read(self.path, self.format)[:3]
        if count == 1:
            return src, dst, w
        lo, hi = src.size * index // count, src.size * (index + 1) // count
        return src[lo:hi].copy(), dst[lo:hi].copy(), None if w is None else w[lo:hi].copy()

    # -- .npz -------------------------------------------------------------------

    def _describe_npz(self):
        """The small members and the arrays' headers, checked as :func:`_load_npz` checks them; no array is read
        but the two ends of ``indptr``."""
        try:
            with cachecheck.readable(), zipfile.ZipFile(self.path) as zf, open(self.path, "rb") as raw:
                infos = cachecheck.members(zf, NPZ_FORMAT)
                self.directed, _ = cachecheck.check_scalars(cachecheck.read_scalars(zf, infos, self.size), NPZ_FORMAT)
                self._arrays = {name: _npy_member(zf, raw, infos[name], self.size)
                                for name in _NPZ_ARRAYS if name in infos}
                n, m = cachecheck.check_layout({name: (a.dtype, a.shape) for name, a in self._arrays.items()})
                first, last = self._slice(raw, "indptr", 0, 1), self._slice(raw, "indptr", n, n + 1)
                cachecheck.check_ends(int(cachecheck.as_signed(first)[0]), int(cachecheck.as_signed(last)[0]), m)
        except cachecheck.CacheError as e:
            raise GraphFormatError(self.path, None, str(e)) from None
        self.num_vertices, self.weighted = n, "weights" in self._arrays
        self.one_triangle = not self.directed

    def _slice(self, raw, name: str, lo: int, hi: int):
        """Elements [lo, hi) of stored array ``name``, read from the archive in place."""
        member = self._arrays[name]
        out = np.empty(hi - lo, member.dtype)
        if out.size == 0:
            return out
        view = memoryview(out.view(np.uint8))
        if member.offset is not None:
            raw.seek(member.offset + lo * member.dtype.itemsize)
            _readinto_exact(raw, view)
        else:  # a compressed member (not written by save_npz): decompressed up to the slice, streaming
            with zipfile.ZipFile(self.path) as zf, zf.open(member.name) as fp:
                fp.seek(member.data_start + lo * member.dtype.itemsize)
                _readinto_exact(fp, view)
        return out

    def _npz_part(self, index: int, count: int):
        """Rows [lo, hi), checked as far as a share shows them (see :meth:`part`)."""
        n = self.num_vertices
        lo, hi = n * index // count, n * (index + 1) // count
        if lo == hi:
            return self._empty()
        m = self._arrays["indices"].shape[0]
        try:
            with cachecheck.readable(), open(self.path, "rb") as raw:
                # the arrays' sizes are as declared (a deflated member may declare ~1000 times its bytes): each
                # slice must fit before it is read
                memory.check(16 * (hi - lo + 1), f"reading the offsets of rows {lo:,}..{hi - 1:,}",
                             error=cachecheck.CacheError, at_least=True)
                indptr = cachecheck.as_signed(self._slice(raw, "indptr", lo, hi + 1)).astype(np.int64, copy=False)
                cachecheck.check_offsets(indptr, lo, m)
                arcs = int(indptr[-1] - indptr[0])
                memory.check(arcs * (32 if self.weighted else 16), f"reading the {arcs:,} arcs of rows "
                             f"{lo:,}..{hi - 1:,}", error=cachecheck.CacheError, at_least=True)
                dst = cachecheck.as_signed(self._slice(raw, "indices", indptr[0], indptr[-1])).astype(np.int64)
                w = self._slice(raw, "weights", indptr[0], indptr[-1]) if self.weighted else None
            src = cachecheck.check_rows(indptr, dst, lo, n)
            w = cachecheck.as_float64(w)
            cachecheck.check_weights(w, src, dst)
            if not self.directed:
                cachecheck.check_symmetric_between(dst, w, src, lo, hi)
        except cachecheck.CacheError as e:
            raise GraphFormatError(self.path, None, str(e)) from None
        if not self.directed:
            keep = src < dst
            src, dst = src[keep], dst[keep]
            w = None if w is None else w[keep]
        return src, dst, w


class _NpyMember:
    """Where a .npy member's data lies: ``offset`` in the archive file (None when compressed), ``data_start`` in the member."""

    def __init__(self, name, offset, data_start, dtype, shape):
        self.name, self.offset, self.data_start, self.dtype, self.shape = name, offset, data_start, dtype, shape


def _npy_member(zf: zipfile.ZipFile, raw, info: zipfile.ZipInfo, archive_size: int) -> _NpyMember:
    """Where member ``info``'s array lies, its header checked by :func:`mgraph.io.cachecheck.member_header`."""
    dtype, shape, data_start = cachecheck.member_header(zf, info, archive_size)
    offset = None
    if info.compress_type == zipfile.ZIP_STORED:
        # A stored member's data follows its local header: 30 bytes, the name and an extra field
        # whose lengths may differ from the central directory's.
        raw.seek(info.header_offset)
        head = raw.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise cachecheck.CacheError(f"member {info.filename} has a damaged local zip header")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        offset = info.header_offset + 30 + name_len + extra_len + data_start
        if offset + info.file_size - data_start > archive_size:
            raise cachecheck.CacheError(f"member {info.filename} runs past the end of the file (a truncated archive)")
    return _NpyMember(info.filename, offset, data_start, dtype, shape)


def _readinto_exact(f, view: memoryview) -> None:
    got = 0
    while got < len(view):
        k = f.readinto(view[got:])
        if not k:
            raise EOFError(f"data ends {len(view) - got} bytes early")
        got += k


def _stream_lines(f, path, block: int = 1 << 16):
    """(line number, line, offset after it) of a binary stream from its start, as ``_lines`` gives them for its bytes.

    Only headers are read this way (a Matrix Market banner, comments and
    size line, an edge list's first data line), so a line that runs on past
    :data:`_LINE_MAX_BYTES` is a GraphFormatError: a file of one endless line
    (or a gzip bomb of one) would otherwise be read whole into one line.
    Reads grow with the line, so a long one costs linear time, not quadratic.
    """
    buf, pos, base, line_no = b"", 0, 0, 1  # base: stream offset of buf[0]
    while True:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            if len(buf) - pos > _LINE_MAX_BYTES:
                raise GraphFormatError(path, line_no, f"the line runs on past {_LINE_MAX_BYTES:,} bytes without "
                                       "ending; a graph file's lines are short")
            more = f.read(max(block, len(buf) - pos))
            if more:
                buf, base, pos = buf[pos:] + more, base + pos, 0
                continue
            if pos < len(buf):
                yield line_no, buf[pos:], base + len(buf)
            return
        yield line_no, buf[pos:nl + 1], base + nl + 1
        pos, line_no = nl + 1, line_no + 1

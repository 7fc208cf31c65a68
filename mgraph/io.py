"""Graph loaders: Matrix Market, SNAP and CSV edge lists, an .npz CSR cache, and generator specs.

Text is parsed vectorized: the file is read whole (gunzipped when it starts
with the gzip magic bytes), cut into chunks at line ends, and each chunk goes
through NumPy's C ``loadtxt``, which on numpy 2 parses several million edges a
second: as fast as ``np.fromstring``, 5x faster than ``bytes.split``, and
unlike them it checks every line's column count (see docs/loaders.md).  Only
when a chunk fails to parse does a Python loop walk that chunk's lines to name
the bad one, so a malformed file costs time only on the error path.  Every
format error is a :class:`GraphFormatError` with a one-line message
``FILE, line N: problem``.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import sys
import warnings
import zipfile
import zlib

import numpy as np

from . import generators
from .backend import Backend, resolve, to_numpy
from .graph import Graph

GZIP_MAGIC = b"\x1f\x8b"
# Extension -> format; the text formats may also end in ".gz".
FORMATS = {".mtx": "mtx", ".txt": "snap", ".edges": "snap", ".el": "snap", ".csv": "csv", ".npz": "npz"}
SUFFIXES = tuple(FORMATS) + tuple(ext + ".gz" for ext, fmt in FORMATS.items() if fmt != "npz")
NPZ_FORMAT = "mgraph-csr-1"

_CHUNK_BYTES = 64 << 20        # parse granularity: bounds the slow error scan and feeds the progress bar
_PROGRESS_MIN_BYTES = 32 << 20  # smaller files load too fast for a bar to help


class GraphFormatError(ValueError):
    """A malformed graph file; the message names the file and, where known, the 1-based line."""

    def __init__(self, path, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        where = f"{self.path}, line {line}" if line else self.path
        super().__init__(f"{where}: {problem}")


# -- public API -----------------------------------------------------------------


def load(path_or_spec, *, directed: bool | None = None, backend: str | Backend = "auto", seed: int = 0) -> Graph:
    """A graph from a file (format from its extension) or a generator spec such as ``rmat:20``.

    ``directed=None`` keeps what the file says (see :func:`read_edges`);
    ``True`` on an undirected source gives both arcs of every edge, ``False``
    on a directed one symmetrizes it.  Files are parsed on the CPU and the
    graph is built on ``backend``'s device; generated graphs (``seed`` picks
    one) are drawn there too.
    """
    b = resolve(backend)
    name = os.fspath(path_or_spec)
    if generators.is_spec(name) and not os.path.exists(name):
        if directed:
            raise ValueError(f"generated graphs are undirected; directed=True is not available for {name!r}")
        with _on_device(b):
            return generators.from_spec(name, xp=b.xp, seed=seed)
    fmt = format_of(name)
    if fmt == "npz":
        graph = _load_npz(name)
        if directed is None or directed == graph.directed:
            return graph.to(b)
        src, dst, w = graph.edges()
        graph = _build(src, dst, w, graph.num_vertices, directed, not graph.directed, b)
    else:
        src, dst, w, n, file_directed, one_triangle = _read(name, fmt)
        graph = _build(src, dst, w, n, file_directed if directed is None else directed, one_triangle, b)
    return graph.to(b)


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
    half-written cache behind.
    """
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


def format_of(path: str) -> str:
    """The format ('mtx', 'snap', 'csv' or 'npz') a file name's extension implies; ValueError if none."""
    lower = path.lower()
    for ext, fmt in FORMATS.items():
        if lower.endswith(ext) or (fmt != "npz" and lower.endswith(ext + ".gz")):
            return fmt
    raise ValueError(f"{path}: unknown graph file extension; expected one of {', '.join(SUFFIXES)}"
                     f" or a generator spec ({generators.SPEC_FORMS})")


# -- building -------------------------------------------------------------------


def _build(src, dst, w, n, directed: bool, one_triangle: bool, b: Backend) -> Graph:
    """The Graph, built on ``b``'s device (sorting there is the fast half of a load on a GPU).

    A directed view of a one-triangle source needs both arcs of every edge.
    """
    if directed and one_triangle:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        w = None if w is None else np.concatenate([w, w])
    with _on_device(b):
        return Graph.from_edges(b.asarray(src), b.asarray(dst), None if w is None else b.asarray(w),
                                num_vertices=n, directed=directed)


def _on_device(b: Backend):
    return b.xp.cuda.Device(b.device) if b.is_gpu else contextlib.nullcontext()


def _read(path: str, fmt: str):
    """``read_edges`` plus whether only one triangle of a symmetric matrix was stored."""
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    data = _read_bytes(path)
    if fmt == "mtx":
        return _parse_mtx(path, data)
    if fmt == "snap":
        src, dst, w = _parse_edge_list(path, data, delimiter=None, comments=_snap_comments(data))
        return src, dst, w, None, True, False
    src, dst, w = _parse_edge_list(path, data, delimiter=",", comments="#")
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


def _read_bytes(path: str) -> bytes:
    """The whole file, gunzipped when it starts with the gzip magic bytes (whatever its suffix)."""
    size = os.path.getsize(path)
    with open(path, "rb") as raw, _progress(size, f"reading {os.path.basename(path)}") as bar:
        gz = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        src = raw
        if bar is not None:
            from tqdm.utils import CallbackIOWrapper

            src = CallbackIOWrapper(bar.update, raw, "read")
        if gz:
            try:
                return gzip.GzipFile(fileobj=src).read()
            except (OSError, EOFError, zlib.error) as e:
                raise GraphFormatError(path, None, f"corrupt or truncated gzip data ({e})") from None
        if bar is None:
            return raw.read()
        return b"".join(iter(lambda: src.read(1 << 24), b""))


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


def _strip_comment(line: bytes, comments) -> bytes:
    for mark in (comments,) if isinstance(comments, str) else comments:
        cut = line.find(mark.encode())
        if cut >= 0:
            line = line[:cut]
    return line.strip()


def _parse_edge_list(path, data: bytes, *, delimiter, comments):
    """SNAP (whitespace) or CSV edge lists: 2 or 3 columns, 0-based ids.

    A CSV's first line is its header unless it is all numbers; the header or
    the first data line fixes the column count.
    """
    first = next(((no, line, end) for no, line, end in _lines(data, 0, 1) if _strip_comment(line, comments)), None)
    if first is None:
        return np.empty(0, np.int64), np.empty(0, np.int64), None
    line_no, line, end = first
    fields = _strip_comment(line, comments).split(delimiter.encode() if delimiter else None)
    header = delimiter is not None and not all(_is_number(f) for f in fields)
    if len(fields) not in (2, 3):
        raise GraphFormatError(path, line_no, f"{'header' if header else 'line'} has {len(fields)} columns;"
                               " expected 2 (src, dst) or 3 (src, dst, weight)")
    start, first_line = (end, line_no + 1) if header else (end - len(line), line_no)
    table = _Table(path, data, start, first_line, len(fields), delimiter, comments, weight_kind="f8")
    src, dst, w = table.columns()
    for ids, what in ((src, "source"), (dst, "target")):
        if ids.size and ids.min() < 0:
            row = int(np.argmax(ids < 0))
            raise GraphFormatError(path, table.line_of_row(row), f"negative {what} vertex id {int(ids[row])}")
    return src, dst, w


def _is_number(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


_MTX_FIELDS = {"pattern": None, "integer": "i8", "real": "f8"}
_MTX_SYMMETRY = ("general", "symmetric")
_MTX_BANNER = "%%MatrixMarket matrix coordinate <field> <symmetry>"


def _parse_mtx(path, data: bytes):
    """Matrix Market coordinate files: pattern/integer/real, general/symmetric, 1-based ids."""
    lines = _lines(data, 0, 1)
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
    weight_kind = _MTX_FIELDS[field]
    table = _Table(path, data, end, line_no + 1, 2 if weight_kind is None else 3, None, "%", weight_kind)
    src, dst, w = table.columns()
    if src.size < nnz:
        raise GraphFormatError(path, table.last_line + 1,
                               f"file ends after {src.size} of the {nnz} entries the size line declares")
    if src.size > nnz:
        raise GraphFormatError(path, table.line_of_row(nnz), f"more entries than the {nnz} the size line declares")
    for ids, what in ((src, "row"), (dst, "column")):
        bad = (ids < 1) | (ids > rows)
        if bad.any():
            row = int(np.argmax(bad))
            raise GraphFormatError(path, table.line_of_row(row), f"{what} index {int(ids[row])} is outside 1..{rows}")
    src -= 1
    dst -= 1
    symmetric = symmetry == "symmetric"
    return src, dst, w, rows, not symmetric, symmetric


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
            text = _strip_comment(line, self.comments)
            if not text:
                continue
            fields = [f.strip() for f in text.split(sep)]
            if len(fields) != self.ncols:
                return line_no, f"expected {self.ncols} columns, found {len(fields)} in {_show(text)}"
            for token in fields[:2]:
                if not _is_int64(token):
                    return line_no, f"vertex id {_show(token)} is not an integer"
            if self.weight_kind == "i8" and not _is_int64(fields[2]):
                return line_no, f"weight {_show(fields[2])} is not an integer"
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


def _show(token: bytes, limit: int = 40) -> str:
    """A token for a one-line message: quoted, printable, shortened."""
    text = token.decode("latin1")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# -- .npz cache -------------------------------------------------------------------


def _load_npz(path: str) -> Graph:
    """The Graph a :func:`save_npz` file holds, after cheap O(n + m) consistency checks."""
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise GraphFormatError(path, None, f"not a readable .npz archive ({e})") from None
    missing = {"format", "indptr", "indices", "directed", "num_input_edges"} - set(arrays)
    if missing or str(arrays["format"]) != NPZ_FORMAT:
        raise GraphFormatError(path, None, f"not an mgraph graph cache (expected format {NPZ_FORMAT!r}"
                               + (f", missing {', '.join(sorted(missing))})" if missing else ")"))
    indptr, indices, weights = arrays["indptr"], arrays["indices"], arrays.get("weights")
    n = indptr.shape[0] - 1 if indptr.ndim == 1 else -1
    if (n < 0 or indptr.dtype != np.int64 or indices.ndim != 1 or indices.dtype.kind != "i"
            or indptr[0] != 0 or indptr[-1] != indices.shape[0] or (np.diff(indptr) < 0).any()
            or (indices.size and (indices.min() < 0 or indices.max() >= n))
            or (weights is not None and weights.shape != indices.shape)):
        raise GraphFormatError(path, None, "inconsistent CSR arrays (indptr, indices, weights)")
    num_input = int(arrays["num_input_edges"])
    return Graph(indptr, indices, weights, directed=bool(arrays["directed"]),
                 num_input_edges=None if num_input < 0 else num_input)

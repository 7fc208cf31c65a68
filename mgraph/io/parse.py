"""Edge-list text parsed at library speed: pyarrow's multithreaded CSV reader on the bytes :mod:`mgraph.io` read.

Every text format mgraph reads (SNAP and CSV edge lists, the entries of a
Matrix Market file, plain or gunzipped, whole or a reader's byte range) is,
after its header, a table of 2 or 3 numbers a line.  :func:`columns` hands
that table to ``pyarrow.csv`` (C++, blocks parsed in parallel) with options that
make it parse exactly like the line-aware reader in :mod:`mgraph.io`
(NumPy's ``loadtxt`` a chunk at a time, then a walk over the lines of a
chunk that fails): a fixed column count, ids as int64, weights as float64
(int64 for a Matrix Market ``integer`` field), no quoting, no null values.
It returns None, and the caller runs its own reader, wherever the answers
could differ or the table cannot be read here:

* pyarrow is not installed (it is imported on first use);
* the text has a comment character ('#' or '%') after its header, a UTF-8
  byte-order mark (pyarrow skips one where a buffer starts), a carriage return
  that does not end a line, or an 'x' (pyarrow reads ``0x1F`` as an integer,
  loadtxt refuses it): rare in files that programs write, and the line-aware
  reader handles them;
* pyarrow refuses a line (a wrong column count, a token that is not a number,
  a null, a line longer than a block), or its memory would not fit.

So a malformed file still reaches the line-aware reader, which raises the
one-line ``GraphFormatError`` naming the file and line; the caller also
falls back there when the parsed columns break one of its checks (a negative
or out-of-range id, a weight that is not finite), so every message stays the
one it was.  Within these rules pyarrow and loadtxt read every token the same
(tested against each other token by token and on random files,
tests/test_io_arrow.py).

Whitespace-separated text (SNAP, Matrix Market) is read with one delimiter,
a tab where the first data line has one, else a space; pyarrow trims spaces
and tabs around each number, so a file that separates its columns by runs of
spaces, or mixes tabs and spaces within a line, takes the line-aware reader.
"""
from __future__ import annotations

import os

import numpy as np

from mgraph import memory

ENABLED = True  # False: every table goes to the line-aware reader (tests compare the two)

# Memory: the text is handed to pyarrow a slice at a time, each slice's table copied into the NumPy columns and
# freed before the next, so that beyond the file's bytes and the finished columns a parse holds one slice's table
# (about the slice's bytes again) and its blocks in flight, whatever the file's size; a table of the whole file
# would double the columns.  A slice is cut into blocks that pyarrow's threads parse in parallel: four blocks a
# thread keep them busy, and small blocks keep what glibc's malloc retains of the freed ones small.  Measured on
# 10 M edges (155 MB, 2 cores), added to the process's peak beside the bytes: 4 MiB blocks (32 MiB slices) 276 MiB,
# 8 MiB 322 MiB, 16 MiB 439 MiB, a table of the whole file in 16 MiB blocks 476 MiB, the line-aware reader 267 MiB
# (the columns are 153 MiB of each); blocks of 4 to 16 MiB parsed about equally fast (docs/loaders.md).
BLOCK_BYTES = 4 << 20
BLOCKS_PER_THREAD = 4
_SAMPLE_BYTES = 4 << 20  # lines counted here estimate the rows of the whole range
_BOM = b"\xef\xbb\xbf"
_NAMES = ("s", "d", "w")


def available() -> bool:
    """Whether pyarrow can be imported (the fast path is used at all)."""
    return _arrow() is not None


def _arrow():
    try:
        import pyarrow
        import pyarrow.csv
    except ImportError:  # absent, or a broken install: the line-aware reader does the work
        return None
    return pyarrow


def columns(data, start: int, stop: int, ncols: int, delimiter: str | None, weight_kind: str | None = "f8"):
    """The table in ``data[start:stop]`` as ``(src, dst, weights or None)``, or None where the caller must parse it.

    ``data`` is bytes or a bytearray, ``start`` the offset of the first data
    line (after any header), ``ncols`` 2 or 3, ``delimiter`` ',' or None for
    whitespace, ``weight_kind`` 'f8' or 'i8' (the third column's type in the
    text).  Ids are int64 and weights float64, in NumPy arrays this function
    owns (writable, not views of Arrow memory), rows in the file's order.
    Nothing is checked beyond parsing: the caller checks ids and weights.
    """
    if not ENABLED or ncols not in (2, 3) or not _plain(data, start, stop):
        return None
    if stop == start:
        e = np.empty(0, np.int64)
        return e, e.copy(), np.empty(0, np.float64) if ncols == 3 else None
    pa = _arrow()
    if pa is None:
        return None
    threads = max(pa.cpu_count(), 1)
    rows, slice_bytes, need = _plan(data, start, stop, ncols, threads)
    if memory.shortfall(need) is not None:
        return None  # the line-aware reader needs less; it checks its own need
    if delimiter is None:
        delimiter = _whitespace_delimiter(data, start, stop)
    csv = pa.csv
    names = list(_NAMES[:ncols])
    types = {"s": pa.int64(), "d": pa.int64()}
    if ncols == 3:
        types["w"] = pa.int64() if weight_kind == "i8" else pa.float64()
    parse = csv.ParseOptions(delimiter=delimiter, quote_char=False, escape_char=False, newlines_in_values=False,
                             ignore_empty_lines=True)
    convert = csv.ConvertOptions(column_types=types, null_values=[], true_values=[], false_values=[],
                                 strings_can_be_null=False, quoted_strings_can_be_null=False)
    pool = pa.system_memory_pool()  # malloc: what a slice frees is there for the next, and for the graph's build
    buffer = pa.py_buffer(data)
    out = [np.empty(rows, np.float64 if k == 2 else np.int64) for k in range(ncols)]
    n, pos = 0, start
    while pos < stop:
        end = stop if stop - pos <= slice_bytes else (data.rfind(b"\n", pos, pos + slice_bytes) + 1
                                                       or data.find(b"\n", pos + slice_bytes) + 1 or stop)
        read = csv.ReadOptions(column_names=names, use_threads=True,
                               block_size=max(1 << 20, min(BLOCK_BYTES, -(-(end - pos) // (threads * 2)))))
        try:
            table = csv.read_csv(pa.BufferReader(buffer.slice(pos, end - pos)), read_options=read,
                                 parse_options=parse, convert_options=convert, memory_pool=pool)
        except (pa.ArrowException, MemoryError):
            return None  # a line pyarrow refuses (the caller's reader names it), or no room
        k = table.num_rows
        if table.num_columns != ncols or any(table.column(c).null_count for c in range(ncols)):
            return None
        if n + k > out[0].shape[0]:  # more rows than estimated: room for the rest at the rate seen so far
            more = (stop - end) * (n + k) // max(end - start, 1)
            out = [_grown(column, n, n + k + more + more // 8) for column in out]
        for c in range(ncols):
            at = n
            for chunk in table.column(c).chunks:
                values = chunk.to_numpy(zero_copy_only=False)
                out[c][at:at + values.shape[0]] = values
                at += values.shape[0]
        del table
        n, pos = n + k, end
    for column in out:
        if column.shape[0] != n:
            column.resize(n, refcheck=False)  # a shrinking realloc: no copy
    return out[0], out[1], out[2] if ncols == 3 else None


def _grown(column, n: int, size: int):
    bigger = np.empty(size, column.dtype)
    bigger[:n] = column[:n]
    return bigger


def _plain(data, start: int, stop: int) -> bool:
    """Whether ``data[start:stop]`` is in the subset pyarrow parses exactly as loadtxt does (see the module's notes).

    Single-byte searches (memchr) over the range; a carriage return costs two
    counts more, only in files that have one.  pyarrow skips a byte-order mark
    at the start of every buffer it is given (each slice), so any 0xEF byte,
    which no number has, sends the text to the line-aware reader.
    """
    for mark in (b"#", b"%", b"x", b"X", _BOM[:1]):
        if data.find(mark, start, stop) >= 0:
            return False
    cr = data.find(b"\r", start, stop)
    return cr < 0 or data.count(b"\r", cr, stop) == data.count(b"\r\n", cr, stop)


def _whitespace_delimiter(data, start: int, stop: int) -> str:
    """A tab where the first line of the range has one, else a space."""
    end = data.find(b"\n", start, min(stop, start + 65536))
    return "\t" if data.find(b"\t", start, end if end >= 0 else min(stop, start + 65536)) >= 0 else " "


def _plan(data, start: int, stop: int, ncols: int, threads: int):
    """(rows, slice bytes, bytes needed) for parsing ``data[start:stop]`` with ``threads`` threads.

    The rows are estimated from the line length of the range's first few MiB,
    with an eighth more for safety (the columns grow if the rest has shorter
    lines).  What the parse adds to the process: the columns, and one slice's
    table with its blocks in flight (about twice the slice's bytes).
    """
    sample = min(stop, start + _SAMPLE_BYTES)
    lines = data.count(b"\n", start, sample) + 1
    rows = (stop - start) * lines // max(sample - start, 1) + 1
    rows += rows // 8
    slice_bytes = threads * BLOCKS_PER_THREAD * BLOCK_BYTES
    return rows, slice_bytes, rows * 8 * ncols + 2 * min(stop - start, slice_bytes)


def cpu_threads() -> int:
    """Threads pyarrow parses with (its CPU pool), for reports; os.cpu_count() where pyarrow is absent."""
    pa = _arrow()
    return pa.cpu_count() if pa is not None else (os.cpu_count() or 1)

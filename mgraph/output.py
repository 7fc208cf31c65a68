"""A result's per-vertex values as a file: ``.csv``, ``.parquet`` or ``.npz``, the format chosen by the suffix.

What ``mgraph bfs|sssp|cc|... --output FILE`` writes, and :meth:`mgraph.Result.write`.  The table is
:meth:`mgraph.Result.columns`: a ``vertex`` column, then one column per per-vertex array of the result, in the
order the run function gives them (``depth, predecessor``; ``distance, predecessor``; ``labels``; ``rank``; ...).

* Vertices are the caller's: the vertex ids (0-based, the numbering ``--source`` takes), or the labels where the
  graph has them (a graph from mgraph.from_networkx / from_pandas).
* Vertex-valued columns (``predecessor``; ``labels`` of connected components and label propagation) hold
  labels where the vertices have them, as :meth:`~mgraph.Result.to_dict` and ``to_pandas`` give them; an
  entry that names no vertex (no predecessor) is then null: an empty field in CSV, a null in Parquet, and in
  ``.npz`` (which has no null) a boolean array ``<column>_missing`` beside the column, whose entries there
  are placeholders ("" or -1).  Without labels every column holds the API's numbers as they are: -1 for no
  predecessor and an unreached depth, ``inf`` for an unreached distance (``inf`` in CSV).
* Labels that are ints stay int64; strings are strings; any other label (a tuple, a mix) is written as its
  ``str()``, since none of the three formats holds arbitrary Python objects.

Files are written whole from NumPy/Arrow columns (no Python object per row where the vertices have no labels,
so millions of rows cost what the column writers cost), beside the path first and then renamed over it, so
that a process killed while writing leaves no half file under the name.  :func:`check_path` is meant to run
before a long run: an unknown suffix, a missing folder or an unwritable path is a one-line ValueError then,
not after an hour of work.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["FORMATS", "format_of", "check_path", "rank_path", "write"]

FORMATS = {".csv": "csv", ".parquet": "parquet", ".npz": "npz"}


def format_of(path) -> str:
    """The format ``path`` names by its suffix (case ignored): ValueError, one line, for any other suffix."""
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in FORMATS:
        raise ValueError(f"{name}: unknown output format {suffix or '(no suffix)'!r}: give a file ending in "
                         f"{', '.join(FORMATS)}")
    return FORMATS[suffix]


def rank_path(path, rank: int) -> str:
    """The file of one MPI rank's own part: ``rank`` inserted before the suffix (``out.parquet`` ->
    ``out.rank1.parquet``), so that the files of a job sort together and keep the suffix that names the format."""
    root, suffix = os.path.splitext(os.fspath(path))
    return f"{root}.rank{rank}{suffix}"


def check_path(path) -> str:
    """Before the run: ``path``'s format, or a one-line ValueError where it could not be written afterwards.

    Checks the suffix, that pyarrow is there for ``.csv`` and ``.parquet``, that
    the path is not a folder and that its folder exists, and creates (then
    removes) the file the write goes through, so that permissions, a read-only
    file system or a full directory show now, as the write would meet them.
    """
    name = os.fspath(path)
    fmt = format_of(name)
    if fmt != "npz":
        _pyarrow(name)
    if os.path.isdir(name):
        raise ValueError(f"{name} is a folder: give a file name")
    folder = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(folder):
        raise ValueError(f"{name}: folder {folder} does not exist")
    if os.path.exists(name) and not os.access(name, os.W_OK):
        raise ValueError(f"{name}: cannot write over it (permission denied)")
    partial = _partial(name)
    try:
        with open(partial, "wb"):
            pass
        os.remove(partial)
    except OSError as e:
        raise ValueError(f"{name}: cannot write there ({e.strerror or type(e).__name__})") from None
    return fmt


def write(result, path, *, map_values: bool | None = None) -> int:
    """Write ``result``'s per-vertex values (:meth:`mgraph.Result.columns`) to ``path``; returns the rows written.

    ``map_values`` as in :meth:`mgraph.Result.to_dict`.  The format is the
    suffix's (:func:`format_of`).  A result that holds no arrays here (off rank
    0 under MPI, gathered) is a ValueError, as for ``to_pandas``.
    """
    name = os.fspath(path)
    fmt = format_of(name)
    columns = {key: _plain(values, missing) for key, (values, missing) in result.columns(map_values=map_values).items()}
    rows = len(columns["vertex"][0])
    partial = _partial(name)
    try:
        if fmt == "npz":
            _write_npz(columns, partial)
        else:
            _write_arrow(columns, partial, fmt, name)
        os.replace(partial, name)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    return rows


def _partial(name: str) -> str:
    return name + ".partial"


def _pyarrow(name: str):
    try:
        import pyarrow
    except ImportError:
        raise ValueError(f"{name}: writing {os.path.splitext(name)[1]} needs pyarrow, which is not installed: "
                         f"pip install pyarrow (or write .npz)") from None
    return pyarrow


def _plain(values: np.ndarray, missing):
    """A column as one of the types every format holds: numbers as they are, labels as int64 or str.

    Object labels are strings already where every one is a str; any other
    object becomes its ``str()`` (a Python step per label, which such labels
    cost wherever they are used)."""
    values = np.asarray(values)
    if values.dtype.kind in "biuf":
        return values, missing
    if values.dtype.kind != "U":
        values = values.astype(object)
        if not all(type(v) is str for v in values.tolist()):
            values = np.array([str(v) for v in values.tolist()], dtype=object)
    return values, missing


def _write_npz(columns: dict, target: str) -> None:
    """``np.savez`` (uncompressed: written as it is, readable with ``np.load`` without pickles), strings as
    fixed-width unicode, each mapped column with its ``_missing`` mask."""
    arrays = {}
    for key, (values, missing) in columns.items():
        if values.dtype.kind in "OU":
            values = values.astype(str) if values.size else np.zeros(0, dtype="<U1")
        if missing is not None:
            values = values.copy()
            values[missing] = "" if values.dtype.kind == "U" else -1
        arrays[key] = values
        if missing is not None:
            arrays[key + "_missing"] = missing
    with open(target, "wb") as f:  # a file object: np.savez would add .npz to a name without it
        np.savez(f, **arrays)


def _write_arrow(columns: dict, target: str, fmt: str, name: str) -> None:
    """Parquet through pyarrow.parquet, CSV through pyarrow.csv (a header line of the column names; strings
    quoted; a null an empty field); the columns go to Arrow without a copy where they are numbers."""
    pa = _pyarrow(name)
    arrays = []
    for values, missing in columns.values():
        kind = pa.string() if values.dtype.kind in "OU" else None
        arrays.append(pa.array(values, type=kind, mask=missing))
    table = pa.table(dict(zip(columns, arrays)))
    if fmt == "parquet":
        import pyarrow.parquet as pq
        pq.write_table(table, target)
    else:
        import pyarrow.csv as pc
        pc.write_csv(table, target)

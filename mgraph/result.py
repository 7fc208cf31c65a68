"""What every run function returns: NumPy arrays by name, plus ``.stats``."""
from __future__ import annotations

import numpy as np

from mgraph import output
from mgraph.backend import to_numpy

VERTEX_VALUED = ("predecessor", "labels")
"""Result arrays whose values are vertex ids, unless the run function says otherwise: BFS's and SSSP's
predecessors, connected components' and label propagation's labels (each the id of a vertex)."""


def import_pandas(what: str):
    """pandas, or a one-line ImportError saying how to get it (it is an optional dependency)."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"{what} needs pandas, which is not installed: pip install pandas") from None
    return pandas


class Result:
    """Result arrays as attributes (``r.depth``) or by name (``r["depth"]``), run statistics in ``r.stats``.

    Every array holds one value per vertex (in vertex id order; with
    ``gather=False`` under MPI, one per vertex in ``r.vertices``).  A result
    of a graph that came from a converter (mgraph.from_networkx,
    from_pandas, ...) knows the vertices' labels (``r.vertex_labels``), and
    ``to_dict`` and ``to_pandas`` key the values by them and give the values
    of vertex-valued arrays (``vertex_valued``: by default those named in
    :data:`VERTEX_VALUED`) as labels too, None where there is no vertex (-1).
    """

    def __init__(self, arrays: dict, stats: dict, *, vertex_labels=None, vertex_valued=None):
        self._arrays = dict(arrays)
        self.stats = stats
        self._vertex_labels = vertex_labels
        self.vertex_valued = tuple(VERTEX_VALUED if vertex_valued is None else vertex_valued)

    def __getattr__(self, name):
        try:
            return self.__dict__["_arrays"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name):
        try:
            return self._arrays[name]
        except KeyError:
            raise KeyError(f"no result array {name!r}: this result has {', '.join(self._arrays) or 'none'}") from None

    def __contains__(self, name) -> bool:
        return name in self._arrays

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._arrays))

    def keys(self):
        return self._arrays.keys()

    @property
    def vertex_labels(self):
        """The label of each vertex (an array indexed by vertex id), or None where vertices are their own ids."""
        return self._vertex_labels

    # -- tables -----------------------------------------------------------------

    def _vertex_ids(self) -> np.ndarray:
        """The vertex id of each array entry: ``vertices`` where a rank kept only its own, else 0..n-1."""
        if any(a is None for a in self._arrays.values()):
            raise ValueError("this result holds no arrays here: under MPI the whole arrays land on rank 0 "
                             "(or pass gather=False to keep each rank's own vertices)")
        if "vertices" in self._arrays:
            return to_numpy(self._arrays["vertices"]).astype(np.int64, copy=False)
        if self._vertex_labels is not None:
            return np.arange(len(self._vertex_labels), dtype=np.int64)
        lengths = {int(a.shape[0]) for a in self._arrays.values() if getattr(a, "ndim", 0) == 1}
        return np.arange(max(lengths, default=0), dtype=np.int64)

    def _per_vertex(self, ids) -> dict:
        """The per-vertex arrays (1-D, one value per entry of ``ids``) as NumPy arrays, ``vertices`` left out."""
        return {name: to_numpy(a) for name, a in self._arrays.items()
                if name != "vertices" and getattr(a, "ndim", 0) == 1 and a.shape[0] == ids.shape[0]}

    def _keys(self, ids) -> list:
        """The dict keys / table column of the vertices ``ids``: their labels, or the ids themselves."""
        return (ids if self._vertex_labels is None else self._vertex_labels[ids]).tolist()

    def _maps(self, name: str, values: np.ndarray, map_values) -> bool:
        """Whether array ``name``'s values become labels: ``map_values`` where given (True needs integer values),
        else where it is vertex-valued and the vertices have labels."""
        if map_values is None:
            return name in self.vertex_valued and self._vertex_labels is not None and values.dtype.kind in "iu"
        if map_values and values.dtype.kind not in "iu":
            raise ValueError(f"map_values=True needs vertex ids, but {name!r} holds dtype {values.dtype}")
        return bool(map_values)

    def _mapped(self, name: str, values: np.ndarray):
        """Vertex ids ``values`` as the vertices' labels (the ids themselves where there are none), and a mask of
        the entries that name no vertex (negative ids): whole arrays, so that a table of millions of rows
        (:meth:`columns`, a file the CLI writes) maps them without a Python object per row."""
        n = len(self._vertex_labels) if self._vertex_labels is not None else None
        if n is not None and values.size and int(values.max()) >= n:
            raise ValueError(f"{name!r} holds {int(values.max())}, not a vertex id of this {n}-vertex graph")
        missing = values < 0
        if self._vertex_labels is None:
            return values, missing
        if n == 0:  # no vertex to name: every entry is missing (there are none, or they are all negative)
            return np.zeros(values.shape, dtype=self._vertex_labels.dtype), missing
        return self._vertex_labels[np.maximum(values, 0)], missing

    def _as_labels(self, name: str, values: np.ndarray) -> list:
        """Vertex ids ``values`` as the vertices' labels (the ids where there are none), None for a negative one."""
        out, missing = self._mapped(name, values)
        out = out.astype(object)
        out[missing] = None
        return out.tolist()

    def to_dict(self, name: str, *, map_values: bool | None = None) -> dict:
        """``{label: value}`` of array ``name`` (keyed by vertex id where the graph had no labels).

        Values are Python numbers.  The values of a vertex-valued array
        (``predecessor``; ``labels`` of connected_components and
        label_propagation) are labels where the vertices have them, None
        where negative (no predecessor), as in :meth:`to_pandas`;
        ``map_values=True`` maps an integer array so even without labels
        (-1 to None), ``False`` leaves every array's ids as they are.
        """
        if name not in self._arrays:
            raise ValueError(f"no result array {name!r}: this result has {', '.join(self._arrays) or 'none'}")
        ids = self._vertex_ids()
        arrays = self._per_vertex(ids)
        if name not in arrays:
            raise ValueError(f"result array {name!r} does not hold one value per vertex")
        values = arrays[name]
        values = self._as_labels(name, values) if self._maps(name, values, map_values) else values.tolist()
        return dict(zip(self._keys(ids), values))

    def columns(self, *, map_values: bool | None = None) -> dict:
        """The table of this result as whole arrays: ``{name: (values, missing)}``, ``vertex`` first (the labels,
        or the vertex ids), then one entry per per-vertex array.

        ``missing`` is None, or for an array whose values became labels (as in
        :meth:`to_dict`, ``map_values`` the same) a boolean mask of the
        entries that name no vertex (-1); their ``values`` there are
        placeholders.  :meth:`to_pandas` and the files the CLI writes
        (mgraph.output) are made from it, so both map alike.
        """
        ids = self._vertex_ids()
        out = {"vertex": (ids if self._vertex_labels is None else self._vertex_labels[ids], None)}
        for name, values in self._per_vertex(ids).items():
            if name in self.vertex_valued and self._maps(name, values, map_values):
                out[name] = self._mapped(name, values)
            else:
                out[name] = (values, None)
        return out

    def to_pandas(self, *, map_values: bool | None = None):
        """A pandas DataFrame: a ``vertex`` column (labels, or vertex ids), then one column per per-vertex array.

        Vertex-valued arrays hold labels where the vertices have them, as in
        :meth:`to_dict` (``map_values`` the same): a nullable ``Int64`` column
        where the labels are ints (missing where there is no vertex, -1),
        else objects (None there).
        """
        pd = import_pandas("Result.to_pandas")
        frame = {}
        for name, (values, missing) in self.columns(map_values=map_values).items():
            if missing is None:
                frame[name] = values
            elif values.dtype.kind in "iu":
                frame[name] = pd.arrays.IntegerArray(values.astype(np.int64, copy=False), missing.copy())
            else:
                column = values.astype(object)
                column[missing] = None
                frame[name] = pd.Series(column, dtype=object)
        return pd.DataFrame(frame)

    def write(self, path, *, map_values: bool | None = None) -> int:
        """Write the table of :meth:`columns` to ``path``: ``.csv``, ``.parquet`` or ``.npz`` by its suffix (see
        mgraph.output, which also says how a vertex-valued entry naming no vertex is written); the rows written.
        What ``mgraph bfs ... --output FILE`` does with a run's result."""
        return output.write(self, path, map_values=map_values)

    def __repr__(self) -> str:
        fields = ", ".join(self._arrays)
        return f"Result({fields}; iterations={self.stats.get('iterations')}, elapsed_s={self.stats.get('elapsed_s'):.6g})"

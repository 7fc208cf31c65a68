"""What every run function returns: NumPy arrays by name, plus ``.stats``."""
from __future__ import annotations

import numpy as np


class Result:
    """Result arrays as attributes (``r.depth``) or by name (``r["depth"]``), run statistics in ``r.stats``.

    Every array holds one value per vertex (in vertex id order; with
    ``gather=False`` under MPI, one per vertex in ``r.vertices``).  A result
    of a graph that came from a converter (mgraph.from_networkx,
    from_pandas, ...) knows the vertices' labels (``r.vertex_labels``), and
    ``to_dict`` and ``to_pandas`` key the values by them.
    """

    def __init__(self, arrays: dict, stats: dict, *, vertex_labels=None):
        self._arrays = dict(arrays)
        self.stats = stats
        self._vertex_labels = vertex_labels

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
        from mgraph.backend import to_numpy

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
        from mgraph.backend import to_numpy

        return {name: to_numpy(a) for name, a in self._arrays.items()
                if name != "vertices" and getattr(a, "ndim", 0) == 1 and a.shape[0] == ids.shape[0]}

    def _keys(self, ids) -> list:
        """The dict keys / table column of the vertices ``ids``: their labels, or the ids themselves."""
        return (ids if self._vertex_labels is None else self._vertex_labels[ids]).tolist()

    def to_dict(self, name: str, *, map_values: bool = False) -> dict:
        """``{label: value}`` of array ``name`` (keyed by vertex id where the graph had no labels).

        Values are Python numbers.  ``map_values=True`` is for arrays whose
        values are vertex ids (``predecessor``; ``labels`` of
        connected_components): each value becomes that vertex's label, and a
        negative one (no predecessor) None.
        """
        if name not in self._arrays:
            raise ValueError(f"no result array {name!r}: this result has {', '.join(self._arrays) or 'none'}")
        ids = self._vertex_ids()
        arrays = self._per_vertex(ids)
        if name not in arrays:
            raise ValueError(f"result array {name!r} does not hold one value per vertex")
        values = arrays[name]
        if map_values:
            if values.dtype.kind not in "iu":
                raise ValueError(f"map_values=True needs vertex ids, but {name!r} holds dtype {values.dtype}")
            n = len(self._vertex_labels) if self._vertex_labels is not None else None
            if n is not None and values.size and int(values.max()) >= n:
                raise ValueError(f"{name!r} holds {int(values.max())}, not a vertex id of this {n}-vertex graph")
            out = values.tolist() if self._vertex_labels is None else self._vertex_labels[np.maximum(values, 0)].tolist()
            values = [None if v < 0 else o for v, o in zip(values.tolist(), out)]
        else:
            values = values.tolist()
        return dict(zip(self._keys(ids), values))

    def to_pandas(self):
        """A pandas DataFrame: a ``vertex`` column (labels, or vertex ids), then one column per per-vertex array."""
        from mgraph.convert import import_pandas

        pd = import_pandas("Result.to_pandas")
        ids = self._vertex_ids()
        vertex = ids if self._vertex_labels is None else self._vertex_labels[ids]
        return pd.DataFrame({"vertex": vertex, **self._per_vertex(ids)})

    def __repr__(self) -> str:
        fields = ", ".join(self._arrays)
        return f"Result({fields}; iterations={self.stats.get('iterations')}, elapsed_s={self.stats.get('elapsed_s'):.6g})"

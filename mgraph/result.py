"""What every run function returns: NumPy arrays by name, plus ``.stats``."""
from __future__ import annotations


class Result:
    """Result arrays as attributes (``r.depth``), run statistics in ``r.stats``."""

    def __init__(self, arrays: dict, stats: dict):
        self._arrays = dict(arrays)
        self.stats = stats

    def __getattr__(self, name):
        try:
            return self.__dict__["_arrays"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._arrays))

    def keys(self):
        return self._arrays.keys()

    def __repr__(self) -> str:
        fields = ", ".join(self._arrays)
        return f"Result({fields}; iterations={self.stats.get('iterations')}, elapsed_s={self.stats.get('elapsed_s'):.6g})"

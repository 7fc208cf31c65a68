"""Stage: graphs in.

Takes files (Matrix Market, SNAP and CSV edge lists, the ``.npz`` CSR cache)
and generator specs (R-MAT, grid, Erdős–Rényi); gives whole graphs
(:mod:`~mgraph.io.loaders`), edge lists read by share so that P workers
together read a source once (:mod:`~mgraph.io.sources`), and the generators
themselves (:mod:`~mgraph.io.generators`).  :mod:`~mgraph.io.parse` is the
text parser, :mod:`~mgraph.io.cachecheck` the ``.npz`` cache's invariants.
Nothing here knows about parts or devices beyond the one a graph is built on.
"""
from mgraph.io.loaders import (FileEdges, GraphFormatError, check_load_args, format_of, load, read_edges,
                               save_npz)

__all__ = ["FileEdges", "GraphFormatError", "check_load_args", "format_of", "load", "read_edges", "save_npz"]

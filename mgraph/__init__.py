"""mgraph: multi-GPU graph analytics after Gunrock's multi-GPU design (Pan et al., IPDPS 2017)."""
from . import _tree  # noqa: F401  (first: mgraph.primitives and mgraph.partitioners from a source tree)
from .api import (betweenness_centrality, bfs, connected_components, core_number, label_propagation, pagerank, run,
                  sssp, triangles)
from .convert import as_graph, from_networkx, from_pandas, from_scipy
from .graph import Graph
from .result import Result

from ._tree import version as _version

__version__ = _version()


def load(path_or_spec, *, directed=None, backend="auto", seed=0, weights=None):
    """A Graph from a file (.mtx, .txt/.el edge list, .csv, .npz; gzip-aware) or a generator spec (rmat:S[:EF], grid:WxH, er:N:M).

    Under MPI (``mpiexec -n P``, P > 1) a :class:`~mgraph.partitioned.PartitionedGraph`: each rank reads only its
    share, and builds its part on its device when a run first needs it (collective: every rank calls it).
    """
    from .group import world
    from .io import check_load_args

    check_load_args(path_or_spec, directed=directed, seed=seed, weights=weights)
    w = world()
    if w is not None:
        from .partitioned import PartitionedGraph

        return PartitionedGraph(path_or_spec, w, directed=directed, seed=seed, weights=weights)
    from .io import load as _load

    return _load(path_or_spec, directed=directed, backend=backend, seed=seed, weights=weights)


__all__ = ["Graph", "Result", "load", "from_networkx", "from_scipy", "from_pandas", "as_graph",
           "bfs", "sssp", "connected_components", "pagerank", "betweenness_centrality", "triangles", "core_number",
           "label_propagation", "run"]

"""mgraph: multi-GPU graph analytics after Gunrock's multi-GPU design (Pan et al., IPDPS 2017)."""
from .api import betweenness_centrality, bfs, connected_components, pagerank, run, sssp
from .graph import Graph

__version__ = "0.1.0"


def load(path_or_spec, *, directed=None, backend="auto"):
    """A Graph from a file (.mtx, .txt/.el edge list, .csv, .npz; gzip-aware) or a generator spec (rmat:S[:EF], grid:WxH, er:N:M)."""
    from .io import load as _load

    return _load(path_or_spec, directed=directed, backend=backend)


__all__ = ["Graph", "load", "bfs", "sssp", "connected_components", "pagerank", "betweenness_centrality", "run"]

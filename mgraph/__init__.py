"""mgraph: multi-GPU graph analytics after Gunrock's multi-GPU design (Pan et al., IPDPS 2017)."""
from mgraph import _tree  # noqa: F401  (first: mgraph.primitives and mgraph.partitioners from a source tree)
from mgraph.api import (betweenness_centrality, bfs, connected_components, core_number, label_propagation, leiden,
                        louvain, pagerank, run, sssp, strongly_connected_components, triangles)
from mgraph.convert import as_graph, from_networkx, from_pandas, from_scipy
from mgraph.graph import Graph
from mgraph.parts.loading import load
from mgraph.result import Result

from mgraph._tree import version as _version

__version__ = _version()


__all__ = ["Graph", "Result", "load", "from_networkx", "from_scipy", "from_pandas", "as_graph",
           "bfs", "sssp", "connected_components", "strongly_connected_components", "pagerank", "betweenness_centrality",
           "triangles", "core_number", "label_propagation", "louvain", "leiden", "run"]

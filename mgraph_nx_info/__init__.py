"""What NetworkX reads about the "mgraph" backend when it is imported (the ``networkx.backend_info`` entry point).

This package is apart from ``mgraph`` on purpose: NetworkX calls
:func:`get_info` while ``import networkx`` runs, for every installed backend,
and importing ``mgraph`` would bring NumPy and the whole framework (and on a
GPU machine CuPy) into every program that imports networkx.  Only the
standard library is imported here.  The backend itself is ``mgraph.nx_backend``.
"""

# The networkx functions the backend runs, with when it runs them (the rest of each call falls back to networkx
# where nx.config.fallback_to_nx is set, or raises NotImplementedError).  docs/networkx.md says why.
_ANY = "Runs on any graph."
_COMPONENTS = "Runs on any graph (multigraph edges and self-loops do not change components)."
_BFS = ("Runs where sort_neighbors is None, on graphs whose class keeps networkx's own neighbour order; the same "
        "edges in the same order as networkx (hop counts from mgraph's BFS, networkx's queue order from them).")
_UNWEIGHTED = "Runs on any graph; the paths are networkx's own (its BFS order, replayed from mgraph's BFS)."
_LENGTHS = "Runs on any graph; the dict holds networkx's keys and values, nearest first."
_DIJKSTRA = ("Runs where weight is an attribute name and every weight is non-negative; integer weights give integer "
             "distances.")
_DIJKSTRA_PATHS = _DIJKSTRA + (" The paths are networkx's Dijkstra's own (its settling order from mgraph's "
                               "distances); a tight edge of weight 0 sends the call to networkx.")
_BELLMAN = ("Runs where weight is an attribute name and every weight is non-negative (negative weights stay with "
            "networkx); paths where the shortest path is unique.")
_SPECTRAL = ("Runs where nstart is None, on graphs without self-loops or parallel edges; networkx's iteration and "
             "stop rule, run as an mgraph primitive on every configured device.")
_FUNCTIONS = {
    # traversal
    "bfs_edges": _BFS + " reverse=True on a directed graph reads the predecessors' order from the graph.",
    "bfs_tree": _BFS,
    "bfs_predecessors": _BFS,
    "bfs_successors": _BFS,
    "generic_bfs_edges": "Runs where neighbors is None. " + _BFS,
    "bfs_layers": _BFS + " Several sources run as one array-code BFS.",
    "descendants_at_distance": _ANY,
    "descendants": _ANY,
    "ancestors": _ANY,
    # shortest paths
    "single_source_shortest_path_length": _LENGTHS,
    "single_target_shortest_path_length": _LENGTHS,
    "single_source_shortest_path": _UNWEIGHTED,
    "single_target_shortest_path": _UNWEIGHTED,
    "all_pairs_shortest_path_length": _LENGTHS + " One mgraph BFS per node, as the generator is read.",
    "all_pairs_shortest_path": _UNWEIGHTED + " One mgraph BFS per node, as the generator is read.",
    "bidirectional_shortest_path": "Runs on any graph; networkx's bidirectional search replayed from two mgraph BFS "
                                   "trees: the same path.",
    "has_path": _ANY,
    "shortest_path": "Runs as the function it leads to (BFS, Dijkstra or Bellman-Ford); between two nodes with "
                     "weights, where the shortest path is unique; all-pairs Bellman-Ford paths stay with networkx.",
    "shortest_path_length": "Runs as the function it leads to (BFS, Dijkstra or Bellman-Ford).",
    "single_source_dijkstra_path_length": _DIJKSTRA,
    "single_source_dijkstra_path": _DIJKSTRA_PATHS,
    "single_source_dijkstra": _DIJKSTRA_PATHS,
    "dijkstra_path": _DIJKSTRA_PATHS,
    "dijkstra_path_length": _DIJKSTRA,
    "all_pairs_dijkstra_path_length": _DIJKSTRA + " One mgraph SSSP per node.",
    "all_pairs_dijkstra_path": _DIJKSTRA_PATHS + " One mgraph SSSP per node.",
    "all_pairs_dijkstra": _DIJKSTRA_PATHS + " One mgraph SSSP per node.",
    "single_source_bellman_ford_path_length": _BELLMAN,
    "bellman_ford_path_length": _BELLMAN,
    "single_source_bellman_ford": _BELLMAN,
    "single_source_bellman_ford_path": _BELLMAN,
    "bellman_ford_path": _BELLMAN,
    "all_pairs_bellman_ford_path_length": _BELLMAN,
    # centralities
    "pagerank": "Runs where personalization, nstart and dangling are None, alpha is in [0, 1) and tol > 0, on a "
                "graph without self-loops that is not a multigraph (networkx counts self-loops and sums parallel "
                "edges; mgraph graphs are simple).",
    "betweenness_centrality": "Runs where weight is None and endpoints is False; k samples the same sources "
                              "networkx's seed would, and the scaling is networkx's.",
    "degree_centrality": _ANY,
    "in_degree_centrality": _ANY,
    "out_degree_centrality": _ANY,
    "eigenvector_centrality": _SPECTRAL,
    "katz_centrality": _SPECTRAL + " beta may be a number or a dict over every node.",
    "hits": ("Runs on graphs without self-loops or parallel edges: the leading singular vectors by power iteration "
             "on mgraph (networkx uses ARPACK; the same vectors within tol where they are unique).  Where max_iter "
             "power iterations do not reach tol, networkx runs it."),
    # structure
    "connected_components": _COMPONENTS,
    "is_connected": _COMPONENTS,
    "number_connected_components": _COMPONENTS,
    "node_connected_component": _COMPONENTS,
    "weakly_connected_components": _COMPONENTS,
    "is_weakly_connected": _COMPONENTS,
    "number_weakly_connected_components": _COMPONENTS,
    "strongly_connected_components": _COMPONENTS,
    "is_strongly_connected": _COMPONENTS,
    "number_strongly_connected_components": _COMPONENTS,
    "triangles": "Runs on undirected graphs (self-loops and parallel edges do not count, as in networkx).",
    "clustering": "Runs on undirected graphs where weight is None (triangles from mgraph).",
    "average_clustering": "Runs on undirected graphs where weight is None (triangles from mgraph).",
    "transitivity": "Runs on undirected graphs (triangles from mgraph).",
    "core_number": "Runs on graphs without self-loops (networkx refuses those with its own error).",
    "k_truss": "Runs on any graph networkx takes: supports counted with array code on one device; the result is "
               "networkx's copy of the graph, attributes included.",
    "jaccard_coefficient": "Runs on graphs without self-loops; common neighbours counted with array code in batches.",
    "isolates": _ANY,
    "is_isolate": _ANY,
    "number_of_isolates": _ANY,
    "number_of_selfloops": _ANY,
    "is_negatively_weighted": "Runs where edge is None.",
    "reciprocity": "Runs on graphs that are not multigraphs (per-node values on directed graphs).",
    "overall_reciprocity": "Runs on graphs that are not multigraphs.",
    "is_tree": _COMPONENTS,
    "is_forest": _COMPONENTS,
    "is_arborescence": _COMPONENTS,
    "is_branching": _COMPONENTS,
    "complement": "Runs on graphs whose class keeps networkx's own adjacency; the same graph, built in networkx's "
                  "order.",
    "reverse": "Runs on directed graphs: networkx's reverse, with its mgraph graph already converted.",
    "ego_graph": "Runs where undirected is False or the graph is undirected; the nodes from mgraph's BFS or SSSP "
                 "(the whole component is searched), the subgraph networkx's own.",
    "label_propagation_communities": "Runs on undirected graphs without self-loops: mgraph's label propagation "
                                     "(networkx's colouring and tie rule): the same communities.",
    "louvain_communities": "Runs on graphs without parallel edges or negative weights: mgraph's Louvain, whose "
                           "moves are synchronous, so a partition of comparable modularity rather than networkx's "
                           "for a seed; directed graphs get the directed modularity, self-loops count as in "
                           "networkx.",
    "leiden_communities": "Runs on undirected graphs without parallel edges or negative weights: mgraph's Leiden "
                          "(refinement by synchronous moves; the seed orders the moves).",
}
_PARAMETERS = {
    "devices : int or list of int, optional": "Devices to run on (default nx.config.backends.mgraph.devices): an "
                                               "int, or a list of GPU ids; on a CPU, N virtual devices (threads).",
    "partitioner : str, optional": "random, biased-random or metis (default nx.config.backends.mgraph.partitioner).",
}


def get_info():
    """The backend's metadata and default configuration (``nx.config.backends.mgraph``)."""
    return {
        "backend_name": "mgraph",
        "project": "mgraph",
        "package": "mgraph",
        "short_summary": "Multi-GPU graph analytics after Gunrock's multi-GPU design (CuPy on GPUs, NumPy on CPUs).",
        "functions": {name: {"additional_docs": docs, "additional_parameters": dict(_PARAMETERS)}
                      for name, docs in _FUNCTIONS.items()},
        "default_config": {
            "devices": 1,            # an int, or a list of GPU ids (mgraph's devices=)
            "backend": "auto",       # mgraph's array backend: auto, numpy or cupy
            "partitioner": "random",  # how several devices split the graph
        },
    }

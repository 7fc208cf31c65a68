"""What NetworkX reads about the "mgraph" backend when it is imported (the ``networkx.backend_info`` entry point).

This package is apart from ``mgraph`` on purpose: NetworkX calls
:func:`get_info` while ``import networkx`` runs, for every installed backend,
and importing ``mgraph`` would bring NumPy and the whole framework (and on a
GPU machine CuPy) into every program that imports networkx.  Only the
standard library is imported here.  The backend itself is ``mgraph.nx_backend``.
"""

# The networkx functions the backend runs, with when it runs them (the rest of each call falls back to networkx
# where nx.config.fallback_to_nx is set, or raises NotImplementedError).  docs/networkx.md says why.
_COMPONENTS = "Runs on any graph (multigraph edges and self-loops do not change components)."
_FUNCTIONS = {
    "betweenness_centrality": "Runs where weight is None and endpoints is False; k samples the same sources "
                              "networkx's seed would, and the scaling is networkx's.",
    "connected_components": _COMPONENTS,
    "is_connected": _COMPONENTS,
    "number_connected_components": _COMPONENTS,
    "weakly_connected_components": _COMPONENTS,
    "is_weakly_connected": _COMPONENTS,
    "number_weakly_connected_components": _COMPONENTS,
    "pagerank": "Runs where personalization, nstart and dangling are None, alpha is in [0, 1) and tol > 0, on a "
                "graph without self-loops that is not a multigraph (networkx counts self-loops and sums parallel "
                "edges; mgraph graphs are simple).",
    "single_source_shortest_path_length": "Runs on any graph; the dict holds networkx's keys and values, ordered by "
                                          "distance (networkx's order within a level may differ).",
    "triangles": "Runs on undirected graphs (self-loops and parallel edges do not count, as in networkx).",
    "core_number": "Runs on graphs without self-loops (networkx refuses those with its own error).",
    "single_source_dijkstra_path_length": "Runs where weight is an attribute name (not a function) and every "
                                          "weight is non-negative; integer weights give integer distances.",
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

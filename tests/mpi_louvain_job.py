"""What tests/test_louvain.py's MPI test runs under ``mpiexec -n P``: Louvain and Leiden of a file's graph on the
ranks (each building only its own part), gathered on rank 0 and kept per rank (``gather=False``); rank 0 writes
what it saw to OUT.

    python tests/mpi_louvain_job.py OUT.npz GRAPH
"""
from __future__ import annotations

import sys

import numpy as np

import mgraph
from mgraph.group import world


def main(out, graph):
    g = mgraph.load(graph)
    group = world()
    got = {}
    for name in ("louvain", "leiden"):
        whole = getattr(mgraph, name)(g)
        own = getattr(mgraph, name)(g, gather=False)
        vertices, community = group.gatherv(own.vertices), group.gatherv(own.community)
        if group.rank == 0:
            got[name] = whole.community
            got[name + "_modularity"] = np.array(whole.stats["modularity"])
            got[name + "_devices"] = np.array(whole.stats["devices"])
            got[name + "_own_vertices"] = np.concatenate(vertices)
            got[name + "_own_community"] = np.concatenate(community)
    if group.rank == 0:
        np.savez(out, **got)


if __name__ == "__main__":
    main(*sys.argv[1:])

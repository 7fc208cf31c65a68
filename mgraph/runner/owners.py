"""Who owns each vertex of a run on several devices: the "random" hash, or an owner table from a partitioner.

The hash needs no table.  Any other partitioner runs where the whole graph
is: on this process's Graph (worker threads), or under MPI, where no rank
holds it, distributed (biased-random), on rank 0's host (METIS, when the
graph fits there) or by asking a callable for each rank's own range of ids.
"""
from __future__ import annotations

import os

import numpy as np

from mgraph import partitioners
from mgraph.backend import Backend, to_numpy
from mgraph.graph import Graph
from mgraph.parts.build import Owners, build_part
from mgraph.partitioners.biased_parts import biased_random_parts

METIS_BYTES_PER_ARC = 40  # rank 0's CSR (ids, the build's keys) and pymetis's own adjacency copy, per arc


def owner_table(opts):
    """The owner of every vertex of this process's whole Graph as a NumPy array (any partitioner but "random"),
    or None for the "random" hash, which needs no table."""
    if opts.partitioner == "random":
        return None
    return to_numpy(partitioners.assign(opts.graph, opts.num_devices, opts.partitioner, opts.seed))


def rank_owners(opts, group, backend, move=None):
    """This rank's :class:`~mgraph.parts.build.Owners` of the run's graph: the hash, or an owner table computed
    once (on rank 0, or distributed) and broadcast.  Collective."""
    p, graph = opts.num_devices, opts.graph
    if opts.partitioner == "random":
        return Owners(p, opts.seed)
    if isinstance(graph, Graph):
        table = to_numpy(partitioners.assign(graph, p, opts.partitioner, opts.seed)) if group.rank == 0 else None
    else:
        table = _owners_on_root(opts, group, backend, move)
    table = group.bcast(table, root=0)
    return Owners(p, opts.seed, backend.asarray(table))


def _owners_on_root(opts, group, backend, move):
    """The owner table of a PartitionedGraph on rank 0 (None elsewhere): rank 0 gathers the whole graph on its
    host (if it fits there) and partitions it; biased-random scores each rank's own vertices' neighbours where
    they are; a callable is asked, on every rank, for the owners of its range of vertex ids."""
    graph = opts.graph
    n, p = graph.num_vertices, opts.num_devices
    if callable(opts.partitioner):
        lo, hi = n * group.rank // p, n * (group.rank + 1) // p
        mine = np.asarray(opts.partitioner(np.arange(lo, hi, dtype=np.int64), p, opts.seed))
        bad = mine.shape != (hi - lo,) or mine.dtype.kind not in "iu"
        if bad or (mine.size and (mine.min() < 0 or mine.max() >= p)):
            raise ValueError(f"partitioner {getattr(opts.partitioner, '__name__', 'callable')!r}: under MPI it is "
                             f"called with this rank's vertex ids ({hi - lo}) and must return an int owner in "
                             f"[0, {p}) for each")
        pieces = group.gatherv(mine.astype(np.int32))
        return None if pieces is None else np.concatenate(pieces)
    if opts.partitioner == "biased-random":  # distributed: each rank scores its own vertices' neighbours
        hashed = build_part(group, graph.source, backend, Owners(p, opts.seed), "all", move=move)
        table = to_numpy(biased_random_parts(group, hashed, p, opts.seed))
        del hashed
        return table if group.rank == 0 else None
    _fits_on_root(group, graph)
    whole = build_part(group, graph.source, Backend("numpy"), _AllToRoot(p), "all")
    if group.rank != 0:
        return None
    g = Graph(whole.indptr, whole.indices, whole.weights, directed=whole.directed)
    return to_numpy(partitioners.assign(g, p, opts.partitioner, opts.seed))


def _fits_on_root(group, graph):
    """METIS is serial: the whole graph goes to rank 0's host.  A one-line error when it would not fit there."""
    edges = group.allreduce(sum(b - a for a, b in graph.source.ranges(group.rank, group.size)), "sum")
    need = 2 * edges * METIS_BYTES_PER_ARC + 16 * graph.num_vertices
    free = None
    if group.rank == 0:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            free = None
    free = group.bcast(free, root=0)
    if free is not None and need > free:
        raise ValueError(f"partitioner 'metis' runs on rank 0's host, which would need about {need / 2**30:.1f} GiB "
                         f"for this graph and has {free / 2**30:.1f} GiB free; use 'random' or 'biased-random', "
                         "which run distributed")


class _AllToRoot(Owners):
    """Every vertex to rank 0: how rank 0 collects a whole graph to partition it on its host."""

    def __call__(self, ids, xp):
        return xp.zeros(ids.shape[0], dtype=np.int32)

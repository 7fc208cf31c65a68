"""``mgraph.load``: a graph as this process should hold it.

One process holds the whole graph: a file is read by :mod:`mgraph.io` and
built on the device, and a generator spec is drawn there a chunk of edges at a
time (a one-worker part build, so the peak stays near the finished CSR).  Under
MPI (P > 1 ranks) no rank holds it whole: a :class:`PartitionedGraph` whose
parts each rank builds from its own share when a run first needs them.
"""
from __future__ import annotations

import contextlib
import os

from mgraph.backend import resolve
from mgraph.group import world
from mgraph.io import generators, loaders
from mgraph.io.sources import SpecSource
from mgraph.parts.build import build_graph
from mgraph.parts.partitioned import PartitionedGraph


def load(path_or_spec, *, directed=None, backend="auto", seed=0, weights=None):
    """A Graph from a file (.mtx, .txt/.el edge list, .csv, .npz; gzip-aware) or a generator spec (rmat:S[:EF], grid:WxH, er:N:M).

    Under MPI (``mpiexec -n P``, P > 1) a :class:`~mgraph.parts.partitioned.PartitionedGraph`: each rank reads only
    its share, and builds its part on its device when a run first needs it (collective: every rank calls it).
    """
    name = loaders.check_load_args(path_or_spec, directed=directed, seed=seed, weights=weights)
    w = world()
    if w is not None:
        return PartitionedGraph(path_or_spec, w, directed=directed, seed=seed, weights=weights)
    if not (generators.is_spec(name) and not os.path.exists(name)):
        return loaders.load(name, directed=directed, backend=backend, seed=seed, weights=weights)
    if directed:
        raise ValueError(f"generated graphs are undirected; directed=True is not available for {name!r}")
    b = resolve(backend)
    with (b.xp.cuda.Device(b.device) if b.is_gpu else contextlib.nullcontext()):
        return build_graph(SpecSource(name, seed=seed, weights=weights), b)

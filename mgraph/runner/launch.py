"""Place a graph on its devices and run a primitive there.

Three places, one worker body (mgraph.runner.enactor.drive) for all of them:

* one device in this process: the primitive runs on the whole graph, a
  group of one, with an exchange that sends nothing;
* several devices in this process (``devices=P`` from a notebook): one
  worker thread per device, each building its own part from slices of the
  graph (mgraph.parts.build), exchanging through memory or peer copies;
* MPI ranks (``mpiexec -n P``): one device per rank, each building only its
  own part from the graph's source, exchanging through MPI (NumPy) or NCCL
  (GPUs).

The caller gets NumPy arrays in its own numbering and stats; under MPI the
arrays land on rank 0 (None elsewhere), or with ``gather=False`` each rank
keeps its own vertices'.
"""
from __future__ import annotations

import contextlib
import functools
import numbers
import socket
import sys
import time

import numpy as np

from mgraph import partitioners

from mgraph.parts import subgraph
from mgraph.backend import Backend, PeakWatch, peak_bytes, reset_peak, resolve, to_host, to_numpy
from mgraph.comm.exchange import COMMUNICATIONS, Exchange
from mgraph.comm.transport import LocalTransport
from mgraph.runner.enactor import drive, enact_devices, on_threads, result_of, run_stats, worker_error
from mgraph.graph import Graph
from mgraph.group import SoloGroup, ThreadGroup, fail_job, world
from mgraph.parts.build import Owners, build_part
from mgraph.parts.partitioned import PartitionedGraph
from mgraph.parts.proxyarcs import with_proxy_arcs
from mgraph.io.sources import GraphSource

RUN_OPTIONS = ("backend", "devices", "partitioner", "duplication", "communication", "seed", "workers", "gather",
               "output")
OUTPUTS = ("numpy", "device")
WORKERS = ("auto", "threads")


class Placement:
    """The devices of a run and the multi-device options, checked before any work starts."""

    def __init__(self, graph, run: dict, communication: str):
        unknown = sorted(set(run) - set(RUN_OPTIONS))
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}: run options are {', '.join(RUN_OPTIONS)}")
        if not isinstance(graph, (Graph, PartitionedGraph)):
            raise ValueError(f"expected an mgraph.Graph, got {type(graph).__name__}")
        seed = run.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.seed = int(seed)
        self.world = world()
        if isinstance(graph, PartitionedGraph) and (self.world is None or graph.group is not self.world):
            raise ValueError("a PartitionedGraph runs only in the MPI job that loaded it")
        devices = run.get("devices", 1)
        if isinstance(devices, (list, tuple)):
            ids = list(devices)
            if not ids:
                raise ValueError("devices is an empty list: give at least one GPU id")
        elif isinstance(devices, numbers.Integral) and not isinstance(devices, bool):
            if devices < 1:
                raise ValueError(f"devices must be >= 1, got {devices}")
            ids = list(range(int(devices)))
        else:
            raise ValueError(f"devices must be an int or a list of GPU ids, got {devices!r}")
        for d in ids:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
                raise ValueError(f"device ids must be non-negative integers, got {d!r}")
        if self.world is not None:
            ids = self._rank_device(devices, ids, run.get("backend", "auto"))
        base = resolve(run.get("backend", "auto"), int(ids[0]))
        if base.is_gpu:
            count = base.xp.cuda.runtime.getDeviceCount()
            bad = [d for d in ids if d >= count]
            if bad:
                raise ValueError(f"GPU {bad[0]} does not exist: this machine has {count} GPU(s) (ids 0..{count - 1})")
            self.backends = [Backend("cupy", int(d)) for d in ids]
        else:
            # NumPy: each entry is a virtual device of its own, even where ids repeat
            self.backends = [Backend("numpy", k) for k in range(len(ids))]
        self.partitioner = run.get("partitioner", "random")
        if not (callable(self.partitioner) or self.partitioner in partitioners.PARTITIONERS):
            raise ValueError(f"unknown partitioner {self.partitioner!r}: expected one of "
                             f"{', '.join(partitioners.PARTITIONERS)} or a function (graph, num_parts, seed) -> owners")
        self.duplication = run.get("duplication", "1-hop")
        if self.duplication not in subgraph.DUPLICATIONS:
            raise ValueError(f"unknown duplication {self.duplication!r}: expected one of "
                             f"{', '.join(subgraph.DUPLICATIONS)}")
        self.communication = run.get("communication", communication)
        if self.communication not in COMMUNICATIONS:
            raise ValueError(f"unknown communication {self.communication!r}: expected one of "
                             f"{', '.join(COMMUNICATIONS)}")
        workers = run.get("workers", "auto")
        if workers == "processes":
            raise ValueError("workers='processes' is gone: for one process per device start MPI ranks "
                             "(mpiexec -n P python script.py, or mpiexec -n P mgraph ...); see docs/distributed.md")
        if workers not in WORKERS:
            raise ValueError(f"unknown workers {workers!r}: expected one of {', '.join(WORKERS)}")
        self.workers = "mpi" if self.world is not None else "threads"
        self.gather = run.get("gather", True)
        if not isinstance(self.gather, bool):
            raise ValueError(f"gather must be True or False, got {self.gather!r}")
        self.output = run.get("output", "numpy")
        if not isinstance(self.output, str) or self.output not in OUTPUTS:
            raise ValueError(f"unknown output {self.output!r}: expected 'numpy' (NumPy arrays on the host) or "
                             "'device' (arrays where the run's device keeps them: CuPy on a GPU)")
        self.graph = graph if self.world is not None or self.num_devices > 1 else graph.to(self.backends[0])

    def _rank_device(self, devices, ids, backend):
        """Under MPI this rank's device: ``devices`` (a list of GPU ids) indexed by the local rank, else the local
        rank modulo the node's GPUs; an int must be 1 or the job's size (the ranks are the devices)."""
        w = self.world
        if not isinstance(devices, (list, tuple)):
            if devices not in (1, w.size):
                raise ValueError(f"devices={devices} in an MPI job of {w.size} ranks: each rank is one device, so "
                                 f"start as many ranks as devices (mpiexec -n {devices} ...)")
            b = resolve(backend)
            count = b.xp.cuda.runtime.getDeviceCount() if b.is_gpu else 1
            return [w.local_rank % count]
        return [ids[w.local_rank % len(ids)]]

    @property
    def num_devices(self) -> int:
        return self.world.size if self.world is not None else len(self.backends)

    @property
    def group_rank(self) -> int:
        return 0 if self.world is None else self.world.rank

    def stats(self) -> dict:
        b = self.backends[0]
        out = {"backend": b.name, "device": b.device_name(), "devices": self.num_devices}
        if self.num_devices > 1:
            name = self.partitioner if isinstance(self.partitioner, str) else getattr(self.partitioner, "__name__", "callable")
            out.update(device_ids=[x.device for x in self.backends], partitioner=name,
                       duplication=self.duplication, communication=self.communication, workers=self.workers)
        return out

    def part_key(self):
        part = self.partitioner if isinstance(self.partitioner, str) else id(self.partitioner)
        return (self.num_devices, part, self.seed, self.duplication, tuple(self.backends))


def run(placement: Placement, make, sources=(None,), *, count=None, check=None):
    """Run ``make(graph)``'s primitive from each of ``sources`` in turn (caller ids; None: no source).

    ``check(part)`` may return a message that the run refuses (a ValueError
    on every worker); ``count(part, own_arrays)`` gives numbers summed over
    the workers' own vertices into the stats (TEPS counts, component counts).
    Returns (NumPy result arrays in caller numbering, or None off rank 0
    under MPI; stats; the primitive of device 0 or a summary of its plain
    attributes).  With ``gather=False`` the arrays are this worker's own
    vertices' (``vertices`` holds their caller ids).
    """
    stats = placement.stats()
    if placement.num_devices > 1 and not declared(make, "runs_on_parts", True):
        raise ValueError(f"{primitive_name(make)} runs on one device only (it declares runs_on_parts = False); "
                         f"this run asks for {placement.num_devices}")
    with _source_bar(len(sources)) as bar:
        tick = None if bar is None else bar.update
        if placement.world is not None:
            return _run_rank(placement, make, sources, stats, count, check, tick)
        if placement.num_devices > 1:
            return _run_threads(placement, make, sources, stats, count, check, tick)
        return _run_one(placement, make, sources, stats, count, check, tick)


def declared(make, attr, default=False):
    """What the primitive class behind ``make`` (a class, or a functools.partial of one) declares; ``default`` for
    any other factory, which cannot be asked before it builds a primitive."""
    target = _unwrapped(make)
    return getattr(target, attr, default) if isinstance(target, type) else default


def _unwrapped(make):
    while isinstance(make, functools.partial):
        make = make.func
    return make


def primitive_name(make):
    """The class name behind ``make`` (a class or a functools.partial of one), for messages."""
    target = _unwrapped(make)
    return getattr(target, "__name__", type(target).__name__)


def _run_one(placement, make, sources, stats, count, check, tick):
    """One device in this process: the multi-device worker body (mgraph.runner.enactor.drive) with a group of one and
    an exchange that sends nothing, on the whole graph, which answers as the one part."""
    backend, g = placement.backends[0], placement.graph
    _refuse([check(g)] if check else [])
    with backend.context():
        prim = make(g)
        reset_peak(backend)
        try:
            records, clock = drive(0, prim, Exchange(g, 1, None, placement.communication), backend, SoloGroup(),
                                   sources, tick)
        except MemoryError as e:  # says which device ran out, as a worker of several does
            raise worker_error(0, backend, prim, e) from None
        arrays = result_of(prim, g, backend, 0)
        out = run_stats([records], clock)
        stats.update(out, host_elapsed_s=out["elapsed_s"], bytes_sent=[0], run_peak_bytes=[peak_bytes(backend)])
        if count is not None:
            stats.update(count(g, arrays))
        return arrays, stats, prim


def deliver(placement, arrays: dict, dtypes: dict | None = None) -> dict:
    """The run's result arrays as the caller asked (``output``): NumPy on the host, each cast where it lives
    before one copy into pinned memory; or ``"device"``: where the run's device keeps them (CuPy on a GPU; a
    multi-device run's arrays, assembled on the host, go to the first device).  ``dtypes`` (name -> dtype)
    casts the named arrays; None entries (off rank 0 under MPI) stay None."""
    dtypes = dtypes or {}
    b = placement.backends[0]
    out = {}
    for name, a in arrays.items():
        dtype = dtypes.get(name, np.int64 if name == "vertices" else None)
        if a is None:
            out[name] = None
        elif placement.output == "device" and b.is_gpu:
            with b.context():
                out[name] = b.asarray(a, dtype=dtype)
        else:
            out[name] = to_host(a, dtype)
    return out


def _refuse(messages):
    first = next((m for m in messages if m), None)
    if first:
        raise ValueError(first)


def _source_bar(count):
    """A tqdm bar over the sources of a long run (all-sources BC) on an interactive stderr, on one process."""
    from mgraph.group import is_root

    if count < 2 or not sys.stderr.isatty() or not is_root():
        return contextlib.nullcontext(None)
    from tqdm import tqdm

    return tqdm(total=count, desc="sources", unit="source", leave=False)


def _owners(placement, group, backend):
    """Who owns each vertex: the "random" hash, or an owner table from the other partitioners (computed once,
    where the whole graph is: this process's Graph, or rank 0's host, gathered there when it fits)."""
    p = placement.num_devices
    if placement.partitioner == "random":
        return Owners(p, placement.seed)
    graph = placement.graph
    if isinstance(graph, Graph):
        table = to_numpy(partitioners.assign(graph, p, placement.partitioner, placement.seed)) \
            if group.rank == 0 or placement.world is None else None
    else:
        table = _owners_on_root(placement, group)
    if placement.world is not None:
        table = group.bcast(table, root=0)
    return Owners(p, placement.seed, backend.asarray(table))


def _owners_on_root(placement, group):
    """The owner table of a PartitionedGraph: rank 0 gathers the whole graph on its host (if it fits there) and
    partitions it; a callable is instead asked, on every rank, for the owners of its range of vertex ids."""
    graph = placement.graph
    n, p = graph.num_vertices, placement.num_devices
    if callable(placement.partitioner):
        lo, hi = n * group.rank // p, n * (group.rank + 1) // p
        mine = placement.partitioner(np.arange(lo, hi, dtype=np.int64), p, placement.seed)
        mine = np.asarray(mine)
        if mine.shape != (hi - lo,) or mine.dtype.kind not in "iu" or (mine.size and (mine.min() < 0 or mine.max() >= p)):
            raise ValueError(f"partitioner {getattr(placement.partitioner, '__name__', 'callable')!r}: under MPI it is "
                             f"called with this rank's vertex ids ({hi - lo}) and must return an int owner in "
                             f"[0, {p}) for each")
        pieces = group.gatherv(mine.astype(np.int32))
        return None if pieces is None else np.concatenate(pieces)
    if placement.partitioner == "biased-random":  # distributed: each rank scores its own vertices' neighbours
        from mgraph.partitioners.biased_parts import biased_random_parts

        backend = placement.backends[0]
        hashed = build_part(group, graph.source, backend, Owners(p, placement.seed), "all",
                            move=_device_move(group, backend))
        table = to_numpy(biased_random_parts(group, hashed, p, placement.seed))
        del hashed
        return table if group.rank == 0 else None
    _fits_on_root(group, graph)
    whole = build_part(group, graph.source, Backend("numpy"), _AllToRoot(p), "all")
    if group.rank != 0:
        return None
    g = Graph(whole.indptr, whole.indices, whole.weights, directed=whole.directed)
    return to_numpy(partitioners.assign(g, p, placement.partitioner, placement.seed))


METIS_BYTES_PER_ARC = 40  # rank 0's CSR (ids, the build's keys) and pymetis's own adjacency copy, per arc


def _fits_on_root(group, graph):
    """METIS is serial: the whole graph goes to rank 0's host.  A one-line error when it would not fit there."""
    import os

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


def _run_rank(placement, make, sources, stats, count, check, tick):
    """This MPI rank's device: build (or reuse) its part, run in lockstep with the other ranks, gather."""
    from mgraph.comm.mpi import MpiTransport, NcclTransport, StagedTransport

    group, backend = placement.world, placement.backends[0]
    graph = placement.graph
    info = {}
    try:
        with backend.context():
            part = _rank_part(placement)
            if declared(make, "proxy_arcs"):
                part = with_proxy_arcs(part, group)
            _refuse(group.allgather(check(part) if check else None))
            transport = _transport(group, backend, MpiTransport, NcclTransport, StagedTransport)
            prim = make(part)
            ex = Exchange(part, placement.num_devices, transport, placement.communication)
            reset_peak(backend)
            records, clock = drive(group.rank, prim, ex, backend, group, sources, tick if group.rank == 0 else None)
            arrays = result_of(prim, part, backend, group.rank)
            own = part.own_values(arrays, prim.vertex_valued)
            counted = count(part, _own_local(part, arrays)) if count is not None else {}
            info = dict(part.build_info, run_peak_bytes=peak_bytes(backend), memory_bytes=part.nbytes,
                        owned_vertices=int(part.own_vertices.shape[0]), host=socket.gethostname(),
                        device_id=backend.device)
    except ValueError:
        raise  # a user's mistake, found by every rank alike; where only this rank raises, the CLI (Group.all_failing)
        # and the script's exception hook (mgraph.group) end the job
    except BaseException as e:  # noqa: BLE001 - ends the job: the other ranks wait in a collective
        fail_job(group, e)
        raise
    everyone = group.allgather((records, info))
    clock = group.bcast(clock, root=0)
    out = run_stats([r for r, _ in everyone], clock)
    per_device = out.pop("per_device")
    for key in ("partition_s", "subgraph_s", "build_peak_bytes", "run_peak_bytes", "memory_bytes",
                "owned_vertices", "host", "device_id"):
        out[key if key not in ("host", "device_id") else key + "s"] = [i[key] for _, i in everyone]
    out["partition_s"], out["subgraph_s"] = max(out["partition_s"]), max(out["subgraph_s"])
    stats.update(out, host_elapsed_s=out["elapsed_s"], bytes_sent=[int(sum(r["bytes"])) for r in per_device],
                 per_device=per_device)
    for key, value in counted.items():
        stats[key] = group.allreduce(value, "sum")
    if not placement.gather:
        ids, arrays = own
        return dict(arrays, vertices=ids.copy()), stats, prim
    arrays = _gather_root(group, part, own, graph.num_vertices)
    return arrays, stats, prim


def prepare(graph, run: dict, communication="selective"):
    """This rank's part of ``graph`` for the run options ``run`` (built now, or the one kept from an earlier run):
    what a caller needs before a run, such as the degrees of its own vertices to pick sources."""
    placement = Placement(graph, run, communication)
    if placement.world is None:
        raise ValueError("prepare() is for MPI ranks: without MPI the graph is whole in this process")
    with placement.backends[0].context():
        return _rank_part(placement)


def _rank_part(placement):
    """This MPI rank's part, built from the graph's source (and kept on the graph for later runs)."""
    group, backend, graph = placement.world, placement.backends[0], placement.graph

    def build():
        with PeakWatch(backend) as watch:
            t0 = time.perf_counter()
            owners = _owners(placement, group, backend)
            t1 = time.perf_counter()
            source = graph.source if isinstance(graph, PartitionedGraph) else GraphSource(graph)
            part = build_part(group, source, backend, owners, placement.duplication, progress=True,
                              move=_device_move(group, backend))
            backend.synchronize()
        part.build_info = {"partition_s": t1 - t0, "subgraph_s": time.perf_counter() - t1,
                           "build_peak_bytes": watch.bytes}
        return part

    if isinstance(graph, PartitionedGraph):
        return graph.part(placement.part_key(), build)
    return _cached_parts(graph, placement.part_key(), lambda: [build()])[0]


def _own_local(part, arrays):
    return {k: part.own_part(v) for k, v in arrays.items()}


def _gather_root(group, part, own, n):
    """Whole-graph NumPy arrays on rank 0 (None for each elsewhere) from every rank's own vertices' values.  The
    ranks' own caller ids are the same every run of a part, so rank 0 gathers them once and keeps them on its part
    (every rank marks its part alike, so all skip that gather together)."""
    ids, arrays = own
    if "gathered_ids" not in part._blocks:
        part._blocks["gathered_ids"] = group.gatherv(ids.astype(np.int64))
    all_ids = part._blocks["gathered_ids"]
    pieces = {name: group.gatherv(values) for name, values in sorted(arrays.items())}
    if all_ids is None:
        return dict.fromkeys(arrays)  # the names, so that every rank's Result has the same fields
    return subgraph.assemble([(all_ids[k], {name: pieces[name][k] for name in pieces})
                              for k in range(group.size)], n)


_TRANSPORTS = {}


def _transport(group, backend, numpy_kind, gpu_kind, staged_kind):
    """One transport per job and device, kept: an NCCL communicator takes long to set up.  NCCL allows one rank
    per GPU; where ranks share one (several ranks on a one-GPU machine) the packages go through the host."""
    key = (id(group), backend)
    if key not in _TRANSPORTS:
        if not backend.is_gpu:
            _TRANSPORTS[key] = numpy_kind(group)
        else:
            gpus = group.allgather((socket.gethostname(), backend.device))
            shared = len(set(gpus)) < len(gpus)
            _TRANSPORTS[key] = staged_kind(group) if shared else gpu_kind(group)
    return _TRANSPORTS[key]


def _device_move(group, backend):
    """The all-to-all that routes a GPU rank's arcs while its part is built: NCCL's, device to device, where the
    ranks' transport is NCCL; None (through the host) elsewhere.  Collective: it may set up the transport."""
    if not backend.is_gpu:
        return None
    from mgraph.comm.mpi import MpiTransport, NcclTransport, StagedTransport

    return getattr(_transport(group, backend, MpiTransport, NcclTransport, StagedTransport), "alltoallv", None)


def _cached_parts(graph, key, build):
    """Parts built from ``graph`` for ``key``, kept on the graph for the next run (one set at a time)."""
    cache = graph.__dict__.setdefault("_parts_cache", {})
    if key not in cache:
        cache.clear()
        cache[key] = build()
    return cache[key]


def _run_threads(placement, make, sources, stats, count, check, tick):
    """One worker thread per device: each builds its own part from slices of the graph, then runs."""
    p, backends, graph = placement.num_devices, placement.backends, placement.graph
    key = placement.part_key()
    if callable(placement.partitioner):
        key = None  # a function may partition differently each call
    cache = graph.__dict__.get("_parts_cache", {})
    parts = cache.get(key) if key is not None else None
    t0 = time.perf_counter()
    if parts is None:
        host = Owners(p, placement.seed) if placement.partitioner == "random" else None
        if host is None:
            table = partitioners.assign(graph, p, placement.partitioner, placement.seed)
        t1 = time.perf_counter()

        def build(d, group):
            b = backends[d]
            with PeakWatch(b) as watch:
                owners = host or Owners(p, placement.seed, b.asarray(table))
                part = build_part(group, GraphSource(graph), b, owners, placement.duplication)
                b.synchronize()
            return part, watch.bytes

        parts, peaks = (list(x) for x in zip(*_in_threads(backends, build, "build")))
        info = {"partition_s": t1 - t0, "subgraph_s": time.perf_counter() - t1,
                "build_peak_bytes": peaks}
        if key is not None:
            graph.__dict__["_parts_cache"] = {key: parts}
            graph.__dict__["_parts_info"] = info
    else:
        info = dict(graph.__dict__.get("_parts_info", {}), parts_reused=True)
    if declared(make, "proxy_arcs"):
        parts = _in_threads(backends, lambda d, group: with_proxy_arcs(parts[d], group), "proxy-arcs")
    _refuse([check(part) for part in parts] if check else [])
    prims = []
    for part, b in zip(parts, backends):
        with b.context():
            prims.append(make(part))
    for b in backends:
        reset_peak(b)
    shared = ThreadGroup.shared_state(p)
    groups = [ThreadGroup(shared, d) for d in range(p)]
    transport = LocalTransport(backends, shared["barrier"])
    exchanges = [Exchange(part, p, transport, placement.communication) for part in parts]
    results, run_out = enact_devices(prims, exchanges, backends, groups, sources, tick)
    pieces = []
    for part, b, arrays in zip(parts, backends, results):
        with b.context():
            pieces.append(part.own_values(arrays, prims[0].vertex_valued))
    arrays = subgraph.assemble(pieces, graph.num_vertices)
    per_device = run_out.pop("per_device")
    stats.update(run_out, **info, host_elapsed_s=run_out["elapsed_s"],
                 memory_bytes=[part.nbytes for part in parts],
                 owned_vertices=[int(part.own_vertices.shape[0]) for part in parts],
                 bytes_sent=[int(sum(r["bytes"])) for r in per_device], per_device=per_device,
                 run_peak_bytes=[peak_bytes(b) for b in backends])
    if count is not None:
        totals = {}
        for part, b, arr in zip(parts, backends, results):
            with b.context():
                for k, v in count(part, _own_local(part, arr)).items():
                    totals[k] = totals.get(k, 0) + v
        stats.update(totals)
    return arrays, stats, prims[0]


def _in_threads(backends, work, what):
    """``work(d, group)`` for every device d at once, one thread each (a collective step over a ThreadGroup); the
    results in device order, or the first worker's error (a failing worker breaks the others' barrier)."""
    shared = ThreadGroup.shared_state(len(backends))

    def failed(d, e):
        shared["barrier"].abort()
        return e

    return on_threads(backends, lambda d: work(d, ThreadGroup(shared, d)), what, failed)

"""Place a graph on its devices and run a primitive there.

One device: the primitive runs on the whole graph.  Several: partition ->
subgraphs -> one worker thread per device with its own exchange, and the
per-device results gathered back into the caller's numbering.  Either way the
caller gets NumPy arrays and stats.
"""
from __future__ import annotations

import contextlib
import numbers
import platform
import sys
import threading
import time

import partitioners

from . import spawn, subgraph
from .backend import Backend, resolve, to_numpy
from .comm import COMMUNICATIONS, Exchange, LocalTransport
from .comm.processes import ORDERED_STORES
from .enactor import enact, enact_devices
from .graph import Graph

RUN_OPTIONS = ("backend", "devices", "partitioner", "duplication", "communication", "seed", "workers")
WORKERS = ("auto", "threads", "processes")


class Placement:
    """The devices of a run and the multi-device options, checked before any work starts."""

    def __init__(self, graph, run: dict, communication: str):
        unknown = sorted(set(run) - set(RUN_OPTIONS))
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}: run options are {', '.join(RUN_OPTIONS)}")
        if not isinstance(graph, Graph):
            raise ValueError(f"expected an mgraph.Graph, got {type(graph).__name__}")
        seed = run.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.seed = int(seed)
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
        if workers not in WORKERS:
            raise ValueError(f"unknown workers {workers!r}: expected one of {', '.join(WORKERS)}")
        distinct = len(set(ids)) == len(ids)
        if workers == "processes" and base.is_gpu and not distinct:
            raise ValueError("workers='processes' needs a different GPU for every device (NCCL allows one rank per "
                             "GPU); use workers='threads' to share a GPU between partitions")
        if workers == "processes" and not ORDERED_STORES:
            raise ValueError(f"workers='processes' needs an x86-64 host (its handshakes rely on x86's store order); "
                             f"this one is {platform.machine()}: use workers='threads'")
        self.workers = workers
        # "auto" runs worker processes when the primitive pickles
        self.may_spawn = base.is_gpu and distinct and ORDERED_STORES
        self.graph = graph.to(self.backends[0])

    @property
    def num_devices(self) -> int:
        return len(self.backends)

    def stats(self) -> dict:
        b = self.backends[0]
        out = {"backend": b.name, "device": b.device_name(), "devices": self.num_devices}
        if self.num_devices > 1:
            name = self.partitioner if isinstance(self.partitioner, str) else getattr(self.partitioner, "__name__", "callable")
            out.update(device_ids=[x.device for x in self.backends], partitioner=name,
                       duplication=self.duplication, communication=self.communication, workers=self.workers)
        return out


def run(placement: Placement, make, sources=(None,)):
    """Run ``make(graph)``'s primitive from each of ``sources`` in turn (caller ids; None: no source).

    Returns (NumPy result arrays in caller numbering, stats, the primitive of device 0).
    """
    stats = placement.stats()
    with _source_bar(len(sources)) as bar:
        tick = None if bar is None else bar.update
        if placement.num_devices > 1:
            return _run_devices(placement, make, sources, stats, tick)
        backend, g = placement.backends[0], placement.graph
        prim = make(g)
        totals = {"iterations": 0, "elapsed_s": 0.0, "host_elapsed_s": 0.0}
        for s in sources:
            arrays, one = enact(prim, backend, s)
            for key in totals:
                totals[key] += one[key]
            if tick is not None:
                tick()
    stats.update(totals, frontier_sizes=one["frontier_sizes"], superstep_s=one["superstep_s"])
    return {k: to_numpy(v) for k, v in arrays.items()}, stats, prim


def _source_bar(count):
    """A tqdm bar over the sources of a long run (all-sources BC) on an interactive stderr."""
    if count < 2 or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    from tqdm import tqdm

    return tqdm(total=count, desc="sources", unit="source", leave=False)


def _workers(placement, make):
    """The run's workers; "auto" is one process per device where that measured faster (GPUs of their own,
    docs/multi-gpu.md) and the primitive can be handed to a process, else one thread per device."""
    if placement.workers != "auto":
        return placement.workers
    return "processes" if placement.may_spawn and spawn.picklable(make) else "threads"


def _run_devices(placement, make, sources, stats, tick=None):
    stats["workers"] = _workers(placement, make)
    if stats["workers"] == "processes":
        key = None
        if isinstance(placement.partitioner, str):  # a function may partition differently each call
            key = (placement.graph.token, placement.partitioner, placement.seed, placement.duplication)
        arrays, run_stats, prim, info = spawn.run_processes(key, lambda: _build(placement), placement.backends,
                                                            make, placement.communication, sources, tick)
    else:
        parts, info = _build(placement, on_devices=True)
        arrays, run_stats, prim = _run_threads(placement, make, parts, sources, tick)
    per_device = run_stats.pop("per_device")
    stats.update(run_stats, **info, host_elapsed_s=run_stats["elapsed_s"],
                 bytes_sent=[int(sum(r["bytes"])) for r in per_device], per_device=per_device)
    return arrays, stats, prim


def _build(placement, on_devices=False):
    """Partition and build the subgraphs (on the graph's device; ``on_devices``: then move each to its own).

    Returns (parts, {partition_s, subgraph_s, memory_bytes, owned_vertices}).
    """
    g, p = placement.graph, placement.num_devices
    t = time.perf_counter()
    owner = partitioners.assign(g, p, placement.partitioner, placement.seed)
    _sync(placement)
    t_part = time.perf_counter()
    parts = subgraph.build(g, owner, p, placement.duplication)
    if on_devices:
        parts = [part.to(b) for part, b in zip(parts, placement.backends)]
    _sync(placement)
    return parts, {"partition_s": t_part - t, "subgraph_s": time.perf_counter() - t_part,
                   "memory_bytes": [part.nbytes for part in parts],
                   "owned_vertices": [int(part.own_vertices.shape[0]) for part in parts]}


def _run_threads(placement, make, parts, sources, tick):
    """One worker thread per device, each part already on its device; (arrays, stats, device 0's primitive)."""
    p = placement.num_devices
    prims = []
    for part, b in zip(parts, placement.backends):
        with b.context():
            prims.append(make(part))
    barrier = threading.Barrier(p)
    transport = LocalTransport(placement.backends, barrier)
    exchanges = [Exchange(part, p, transport, placement.communication) for part in parts]
    results, run_stats = enact_devices(prims, exchanges, placement.backends, barrier, sources, tick)
    arrays = _gather(results, parts, placement.backends, prims[0].vertex_valued, placement.graph.num_vertices)
    return arrays, run_stats, prims[0]


def _sync(placement):
    for b in placement.backends:
        b.synchronize()


def _gather(results, parts, backends, vertex_valued, n):
    """Each device's values of its own vertices, in caller ids, into whole-graph NumPy arrays."""
    pieces = []
    for part, backend, arrays in zip(parts, backends, results):
        with backend.context():
            pieces.append(part.own_values(arrays, vertex_valued))
    return subgraph.assemble(pieces, n)

"""The run path: a primitive run on a graph's devices, from checked options to results and stats.

A run is one sequence, wherever its devices work:

1. its options, checked once (:class:`~mgraph.runner.options.RunOptions`);
2. the parts, built or taken from the one part cache (:mod:`mgraph.parts.cache`);
3. the primitives, one per device, made and checked to be Primitives;
4. ``drive``: the supersteps in lockstep (:func:`mgraph.runner.enactor.drive`);
5. the results, collected in the caller's ids, and the stats, assembled here.

Where the devices work (one device in this thread, worker threads, MPI ranks)
is a strategy (:mod:`mgraph.runner.workers`) plugged into the steps that
differ.  The caller gets arrays in its own numbering and stats; under MPI the
arrays land on rank 0 (None elsewhere), or with ``gather=False`` each rank
keeps its own vertices' (``vertices`` holds their caller ids, and in one
process every vertex's).
"""
from __future__ import annotations

import contextlib
import functools
import sys

import numpy as np

from mgraph.backend import peak_bytes, reset_peak, to_host
from mgraph.group import is_root
from mgraph.primitives.contract import Primitive
from mgraph.comm.exchange import Exchange
from mgraph.group import SoloGroup
from mgraph.runner.enactor import drive, run_stats
from mgraph.runner.options import RunOptions
from mgraph.runner.workers import own_entries, workers_for

def run(opts: RunOptions, make, sources=(None,), *, count=None, check=None):
    """Run ``make(graph)``'s primitive from each of ``sources`` in turn (caller ids; None: no source).

    ``check(part)`` may return a message that the run refuses (a ValueError
    on every worker); ``count(part, own_arrays)`` gives numbers summed over
    the workers' own vertices into the stats (TEPS counts, component counts).
    Returns (result arrays in caller numbering, or None off rank 0 under MPI;
    stats; the primitive of this process's first device).  With
    ``gather=False`` the arrays come with ``vertices``, their caller ids.
    """
    if opts.num_devices > 1 and not declared(make, "runs_on_parts", True):
        raise ValueError(f"{primitive_name(make)} runs on one device only (it declares runs_on_parts = False); "
                         f"this run asks for {opts.num_devices}")
    workers = workers_for(opts)
    backends = workers.backends
    with _source_bar(len(sources)) as bar, workers.guard():
        parts = workers.parts(declared(make, "proxy_arcs"))
        _refuse(workers.refusals(_on_devices(check, parts, backends) if check else []))
        prims = _on_devices(functools.partial(made, make), parts, backends)
        exchanges = workers.exchanges(parts, prims)
        for b in backends:
            reset_peak(b)
        records, clock, results = workers.drive(prims, exchanges, sources, None if bar is None else bar.update,
                                                opts.max_supersteps)
        counted = {}
        if count is not None:
            for part, b, arrays in zip(parts, backends, results):
                with b.context():
                    for key, value in count(part, {n: own_entries(part, a) for n, a in arrays.items()}).items():
                        counted[key] = counted.get(key, 0) + value
        peaks = [peak_bytes(b) for b in backends]
        arrays = workers.collect(parts, results, prims[0].vertex_valued)
        stats = _stats(opts, workers, parts, records, clock, peaks)
        for key, value in counted.items():
            stats[key] = workers.total(value)
    return arrays, stats, prims[0]


def run_alone(graph, backend, make, max_supersteps=None):
    """``make(graph)``'s primitive on the whole ``graph`` (a Graph), on ``backend`` in this process alone, outside
    any group: each MPI rank that calls it runs the same.  The small coarse levels of a multilevel run (Louvain),
    which every rank holds whole.  Returns (the result arrays where the device keeps them, the primitive)."""
    g = graph.to(backend)
    with backend.context():
        prim = made(make, g)
        _, _, results = drive(0, prim, Exchange(g, 1, None, "selective"), backend, SoloGroup(), [None],
                              max_supersteps=max_supersteps)
    return results, prim


def _on_devices(work, parts, backends) -> list:
    """``work(part)`` for each part of this process, with its device current (CuPy allocates and launches there)."""
    out = []
    for part, b in zip(parts, backends):
        with b.context():
            out.append(work(part))
    return out


def _stats(opts, workers, parts, records, clock, peaks) -> dict:
    """A run's stats, the same keys wherever it ran: where (RunOptions.stats), the supersteps (per device and in
    all), bytes, memory peaks, and on several devices the parts' build and sizes.  Collective under MPI."""
    stats = opts.stats()
    out = run_stats(workers.everyone(records), workers.clock(clock))
    stats.update(out, host_elapsed_s=out["elapsed_s"], bytes_sent=[int(sum(r["bytes"])) for r in out["per_device"]],
                 run_peak_bytes=workers.everyone(peaks))
    if opts.num_devices > 1:
        infos = workers.everyone([workers.part_set.info])
        stats.update(partition_s=max(i["partition_s"] for i in infos), subgraph_s=max(i["subgraph_s"] for i in infos),
                     build_peak_bytes=[b for i in infos for b in i["build_peak_bytes"]],
                     memory_bytes=workers.everyone([part.nbytes for part in parts]),
                     owned_vertices=workers.everyone([int(part.own_vertices.shape[0]) for part in parts]))
        if workers.reused:
            stats["parts_reused"] = True
        stats.update(workers.where())
    return stats


def check_primitive(make) -> None:
    """``make`` must be a Primitive subclass or a function graph -> Primitive (what it returns is checked when
    the run makes it: :func:`made`)."""
    target = _unwrapped(make)
    if isinstance(target, type) and not issubclass(target, Primitive):
        raise ValueError(f"primitive must be a Primitive subclass or a function graph -> Primitive, got the class "
                         f"{target.__name__}, which is not a Primitive")
    if not callable(make):
        raise ValueError(f"primitive must be a Primitive subclass or a function graph -> Primitive, got {make!r}")


def made(make, graph):
    """``make(graph)``, checked to be a Primitive: a factory that returns anything else is a ValueError naming it
    before any superstep."""
    prim = make(graph)
    if not isinstance(prim, Primitive):
        raise ValueError(f"primitive {primitive_name(make)} returned {type(prim).__name__}, not a Primitive: pass a "
                         "Primitive subclass or a function graph -> Primitive (mgraph.primitives.contract)")
    return prim


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


def deliver(opts: RunOptions, arrays: dict, dtypes: dict | None = None) -> dict:
    """The run's result arrays as the caller asked (``output``): NumPy on the host, each cast where it lives
    before one copy into pinned memory; or ``"device"``: where the run's device keeps them (CuPy on a GPU; a
    multi-device run's arrays, assembled on the host, go to the first device).  ``dtypes`` (name -> dtype)
    casts the named arrays; None entries (off rank 0 under MPI) stay None."""
    dtypes = dtypes or {}
    b = opts.backends[0]
    out = {}
    for name, a in arrays.items():
        dtype = dtypes.get(name, np.int64 if name == "vertices" else None)
        if a is None:
            out[name] = None
        elif opts.output == "device" and b.is_gpu:
            with b.context():
                out[name] = b.asarray(a, dtype=dtype)
        else:
            out[name] = to_host(a, dtype)
    return out


def prepare(graph, run: dict, communication="selective"):
    """This rank's part of ``graph`` for the run options ``run`` (built now, or the one kept from an earlier run):
    what a caller needs before a run, such as the degrees of its own vertices to pick sources.  MPI ranks only."""
    opts = RunOptions(graph, run, communication)
    if opts.world is None:
        raise ValueError("prepare() is for MPI ranks: without MPI the graph is whole in this process")
    workers = workers_for(opts)
    with workers.guard():
        return workers.parts(proxy_arcs=False)[0]


def _refuse(messages):
    first = next((m for m in messages if m), None)
    if first:
        raise ValueError(first)


def _source_bar(count):
    """A tqdm bar over the sources of a long run (all-sources BC) on an interactive stderr, on one process."""
    if count < 2 or not sys.stderr.isatty() or not is_root():
        return contextlib.nullcontext(None)
    from tqdm import tqdm

    return tqdm(total=count, desc="sources", unit="source", leave=False)

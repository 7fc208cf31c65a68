"""The BSP loop: run a primitive superstep by superstep and time it.

The enactor knows a primitive only through its contract (reset, iterate,
converged, result).  One body (:func:`drive`) runs every worker: the one
device of a single-device run, a worker thread of several, an MPI rank.
The host reads one small thing per superstep: the new frontier's size.
"""
from __future__ import annotations

import threading
import time

from .backend import Backend, allocation_error


STAT_KEYS = ("compute_s", "package_s", "push_s", "wait_s", "combine_s", "bytes", "frontier")


def drive(d, prim, ex, backend, group, sources, progress=None):
    """Device ``d``'s whole part of a run, in lockstep with the others through ``group`` (mgraph.group).

    The same body runs in a worker thread (:func:`enact_devices`) or in an
    MPI rank (mgraph.launch).  Supersteps end with the exchange and one
    ``group.share`` at which every device publishes whether it has converged
    and its share of the primitive's ``global_sums``.  Returns (per-superstep
    records, clock): the clock's ``start`` is read just after a barrier,
    ``loop_end`` after the last superstep, ``stop`` once every device's
    stream has finished; with ``iterations`` and the whole ``frontier_sizes``.
    """
    records = {k: [] for k in STAT_KEYS}
    clock = {"iterations": 0}

    def agree(frontier, finished=False):
        t = time.perf_counter()
        if prim.global_sums and not finished:  # a finishing step computes nothing new to add up
            shares = group.share([float(getattr(prim, name)) for name in prim.global_sums])
            for k, name in enumerate(prim.global_sums):
                setattr(prim, name, sum(s[k] for s in shares))
        own = 0 if finished else ex.own_count if ex.own_count is not None else ex.sub.count_own(frontier)
        flags = group.share((bool(finished or prim.converged(frontier)), bool(finished), int(own)))
        if len({bool(f[1]) for f in flags}) != 1:
            raise RuntimeError(f"{prim.name}: devices disagree on whether the run has finished")
        prim.frontier_total = int(sum(f[2] for f in flags))
        records["wait_s"][-1] += time.perf_counter() - t
        return all(f[0] for f in flags)

    def superstep(make_frontier):
        rec = {k: 0 for k in STAT_KEYS}
        t = time.perf_counter()
        try:
            frontier = make_frontier()
        except MemoryError as e:
            raise allocation_error(e, "the arrays of its superstep")
        backend.synchronize_stream()  # compute is the device's time: kernels launched without a host read included
        rec["compute_s"] = time.perf_counter() - t
        if frontier is None:
            return None, rec
        frontier = ex.run(prim, frontier, rec)
        rec["frontier"] = int(len(frontier))
        return frontier, rec

    sizes = []
    prim.step = 0
    sources = [ex.sub.local_id(s) for s in sources]  # caller ids -> this part's (None: not here)
    backend.synchronize()
    group.barrier()
    clock["start"] = time.perf_counter()
    for run in sources:
        prim.step = 0
        step, iterating = (lambda: prim.reset(run)), False
        while True:
            frontier, rec = superstep(step)
            for k in STAT_KEYS:
                records[k].append(rec[k])
            done = agree(frontier, finished=frontier is None)
            if iterating:
                sizes.append(prim.frontier_total)
            if not done:
                step, iterating = _iterate(prim, frontier), True
            elif frontier is None:
                break
            else:
                step, iterating = prim.next_phase, False
        clock["iterations"] += prim.step
        if progress is not None:
            progress()
    clock["loop_end"] = time.perf_counter()
    backend.synchronize_stream()  # the run's work is on this stream (and what it waited for)
    group.share(())  # the last device done ends the run
    clock["stop"] = time.perf_counter()
    clock["frontier_sizes"] = sizes
    return records, clock


def run_stats(records, clock):
    """The stats of a multi-device run from every device's records and device 0's clock."""
    return {"elapsed_s": clock["stop"] - clock["start"], "finish_s": clock["stop"] - clock["loop_end"],
            "supersteps": len(records[0]["frontier"]),
            "iterations": clock["iterations"], "frontier_sizes": clock["frontier_sizes"], "per_device": records}


def enact_devices(primitives, exchanges, backends, groups, sources, progress=None):
    """Run one primitive per device in lockstep, one worker thread each; per-device results and stats.

    ``primitives[d]`` runs on device d's subgraph; ``sources`` lists the
    runs' sources in caller ids (or None); ``groups[d]`` is device d's
    ThreadGroup.  An exception in any
    worker breaks the barrier, so every other worker stops at its next wait,
    and the first error is raised here.  ``progress``, if given, is called
    after each source.
    """
    p = len(primitives)
    out = [None] * p
    errors = [None] * p

    def worker(d):
        prim, backend = primitives[d], backends[d]
        try:
            with backend.context():
                out[d] = drive(d, prim, exchanges[d], backend, groups[d], sources,
                               progress if d == 0 else None)
        except threading.BrokenBarrierError as e:
            errors[d] = e
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            errors[d] = worker_error(d, backend, prim, e)
            groups[d].abort()

    threads = [threading.Thread(target=worker, args=(d,), name=f"mgraph-device-{d}", daemon=True) for d in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise_first(errors)
    return [prim.result() for prim in primitives], run_stats([o[0] for o in out], out[0][1])


def worker_error(d, backend, prim, e):
    """The error a worker reports: an out-of-memory (CuPy's too) says which device ran out."""
    if isinstance(e, MemoryError):
        where = f" allocating {e.allocating}" if getattr(e, "allocating", None) else ""
        return MemoryError(f"device {d} ({backend.name} {backend.device}) ran out of memory in {prim.name}{where}: "
                           f"{e.__cause__ if where and e.__cause__ is not None else e}")
    return e


def raise_first(errors):
    """Raise the first worker's own error; a broken barrier only when nothing else went wrong."""
    first = next((e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)), None)
    if first is None:
        first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first


def _iterate(prim, frontier):
    def step():
        out = prim.iterate(frontier)
        prim.step += 1
        return out
    return step

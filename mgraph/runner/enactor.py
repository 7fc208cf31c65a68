"""The BSP loop: run a primitive superstep by superstep and time it.

The enactor knows a primitive only through its contract (reset, iterate,
converged, result).  One body (:func:`drive`) runs every worker: the one
device of a single-device run, a worker thread of several, an MPI rank.

On several devices the host reads one small thing per superstep, the new
frontier's size, and the devices agree on convergence.  On one device, where
nothing is exchanged or agreed between supersteps, a primitive that stops on
an empty frontier runs its supersteps in batches (:func:`batches`): its push
advances keep their output's count on the device (:class:`mgraph.ops.Queue`),
and the host reads a batch's counts at once when the batch ends.  Supersteps
run past the empty frontier inside the last batch change nothing: an advance
of an empty frontier emits nothing, and the enactor takes back the steps
they counted.  Devices joined by a link (:mod:`mgraph.comm.peer`) batch the
same way where a push visit's exchange is the link's: each visit sends,
waits for its peers and combines on the devices, and at a batch's end the
devices agree once on the whole frontier's sizes (one ``group.share``).
"""
from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np

from mgraph import ops
from mgraph.backend import allocation_error, to_host
from mgraph.comm.exchange import COMBINES, NO_START
from mgraph.primitives.contract import ContractError, Primitive


STAT_KEYS = ("compute_s", "package_s", "push_s", "wait_s", "combine_s", "bytes", "frontier")

# What each row of a superstep's agreements (group.share) starts with: its kind, the superstep of the source's
# run, the phase and whether the device has finished, so that devices that disagree on any of them are caught at
# the superstep where they first differ.  NEXT: after next_phase; TOTALS: global sums and minima; FLAGS: converged.
NEXT, TOTALS, FLAGS, BATCH = 0.0, 1.0, 2.0, 3.0
# Supersteps between two reads of the device's counts: the first batch is one superstep, each next one twice the last,
# up to BATCH_MOST.  A read drains the stream (the host then waits for the device's last kernel), and the last batch
# runs up to BATCH_MOST - 1 supersteps past the empty frontier, each a launch's worth of host time.
BATCH_MOST = 32


def batches(prim, group, link=None) -> bool:
    """Whether ``prim``'s supersteps may run in batches: one device (no exchange, nothing to agree on between
    supersteps) or devices joined by a ``link`` (mgraph.comm.peer: the push visits it serves exchange on the
    devices; other supersteps take the host's exchange as before; not a gated link, whose graph has hubs), the
    default stop condition (an empty frontier, which the device counts), no totals to share, and a primitive that
    does not refuse it (``batches = False``: its iterate on an empty frontier changes something)."""
    joined = group.size == 1 or (link is not None and not link.gated)
    return (joined and type(prim).converged is Primitive.converged
            and getattr(prim, "batches", True) and not prim.global_sums and not prim.global_mins
            and not prim.every_own_vertex)


def drive(d, prim, ex, backend, group, sources, progress=None, max_supersteps=None):
    """Device ``d``'s whole part of a run, in lockstep with the others through ``group`` (mgraph.group).

    The same body runs in this thread (one device), in a worker thread
    (:func:`enact_devices`) or in an MPI rank (mgraph.runner.workers).
    Supersteps end with the exchange and one ``group.share`` at which every
    device publishes whether it has converged and its share of the
    primitive's ``global_sums``.  Each source's run may take at most
    ``max_supersteps`` supersteps (reset, iterate and next_phase each count
    one; None: no bound); reaching the bound is a ContractError on every
    device at once, as is a superstep where the devices disagree on
    convergence (some finish while others begin a phase) or on the
    supersteps and phases they have taken.  Returns (per-superstep records,
    clock, the primitive's result() as the contract checks it): the clock's
    ``start`` is read just after a barrier, ``loop_end`` after the last
    superstep, ``stop`` once every device's stream has finished; with
    ``iterations`` and the whole ``frontier_sizes``.
    """
    try:
        return _drive(d, prim, ex, backend, group, sources, progress, max_supersteps)
    except MemoryError as e:  # says which device ran out, the same in a thread, a rank or the one device
        raise worker_error(d, backend, prim, e) from None


def _drive(d, prim, ex, backend, group, sources, progress, max_supersteps):
    records = {k: [] for k in STAT_KEYS}
    clock = {"iterations": 0}
    check = Contract(prim, ex.sub, backend, d)
    at = {"count": 0, "phase": 0}  # the supersteps of this source's run so far, and its phases begun after the first

    def agree(frontier, finished=False):
        t = time.perf_counter()
        where = (at["count"], at["phase"])
        totals = tuple(prim.global_sums) + tuple(prim.global_mins)
        if totals:  # a finishing step shares too (nothing to add up), so that every device takes the same shares
            values = [0.0] * len(totals) if finished else [float(getattr(prim, name)) for name in totals]
            rows = group.share((TOTALS, *where, float(finished), len(totals), *values))
            check.agreed(rows, (TOTALS, *where, float(finished), len(totals)), 5 + len(totals), "converged")
            if not finished:
                for k, name in enumerate(totals):
                    column = [row[5 + k] for row in rows]
                    setattr(prim, name, sum(column) if k < len(prim.global_sums) else min(column))
        if not finished and group.size > 1:
            _gather_lists(prim, group, backend, ex.transport)
        own = 0 if finished else ex.own_count if ex.own_count is not None else ex.sub.count_own(ops.plain(frontier))
        flags = group.share((FLAGS, *where, float(finished), bool(finished or prim.converged(frontier)), int(own)))
        check.agreed(flags, (FLAGS, *where, float(finished)), 6, "converged")
        prim.frontier_total = int(sum(f[5] for f in flags))
        records["wait_s"][-1] += time.perf_counter() - t
        return all(f[4] for f in flags)

    def superstep(step):
        rec = {k: 0 for k in STAT_KEYS}
        t = time.perf_counter()
        try:
            frontier = check.frontier(*step)
        except MemoryError as e:
            raise allocation_error(e, "the arrays of its superstep")
        if step[0] == "next_phase" and group.size > 1:  # all finish or none, agreed before any exchange
            t0 = time.perf_counter()
            head = (NEXT, at["count"], at["phase"], float(frontier is None))
            check.agreed(group.share(head), head, len(head), "next_phase")
            rec["wait_s"] = time.perf_counter() - t0
            t += rec["wait_s"]  # compute_s is the primitive's time
        if frontier is not None and step[0] != "iterate":  # a phase begins: its exchange follows its declarations
            if step[0] == "next_phase":
                at["phase"] += 1
            plan = ex.begin_phase(prim)
            if plan is not None and plan.function:
                ex.plan = dataclasses.replace(plan, combines=check.checked_combines(plan.combines))
        if not deferred(frontier):  # compute is the device's time: kernels launched without a host read included
            backend.synchronize_stream()
        rec["compute_s"] = time.perf_counter() - t
        if frontier is None:
            return None, rec
        frontier = ex.run(prim, frontier, rec, start=run if step[0] == "reset" else NO_START)
        rec["frontier"] = frontier.tally() if deferred(frontier) else int(len(frontier))
        return frontier, rec

    def totals(pending):
        """The whole frontier's size after each of ``pending``'s supersteps: this device's counts (one read), and
        on several devices their sums (one share, every device at the same superstep).  Kept in ``sizes``."""
        if link is not None:  # first: polls until the batch's kernels end (never holding the interpreter while
            link.check()      # one waits for a peer), and raises what failed inside them
        ops.read_counts(pending)
        mine = [len(q) for q in pending]
        if group.size == 1:
            return mine
        head = (BATCH, at["count"], at["phase"], float(len(pending)))
        rows = group.share((*head, *mine))
        check.agreed(rows, head, len(head) + len(mine), "a batch's counts")
        whole = [int(sum(row[len(head) + k] for row in rows)) for k in range(len(mine))]
        for k, n in zip(pending_at, whole):
            sizes[k] = n
        return whole

    def settle(pending):
        """Read a batch's counts; the first empty frontier among them (on every device), the supersteps run after
        it taken back (their time stays on the run's, on the superstep that emptied it), or None where none is
        empty."""
        t = time.perf_counter()
        whole = totals(pending)
        records["compute_s"][-1] += time.perf_counter() - t  # the device's time the launches left to run
        first = next((k for k, n in enumerate(whole) if n == 0), None)
        if first is None:
            return None
        over = len(pending) - 1 - first
        if over:
            prim.step -= over
            if link is not None:
                link.levels_run -= over  # .stats counts the levels of the run, as the supersteps
            at["count"] -= over
            records["compute_s"][-over - 1] += sum(records["compute_s"][-over:])
            for k in STAT_KEYS:
                del records[k][-over:]
            del sizes[-over:]
        return pending[first]

    sizes = []
    pending_at = []  # where in sizes each superstep of the batch counts (the whole frontier's, once agreed)
    link = getattr(ex.sub, "levels_link", None) if group.size > 1 else None
    prim.step = 0
    batched = batches(prim, group, link)
    if not batched:
        link = None
    callers = list(sources)
    sources = [ex.sub.local_id(s) for s in sources]  # caller ids -> this part's (None: not here)
    backend.synchronize()
    group.barrier()
    clock["start"] = time.perf_counter()
    with ops.counting(batched):
        for caller, run in zip(callers, sources):
            prim.step = 0
            at["count"], at["phase"] = 0, 0
            step, iterating = ("reset", lambda: prim.reset(run)), False
            # this batch's supersteps whose frontier's length is still on the device, and where they count in sizes
            pending, pending_at, batch = [], [], 1
            while True:
                bounded = max_supersteps is not None and at["count"] >= max_supersteps
                if pending and (bounded or len(pending) >= batch):
                    emptied = settle(pending)
                    pending, pending_at, batch = [], [], min(2 * batch, BATCH_MOST)
                    if emptied is not None:  # every device (the one) has converged
                        step, iterating = ("next_phase", prim.next_phase), False
                        continue
                if bounded:
                    check.unbounded(max_supersteps, caller, at["phase"], at["count"] - 1)
                frontier, rec = superstep(step)
                for k in STAT_KEYS:
                    records[k].append(rec[k])
                if iterating and deferred(frontier) and not (prim.global_sums or prim.global_mins):
                    # its emptiness is read when the batch ends (totals, which a phase may turn on, are shared now)
                    at["count"] += 1
                    tally = rec["frontier"]  # the count alone: the batch keeps no frontier alive
                    pending_at.append(len(sizes))
                    sizes.append(tally)
                    pending.append(tally)
                    # read where the primitive uses it: this device's count, or on several devices the batch's
                    # counts agreed so far (every device reads it at the same superstep, as it reads its frontier)
                    prim.frontier_total = ops.Count(frontier if group.size == 1 else _Agreed(totals, pending))
                    step = ("iterate", _iterate(prim, frontier))
                    continue
                done = agree(frontier, finished=frontier is None)
                at["count"] += 1
                if iterating:
                    sizes.append(prim.frontier_total)
                if not done:
                    step, iterating = ("iterate", _iterate(prim, frontier)), True
                elif frontier is None:
                    break
                else:
                    step, iterating = ("next_phase", prim.next_phase), False
            clock["iterations"] += prim.step
            if progress is not None:
                progress()
    clock["loop_end"] = time.perf_counter()
    backend.synchronize_stream()  # the run's work is on this stream (and what it waited for)
    ex.check()  # what failed on the device in the last superstep's hops
    group.share(())  # the last device done ends the run
    clock["stop"] = time.perf_counter()
    clock["frontier_sizes"] = [f if isinstance(f, int) else len(f) for f in sizes]
    records["frontier"] = [f if isinstance(f, int) else len(f) for f in records["frontier"]]
    return records, clock, check.result()


def _gather_lists(prim, group, backend, transport):
    """Each of the primitive's ``global_lists`` becomes every device's entries concatenated in device order
    (Louvain's moves, and its coarse arcs at a level's end, GBs on R-MAT 22): GPU to GPU where the transport
    gathers on the devices (NCCL between ranks), else through the host as typed buffers."""
    for name in tuple(prim.global_lists):
        value = getattr(prim, name)
        if transport.gathers_on_device and backend.is_gpu:
            setattr(prim, name, transport.allgatherv(backend.asarray(value)))
        else:
            setattr(prim, name, backend.asarray(group.allgatherv(to_host(value))))


def run_stats(records, clock):
    """The stats of a multi-device run from every device's records and device 0's clock."""
    return {"elapsed_s": clock["stop"] - clock["start"], "finish_s": clock["stop"] - clock["loop_end"],
            "supersteps": len(records[0]["frontier"]),
            "iterations": clock["iterations"], "frontier_sizes": clock["frontier_sizes"], "per_device": records}


def enact_devices(primitives, exchanges, backends, groups, sources, progress=None, max_supersteps=None):
    """Run one primitive per device in lockstep, one worker thread each: (every device's records, device 0's
    clock, every device's results), as :func:`drive` returns them.

    ``primitives[d]`` runs on device d's subgraph; ``sources`` lists the
    runs' sources in caller ids (or None); ``groups[d]`` is device d's
    ThreadGroup.  An exception in any
    worker breaks the barrier, so every other worker stops at its next wait,
    and the first error is raised here.  ``progress``, if given, is called
    after each source.
    """
    def work(d):
        return drive(d, primitives[d], exchanges[d], backends[d], groups[d], sources, progress if d == 0 else None,
                     max_supersteps)

    def failed(d, e):
        if not isinstance(e, threading.BrokenBarrierError):  # else another worker failed first: its error is the one
            groups[d].abort()
        return e

    out = on_threads(backends, work, "device", failed)
    return [o[0] for o in out], out[0][1], [o[2] for o in out]


def on_threads(backends, work, what, failed):
    """``work(d)`` for every device d at once, one thread each in the device's context; the results in device
    order.  A worker's exception goes through ``failed(d, e)``, which breaks the others' waits and returns the
    error to report; the first worker's own error is raised once every thread has ended."""
    p = len(backends)
    out, errors = [None] * p, [None] * p

    def worker(d):
        try:
            with backends[d].context():
                out[d] = work(d)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            errors[d] = failed(d, e)

    threads = [threading.Thread(target=worker, args=(d,), name=f"mgraph-{what}-{d}", daemon=True) for d in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise_first(errors)
    return out


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


def deferred(frontier) -> bool:
    """Whether ``frontier``'s length is still on the device (a Queue the host has not read)."""
    return isinstance(frontier, ops.Queue) and not frontier.known


class _Agreed:
    """The whole frontier's size after the last superstep of a batch on several devices, agreed when first read."""

    def __init__(self, totals, pending):
        self.totals, self.pending, self.n = totals, list(pending), None

    def __len__(self):
        if self.n is None:
            self.n = self.totals(self.pending)[-1]
        return self.n


def _iterate(prim, frontier):
    def step():
        out = prim.iterate(frontier)
        prim.step += 1
        return out
    return step


class Contract:
    """What a primitive hands the framework, checked where it hands it over, so that a mistake is one
    :class:`~mgraph.primitives.contract.ContractError` naming the primitive, the device and the superstep, the same on
    one device and on many, instead of a numpy error deep in the exchange or a run that silently stops.

    A frontier must be a 1-D integer array of the backend (reset and iterate must return one, next_phase may
    return None to finish) holding ids of this graph (its local ids on a part).  The bounds cost one min/max
    read; on a GPU the shipped primitives, which the tests hold to references, skip that read.  The names in
    ``combine``, ``carry`` and ``vertex_valued`` must be per-vertex arrays of the primitive, checked when a phase
    starts (a combine may depend on the phase); the names ``frontier_values()`` gives may change only there too,
    since the exchange plans each phase from them (mgraph.comm.plan).  A primitive that declares
    ``every_own_vertex`` must return ``graph.own_vertices``.
    """

    def __init__(self, prim, graph, backend, device):
        self.prim, self.graph, self.backend, self.device = prim, graph, backend, device
        self.implied = frozenset()  # the names of frontier_values() when the phase began
        self.own = None  # the every_own_vertex frontier last accepted (a whole graph makes a new one per access)
        self.bounds = not (backend.is_gpu and type(prim).__module__.startswith("mgraph.primitives."))

    def where(self, what, step=None):
        step = getattr(self.prim, "step", 0) if step is None else step
        return f"{type(self.prim).__name__}.{what} on device {self.device}, superstep {step}"

    def frontier(self, what, make):
        """``make()``'s frontier (``what``: reset, iterate or next_phase), checked; an error names the superstep
        that returned it (iterate counts the step once it returns)."""
        step = getattr(self.prim, "step", 0)
        frontier = make()
        if frontier is None:
            if what == "next_phase":
                return None
            raise ContractError(f"{self.where(what, step)}: returned None; it must return a frontier (an integer "
                                "array of this graph's vertex ids, empty where nothing is left)")
        xp, n = self.backend.xp, self.graph.num_vertices
        queued = isinstance(frontier, ops.Queue)  # an advance's output: ids of this graph, in a buffer of the backend
        if not queued and (not isinstance(frontier, xp.ndarray) or frontier.ndim != 1 or frontier.dtype.kind not in "iu"):
            array = hasattr(frontier, "dtype") and hasattr(frontier, "ndim")
            got = f"a {frontier.ndim}-D {frontier.dtype} array" if array else type(frontier).__name__
            raise ContractError(f"{self.where(what, step)}: returned {got}; a frontier is a 1-D integer "
                                f"{xp.__name__} array of vertex ids (Primitive.frontier_of makes one)")
        if self.bounds and not queued and frontier.shape[0]:
            lo, hi = ops.id_range(frontier)
            if lo < 0 or hi >= n:
                bad = lo if lo < 0 else hi
                raise ContractError(f"{self.where(what, step)}: returned vertex id {bad}, outside this graph's ids "
                                    f"0..{n - 1}")
        if getattr(self.prim, "every_own_vertex", False) and frontier is not self.own:
            self._every_own(what, step, frontier)
            self.own = frontier
        if what != "iterate":
            self.names()
            self.implied = frozenset(self.prim.frontier_values())
        elif frozenset(self.prim.frontier_values()) != self.implied:
            raise ContractError(f"{self.where(what, step)}: frontier_values() names "
                                f"{sorted(self.prim.frontier_values())}, but {sorted(self.implied)} when the phase "
                                "began; the names may change between phases only")
        return frontier

    def _every_own(self, what, step, frontier):
        """A primitive that declares ``every_own_vertex`` returned another array: it must hold the own vertices."""
        own = self.graph.own_vertices
        same = frontier.shape == own.shape and (not self.bounds or bool((frontier == own).all()))
        if not same:
            raise ContractError(f"{self.where(what, step)}: declares every_own_vertex but returned a frontier of "
                                f"{frontier.shape[0]} vertices that is not graph.own_vertices ({own.shape[0]}); "
                                "return graph.own_vertices itself")

    def names(self):
        prim, n, xp = self.prim, self.graph.num_vertices, self.backend.xp
        for name, op in dict(prim.combine).items():
            if not (callable(op) or op in COMBINES):
                raise ContractError(f"{self.where('combine')}: {name!r} combines by {op!r}; expected one of "
                                    f"{', '.join(COMBINES)} or a function (local values, received values)")
            if name in prim.vertex_valued:  # sent in caller ids, it would be combined with local ids
                raise ContractError(f"{self.where('combine')}: {name!r} is combined and vertex_valued; a combined "
                                    "array of vertex ids must hold the caller's ids (graph.vertex_ids), as CC's "
                                    "labels do")
        for kind, names in (("combine", list(dict(prim.combine))), ("carry", list(prim.carry))):
            for name in names:
                arr = getattr(prim, name, None)
                if not isinstance(arr, xp.ndarray) or arr.ndim != 1 or arr.shape[0] != n:
                    raise ContractError(f"{self.where(kind)}: {name!r} names no per-vertex array of the primitive "
                                        f"(an attribute of {n} values, one per vertex of this graph)")
                op = dict(prim.combine).get(name) if kind == "combine" else None
                if op in ("min", "max") and arr.dtype.kind == "f" and n and bool((arr == -1).any()):
                    # "min" orders -1 above every value in integer arrays only; in a float array -1 is a value,
                    # and it would win every min: the unreached vertices would spread as reached ones
                    raise ContractError(f"{self.where(kind)}: {name!r} is a float array combined by {op!r} and "
                                        "holds -1; -1 means unreached in integer arrays only (ops.UNVISITED): "
                                        "mark unreached float values with inf (min) or -inf (max)")
                if callable(op):
                    self._probe(name, op, arr)

    def _probe(self, name, op, arr):
        """A combine function called, when its phase begins, on copies of two of the array's own values (as local
        and as received values), so that one that returns the wrong shape or type is named on one device too,
        where nothing is ever received."""
        k = min(int(arr.shape[0]), 2)
        local = arr[:k].copy()
        self._combined(name, op, local, op(local, arr[:k].copy()), arr)

    def checked_combines(self, combines):
        """``combines`` (name -> op) with each function wrapped so that what it returns for the values a device
        receives is checked (:meth:`_combined`) before the exchange stores it."""
        def checked(name, op, arr_of):
            def combine(local, received):
                return self._combined(name, op, local, op(local, received), arr_of())
            return combine

        return {name: checked(name, op, lambda name=name: getattr(self.prim, name)) if callable(op) else op
                for name, op in combines.items()}

    def _combined(self, name, op, local, out, arr):
        """``out``, what combine function ``op`` of array ``name`` returned for ``local`` values, if it is what the
        exchange stores: an array of the backend with one value per local value, of a dtype the array takes
        (same kind); else a ContractError naming the primitive, the device and the superstep."""
        xp = self.backend.xp
        fn = getattr(op, "__name__", type(op).__name__)
        if not isinstance(out, xp.ndarray):
            raise ContractError(f"{self.where('combine')}: {name!r}'s combine function {fn} returned "
                                f"{type(out).__name__}; it returns a {xp.__name__} array of the combined values, "
                                "one per local value")
        if out.shape != local.shape:
            raise ContractError(f"{self.where('combine')}: {name!r}'s combine function {fn} returned shape "
                                f"{out.shape} for {local.shape[0]} local values; it returns one combined value per "
                                "local value")
        if not np.can_cast(out.dtype, arr.dtype, "same_kind"):
            raise ContractError(f"{self.where('combine')}: {name!r}'s combine function {fn} returned {out.dtype} "
                                f"values for a {arr.dtype} array; it returns values of the array's kind")
        return out

    def agreed(self, rows, head, width, what):
        """A superstep's agreement (``rows``: every device's share, in device order) as every device must give
        it: the same ``head`` (kind, superstep, phase, finished[, number of totals]) and ``width``; ``what`` names
        the step for the message.  Every device reads the same rows, so where devices differ each raises the same
        ContractError at the same superstep."""
        if len(rows) == 1 or all(len(row) == width and tuple(row[:len(head)]) == head for row in rows):
            return  # one device agrees with itself
        devices = range(len(rows))
        totals = [k for k in devices if len(rows[k]) > 4 and rows[k][0] == TOTALS]
        finished = [k for k in devices if len(rows[k]) > 3 and rows[k][3]]
        if finished and len(finished) < len(rows):
            why = (f"devices {finished} finished (next_phase returned None) and devices "
                   f"{[k for k in devices if k not in finished]} began another phase; next_phase must return None "
                   "on every device or on none")
        elif totals:
            counts = {k: int(rows[k][4]) for k in totals}
            why = (f"devices {totals} shared global_sums/global_mins ({counts} values) and devices "
                   f"{[k for k in devices if k not in totals]} other totals or none; every device must name the "
                   "same totals")
        else:
            seen = sorted({(int(row[1]), int(row[2])) for row in rows if len(row) > 2})
            why = f"the devices are at different (superstep, phase) of their run: {seen}"
        raise ContractError(f"{self.where(what)}, phase {int(head[2])}: the devices disagree on convergence: {why}")

    def unbounded(self, limit, source, phase, superstep):
        """One source's run reached ``limit`` supersteps (``max_supersteps``) without finishing: a ContractError
        naming the primitive, the phase and ``superstep`` (the run's last, counted by the enactor: a primitive that
        runs several levels in one superstep counts more steps), the same on every device."""
        label = getattr(self.prim, "phase", None)
        label = f" ({label!r})" if isinstance(label, str) else ""
        start = f" from source {source}" if source is not None else ""
        raise ContractError(f"{self.where('iterate', superstep)}, phase {phase}{label}: no end after max_supersteps={limit} "
                            f"supersteps of one run{start} ({self.prim.frontier_total} vertices in the last "
                            "frontier); the run ends when every device has converged and next_phase() returns None "
                            "- set max_supersteps= higher if the run needs more")

    def result(self):
        """The primitive's result() checked: {name: a per-vertex array of the backend}."""
        out = self.prim.result()
        xp, n = self.backend.xp, self.graph.num_vertices
        if not isinstance(out, dict) or not out:
            raise ContractError(f"{self.where('result')}: returned {type(out).__name__}; result() returns a dict "
                                "{name: per-vertex array}")
        for name, arr in out.items():
            if not isinstance(name, str) or not isinstance(arr, xp.ndarray) or arr.ndim != 1 or arr.shape[0] != n:
                shape = getattr(arr, "shape", None)
                raise ContractError(f"{self.where('result')}: {name!r} is {type(arr).__name__}"
                                    f"{f' of shape {shape}' if shape is not None else ''}; each result is a 1-D "
                                    f"{xp.__name__} array with one value per vertex of this graph ({n})")
        return out

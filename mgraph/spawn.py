"""One worker process per device (``workers="processes"``), so that no two devices share an interpreter lock.

With one thread per device every CuPy call of every device holds the same
interpreter lock, and the per-superstep host cost grows with the device count
(docs/multi-gpu.md).  Here each device gets a spawned process (CUDA cannot
fork) that loads its subgraph, builds the primitive with the caller's factory
and runs the same worker body as a thread would (:func:`mgraph.enactor.drive`),
exchanging through :mod:`mgraph.comm.processes`.  The parent partitions and
builds the subgraphs, hands each process its part through a file in shared
memory, and collects the own vertices' values.

An exception in a worker aborts the shared barrier, so every other worker
stops at its next wait; the parent re-raises the first error.  A worker that
dies without a word (killed, crashed) is reported the same way, and the
parent ends the others after a grace period instead of waiting on them.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import shutil
import tempfile
import threading
import time
import types

from .backend import Backend
from .comm import Exchange
from .comm.processes import NcclTransport, QueueTransport, SharedBoard
from .enactor import drive, raise_first, run_stats, worker_error

GRACE_S = 30.0  # after a failure, how long the parent lets the other workers notice before ending them


def run_processes(parts, backends, make, communication, sources, progress=None):
    """Run ``make(part)`` on each part in its own process; (per-device (ids, values) pieces, stats, summary).

    ``stats["startup_s"]`` is the time to start the processes, hand them
    their parts and build the primitives, which ``elapsed_s`` leaves out.

    ``sources`` lists, per run, each device's local id of the source.  The
    summary is a namespace of device 0's primitive's plain attributes (its
    ``directions``, ``error``, ...), since the primitive itself stays in its
    process.
    """
    try:
        pickle.dumps(make)
    except Exception as e:
        raise ValueError("workers='processes' needs a primitive that can be pickled (a class or a "
                         f"functools.partial, not a lambda or a local function): {e}") from None
    t0 = time.perf_counter()
    p = len(parts)
    gpu = backends[0].is_gpu
    if gpu and len({b.device for b in backends}) < p:
        raise ValueError("workers='processes' needs a different GPU for every device (NCCL allows one rank per "
                         "GPU); use workers='threads' to share a GPU between partitions")
    unique_id = _nccl_unique_id() if gpu else None
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(p)
    board = SharedBoard.allocate(ctx, p)
    inboxes = [ctx.Queue() for _ in range(p)]
    results = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="mgraph-parts-", dir=_scratch_dir(parts)) as tmp:
        paths = []
        for part in parts:
            paths.append(os.path.join(tmp, f"part{part.index}.pickle"))
            with open(paths[-1], "wb") as f:
                pickle.dump(part.to(Backend("numpy")), f, protocol=pickle.HIGHEST_PROTOCOL)
        procs = [ctx.Process(target=_worker, name=f"mgraph-device-{d}", daemon=True,
                             args=(d, backends[d].name, backends[d].device, paths[d], make, communication,
                                   [run[d] for run in sources], unique_id, inboxes, results, barrier, board))
                 for d in range(p)]
        for proc in procs:
            proc.start()
        try:
            done, errors = _collect(procs, results, barrier, progress)
        finally:
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
                proc.join()
    raise_first(errors)
    pieces = [done[d][0] for d in range(p)]
    stats = run_stats([done[d][1] for d in range(p)], done[0][2])
    stats["startup_s"] = done[0][2]["start"] - t0  # one monotonic clock for all processes (Linux)
    return pieces, stats, types.SimpleNamespace(**done[0][3])


def _collect(procs, results, barrier, progress):
    """Every worker's outcome, by device: ({d: (piece, records, clock, summary)}, errors per device)."""
    p = len(procs)
    done, errors = {}, [None] * p
    failed_at = None
    while len(done) + sum(e is not None for e in errors) < p:
        try:
            kind, d, payload = results.get(timeout=0.5)
        except queue.Empty:
            for d, proc in enumerate(procs):
                if d not in done and errors[d] is None and not proc.is_alive():
                    errors[d] = RuntimeError(f"device worker {d} exited with code {proc.exitcode} "
                                             "without reporting a result")
                    barrier.abort()
            if any(e is not None for e in errors):
                failed_at = failed_at or time.monotonic()
                if time.monotonic() - failed_at > GRACE_S:
                    break
            continue
        if kind == "tick":
            if progress is not None:
                progress()
        elif kind == "done":
            done[d] = payload
        else:  # "error": payload is the exception (or the broken barrier that another's error caused)
            errors[d] = payload
            barrier.abort()
            failed_at = failed_at or time.monotonic()
    return done, errors


def _worker(d, backend_name, device, path, make, communication, sources, unique_id, inboxes, results, barrier,
            board):
    """Device ``d``'s process: load its part, run the primitive, send back its own vertices' values."""
    backend, prim, transport = Backend(backend_name, device), None, None
    try:
        with backend.context():
            p = len(inboxes)
            if backend.is_gpu:  # collective: before anything that could fail on one device alone
                transport = NcclTransport(inboxes, d, barrier, unique_id)
            else:
                transport = QueueTransport(inboxes, d, barrier)
            with open(path, "rb") as f:
                part = pickle.load(f).to(backend)
            prim = make(part)
            exchange = Exchange(part, p, transport, communication)
            tick = (lambda: results.put(("tick", d, None))) if d == 0 else None
            records, clock = drive(d, prim, exchange, backend, SharedBoard(board, p, barrier), barrier, sources,
                                   tick)
            piece = part.own_values(prim.result(), prim.vertex_valued)
            summary = _plain_attributes(prim) if d == 0 else None
        results.put(("done", d, (piece, records, clock, summary)))
    except threading.BrokenBarrierError as e:
        _abort(transport)
        results.put(("error", d, e))
    except BaseException as e:  # noqa: BLE001 - re-raised in the caller
        barrier.abort()
        _abort(transport)
        results.put(("error", d, _picklable(worker_error(d, backend, prim, e) if prim is not None else e)))


def _abort(transport):
    if transport is not None:
        try:
            transport.abort()
        except Exception:  # noqa: BLE001 - already failing; the first error is what the caller needs
            pass


def _plain_attributes(prim):
    """The primitive's scalar and list-of-scalar attributes: what the run functions read after a run."""
    plain = (bool, int, float, str)
    return {k: v for k, v in vars(prim).items()
            if isinstance(v, plain) or (isinstance(v, (list, tuple)) and all(isinstance(x, plain) for x in v))}


def _picklable(e):
    try:
        pickle.dumps(e)
        return e
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


def _nccl_unique_id():
    try:
        from cupy.cuda import nccl

        return nccl.get_unique_id()
    except Exception as e:  # CuPy without NCCL
        raise RuntimeError(f"workers='processes' on GPUs needs NCCL through cupy.cuda.nccl: {e}") from None


def _scratch_dir(parts):
    """Shared memory (/dev/shm) when it has room for the parts, else the temporary directory."""
    need = sum(part.nbytes for part in parts) * 1.1
    if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > need:
        return "/dev/shm"
    return None

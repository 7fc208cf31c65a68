"""One worker process per device (``workers="processes"``), so that no two devices share an interpreter lock.

With one thread per device every CuPy call of every device holds the same
interpreter lock, and the per-superstep host cost grows with the device count
(docs/multi-gpu.md).  Here each device gets a spawned process (CUDA cannot
fork) that loads its subgraph, builds the primitive with the caller's factory
and runs the same worker body as a thread would (:func:`mgraph.enactor.drive`),
exchanging through :mod:`mgraph.comm.processes`.  The parent partitions and
builds the subgraphs, hands each process its part through a file in shared
memory, and collects the own vertices' values.  The processes stay for the
next run on the same devices (:func:`shutdown` ends them; so does exit).

An exception in a worker aborts the shared barrier, so every other worker
stops at its next wait; the parent re-raises the first error and replaces
the pool next time.  A worker that dies without a word (killed, crashed) is
reported the same way, and the parent ends the others after a grace period
instead of waiting on them.
"""
from __future__ import annotations

import atexit
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
from .comm.processes import NcclTransport, QueueTransport, SharedBoard, Signals
from .enactor import drive, raise_first, run_stats, worker_error
from .subgraph import assemble

GRACE_S = 30.0  # after a failure, how long the parent lets the other workers notice before ending them


def run_processes(key, build, backends, make, communication, sources, progress=None):
    """Run ``make(part)`` on each part in its own process; (arrays, stats, summary, info).

    ``build()`` gives (parts, info) as mgraph.launch builds them; it is not
    called when the pool's workers already hold the parts of ``key`` (the same
    graph object, partitioner, seed and duplication; None: never reuse), and
    ``info`` then says ``parts_reused`` (its times are the build's).  ``sources`` are caller ids.  The
    summary is a namespace of device 0's primitive's plain attributes (its
    ``directions``, ``error``, ...), since the primitive itself stays in its
    process.  ``stats["startup_s"]`` is the time to hand the workers their
    parts and build the primitives (and, on a pool's first run, to start the
    processes), which ``elapsed_s`` leaves out.
    """
    t0 = time.perf_counter()
    try:
        job = pickle.dumps((make, communication))
    except Exception as e:  # pickling raises many kinds of errors (PicklingError, AttributeError, TypeError)
        raise ValueError("workers='processes' needs a primitive that can be pickled (a class or a "
                         f"functools.partial, not a lambda or a local function): {e}") from None
    p = len(backends)  # distinct GPUs: mgraph.launch.Placement has checked
    pool = _POOLS.get(_pool_key(backends))
    reuse, folder = key is not None and pool is not None and pool.alive() and pool.key == key, None
    if reuse:
        paths, info = [None] * p, dict(pool.info, parts_reused=True)  # the times are those of the build
    else:
        if pool is not None:
            pool.key = None
        parts, info = build()  # a partitioner's error is raised before any worker process starts
        folder = tempfile.TemporaryDirectory(prefix="mgraph-parts-", dir=_scratch_dir(parts))
        paths = _hand_over(parts, folder.name)
        del parts
        _release_cached_memory(backends[0])  # the workers, not this process, need the GPU's memory now
        pool = _pool(backends)
    try:
        for d in range(p):
            pool.jobs[d].put((paths[d], job, list(sources)))
        done, errors = pool.collect(progress)
    except BaseException:
        _close(pool, at_once=True)
        raise
    finally:
        if folder is not None:
            folder.cleanup()
    if any(e is not None for e in errors):
        _close(pool, at_once=True)  # workers that failed have ended; the pool starts afresh next time
        raise_first(errors)
    if not reuse:
        pool.key, pool.info = key, info
    stats = run_stats([done[d][1] for d in range(p)], done[0][2])
    stats["startup_s"] = done[0][2]["start"] - t0  # one monotonic clock for all processes (Linux)
    arrays = assemble([done[d][0] for d in range(p)], done[0][4])
    return arrays, stats, types.SimpleNamespace(**done[0][3]), info


def _hand_over(parts, folder):
    """Each part as a pickle of its host arrays in ``folder``; the files' paths."""
    paths = []
    for part in parts:
        paths.append(os.path.join(folder, f"part{part.index}.pickle"))
        with open(paths[-1], "wb") as f:
            pickle.dump(part.to(Backend("numpy")), f, protocol=pickle.HIGHEST_PROTOCOL)
    return paths


def picklable(make) -> bool:
    """Whether ``make`` (a primitive class or factory) can be sent to a worker process."""
    try:
        pickle.dumps(make)
        return True
    except Exception:  # pickling raises many kinds of errors (PicklingError, AttributeError, TypeError)
        return False


def shutdown():
    """End every pool of worker processes (they hold their GPUs' memory pools and NCCL communicators)."""
    for key in list(_POOLS):
        _close(_POOLS.pop(key))


class _Pool:
    """Worker processes for one list of devices, kept between runs.

    A run's warm-up then warms what the timed runs use: each process's CUDA
    context, loaded kernels, memory pool and NCCL connections.
    """

    def __init__(self, backends):
        ctx = multiprocessing.get_context("spawn")
        p = len(backends)
        unique_id = _nccl_unique_id() if backends[0].is_gpu else None
        self.barrier = ctx.Barrier(p)
        # kept here: the children unpickle these after start(), so the parent must not free them first
        self.shared = shared = (Signals.allocate(ctx, p),) + SharedBoard.allocate(ctx, p)
        self.inboxes = inboxes = [ctx.Queue() for _ in range(p)]
        self.jobs = [ctx.Queue() for _ in range(p)]
        self.results = ctx.Queue()
        self.key, self.info = None, None  # which parts the workers hold, and what building them reported
        self.procs = [ctx.Process(target=_serve, name=f"mgraph-device-{d}", daemon=True,
                                  args=(d, b.name, b.device, unique_id, inboxes, self.jobs[d], self.results,
                                        self.barrier, shared))
                      for d, b in enumerate(backends)]
        for proc in self.procs:
            proc.start()

    def alive(self):
        return all(proc.is_alive() for proc in self.procs) and not self.barrier.broken

    def collect(self, progress):
        """Every worker's outcome of one run: ({d: (piece, records, clock, summary)}, errors per device)."""
        procs, barrier = self.procs, self.barrier
        p = len(procs)
        done, errors = {}, [None] * p
        failed_at = None
        while len(done) + sum(e is not None for e in errors) < p:
            try:
                kind, d, payload = self.results.get(timeout=0.5)
            except queue.Empty:
                for d, proc in enumerate(procs):
                    if d not in done and errors[d] is None and not proc.is_alive():
                        errors[d] = RuntimeError(
                            f"device worker {d} exited with code {proc.exitcode} without reporting a result (one "
                            "that dies while starting may be re-running a script that calls mgraph outside "
                            "`if __name__ == \"__main__\":`, which worker processes need)")
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


_POOLS = {}


def _pool_key(backends):
    return backends[0].name, tuple(b.device for b in backends) if backends[0].is_gpu else len(backends)


def _pool(backends):
    key = _pool_key(backends)
    pool = _POOLS.get(key)
    if pool is None or not pool.alive():
        if pool is not None:
            _close(pool, at_once=True)
        pool = _POOLS[key] = _Pool(backends)
    return pool


def _close(pool, at_once=False):
    """Ask the workers to end (or, ``at_once``, end them); never waits long."""
    for key, known in list(_POOLS.items()):
        if known is pool:
            del _POOLS[key]
    if not at_once:
        for q in pool.jobs:
            q.put(None)
        for proc in pool.procs:
            proc.join(timeout=5)
    for proc in pool.procs:
        if proc.is_alive():
            proc.terminate()
    for proc in pool.procs:
        proc.join(timeout=5)
        if proc.is_alive():  # one busy in the driver may not heed SIGTERM
            proc.kill()
            proc.join(timeout=5)
    for q in pool.jobs:  # end this process's feeder threads now, not when the queues are collected
        q.close()
        q.join_thread()


atexit.register(shutdown)


def _serve(d, backend_name, device, unique_id, inboxes, jobs, results, barrier, shared):
    """Device ``d``'s process: run jobs (a part file or None for the last part, the pickled factory, caller
    sources) until told to stop.

    The transport and the board live as long as the process: their counters
    in shared memory go on from one run to the next.  After a failure the
    worker reports and ends: the parent then replaces the pool.
    """
    backend, transport = Backend(backend_name, device), None
    p = len(inboxes)
    signals = Signals(shared[0], p)
    board = SharedBoard(shared[1], shared[2], p, barrier)
    with backend.context():
        try:
            if backend.is_gpu:  # collective: before anything that could fail on one device alone
                transport = NcclTransport(signals, inboxes, d, barrier, unique_id)
            else:
                transport = QueueTransport(signals, inboxes, d, barrier)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            barrier.abort()
            results.put(("error", d, _picklable(e)))
            return
        held = {}
        while True:
            job = jobs.get()
            if job is None:
                return
            if not _run_job(d, backend, p, transport, job, results, barrier, board, held):
                _abort(transport)
                return


def _run_job(d, backend, p, transport, job, results, barrier, board, held):
    """One run on device ``d``; reports its outcome and returns whether it succeeded.  ``held["part"]`` keeps
    the part for the next job."""
    path, payload, sources = job
    prim = None
    try:
        make, communication = pickle.loads(payload)
        if path is not None:
            held.pop("part", None)  # free the last part's memory before loading the next
            _release_cached_memory(backend)
            with open(path, "rb") as f:
                held["part"] = pickle.load(f).to(backend)
        part = held["part"]
        prim = make(part)
        exchange = Exchange(part, p, transport, communication)
        tick = (lambda: results.put(("tick", d, None))) if d == 0 else None
        records, clock = drive(d, prim, exchange, backend, board, barrier, sources, tick)
        piece = part.own_values(prim.result(), prim.vertex_valued)
        summary = _plain_attributes(prim) if d == 0 else None
        results.put(("done", d, (piece, records, clock, summary, part.num_global)))
        return True
    except threading.BrokenBarrierError as e:
        results.put(("error", d, e))
    except BaseException as e:  # noqa: BLE001 - re-raised in the caller
        barrier.abort()
        results.put(("error", d, _picklable(worker_error(d, backend, prim, e) if prim is not None else e)))
    return False


def _release_cached_memory(backend):
    """Return the blocks CuPy's memory pool keeps for reuse to the driver, so another process can have them.

    Each process has its own pool, and what one keeps the others cannot use:
    the parent's after building the parts, a worker's when it changes graph.
    """
    if backend.is_gpu:
        with backend.xp.cuda.Device(backend.device):
            backend.synchronize()
            backend.xp.get_default_memory_pool().free_all_blocks()


def _abort(transport):
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

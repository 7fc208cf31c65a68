"""The workers of one run as a group: their rank, their count, and the few collectives the framework needs.

Two kinds, one interface, so that building parts, the BSP loop and the
results are written once:

* :class:`MpiGroup`: the ranks of an MPI job (``mpiexec -n P ...``), one per
  device.  mpi4py carries control (sizes, flags, global sums, results);
  arrays travel as MPI buffers, never as pickled objects.
* :class:`ThreadGroup`: P worker threads of one process (``devices=P`` from a
  notebook), whose collectives are a slot per thread and a barrier.

:func:`world` says whether this process is one rank of several: only then is
mpi4py imported (importing it initialises MPI), so a plain ``python`` run
never touches MPI.  In a job of one rank everything runs as without MPI.
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

# Environment variables that MPI launchers set in every rank (Open MPI, MPICH/Hydra, PMIx, Slurm's PMI).
_SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")

_WORLD = None

SHM_DIR = "/dev/shm"
# MPICH (ch4's POSIX shared memory, MPL_initshm; 5.0.2 here) names each node's start-up segment
# mpich_shm_<hash of the job's PMI name>_<node id> and unlinks it only in MPI_Finalize, so a job that ends any other
# way (a raising rank, a signal) leaves it in /dev/shm.  Every rank of the node maps it before its MPI_Init returns
# (the bootstrap waits for all of them), so once the node's ranks have met at a barrier nobody needs the name: it
# goes then, the memory goes with the last process that maps it, and no end of the job, SIGKILL included, leaves it.
STARTUP_SEGMENTS = ("mpich_shm_",)
# What a failing rank unlinks before it ends the job: also MPICH's per-VCI slab (with several VCIs), which may be
# opened by name after start-up and so cannot go at once.  Open MPI needs neither: its launcher removes its segments
# (vader_segment.*) and session folder itself (Open MPI 4.1.6, 2026-11-25: after a raising rank, SIGINT or SIGTERM to
# mpiexec, SIGTERM or SIGKILL to a rank, /dev/shm and /tmp were clean before this module unlinked anything).
JOB_SEGMENTS = ("mpich_shm_", "mpich_vci_")


def launched_size() -> int:
    """The number of ranks the MPI launcher started (1 when not under one), read from the environment."""
    for name in _SIZE_VARIABLES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return 1


def world():
    """The :class:`MpiGroup` of this job when it has several ranks, else None (no MPI is initialised)."""
    global _WORLD
    if _WORLD is None:
        if launched_size() <= 1:
            return None
        try:
            from mpi4py import MPI
        except ImportError:
            raise RuntimeError("this process was started by an MPI launcher with several ranks, but mpi4py is not "
                               "installed: pip install mpi4py (and an MPI, e.g. pip install mpich)") from None
        if MPI.COMM_WORLD.Get_size() <= 1:
            return None
        _WORLD = MpiGroup(MPI.COMM_WORLD)
        _install_abort_hook(_WORLD)
    return _WORLD


def is_root() -> bool:
    """Whether this process prints and writes for the job: rank 0, or any process outside MPI."""
    w = world()
    return w is None or w.rank == 0


ABORT_GRACE_S = 0.5  # seconds between a failing rank's last words and MPI_Abort


class Group:
    """``rank`` and ``size`` of the workers of one run and their collectives; every worker calls each in the same
    order.  Arrays are NumPy arrays (a worker on a GPU stages through the host where it uses these)."""

    rank: int
    size: int

    def barrier(self) -> None:
        raise NotImplementedError

    def allgather(self, obj) -> list:
        """Every worker's small picklable ``obj``, in rank order (control only: sizes, flags, names)."""
        raise NotImplementedError

    def allreduce(self, value, op: str = "sum"):
        """``sum``, ``max`` or ``min`` of a number over the workers."""
        values = self.allgather(value)
        return {"sum": sum, "max": max, "min": min}[op](values)

    def bcast(self, obj, root: int = 0):
        return self.allgather(obj if self.rank == root else None)[root]

    def share(self, values) -> list:
        """The superstep's agreement: every worker's tuple of floats (same length everywhere), in rank order."""
        return [tuple(v) for v in self.allgather(tuple(float(x) for x in values))]

    def alltoallv(self, arrays: list) -> list:
        """Send ``arrays[k]`` (1-D, one dtype for all) to worker k; what each worker sent here, in rank order."""
        raise NotImplementedError

    def gatherv(self, array, root: int = 0):
        """Every worker's 1-D ``array`` (one dtype), in rank order, on ``root``; None elsewhere."""
        raise NotImplementedError

    def allgatherv(self, array):
        """Every worker's 1-D ``array`` concatenated in rank order, on every worker (dtypes that differ between
        workers are promoted to a common one)."""
        raise NotImplementedError

    def abort(self) -> None:
        """Stop the other workers after a failure here (they raise or end at their next collective)."""

    def bcast_array(self, array, root: int = 0):
        """``root``'s NumPy array on every worker."""
        return np.asarray(self.bcast(array, root))


class SoloGroup(Group):
    """The group of one worker (one device in this process, or a job of one rank): every collective returns at
    once with this worker's own contribution, so a one-device run drives the same worker body as many."""

    rank, size = 0, 1

    def barrier(self):
        pass

    def allgather(self, obj):
        return [obj]

    def share(self, values):
        return [tuple(float(v) for v in values)]

    def alltoallv(self, arrays):
        return [arrays[0]]

    def gatherv(self, array, root=0):
        return [array]

    def allgatherv(self, array):
        return np.asarray(array)


class ThreadGroup(Group):
    """Worker ``rank`` of ``size`` threads of one process: a slot per thread, read by all after a barrier.

    ``shared`` (from :meth:`shared_state`) is one per run.  Each collective
    writes this thread's slot, waits for all, reads, and waits again, so no
    thread overwrites a slot another has not read.  A failing thread aborts
    the barrier: every other thread raises BrokenBarrierError at its next
    collective.
    """

    def __init__(self, shared, rank: int):
        self._shared, self.rank, self.size = shared, rank, shared["size"]

    @staticmethod
    def shared_state(size: int) -> dict:
        return {"size": size, "barrier": threading.Barrier(size), "slots": [None] * size,
                "boards": ([None] * size, [None] * size), "on_abort": []}

    _round = 0

    def share(self, values):
        """One barrier per superstep: two boards used alternately, so a thread writes round k+1 on the board
        round k did not use, and round k+2 cannot start before everyone has passed round k+1's barrier."""
        board = self._shared["boards"][self._round & 1]
        self._round += 1
        board[self.rank] = tuple(float(v) for v in values)
        self.barrier()
        return list(board)

    @property
    def threading_barrier(self):
        return self._shared["barrier"]

    def barrier(self):
        self._shared["barrier"].wait()

    def _exchange(self, obj):
        slots = self._shared["slots"]
        slots[self.rank] = obj
        self.barrier()
        out = list(slots)
        self.barrier()
        return out

    def allgather(self, obj):
        return self._exchange(obj)

    def alltoallv(self, arrays):
        rows = self._exchange(list(arrays))
        return [np.array(rows[src][self.rank], copy=True) for src in range(self.size)]

    def gatherv(self, array, root=0):
        rows = self._exchange(array)
        return [np.asarray(a) for a in rows] if self.rank == root else None

    def allgatherv(self, array):
        return np.concatenate([np.asarray(a) for a in self._exchange(array)])

    def abort(self):
        """Break every wait of the other threads: the group's barrier, and whatever registered in ``on_abort``
        (a device waiting for its peers inside a kernel)."""
        self._shared["barrier"].abort()
        for stop in self._shared.get("on_abort", ()):
            stop()


MPI_CHUNK = 1 << 30  # bytes per MPI call of the array collectives: MPI counts and displacements are 32-bit


class MpiGroup(Group):
    """The ranks of an MPI communicator.  Arrays go as typed buffers (``Alltoallv``, ``Gatherv``); small control
    objects through mpi4py's pickled collectives."""

    def __init__(self, comm):
        from mpi4py import MPI

        self.MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = local.Get_rank(), local.Get_size()
        local.Barrier()  # every rank of this node is past MPI_Init, so has mapped the start-up segment
        release_segments(STARTUP_SEGMENTS)
        local.Free()
        self.host = MPI.Get_processor_name()

    def barrier(self):
        self.comm.Barrier()

    def allgather(self, obj):
        return self.comm.allgather(obj)

    def allreduce(self, value, op="sum"):
        ops = {"sum": self.MPI.SUM, "max": self.MPI.MAX, "min": self.MPI.MIN}
        return self.comm.allreduce(value, op=ops[op])

    def bcast(self, obj, root=0):
        return self.comm.bcast(obj, root=root)

    def share(self, values):
        values = np.asarray([float(x) for x in values], dtype=np.float64)
        out = np.empty((self.size, values.shape[0]), dtype=np.float64)
        self.comm.Allgather(values, out)
        return [tuple(row) for row in out.tolist()]

    def alltoallv(self, arrays):
        """Send ``arrays[k]`` to rank k; what each rank sent here, in rank order.  MPI counts and displacements are
        32-bit, so where some rank's bytes pass MPI_CHUNK the exchange goes in rounds, each moving at most
        MPI_CHUNK / size bytes per peer through staging buffers."""
        arrays = [np.ascontiguousarray(a) for a in arrays]
        dtype = _common_dtype(arrays)
        item = dtype.itemsize  # bytes, so that any dtype travels as MPI.BYTE
        sent = np.array([a.shape[0] * item for a in arrays], dtype=np.int64)
        matrix = np.empty((self.size, self.size), dtype=np.int64)  # [i, k]: bytes rank i sends rank k, known to all
        self.comm.Allgather(sent, matrix)
        sb, rb = matrix[self.rank], matrix[:, self.rank].copy()
        sd, rd = _displacements(sb), _displacements(rb)
        send = np.concatenate([a.astype(dtype, copy=False) for a in arrays]) if arrays else np.empty(0, dtype)
        recv = np.empty(int(rb.sum()) // item, dtype=dtype)
        data, out = send.view(np.uint8), recv.view(np.uint8)
        if max(matrix.sum(axis=0).max(), matrix.sum(axis=1).max()) <= MPI_CHUNK:
            self.comm.Alltoallv([data, (sb, sd), self.MPI.BYTE], [out, (rb, rd), self.MPI.BYTE])
        else:
            step = max(MPI_CHUNK // self.size, 1)
            for lo in range(0, int(matrix.max()), step):
                sp, rp = np.clip(sb - lo, 0, step), np.clip(rb - lo, 0, step)
                stage = np.concatenate([data[sd[k] + lo: sd[k] + lo + sp[k]] for k in range(self.size)])
                got, at = np.empty(int(rp.sum()), dtype=np.uint8), _displacements(rp)
                self.comm.Alltoallv([stage, (sp, _displacements(sp)), self.MPI.BYTE], [got, (rp, at), self.MPI.BYTE])
                _unstage(out, rd + lo, got, at, rp)
        return [recv[(rd[k]) // item: (rd[k] + rb[k]) // item] for k in range(self.size)]

    def gatherv(self, array, root=0):
        """Every rank's array at ``root``, in rank order.  MPI counts and displacements are 32-bit, so where the
        whole passes MPI_CHUNK bytes, arrays go in rounds of at most MPI_CHUNK / size bytes from each rank (a rank's
        share of an R-MAT 28 result is over 2 GiB)."""
        array = np.ascontiguousarray(array)
        counts = np.array(self.comm.allgather(int(array.shape[0])), dtype=np.int64)
        dtype = np.dtype(self.comm.bcast(array.dtype.str if self.rank == root else None, root=root))
        data = array.astype(dtype, copy=False).reshape(-1).view(np.uint8)
        item = dtype.itemsize
        nbytes, displ = counts * item, _displacements(counts) * item
        out = np.empty(int(counts.sum()), dtype=dtype) if self.rank == root else None
        if nbytes.sum() <= MPI_CHUNK:
            self.comm.Gatherv(data, [out.view(np.uint8), (nbytes, displ), self.MPI.BYTE] if out is not None else None,
                              root=root)
        else:
            step = max(MPI_CHUNK // (item * self.size), 1) * item
            for lo in range(0, int(nbytes.max()), step):
                part = np.clip(nbytes - lo, 0, step)
                mine = data[lo: lo + int(part[self.rank])]
                if out is None:
                    self.comm.Gatherv(mine, None, root=root)
                    continue
                stage, at = np.empty(int(part.sum()), dtype=np.uint8), _displacements(part)
                self.comm.Gatherv(mine, [stage, (part, at), self.MPI.BYTE], root=root)
                _unstage(out.view(np.uint8), displ + lo, stage, at, part)
        if out is None:
            return None
        return [out[displ[k] // item: displ[k] // item + counts[k]] for k in range(self.size)]

    def allgatherv(self, array):
        """Every rank's 1-D array concatenated in rank order, on every rank, as typed buffers (``Allgatherv``):
        through mpi4py's pickled allgather, Louvain's coarse arcs (GBs at R-MAT 22 on two ranks) took seconds.
        MPI counts and displacements are 32-bit, so where the whole passes MPI_CHUNK bytes, arrays go in rounds of
        at most MPI_CHUNK / size bytes from each rank."""
        array = np.ascontiguousarray(array).reshape(-1)
        meta = self.comm.allgather((int(array.shape[0]), array.dtype.str))
        counts = np.array([m[0] for m in meta], dtype=np.int64)
        dtype = np.result_type(*(np.dtype(m[1]) for m in meta))
        data = array.astype(dtype, copy=False).view(np.uint8)
        item = dtype.itemsize
        nbytes, displ = counts * item, _displacements(counts) * item
        out = np.empty(int(counts.sum()), dtype=dtype)
        if nbytes.sum() <= MPI_CHUNK:
            self.comm.Allgatherv(data, [out.view(np.uint8), (nbytes, displ), self.MPI.BYTE])
            return out
        step = max(MPI_CHUNK // (item * self.size), 1) * item
        for lo in range(0, int(nbytes.max()), step):
            part = np.clip(nbytes - lo, 0, step)
            stage, at = np.empty(int(part.sum()), dtype=np.uint8), _displacements(part)
            self.comm.Allgatherv(data[lo: lo + int(part[self.rank])], [stage, (part, at), self.MPI.BYTE])
            _unstage(out.view(np.uint8), displ + lo, stage, at, part)
        return out

    def bcast_array(self, array, root=0):
        """``root``'s array on every rank: its dtype and length as a small object, the data in buffers of at most
        MPI_CHUNK bytes (MPI counts are 32-bit)."""
        shape = self.comm.bcast(None if self.rank != root else (array.dtype.str, array.shape), root=root)
        if self.rank != root:
            array = np.empty(shape[1], dtype=np.dtype(shape[0]))
        array = np.ascontiguousarray(array)
        data = array.reshape(-1).view(np.uint8)
        for lo in range(0, data.shape[0], MPI_CHUNK):
            self.comm.Bcast(data[lo: lo + MPI_CHUNK], root=root)
        return array

    def all_failing(self, wait_s: float = 3.0) -> bool:
        """Whether every rank is failing too (a user error every rank found alike), judged by a barrier that
        completes within ``wait_s``; if it does not, the others are elsewhere and only ending the job frees them."""
        request = self.comm.Ibarrier()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if request.Test():
                return True
            time.sleep(1e-3)
        return False

    def abort(self):
        """An MPI job cannot leave a rank waiting in a collective: end them all (mpiexec reports it).  The pause
        lets mpiexec forward what this rank just wrote to stderr (its error) before the abort ends the streams."""
        sys.stdout.flush()
        sys.stderr.flush()
        time.sleep(ABORT_GRACE_S)
        self.comm.Abort(1)


def _common_dtype(arrays):
    """The dtype of what one alltoallv sends: the receivers read the bytes with theirs, so every rank must send
    one dtype (empty arrays included: a rank sending only empty arrays still names the dtype)."""
    if not arrays:
        return np.dtype(np.uint8)
    kinds = {a.dtype for a in arrays}
    if len(kinds) > 1:
        raise ValueError(f"alltoallv needs one dtype, got {sorted(str(k) for k in kinds)}")
    return arrays[0].dtype


def _unstage(out, dest, got, at, lengths):
    """A round's staged pieces into place: piece k, ``lengths[k]`` bytes at ``at[k]`` of ``got``, to ``dest[k]`` of
    ``out`` (offsets in bytes, beyond what one MPI call could address)."""
    for k in np.flatnonzero(lengths):
        out[dest[k]: dest[k] + lengths[k]] = got[at[k]: at[k] + lengths[k]]


def _displacements(counts):
    out = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def mapped_files(directory: str, prefixes) -> list:
    """``(path, device, inode)`` of each file in ``directory`` whose name starts with one of ``prefixes``, that this
    process maps and that is still linked, read from /proc/self/maps (none where there is no /proc)."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.readlines()
    except OSError:
        return []
    found = set()
    for line in lines:
        fields = line.split(None, 5)  # address perms offset major:minor inode path
        if len(fields) < 6:
            continue
        path = fields[5].rstrip("\n")
        if path.endswith(" (deleted)") or os.path.dirname(path) != directory:
            continue
        if not os.path.basename(path).startswith(tuple(prefixes)):
            continue
        major, minor = (int(x, 16) for x in fields[3].split(":"))
        found.add((path, os.makedev(major, minor), int(fields[4])))
    return sorted(found)


def release_segments(prefixes, directory: str = SHM_DIR) -> list:
    """Unlink the shared-memory files this process maps whose names start with ``prefixes``; the paths unlinked.

    Only the name goes: the memory stays while any process maps it, so ranks
    that use the segment go on unharmed.  A file is unlinked only if it is the
    very one mapped (same device and inode), never another job's of the same
    name; one already gone (another rank of the node was first) is skipped.
    """
    removed = []
    for path, device, inode in mapped_files(directory, prefixes):
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) == (device, inode):
                os.unlink(path)
                removed.append(path)
        except OSError:  # unlinked meanwhile by another rank of this node, or not this user's to unlink
            pass
    return removed


def fail_job(group, error) -> None:
    """This rank failed: print the error once (from this rank) and end every rank of the job.

    Ranks still in a collective cannot be told otherwise; mpiexec ends the
    job when one rank calls MPI_Abort.  The message is one line, as the CLI's
    user errors are.  MPI_Abort skips MPI_Finalize, which is where MPI unlinks
    its shared-memory files, so this rank unlinks those it maps first.
    """
    sys.stdout.flush()
    print(f"mgraph: rank {group.rank} of {group.size}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
    release_segments(JOB_SEGMENTS)
    group.abort()


def _install_abort_hook(group) -> None:
    """An exception that leaves a script on one rank ends the whole job instead of leaving the others waiting."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        fail_job(group, value)  # the error's one line last, where a reader of a long traceback looks

    sys.excepthook = hook

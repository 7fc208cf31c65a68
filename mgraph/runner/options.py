"""A run's options, checked once before any thread starts or any array is allocated.

:class:`RunOptions` is the one place where the run options are read, checked
and resolved: the backend (once), the devices (bounded by what can exist: a
graph of n vertices splits over at most n devices, and one process starts at
most :func:`thread_limit` worker threads), the partitioner, duplication,
communication, seed, workers, gather, output, the superstep bound and the CPU
threads.  A
mistake is a ValueError with a one-line message naming the option.
"""
from __future__ import annotations

import numbers
import resource
import threading

from mgraph import partitioners
from mgraph.backend import Backend, resolve
from mgraph.comm.plan import check_communication
from mgraph.graph import Graph
from mgraph.group import world
from mgraph.parts import subgraph
from mgraph.parts.partitioned import PartitionedGraph

RUN_OPTIONS = ("backend", "devices", "partitioner", "duplication", "communication", "seed", "workers", "gather",
               "output", "max_supersteps", "threads", "peer_levels", "peer_borders")
OUTPUTS = ("numpy", "device")
WORKERS = ("auto", "threads")

THREADS_MAX = 1024  # worker threads (CPU virtual devices, or partitions sharing GPUs) one process starts at most

# The default superstep bound of one source's run: SUPERSTEPS_PER_VERTEX * n + SUPERSTEPS_SLACK.  A traversal
# takes at most one superstep per vertex per phase (a path's BFS: n; SSSP's relax and tree walk, BC's forward and
# backward sweeps: 2n; k-core peels a vertex or moves up a level each superstep: 2n), plus a few to start and end
# phases; iterative primitives with their own limit (PageRank's max_iter) raise the bound to it.
SUPERSTEPS_PER_VERTEX = 4
SUPERSTEPS_SLACK = 1000


def default_max_supersteps(num_vertices: int) -> int:
    """The superstep bound of one source's run on a graph of ``num_vertices`` when the caller sets none."""
    return SUPERSTEPS_PER_VERTEX * int(num_vertices) + SUPERSTEPS_SLACK


def thread_limit() -> int:
    """How many worker threads one run in this process may start: THREADS_MAX, or fewer where the operating
    system's limit on this user's processes and threads (RLIMIT_NPROC, which counts threads) is lower."""
    limit = THREADS_MAX
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    except (AttributeError, ValueError, OSError):  # no such limit here
        return limit
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, max(int(soft) - threading.active_count(), 1))
    return limit


def _integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class RunOptions:
    """The checked options of one run on ``graph`` (a dict of the run options, as the public functions take them
    by keyword).  ``communication`` is the primitive's default communication; ``least_supersteps`` what one source's
    run of the primitive may legitimately take (PageRank's max_iter): the default bound is at least that.

    Attributes: ``graph`` (on the run's device where one device runs it), ``backends`` (this process's devices:
    one per worker thread, or this rank's), ``num_devices`` (all of the run's), ``world`` (the MPI group, or
    None), ``workers`` ("solo", "threads" or "mpi"), and each option by name.
    """

    def __init__(self, graph, run: dict, communication: str = "selective", *, least_supersteps: int = 0):
        unknown = sorted(set(run) - set(RUN_OPTIONS))
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}: run options are {', '.join(RUN_OPTIONS)}")
        if not isinstance(graph, (Graph, PartitionedGraph)):
            raise ValueError(f"expected an mgraph.Graph, got {type(graph).__name__}")
        for key in ("duplication", "communication", "workers"):
            # checked as strings first: a NumPy string array equals "selective" and would pass a comparison
            if key in run and not isinstance(run[key], str):
                raise ValueError(f"{key} must be a string, got {run[key]!r}")
        seed = run.get("seed", 0)
        if not _integer(seed):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.seed = int(seed)
        self.world = world()
        if isinstance(graph, PartitionedGraph) and (self.world is None or graph.group is not self.world):
            raise ValueError("a PartitionedGraph runs only in the MPI job that loaded it")
        workers = run.get("workers", "auto")
        if workers == "processes":
            raise ValueError("workers='processes' is gone: for one process per device start MPI ranks "
                             "(mpiexec -n P python script.py, or mpiexec -n P mgraph ...); see docs/distributed.md")
        if workers not in WORKERS:
            raise ValueError(f"unknown workers {workers!r}: expected one of {', '.join(WORKERS)}")
        self.partitioner = run.get("partitioner", "random")
        if not (isinstance(self.partitioner, str) or callable(self.partitioner)):
            raise ValueError(f"partitioner must be a name or a function (graph, num_parts, seed) -> owners, "
                             f"got {self.partitioner!r}")
        if not (callable(self.partitioner) or self.partitioner in partitioners.PARTITIONERS):
            raise ValueError(f"unknown partitioner {self.partitioner!r}: expected one of "
                             f"{', '.join(partitioners.PARTITIONERS)} or a function (graph, num_parts, seed) -> owners")
        self.duplication = run.get("duplication", "1-hop")
        if self.duplication not in subgraph.DUPLICATIONS:
            raise ValueError(f"unknown duplication {self.duplication!r}: expected one of "
                             f"{', '.join(subgraph.DUPLICATIONS)}")
        self.communication = check_communication(run.get("communication", communication))
        self.gather = run.get("gather", True)
        if not isinstance(self.gather, bool):
            raise ValueError(f"gather must be True or False, got {self.gather!r}")
        self.output = run.get("output", "numpy")
        if not isinstance(self.output, str) or self.output not in OUTPUTS:
            raise ValueError(f"unknown output {self.output!r}: expected 'numpy' (NumPy arrays on the host) or "
                             "'device' (arrays where the run's device keeps them: CuPy on a GPU)")
        self.max_supersteps = self._supersteps(run.get("max_supersteps"), graph.num_vertices, least_supersteps)
        self.peer_levels = run.get("peer_levels", True)
        if not isinstance(self.peer_levels, bool):
            raise ValueError(f"peer_levels must be True (a traversal's levels may run on the devices, exchanging "
                             f"through peer memory) or False (every level through the host), got {self.peer_levels!r}")
        self.peer_borders = run.get("peer_borders", True)
        if not isinstance(self.peer_borders, bool):
            raise ValueError(f"peer_borders must be True (fixed border lists may go device to device) or False "
                             f"(through the host), got {self.peer_borders!r}")
        ids, count = self._device_ids(run.get("devices", 1), graph.num_vertices)
        self.threads = self._threads(run.get("threads"))
        self.backends = self._backends(run.get("backend", "auto"), ids, count)
        if not self.backends[0].is_gpu:  # each worker thread's kernels take their share of the run's threads
            for b in self.backends:
                b.cpu_share = (self.threads, len(self.backends))
        self.workers = "mpi" if self.world is not None else "threads" if self.num_devices > 1 else "solo"
        self._graph = graph

    @property
    def graph(self):
        """The run's graph: on one device, the caller's Graph on that device (copied there on first use, then kept
        by the Graph); else as given (its parts are built from it)."""
        return self._graph.to(self.backends[0]) if self.workers == "solo" else self._graph

    @staticmethod
    def _threads(value):
        """The CPU threads of the run in this process (None: the default, ``NUMBA_NUM_THREADS`` where set, else this
        process's cores divided among the MPI ranks of its node), divided among its worker threads (devices=P: each
        device's kernels use threads // P, at least one); no more than numba's pool.  Ignored on a GPU."""
        if value is None:
            return None
        if not _integer(value) or value < 1:
            raise ValueError(f"threads must be a positive integer (or None: the default), got {value!r}")
        try:
            import numba
        except ImportError:  # no compiled kernels: the NumPy twins run on one thread
            return int(value)
        pool = numba.config.NUMBA_NUM_THREADS
        if value > pool:
            raise ValueError(f"threads={value} is more than numba's pool of {pool} (NUMBA_NUM_THREADS, set before "
                             "Python starts, enlarges it)")
        return int(value)

    @staticmethod
    def _supersteps(value, n, least):
        if value is None:
            return max(default_max_supersteps(n), int(least))
        if not _integer(value) or value < 1:
            raise ValueError(f"max_supersteps must be a positive integer (the supersteps one source's run may "
                             f"take), got {value!r}")
        return int(value)

    def _device_ids(self, devices, n):
        """(the device ids this process runs on, or None for "as many as ``count``"; ``count``), checked against
        what can exist before any list of them is made: a graph of ``n`` vertices splits over at most ``n``
        devices, and one process runs at most :func:`thread_limit` of them."""
        if isinstance(devices, (list, tuple)):
            if not devices:
                raise ValueError("devices is an empty list: give at least one GPU id")
            for d in devices:
                if not _integer(d) or d < 0:
                    raise ValueError(f"device ids must be non-negative integers, got {d!r}")
            count = len(devices)
        elif _integer(devices):
            if devices < 1:
                raise ValueError(f"devices must be >= 1, got {devices}")
            count = int(devices)
        else:
            raise ValueError(f"devices must be an int or a list of GPU ids, got {devices!r}")
        w = self.world
        if w is not None and not isinstance(devices, (list, tuple)) and devices not in (1, w.size):
            raise ValueError(f"devices={devices} in an MPI job of {w.size} ranks: each rank is one device, so "
                             f"start as many ranks as devices (mpiexec -n {devices} ...)")
        total = w.size if w is not None else count
        if total > 1 and total > n:
            what = f"an MPI job of {total} ranks" if w is not None else f"devices={total}"
            raise ValueError(f"{what} for a graph of {n} vertices: a graph splits over at most as many devices as "
                             f"it has vertices, so this one runs on at most {max(n, 1)}")
        if w is None and count > 1 and count > thread_limit():
            raise ValueError(f"devices={count}: one process runs each device in a worker thread and starts at most "
                             f"{thread_limit()}; for more devices start MPI ranks (mpiexec -n P ...)")
        if w is not None:  # this rank's device: a list indexed by the local rank
            return ([devices[w.local_rank % len(devices)]] if isinstance(devices, (list, tuple)) else None), 1
        return (list(devices) if isinstance(devices, (list, tuple)) else None), count

    def _backends(self, backend, ids, count):
        """One Backend per device of this process, the backend resolved once.  ``ids`` None: ``count`` devices
        0..count-1 (under MPI this rank's GPU: its local rank modulo the node's GPUs)."""
        base = resolve(backend)
        w = self.world
        if not base.is_gpu:  # NumPy: each entry is a virtual device of its own, even where ids repeat
            return [Backend("numpy", k) for k in range(count)]
        gpus = base.xp.cuda.runtime.getDeviceCount()
        if ids is None:
            ids = [w.local_rank % gpus] if w is not None else list(range(count))
        bad = [d for d in ids if d >= gpus]
        if bad:
            raise ValueError(f"GPU {bad[0]} does not exist: this machine has {gpus} GPU(s) (ids 0..{gpus - 1})")
        return [Backend(base.name, int(d)) for d in ids]

    @property
    def num_devices(self) -> int:
        return self.world.size if self.world is not None else len(self.backends)

    @property
    def group_rank(self) -> int:
        return 0 if self.world is None else self.world.rank

    def stats(self) -> dict:
        """The stats that describe where the run ran."""
        b = self.backends[0]
        out = {"backend": b.name, "device": b.device_name(), "devices": self.num_devices}
        if not b.is_gpu and self.threads is not None:
            out["threads"] = self.threads
        if self.num_devices > 1:
            name = self.partitioner if isinstance(self.partitioner, str) else getattr(self.partitioner, "__name__",
                                                                                       "callable")
            out.update(device_ids=[x.device for x in self.backends], partitioner=name,
                       duplication=self.duplication, communication=self.communication, workers=self.workers)
        return out

    def part_key(self):
        """What shapes a part (the part cache's key), or None where parts are not kept: a callable partitioner
        may partition differently each call."""
        if callable(self.partitioner):
            return None
        return (self.workers, self.num_devices, self.partitioner, self.seed, self.duplication, tuple(self.backends))

"""Where a run's devices work: what differs between one device, worker threads and MPI ranks.

The run path (:func:`mgraph.runner.launch.run`) is one sequence for all three;
a :class:`Workers` strategy supplies the steps that differ:

* :class:`Solo`: one device in this thread; the whole graph is the one part,
  its group of one (SoloGroup) and an exchange that sends nothing;
* :class:`Threads`: several devices of this process (``devices=P`` from a
  notebook), one worker thread each, each building its own part from slices
  of the graph and exchanging through memory or peer copies;
* :class:`Ranks`: one device per MPI rank (``mpiexec -n P``), each building
  only its own part from the graph's source and exchanging through MPI
  (NumPy) or NCCL (GPUs).

Each strategy holds this process's parts, devices and exchanges, and says
how a value of every device reaches the caller (``everyone``) and how the
results come together (``collect``).
"""
from __future__ import annotations

import contextlib
import socket
import time

import numpy as np

from mgraph.backend import PeakWatch
from mgraph.comm import borders, peer
from mgraph.comm.exchange import Exchange
from mgraph.comm.mpi import MpiTransport, NcclTransport, StagedTransport
from mgraph.comm.peer import NumpyLink, PeerLevels
from mgraph.comm.transport import LocalTransport
from mgraph.group import SoloGroup, ThreadGroup, fail_job
from mgraph.io.sources import GraphSource
from mgraph.parts import cache, subgraph
from mgraph.parts.build import Owners, build_part
from mgraph.parts.partitioned import PartitionedGraph
from mgraph.parts.proxyarcs import with_proxy_arcs
from mgraph.runner.enactor import drive, enact_devices, on_threads
from mgraph.runner.owners import owner_table, rank_owners


def workers_for(opts) -> "Workers":
    """The strategy of the run ``opts`` describes (mgraph.runner.options.RunOptions)."""
    return {"solo": Solo, "threads": Threads, "mpi": Ranks}[opts.workers](opts)


class Workers:
    """The steps of a run that differ by where its devices work, in the order the run path calls them."""

    def __init__(self, opts):
        self.opts = opts
        self.backends = opts.backends  # this process's devices
        self.part_set = None  # the parts' PartSet (mgraph.parts.cache) where parts were built
        self.reused = False
        self.peer_levels = None  # the devices' link for levels without the host (mgraph.comm.peer), where one serves
        self.borders = [None] * len(self.backends)  # each device's border link (mgraph.comm.borders), where one serves

    def guard(self):
        """A context that turns a failure on this process's devices into what the other devices must see."""
        return contextlib.nullcontext()

    def parts(self, proxy_arcs: bool) -> list:
        """This process's parts, one per device here, built or taken from the part cache; with proxies' arcs
        (triangles) where ``proxy_arcs``."""
        raise NotImplementedError

    def refusals(self, messages: list) -> list:
        """Every device's refusal messages (None: none), so that all devices refuse alike."""
        return messages

    def exchanges(self, parts, prims) -> list:
        """One Exchange per part, over this strategy's transport."""
        raise NotImplementedError

    def drive(self, prims, exchanges, sources, progress, max_supersteps):
        """Run the primitives in lockstep: (this process's devices' records, the clock of device 0, this process's
        devices' results)."""
        raise NotImplementedError

    def everyone(self, values: list) -> list:
        """One value per device of the run, in device order, from this process's ``values`` (one per device)."""
        return list(values)

    def total(self, value):
        """``value`` summed over the processes of the run."""
        return value

    def clock(self, clock):
        """Device 0's clock."""
        return clock

    def collect(self, parts, results, vertex_valued):
        """The result arrays in caller ids: whole arrays, or with ``gather=False`` also ``vertices`` and the
        arrays aligned with it (every vertex in one process; this rank's own vertices under MPI); under MPI None
        for each array off rank 0."""
        raise NotImplementedError

    def where(self) -> dict:
        """Stats that say where each device ran, beyond RunOptions.stats()."""
        return {}


def own_entries(part, a):
    """The own vertices' entries of per-vertex array ``a`` of ``part`` (a whole Graph or a SubGraph): a prefix
    where own vertices come first, else a gather."""
    below = part.own_below
    return a[:below] if below is not None else a[part.own_vertices]


class Solo(Workers):
    """One device in this thread: the whole graph is the one part."""

    def parts(self, proxy_arcs):
        return [self.opts.graph]

    def exchanges(self, parts, prims):
        return [Exchange(parts[0], 1, None, self.opts.communication)]

    def drive(self, prims, exchanges, sources, progress, max_supersteps):
        with self.backends[0].context():
            records, clock, results = drive(0, prims[0], exchanges[0], self.backends[0], SoloGroup(), sources,
                                            progress, max_supersteps)
        return [records], clock, [results]

    def collect(self, parts, results, vertex_valued):
        arrays = dict(results[0])  # where the device keeps them: deliver() copies them as the caller asked
        if not self.opts.gather:
            arrays["vertices"] = np.arange(parts[0].num_vertices, dtype=np.int64)
        return arrays


class Threads(Workers):
    """One worker thread per device of this process, each with its own part."""

    def parts(self, proxy_arcs):
        opts = self.opts
        self.part_set, self.reused = cache.parts_for(opts.graph, opts.part_key(), self._build)
        parts = self.part_set.parts
        if proxy_arcs:
            if "proxy_arcs" not in self.part_set.kept:
                self.part_set.kept["proxy_arcs"] = _in_threads(
                    self.backends, lambda d, group: with_proxy_arcs(parts[d], group), "proxy-arcs")
            parts = self.part_set.kept["proxy_arcs"]
        return parts

    def _build(self):
        opts, backends = self.opts, self.backends
        p = opts.num_devices
        t0 = time.perf_counter()
        table = owner_table(opts)
        t1 = time.perf_counter()

        def build(d, group):
            b = backends[d]
            with PeakWatch(b) as watch:
                owners = Owners(p, opts.seed, None if table is None else b.asarray(table))
                part = build_part(group, GraphSource(opts.graph), b, owners, opts.duplication)
                b.synchronize()
            return part, watch.bytes

        parts, peaks = (list(x) for x in zip(*_in_threads(backends, build, "build")))
        return parts, {"partition_s": t1 - t0, "subgraph_s": time.perf_counter() - t1, "build_peak_bytes": peaks}

    def exchanges(self, parts, prims):
        p = self.opts.num_devices
        shared = ThreadGroup.shared_state(p)
        self._groups = [ThreadGroup(shared, d) for d in range(p)]
        transport = LocalTransport(self.backends, shared["barrier"])
        self.peer_levels = peer_levels_for(parts, self.backends, self._groups, prims[0]) \
            if self.opts.peer_levels else None
        if self.peer_levels is not None:
            shared["on_abort"].append(self.peer_levels.abort)
            self.peer_levels.attach()  # before the exchanges' first phase, which arms each part's link
        # GPUs in threads keep the host's path: a worker's host read (a primitive's float()) can hold the
        # interpreter while its stream waits on the device for a peer's post, which the peer's thread could then
        # never launch (the levels link polls events instead of reading for this reason)
        links = borders.thread_links(parts, self._groups) \
            if _wants_borders(self.opts, parts, prims) and not self.backends[0].is_gpu else None
        self.borders = links or [None] * p
        return [Exchange(part, p, transport, self.opts.communication, link) for part, link in zip(parts, self.borders)]

    def drive(self, prims, exchanges, sources, progress, max_supersteps):
        try:
            return enact_devices(prims, exchanges, self.backends, self._groups, sources, progress, max_supersteps)
        finally:
            if self.peer_levels is not None:
                self.peer_levels.detach()
                self.peer_levels.close()

    def where(self):
        """Which path a traversal's levels took between the devices: fused on the devices through peer memory
        (``peer_levels``: how many levels ran so, on every device alike), or the host-driven exchange only; and
        which path fixed border lists took (``border_path``)."""
        links = self.peer_levels.links if self.peer_levels is not None else ()
        return {"peer_levels": links[0].levels_run if links else 0,
                "level_path": "peer" if links and links[0].levels_run else "host",
                "peer_bytes": [link.bytes for link in links] if links else [0] * len(self.backends),
                **_border_stats([link.hops if link else 0 for link in self.borders],
                                [link.bytes if link else 0 for link in self.borders])}

    def collect(self, parts, results, vertex_valued):
        pieces = []
        for part, b, arrays in zip(parts, self.backends, results):
            with b.context():
                pieces.append(part.own_values(arrays, vertex_valued))
        n = self.opts.graph.num_vertices
        arrays = subgraph.assemble(pieces, n)
        if not self.opts.gather:
            arrays["vertices"] = np.arange(n, dtype=np.int64)
        return arrays


class Ranks(Workers):
    """This MPI rank's device, in lockstep with the other ranks of the job."""

    def __init__(self, opts):
        super().__init__(opts)
        self.group = opts.world
        self._transport = None  # set with the exchanges: NCCL's also gathers the results (collect)

    def guard(self):
        return _rank_failures(self.group)

    def parts(self, proxy_arcs):
        opts, group = self.opts, self.group
        with self.backends[0].context():
            self.part_set, self.reused = cache.parts_for(opts.graph, opts.part_key(), self._build)
            part = self.part_set.parts[0]
            if proxy_arcs:
                if "proxy_arcs" not in self.part_set.kept:
                    self.part_set.kept["proxy_arcs"] = with_proxy_arcs(part, group)
                part = self.part_set.kept["proxy_arcs"]
        return [part]

    def _build(self):
        """This rank's part, built from the graph's source on its device."""
        opts, group, backend = self.opts, self.group, self.backends[0]
        move = device_move(group, backend)
        with PeakWatch(backend) as watch:
            t0 = time.perf_counter()
            owners = rank_owners(opts, group, backend, move)
            t1 = time.perf_counter()
            graph = opts.graph
            source = graph.source if isinstance(graph, PartitionedGraph) else GraphSource(graph)
            part = build_part(group, source, backend, owners, opts.duplication, progress=True, move=move)
            backend.synchronize()
        info = {"partition_s": t1 - t0, "subgraph_s": time.perf_counter() - t1, "build_peak_bytes": [watch.bytes]}
        part.build_info = dict(info, build_peak_bytes=watch.bytes)  # what `mgraph info` reports of a rank's part
        return [part], info

    def refusals(self, messages):
        return [m for ms in self.group.allgather(messages) for m in ms]

    def exchanges(self, parts, prims):
        with self.backends[0].context():  # an NCCL communicator is set up on the current device
            transport = self._transport = rank_transport(self.group, self.backends[0])
        self.peer_levels = rank_levels_for(parts[0], self.backends[0], self.group, prims[0]) \
            if self.opts.peer_levels else None
        if self.peer_levels is not None:
            self.peer_levels.attach()
        link = rank_borders_for(parts[0], self.backends[0], self.group) \
            if _wants_borders(self.opts, parts, prims) else None
        self.borders = [link]
        return [Exchange(parts[0], self.opts.num_devices, transport, self.opts.communication, link)]

    def drive(self, prims, exchanges, sources, progress, max_supersteps):
        rank = self.group.rank
        try:
            with self.backends[0].context():
                records, clock, results = drive(rank, prims[0], exchanges[0], self.backends[0], self.group, sources,
                                                progress if rank == 0 else None, max_supersteps)
        finally:
            if self.peer_levels is not None:
                self.peer_levels.detach()
        if self.peer_levels is not None:  # after a failure the job ends, and the peers' memory with it
            self.peer_levels.close()
        if self.borders[0] is not None:
            with self.backends[0].context():
                self.borders[0].close()
        return [records], clock, [results]

    def everyone(self, values):
        return [v for vs in self.group.allgather(list(values)) for v in vs]

    def total(self, value):
        return self.group.allreduce(value, "sum")

    def clock(self, clock):
        return self.group.bcast(clock, root=0)

    def collect(self, parts, results, vertex_valued):
        part, group = parts[0], self.group
        if self.opts.gather and self._transport is not None and self._transport.gathers_on_device:
            gathered = self._collect_on_devices(part, results[0], vertex_valued)
            if gathered is not None:
                return gathered
        with self.backends[0].context():
            ids, arrays = part.own_values(results[0], vertex_valued)
        if not self.opts.gather:
            return dict(arrays, vertices=ids.copy())
        kept = self.part_set.kept
        if "gathered_ids" not in kept:  # the ranks' own caller ids are the same every run of a part: gathered once
            kept["gathered_ids"] = group.gatherv(ids.astype(np.int64))  # every rank alike: all reuse or all gather
        all_ids = kept["gathered_ids"]
        pieces = {name: group.gatherv(values) for name, values in sorted(arrays.items())}
        if all_ids is None:
            return dict.fromkeys(arrays)  # the names, so that every rank's Result has the same fields
        return subgraph.assemble([(all_ids[k], {name: pieces[name][k] for name in pieces})
                                  for k in range(group.size)], self.opts.graph.num_vertices)

    def _collect_on_devices(self, part, results, vertex_valued):
        """The results gathered GPU to GPU (NCCL) and placed on rank 0's GPU, where one scatter per array makes
        the whole arrays (the caller's copy to the host, if any, is then one per array); None on every rank where
        rank 0's GPU has no room for them, and the host gathers instead.  Collective."""
        import cupy

        group, backend, n = self.group, self.backends[0], self.opts.graph.num_vertices
        with backend.context():
            mine = {name: part.to_global(part.own(a)) if name in vertex_valued else part.own(a)
                    for name, a in sorted(results.items())}
            room = True
            if group.rank == 0:  # the whole arrays, and room for the gathered ids and values (freed to the pool,
                try:               # which the gathers then take), before any transfer
                    out = {name: cupy.empty(n, dtype=a.dtype) for name, a in mine.items()}
                    cupy.empty(2 * n, dtype=np.int64)  # freed at once: the pool keeps it for the gathers
                except cupy.cuda.memory.OutOfMemoryError:
                    out, room = None, False
            if not all(group.allgather(room)):
                return None
            all_ids = self._transport.gatherv(part.own(part.vertex_ids).astype(np.int64, copy=False))
            for name, values in mine.items():
                values = self._transport.gatherv(values)
                if group.rank == 0:
                    out[name][all_ids] = values
        return out if group.rank == 0 else dict.fromkeys(mine)

    def where(self):
        link = self.peer_levels.links[0] if self.peer_levels is not None else None
        levels = link.levels_run if link is not None else 0
        return {"hosts": self.everyone([socket.gethostname()]),
                "device_ids": self.everyone([b.device for b in self.backends]),
                "peer_levels": levels, "level_path": "peer" if levels else "host",
                "peer_bytes": self.everyone([link.bytes if link is not None else 0]),
                **_border_stats(self.everyone([b.hops if b else 0 for b in self.borders]),
                                self.everyone([b.bytes if b else 0 for b in self.borders]))}


@contextlib.contextmanager
def _rank_failures(group):
    """A ValueError (a user's mistake, found by every rank alike) is raised as it is; where only this rank raises,
    the CLI (Group.all_failing) and the script's exception hook (mgraph.group) end the job.  Any other failure
    ends the job at once: the other ranks wait in a collective."""
    try:
        yield
    except ValueError:
        raise
    except BaseException as e:  # noqa: BLE001 - ends the job, then goes on up
        fail_job(group, e)
        raise


_TRANSPORTS = {}


def rank_transport(group, backend):
    """This rank's transport, one per job and device, kept: an NCCL communicator takes long to set up.  NCCL
    allows one rank per GPU; where ranks share one (several ranks on a one-GPU machine) the packages go through
    the host.  Collective on a GPU the first time."""
    key = (id(group), backend)
    if key not in _TRANSPORTS:
        if not backend.is_gpu:
            _TRANSPORTS[key] = MpiTransport(group)
        else:
            gpus = group.allgather((socket.gethostname(), backend.device))
            shared = len(set(gpus)) < len(gpus)
            _TRANSPORTS[key] = StagedTransport(group) if shared else NcclTransport(group)
    return _TRANSPORTS[key]


def device_move(group, backend):
    """The all-to-all that routes a GPU rank's arcs while its part is built: NCCL's, device to device, where the
    ranks' transport is NCCL; None (through the host) elsewhere.  Collective: it may set up the transport."""
    if not backend.is_gpu:
        return None
    return getattr(rank_transport(group, backend), "alltoallv", None)


def _in_threads(backends, work, what):
    """``work(d, group)`` for every device d at once, one thread each (a collective step over a ThreadGroup); the
    results in device order, or the first worker's error (a failing worker breaks the others' barrier)."""
    shared = ThreadGroup.shared_state(len(backends))

    def failed(d, e):
        shared["barrier"].abort()
        return e

    return on_threads(backends, lambda d: work(d, ThreadGroup(shared, d)), what, failed)


def peer_levels_for(parts, backends, groups, prim):
    """The link that lets the devices of this process run a traversal's levels without the host
    (mgraph.comm.peer) for ``parts`` (one per device of ``backends``), or None where it cannot: other layouts
    than 1-hop, GPUs that cannot reach each other's memory or have no room left for the link's buffers, or a graph
    with hubs (gated: its levels agree on each frontier's arcs first) and a primitive that cannot be a push visit
    (``peer.may_serve``)."""
    if len(parts) < 2 or any(part.id_on is None or part.caller_ids is None for part in parts):
        return None
    gated = False
    for part, b in zip(parts, backends):
        with b.context():  # each part read on its own device
            gated = gated or peer.has_hubs(part)
    if gated and not peer.may_serve(prim):
        return None
    if not backends[0].is_gpu:
        return PeerLevels(parts, backends, NumpyLink, groups, gated=gated)
    directions = peer.runs_directions(prim)
    from mgraph.comm import cupy_peer

    if len(parts) > cupy_peer.MAX_PEERS or not cupy_peer.reachable([b.device for b in backends]):
        return None
    try:
        return PeerLevels(parts, backends, cupy_peer.CupyLink, gated=gated, directions=directions)
    except cupy_peer.ALLOCATION_ERRORS:  # parts that fill their GPUs leave no room for the link's buffers (nothing
        return None  # runs on them yet, so the collector may free those made): the host's path


def _wants_borders(opts, parts, prims) -> bool:
    """Whether a run may send fixed border lists through a border link (mgraph.comm.borders): several 1-hop parts
    and a primitive whose every own vertex changes every superstep, exchanged selectively (its copies then take
    fixed lists), unless the run keeps them on the host (``peer_borders=False``)."""
    return (opts.peer_borders and opts.num_devices > 1 and opts.communication == "selective"
            and bool(getattr(prims[0], "every_own_vertex", False))
            and all(part.id_on is not None for part in parts))


def _border_stats(hops, sent) -> dict:
    """``border_path``: "peer" where fixed border lists went through the border link, else "host"; with each
    device's hops and bytes on it."""
    return {"border_path": "peer" if any(hops) else "host", "border_hops": hops, "border_bytes": sent}


def rank_borders_for(part, backend, group):
    """This rank's border link (mgraph.comm.borders): the NumPy twin through the ranks' collectives on CPUs; on
    GPUs, IPC between ranks of one node on GPUs of their own that reach each other (mgraph.comm.cupy_borders);
    else None.  Collective: every rank decides alike."""
    with backend.context():
        lists, blocks, ok = borders.rank_layout(part, group)
    if not ok:
        return None
    if not backend.is_gpu:
        return borders.NumpyBorders(part, group.rank, group.size, lists, blocks, group)
    if getattr(group, "local_size", None) != group.size:
        return None
    from mgraph.comm import cupy_borders, cupy_peer

    devices = group.allgather(backend.device)
    if not (len(set(devices)) == len(devices) and cupy_peer.reachable(devices)):
        return None
    with backend.context():
        link = cupy_borders.CupyBorders(part, group.rank, group.size, lists, blocks, group)
    return link if link.ok else None


def rank_levels_for(part, backend, group, prim):
    """This rank's link to the other ranks' devices (mgraph.comm.cupy_peer.RankLevels on GPUs, the NumPy twin's on
    CPUs), or None where the ranks take the host's path: GPU ranks on several nodes or sharing a GPU, GPUs that
    cannot reach each other or where some rank has no room left for the link's buffers, other layouts than 1-hop,
    or a graph with hubs (gated) and a primitive that cannot be a push visit.  Collective: every rank decides
    alike."""
    if group.size < 2:
        return None
    with backend.context():
        fits = part.id_on is not None and part.caller_ids is not None
        hubs = fits and peer.has_hubs(part)
    rows = group.allgather((fits, hubs))
    fits, gated = all(f for f, _ in rows), any(h for _, h in rows)
    if not fits or (gated and not peer.may_serve(prim)):
        return None
    if not backend.is_gpu:  # the NumPy twin, through the ranks' collectives: any nodes
        return PeerLevels([part], [backend], NumpyLink, [group], index=group.rank, gated=gated)
    if getattr(group, "local_size", None) != group.size:
        return None
    from mgraph.comm import cupy_peer

    devices = group.allgather(backend.device)
    ok = group.size <= cupy_peer.MAX_PEERS and cupy_peer.reachable(devices)
    if not all(group.allgather(ok)):
        return None
    levels = cupy_peer.RankLevels(part, backend, group, gated, peer.runs_directions(prim))
    return levels if levels.ok else None

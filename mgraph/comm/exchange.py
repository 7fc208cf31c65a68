"""The communication layer: split a device's new frontier, package it with the primitive's values, push, combine.

One :class:`Exchange` per device.  Per superstep, :meth:`Exchange.run`:

1. *split*: the frontier's vertices owned elsewhere (``selective``: each goes
   only to its owner) or the whole frontier (``broadcast``: to every device);
2. *package*: their ids (the receiver's local ids when the sender knows them,
   else caller ids) with the primitive's ``combine`` values, and its ``carry``
   values (vertex-valued ones in caller ids) where the receiver may own some
   of the vertices: carried values are read only on a vertex's owner (results
   are gathered from the owners), so a copy never needs them.  Values the
   primitive implies for every frontier vertex (``frontier_values``, BFS's
   level) do not travel; a large broadcast frontier with no other values goes
   as bits: of the block of copies a receiver keeps of the sender's vertices
   (1-hop, a frontier of own vertices), else of the whole graph;
3. *push* through the transport, which returns what arrived once every
   device has sent; *combine* it (in sender order, so results do not depend
   on thread timing);
4. ``selective`` with a primitive that ``reads_proxies``: the owners push the
   combined values of their changed vertices (no carried ones) to the devices
   that hold copies, which take them as they are.  Where ``reads_proxies``
   turns on after supersteps without it (SSSP's tree walk after its relax
   phase), every owner first sends the values its vertices changed to meanwhile
   (the arrays those supersteps combined), once, so copies agree again.

The new frontier is the device's own output plus every vertex whose value
changed by what arrived.  Which of these steps apply, what a package holds and
whether a merge dedupes are decided once per phase (:mod:`mgraph.comm.plan`).
Where the run has a border link (:mod:`mgraph.comm.borders`), a primitive whose
every own vertex changed sends its fixed border lists through it instead of
steps 1-4: the values alone, device to device, with no host handshake.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from mgraph import ops
from mgraph.comm import kernels
from mgraph.backend import allocation_error
from mgraph.comm.plan import (COMMUNICATIONS, HOLDERS_BORDERS, HOLDERS_BY_OWNER, HOLDERS_OWN_FIRST, TO_EVERY_PEER, TO_NOBODY, Plan,
                   plan as plan_of)
from mgraph.comm.transport import LocalTransport, Transport

NO_START = object()  # Exchange.run's start where the frontier is not a reset's
COMBINES = ("min", "max", "sum")  # or a function (local values, received values) -> combined values
__all__ = ["COMBINES", "COMMUNICATIONS", "Exchange", "LocalTransport", "Plan", "Transport"]


class _Hop(NamedTuple):
    """What a hop combines: the phase's plan and the values the primitive implies for this superstep's frontier
    (``frontier_values``), or for the catch-up hop its own combines (assign) with nothing implied."""

    combines: dict
    carry: tuple
    implied: dict
    dedupe: bool


class Exchange:
    """Split, package, push and combine for one device (``sub``, a SubGraph) of a run.

    :meth:`begin_phase` derives the phase's :class:`~mgraph.comm.plan.Plan`
    from the primitive's declarations; :meth:`run` follows it every superstep.
    Per hop the host reads only what sizes the packages (one count per peer)
    and the merged frontier's length; each received package is combined and
    merged in one pass (kernels.combine_merge), which dedupes with a scratch
    bitmap instead of a sort, or not at all where no vertex can repeat.
    """

    def __init__(self, sub, num_devices, transport, communication, borders=None):
        """``communication`` is a checked run option (mgraph.comm.plan.check_communication); ``borders``: the
        device's end of the run's border link (mgraph.comm.borders), where fixed border lists may go without the
        host."""
        self.sub, self.me, self.p = sub, sub.index, num_devices
        self.transport, self.communication = transport, communication
        self.borders = borders
        self.peers = [k for k in range(num_devices) if k != self.me]
        self.plan = None  # the current phase's (begin_phase)
        self._seen = None  # the merge's scratch bitmap, allocated on first use
        self._stale = ()  # arrays combined while copies were not kept current (Plan.track_stale)
        self._dirty = None  # meanwhile, per vertex: whether it was in a merged frontier (its values may have changed)
        self._border = None  # per peer, the own vertices it holds copies of (see _borders)
        self._border_ids = {}  # per sender, the ids here of its fixed border list: they travel once per phase
        self._borders_sent = False  # this device's border lists' ids went out in this phase
        self.own_count = None  # own vertices in the last frontier run() returned, where known without another read

    def begin_phase(self, prim) -> Plan | None:
        """Derive the exchange of the phase ``prim`` has just begun (reset or next_phase returned its first
        frontier); None with one device, which exchanges nothing."""
        self.plan = plan_of(prim, self.sub, self.p, self.communication) if self.p > 1 else None
        self._border_ids, self._borders_sent = {}, False
        link = getattr(self.sub, "levels_link", None)
        if link is not None:  # levels across devices (mgraph.comm.peer) stand in for this plan where they can
            link.arm(prim, self.plan)
        return self.plan

    # -- one superstep --------------------------------------------------------------------------------
    def run(self, prim, frontier, stats: dict, start=NO_START):
        """Exchange ``frontier`` (the primitive's output); the next frontier.  Adds timings and bytes to ``stats``.
        ``start``: after a reset, this part's id of the run's source (None: not here), which every device holding
        the vertex was handed; a frontier that only starts there is not sent (:meth:`_started`)."""
        if self.p == 1:  # one device: nothing to send, every vertex its own (a Queue's count is the device's)
            self.own_count = None if isinstance(frontier, ops.Queue) and not frontier.known else len(frontier)
            return frontier
        link = getattr(self.sub, "levels_link", None)
        if link is not None and link.exchanged is frontier:
            self.own_count = None  # a visit across the devices sent and combined it already (mgraph.comm.peer)
            return frontier
        frontier = ops.plain(frontier)
        plan = self.plan if self.plan is not None else self.begin_phase(prim)
        if self.borders is not None:
            self.borders.check()  # a hop queued at the last superstep, whose wait the device has since passed
            if plan.hop0 == TO_NOBODY and plan.holders == HOLDERS_BORDERS and not self._stale \
                    and self.borders.serves(prim, plan.fields):
                return self._through_borders(prim, frontier, plan, stats)
        hop = _Hop(plan.combines, plan.carry, prim.frontier_values(), plan.dedupe)
        if start is not NO_START and self._started(frontier, start, plan):
            return self._keep_start(prim, frontier, start, plan, hop, stats)
        if plan.holders and self._stale:
            self._catch_up(prim, stats)
        t = time.perf_counter()
        self.own_count = None
        try:
            packages = self._outgoing(prim, plan, frontier)
        except MemoryError as e:
            raise allocation_error(e, f"the packages of a {len(frontier):,}-vertex frontier for its peers")
        frontier, marked = self._push_and_combine(prim, frontier, packages, hop, stats, t, tag=0,
                                                  keep=plan.holders is not None)
        if plan.track_stale:
            self._note_stale(frontier, plan.combines)
        if plan.holders:
            t = time.perf_counter()
            try:
                packages = self._to_holders(prim, plan.holders, frontier, plan.fields)
            except MemoryError as e:
                raise allocation_error(e, "the packages of its changed vertices for the devices holding copies")
            frontier, _ = self._push_and_combine(prim, frontier, packages, hop, stats, t, tag=1, marked=marked)
        return frontier

    def _started(self, frontier, start, plan) -> bool:
        """Whether ``frontier`` is the run's start (``ops.start_at`` from ``start``) with values that combine by min
        or max: every device holding the vertex made the same start, so what it would send changes nothing where it
        arrives (a sum would count the start once per copy)."""
        return ops.started_at(self.sub, frontier, start) and not plan.function \
            and all(op in ("min", "max") for op in plan.combines.values())

    def _keep_start(self, prim, frontier, start, plan, hop, stats):
        """The hops of a run's start with nothing of this device's in them: the transport still runs (a device whose
        primitive started elsewhere sends its frontier as usual, merged here as it arrives), and the frontier stays:
        no split, packages or merges for copies their receivers already hold."""
        t = time.perf_counter()
        sub = self.sub
        if start is None:
            self.own_count = 0
        elif sub.own_below is not None:  # 1-hop: own vertices come first
            self.own_count = int(start < sub.own_below)
        else:
            self.own_count = None  # read by whoever needs it
        frontier, _ = self._push_and_combine(prim, frontier, [], hop, stats, t, tag=0)
        if plan.track_stale:
            self._note_stale(frontier, plan.combines)
        if plan.holders:
            frontier, _ = self._push_and_combine(prim, frontier, [], hop, stats, time.perf_counter(), tag=1)
        return frontier

    def _through_borders(self, prim, frontier, plan, stats):
        """The fixed border lists of a primitive whose every own vertex changed, through the border link: the
        values written into each peer's block of copies, and this device's taken from its peers, with no host
        handshake (one all-to-all for the NumPy twin).  The frontier stays the own vertices."""
        t = time.perf_counter()
        self.own_count = len(frontier)
        stats["bytes"] += self.borders.exchange(prim, plan.fields)
        stats["push_s"] += time.perf_counter() - t
        return frontier

    def check(self):
        """At a run's end, once the device's stream has been waited for: raise what failed in its last hops."""
        if self.borders is not None:
            self.borders.check()

    def _outgoing(self, prim, plan, frontier):
        """Hop 0's packages: [(peer, package)] of the primitive's output ``frontier``; sets ``own_count`` where
        known without a read of its own (the split's counts, a broadcast's check that every vertex is its own)."""
        if plan.hop0 == TO_EVERY_PEER:
            return self._broadcast(prim, plan, frontier)
        if plan.hop0 == TO_NOBODY:  # every own vertex (PageRank): nothing for an owner
            self.own_count = len(frontier)
            return []
        if not len(frontier):
            self.own_count = 0
        return self._split(prim, frontier, plan.fields + plan.carry)

    def _to_holders(self, prim, holders, frontier, fields):
        """Hop 1's packages: the values ``fields`` of the own vertices of ``frontier`` for the devices holding
        copies, found as ``holders`` (a Plan's HOLDERS_*) says."""
        if holders == HOLDERS_BORDERS:  # every own vertex changed (PageRank): the fixed border lists, whose ids
            # travel in a phase's first superstep only (each receiver keeps them: _unpack)
            packages = [(k, self._package(prim, vertices, ids, fields)) for k, vertices, ids in self._borders()]
            if self._borders_sent:
                for _, package in packages:
                    del package["ids"]
            self._borders_sent = True
            return packages
        sub = self.sub
        if holders == HOLDERS_OWN_FIRST:  # 1-hop: own vertices come first, picked in the holders' selection
            return [(k, self._package(prim, vertices, ids, fields))
                    for k, vertices, ids in self._holders(frontier, sub.own_below)]
        mine = frontier[sub.owner[frontier] == self.me]
        return [(k, self._package(prim, vertices, ids, fields)) for k, vertices, ids in self._holders(mine)]

    def _note_stale(self, frontier, combines):
        """A superstep that left copies stale: remember the arrays it combined and the vertices whose values it
        may have changed (every change, made here or arriving, put its vertex in the merged ``frontier``)."""
        self._stale += tuple(name for name in combines if name not in self._stale)
        if self._dirty is None:
            self._dirty = self.sub.xp.zeros(self.sub.num_vertices, dtype=bool)
        self._dirty[frontier] = True

    def _catch_up(self, prim, stats):
        """Copies were let go stale: every owner sends the values of its vertices that changed meanwhile (the
        arrays combined meanwhile) to the devices holding copies, which take them without joining a frontier (one
        hop, tag 1, merged into an empty frontier and the result dropped)."""
        t = time.perf_counter()
        changed = self.sub.xp.flatnonzero(self._dirty)
        self._dirty[changed] = False
        holders = HOLDERS_OWN_FIRST if self.sub.id_on is not None else HOLDERS_BY_OWNER
        try:
            packages = self._to_holders(prim, holders, changed, self._stale)
        except MemoryError as e:
            raise allocation_error(e, "the packages that bring the copies of its vertices up to date")
        self.own_count = 0  # of the empty frontier: each copy arrives from its one owner, so nothing repeats
        hop = _Hop(dict.fromkeys(self._stale, "assign"), (), {}, False)
        self._push_and_combine(prim, self.sub.own_vertices[:0], packages, hop, stats, t, tag=1)
        self._stale = ()

    def _push_and_combine(self, prim, frontier, packages, hop, stats, t0, tag, keep=False, marked=False):
        """Hop ``tag``: 0 combines what arrives, 1 (owners to holders) takes it as it is.  Returns the merged
        frontier and whether its bits are left set in the scratch bitmap (``keep``: for the superstep's next hop,
        which passes ``marked``)."""
        t1 = time.perf_counter()
        try:
            stats["bytes"] += self.transport.send(self.me, packages, tag)
            t2 = time.perf_counter()
            received = self.transport.receive(self.me, tag)  # waits for every device's send
        except MemoryError as e:
            raise allocation_error(e, "the buffers for what its peers send")
        t3 = time.perf_counter()
        # hop 1 brings owners' values to copies, each from its one owner: a vertex repeats only where the frontier
        # holds copies (own_count, when known, says it holds own vertices only)
        repeats = hop.dedupe and (tag == 0 or self.own_count is None or self.own_count < len(frontier))
        try:
            frontier, marked = self._merge(prim, frontier, received, hop, assign=tag == 1, repeats=repeats,
                                           keep=keep, marked=marked)
        except MemoryError as e:
            raise allocation_error(e, f"the merged frontier ({len(frontier):,} vertices and what arrived)")
        t4 = time.perf_counter()
        stats["package_s"] += t1 - t0
        stats["push_s"] += t2 - t1
        stats["wait_s"] += t3 - t2
        stats["combine_s"] += t4 - t3
        return frontier, marked

    # -- split and package ----------------------------------------------------------------------------
    def _fields(self, prim, names):
        """The arrays ``names`` of the primitive, and for each the table to caller ids where it holds vertex ids."""
        table = self.sub.caller_ids
        return ([getattr(prim, name) for name in names],
                [table if name in prim.vertex_valued else None for name in names])

    def _package(self, prim, vertices, ids, names):
        """{"ids": ids, name: the array ``name`` at ``vertices`` (vertex-valued ones in caller ids)}: one gather."""
        return _named(ids, names, kernels.gather(vertices, *self._fields(prim, names)))

    def _broadcast(self, prim, plan, frontier):
        """Hop 0's packages of a broadcast: the whole frontier for every peer, as a list of caller ids with the
        values that travel, or as bits where the plan allows it (no value travels) and the bits are fewer bytes.
        A frontier of own vertices goes to each peer as bits of the block of copies the peer keeps of them
        (1-hop), anything else as bits of the whole graph."""
        sub = self.sub
        if not len(frontier):
            return []
        bits, carry, all_own = plan.as_bits, plan.carry, None
        if carry or (bits and sub.id_on is not None):
            self.own_count = sub.count_own(frontier)  # one host read; also the merged frontier's where nothing arrives
            all_own = self.own_count == len(frontier)
        sent = carry if carry and not all_own else ()  # carried values go only where a peer may own some
        bits = bits and not sent
        listed = len(frontier) * (sub.caller_ids if sub.caller_ids is not None else frontier).dtype.itemsize
        packages, shared = [], None
        for k in self.peers:
            if bits and all_own and sub.id_on is not None:
                first, held = sub.copies_on(k)
                if listed > held / 8:
                    if held:  # else k keeps none of them
                        packages.append((k, {"block": ops.bitmap(frontier, held, sub.id_on[k], first)}))
                    continue
            if shared is None:
                ids = sub.to_global(frontier)
                shared = ({"bits": ops.bitmap(ids, sub.num_global)} if bits and listed > sub.num_global / 8
                          else self._package(prim, frontier, ids, plan.fields + sent))
            packages.append((k, shared))
        return packages

    def _split(self, prim, vertices, names):
        """Package ``vertices`` for their owners (this device's own are kept): a pass to count and one to group them
        by owner, one read of the counts, and one gather writing every package (ids on the receiver, values); on
        the GPU a frontier of one tile takes one launch for all three before the read."""
        if not len(vertices):
            return []
        sub = self.sub
        counts, packed = kernels.split(vertices, sub.owner, self.me, self.p, *self._fields(prim, names), sub.id_on)
        self.own_count = counts[self.me]
        return [(k, _named(ids, names, values)) for k, (ids, values) in packed.items()]

    def _holders(self, mine, below=None):
        """Per peer holding copies of some of ``mine`` (own vertices; with ``below``, those of ``mine`` below it):
        (peer, those vertices, their ids there)."""
        sub, out = self.sub, []
        if not len(mine):
            return out
        if sub.id_on is None:  # duplicate-all: every peer holds every vertex under the same id
            return [(k, mine, mine) for k in self.peers]
        for k in self.peers:
            vertices, ids = kernels.select_mapped(mine, sub.id_on[k], below)  # one compaction, one host read
            if len(vertices):
                out.append((k, vertices, ids))
        return out

    def _borders(self):
        """:meth:`_holders` of every own vertex, built on first use and then kept."""
        if self._border is None:
            self._border = self._holders(self.sub.own_vertices)
        return self._border

    # -- combine --------------------------------------------------------------------------------------
    def _unpack(self, prim, src, package, hop, assign):
        """A received package (from device ``src``) as kernels.combine_merge takes it: (ids, table to local ids or None,
        fields, carried)."""
        sub, combines, carry, implied = self.sub, hop.combines, hop.carry, hop.implied
        to_local = None
        if "block" in package:  # a broadcast frontier as bits of the block of src's vertices kept here
            package = {"ids": ops.Bits(package["block"], sub.copies_of(src))}
        elif self.plan.holders == HOLDERS_BORDERS and assign:  # a fixed border list: its ids came with the phase's
            if "ids" in package:  # first one (and with any catch-up, which the first border list then replaces)
                self._border_ids[src] = package["ids"]
            else:
                package = dict(package, ids=self._border_ids[src])
        else:
            if "bits" in package:  # a broadcast frontier as bits of the whole graph
                package = {"ids": ops.Bits(package["bits"])}
            if self.plan.caller_ids:  # a broadcast on 1-hop parts: keep what is here
                to_local = sub.global_to_local
        ids = package["ids"]
        if to_local is not None and self.plan.function:
            ids, to_local = sub.to_local(ids), None  # a function sees only values of vertices that are here
            keep = sub.xp.flatnonzero(ids >= 0)  # one compaction (one host read) for every array
            package = {k: v[keep] for k, v in package.items()}
            ids = ids[keep]
        fields = []
        for name, op in combines.items():
            array = getattr(prim, name)
            values = package[name] if name in package else implied[name]  # not sent: one value for every entry
            if assign:
                op = "assign"
            elif callable(op):  # a primitive's own combine: what it returns is stored where it differs
                if np.ndim(values) == 0:
                    values = sub.xp.full(len(ids), values, dtype=array.dtype)
                values, op = op(array[ids], values), "assign"
            fields.append((array, op, values))
        table = sub.global_to_local
        carried = [(getattr(prim, name), package[name], table if name in prim.vertex_valued else None)
                   for name in carry if name in package]  # sent only where the receiver may own one
        return ids, to_local, fields, carried

    def _merge(self, prim, frontier, received, hop, assign, repeats, keep, marked):
        """Combine what arrived and merge the changed vertices into the frontier, each once (a bit per vertex
        instead of a sort, where ``repeats`` says a vertex may arrive twice or be in the frontier already).
        ``marked``: the frontier's bits are set in the scratch bitmap (the superstep's previous hop kept them);
        ``keep``: leave the merged frontier's bits set for the superstep's next hop, which then marks only what it
        appends (a superstep of two hops, BC's or SSSP's tree walk, marks its frontier once).  Returns the merged
        frontier and whether its bits are left set."""
        if marked and not (received and repeats):  # this merge does not use them: clear
            kernels.unmark(frontier, self._seen)
            marked = False
        if not received:
            return frontier, False
        if assign and self.plan.holders == HOLDERS_BORDERS:
            return self._take_borders(prim, frontier, received, hop), False
        sub = self.sub
        if self._seen is None and repeats:
            self._seen = ops.bitmap(frontier[:0], sub.num_vertices)
        packages = [self._unpack(prim, src, package, hop, assign) for src, package in received]
        keep = keep and repeats
        merged, self.own_count = kernels.combine_merge(frontier, packages, self._seen if repeats else None, sub.owner,
                                                       self.me, sub.own_below, marked, keep)
        return merged, keep


    def _take_borders(self, prim, frontier, received, hop):
        """Copies take their owners' values over the fixed border lists of a primitive whose every own vertex
        changes every superstep (``every_own_vertex``): one scatter per array, and the frontier stays the own
        vertices, since such a primitive is handed those; merging the changed copies into it, each compared
        first, took a pass over the copies and another over the frontier every superstep (PageRank)."""
        for src, package in received:  # the lists carry the combined arrays only (_to_holders), nothing carried
            ids, _, fields, _ = self._unpack(prim, src, package, hop, assign=True)
            for array, _, values in fields:
                array[ids] = values
        return frontier


def _named(ids, names, values):
    """A package: {"ids": ids, name: values} for each of ``names``."""
    package = {"ids": ids}
    package.update(zip(names, values))
    return package

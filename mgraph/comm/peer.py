"""A traversal's levels across devices without the host: inboxes in each device's memory and a barrier on the
devices.

On several devices every superstep of a traversal is an exchange the host drives: split the frontier, send,
wait for the peers, combine, agree.  On a long-diameter graph (a road network, a grid) the levels are thousands
and hold a few hundred vertices each, so the host's rounds are the run.  Here the devices of one process (worker
threads) run a visit's levels back to back instead, each in one persistent kernel:

1. each device advances its frontier (a warp per vertex, the visit's claim on every arc, as the fused levels of
   one device do); a claimed vertex it owns joins its next frontier, a claimed copy of a peer's vertex is written
   straight into that peer's inbox (the owner's id of the vertex and its predecessor's caller id) through peer
   memory;
2. it posts to every peer what it has written so far and the size of the frontier it advanced, and waits until
   every peer has posted this level (a flag per peer and level in the waiting device's own memory: the barrier);
3. it claims what arrived in its inbox, as the exchange's combine would (the level for an unvisited vertex, its
   predecessor in local ids), and those vertices join its next frontier.

Every device reads the same posted sizes, so all take the same decision to go on or stop: the frontiers are
empty everywhere, a level bound is reached, or the frontier that was just advanced held more arcs than the fused
levels serve (the load-balanced advance takes the next level).  The host launches the kernels and reads one block
of words when they end.

On a graph with hubs (a power-law graph) the link is *gated* (:class:`Link`): a level's frontier may hold a hub's
million arcs, or be one of the few levels of millions of vertices, which the load-balanced advance and the host's
exchange serve better; so each level first agrees on its frontier's size and arcs, before anyone advances it, and
the call ends at a frontier of more arcs than its bound.  Its small levels (from the source to the hubs, and the
tail) are what it runs: on two GPUs each costs a superstep's reads and handshakes through the host.

Which inbox a vertex goes to and what it carries follow the exchange's plan: the link serves only a phase whose
plan is the one a push visit has (each frontier vertex goes to its owner with the level implied and at most the
predecessor carried, copies not kept current), so the result is the one the host-driven exchange gives.

The inboxes never overflow: a device writes a copy of a peer's vertex once per traversal (claiming it marks it
visited), so the peer's inbox from it holds as many entries as it has copies of the peer's vertices.  Posts are
double-buffered by the level's parity and tagged with a count that grows across calls, so a device that runs
ahead writes the next level's post into the other slot and never over one its peer has yet to read.

:class:`PeerLevels` is one run's link between the devices of this process; :class:`NumpyLink` its NumPy twin
(the same levels and decisions, its posts and entries exchanged through the group's collectives: worker threads
or MPI ranks of CPU devices) and :class:`mgraph.comm.cupy_peer.CupyLink` the GPUs' form.
"""
from __future__ import annotations

import threading

import numpy as np

from mgraph import ops
from mgraph.backend import to_host
from mgraph.comm.plan import TO_EVERY_PEER, TO_NOBODY
from mgraph.ops import levels as fusing
from mgraph.ops.levels import Levels, arcs_of, max_degree
from mgraph.ops.queue import Queue

__all__ = ["Link", "NumpyLink", "PeerAborted", "PeerLevels", "has_hubs", "may_serve", "runs_directions"]


class PeerAborted(threading.BrokenBarrierError):
    """A peer device failed while this one waited for it inside fused levels: a broken barrier, so that the
    peer's own error is the one the run reports."""


class PeerLevels:
    """One run's link between its devices in this process: each part's link (``links[d]``, also set as the part's
    ``levels_link`` while the run lasts), and what they share."""

    def __init__(self, parts, backends, link_type, groups=None, index=None, gated=False, directions=False):
        """``parts`` on ``backends``, this process's; ``groups``: their groups (a NumPy twin's collectives);
        ``index``: under MPI, the rank of this process's one part among ``groups[0].size``; ``gated``: some part
        of the run has a hub (:func:`has_hubs`), the same on every device; ``directions``: the run's primitive may
        be a direction-optimizing traversal (:func:`runs_directions`: a GPU's link then holds its buffers)."""
        self.p = len(parts) if index is None else groups[0].size
        self.gated = gated
        self.directions = directions
        self.parts, self.groups, self.backends = parts, groups, backends
        # entries each device may receive from each other: its copies of their vertices (proxies are local ids
        # from own_below on, owned by someone else)
        self.capacity = [[0] * self.p for _ in range(self.p)]  # [src][dst]
        for src, (part, b) in enumerate(zip(parts, backends) if index is None else ()):
            with b.context():  # each part read on its own device
                owner = to_host(part.owner[part.own_below:])
            counts = np.bincount(owner.astype(np.int64), minlength=self.p) if owner.size else np.zeros(self.p)
            for dst in range(self.p):
                if dst != src:
                    self.capacity[src][dst] = int(counts[dst])
        shared = link_type.shared(self)
        self.links = []
        for d, (part, b) in enumerate(zip(parts, backends)):
            with b.context():
                self.links.append(link_type(self, d if index is None else index, part, shared))

    def attach(self):
        for part, link in zip(self.parts, self.links):
            part.levels_link = link

    def detach(self):
        for part in self.parts:
            part.levels_link = None

    def abort(self):
        """A device failed: every device waiting inside fused levels stops waiting (and raises PeerAborted)."""
        for link in self.links:
            link.abort()

    def close(self):
        """Release the links' device memory once the run's workers have ended, here and now: the links and this
        object hold each other, so the collector would free them later, in whichever thread it runs, and freeing a
        GPU's memory waits for that GPU — whose next kernel may be waiting for the post of the very thread that
        waits on the free."""
        for link, b in zip(self.links, self.backends):
            with b.context():
                link.release()


class Link:
    """Device ``d``'s end of a :class:`PeerLevels`: armed for a phase whose exchange plan it can stand in for.

    ``gated``: the run's graph has hubs (:func:`has_hubs`).  Then every level first agrees on its frontier's size
    and arcs, and a frontier of more arcs than the fused levels serve is left to the load-balanced advance
    (:meth:`visit_levels` returns None where that is the first one); a hub's arcs are spread over the whole grid
    on a GPU; and one-level calls (:meth:`visit`) are not offered, since nothing bounds their frontier."""

    def __init__(self, peers, d, part):
        self.peers, self.d, self.part = peers, d, part
        self.gated = peers.gated
        self.prim = None  # the armed phase's primitive, and the names of its level and carried arrays
        self.label_name = self.pred_name = None
        self.levels_run = 0  # fused levels so far in this run (.stats)
        self.calls = 0
        self.bytes = 0  # written into the peers' inboxes so far in this run (.stats)
        self.exchanged = None  # the last frontier visit() returned: its exchange has run (Exchange.run passes it on)
        self.stopped_at = None  # gated: the level whose frontier the last call left to the host for its arcs
        self.runs_directions = False  # whether visit_directions serves a direction-optimizing traversal

    def arm(self, prim, plan):
        """Serve ``prim``'s phase where its exchange ``plan`` is a push visit's: frontier vertices to their owners
        with one level value implied (a min or a max), at most one vertex-valued array carried, copies not kept
        current; else stand aside (the host-driven exchange runs).  A broadcast of such a frontier (a
        direction-optimizing traversal's, whose pulls read which neighbours are in the frontier) is served by
        :meth:`visit_directions`, which gives each pull the frontier's bits at the copies itself."""
        self.prim = None
        self.restart()
        broadcast = plan is not None and plan.hop0 == TO_EVERY_PEER
        if plan is None or plan.hop0 == TO_NOBODY or plan.holders or plan.track_stale or plan.function \
                or (plan.caller_ids and not broadcast) or plan.fields or len(plan.combines) != 1 \
                or len(plan.carry) > 1 or (broadcast and (plan.dedupe or not self._directions(prim))):
            return
        (name, op), = plan.combines.items()
        if op not in ("min", "max") or name not in plan.implied:
            return
        if plan.carry and plan.carry[0] not in prim.vertex_valued:
            return
        self.prim, self.label_name = prim, name
        self.pred_name = plan.carry[0] if plan.carry else None

    def _directions(self, prim) -> bool:
        """Whether this link runs ``prim``'s levels as a direction-optimizing traversal (:meth:`visit_directions`):
        an "auto" :class:`mgraph.ops.Direction`, whose broadcast frontier only its pulls read."""
        return self.runs_directions and runs_directions(prim)

    def serves(self, label, pred) -> bool:
        """Whether a visit of ``label`` and ``pred`` is the armed phase's: its level array is ``label`` and what
        it carries, if anything, is ``pred``."""
        prim = self.prim
        if prim is None or getattr(prim, self.label_name, None) is not label:
            return False
        return self.pred_name is None or getattr(prim, self.pred_name, None) is pred

    def restart(self):
        """A phase begins (a source's reset, a next_phase): what the last one exchanged is done with."""
        self.exchanged = None
        self.stopped_at = None

    def left_to_host(self, level, levels) -> bool:
        """Gated: whether the frontier of ``level`` is one a call has already found over the arcs bound (so the
        host's advance takes it without another launch); else note where a call of ``levels`` levels from
        ``level`` stopped (a gated call runs until a frontier's arcs exceed the bound or the frontiers empty)."""
        if levels is None:
            return self.gated and level == self.stopped_at
        if self.gated:
            self.stopped_at = level + levels
        return False

    def visit(self, frontier, label, pred, level):
        """One level of the armed visit across the devices with no host read: the output as a
        :class:`~mgraph.ops.Queue` whose count stays on the device, its own vertices and the copies its peers
        claimed here (their exchange done: ``exchanged``).  The enactor's batched supersteps on several devices."""
        raise NotImplementedError

    def check(self):
        """After a batch of :meth:`visit` calls: raise what failed inside them (a GPU's kernel records it)."""

    def release(self):
        """Free what the link holds on its device (the run is over; its counts stay for ``.stats``)."""
        self.exchanged = None

    def abort(self):
        pass


def has_hubs(part) -> bool:
    """Whether ``part`` has a vertex of more than ``levels.FUSE_DEGREE`` out-arcs (a power-law hub): its link is then
    gated (:class:`Link`).  Read once per part (a host read on a GPU)."""
    return max_degree(part) > fusing.FUSE_DEGREE


def runs_directions(prim) -> bool:
    """Whether ``prim`` traverses with an "auto" :class:`mgraph.ops.Direction`, whose levels a link runs across the
    devices in one call (``visit_directions``)."""
    direction = getattr(prim, "direction", None)
    return isinstance(direction, ops.Direction) and direction.mode == "auto"


def may_serve(prim) -> bool:
    """Whether a phase of ``prim`` may be a push visit's, or a direction-optimizing traversal's, as its declarations
    read before its first reset (one array combined by min or max, at most one array carried, copies not read but by
    the pulls of an "auto" :class:`mgraph.ops.Direction`): on a graph with hubs a link is made only for such a
    primitive, since the link's buffers are as large as the part's vertices."""
    try:
        combine, carry, reads = prim.combine, prim.carry, prim.reads_proxies
    except AttributeError:  # declarations that depend on a phase the primitive has yet to begin
        return False
    reads = reads and not runs_directions(prim)  # a direction-optimizing traversal's pulls: visit_directions
    return isinstance(combine, dict) and len(combine) == 1 and next(iter(combine.values())) in ("min", "max") \
        and len(carry) <= 1 and not reads


class NumpyLink(Link):
    """The NumPy twin: the same levels and the same decisions, each level's posts and inbox entries exchanged
    through the group's collectives (an allgather of the posts, an all-to-all of the entries): worker threads
    (a ThreadGroup) or MPI ranks of CPU devices.  A failure ends its group's collectives as any other's."""

    @staticmethod
    def shared(peers):
        return {"groups": peers.groups}

    def __init__(self, peers, d, part, shared):
        super().__init__(peers, d, part)
        self.group = shared["groups"][d if len(shared["groups"]) > 1 else 0]
        self.runs_directions = True
        self.g2l = part.global_to_local
        self.caller = part.caller_ids

    def visit_levels(self, frontier, label, pred, level, limit, max_levels):
        """Visit levels from ``frontier`` (own vertices), the first labelled ``level``, across every device:
        :class:`~mgraph.ops.levels.Levels` with the next frontier (own vertices), the levels run, and as
        ``emitted`` the whole graph's vertices of every level but the last plus this device's of the last.  A
        gated link first agrees on each frontier's size and arcs, and stops before one of more arcs than ``limit``
        (None where that is the first)."""
        if self.left_to_host(level, None):
            return None
        group = self.group
        f = ops.plain(frontier)
        prior = 0
        it = 0
        while True:
            lev = level + it
            if self.gated:
                posts = group.allgather((int(f.shape[0]), arcs_of(self.part, f)))
                if sum(n for n, _ in posts) == 0 or sum(a for _, a in posts) > limit:
                    self.left_to_host(level, it)
                    return self._done(f, it, prior) if it else None
            own, entries = self._advance(f, label, pred, lev)
            # the device barrier: the level's entries, each with this device's post (its frontier's vertices and
            # arcs) at the end, in one all-to-all (a collective costs two barriers of the threads)
            post = np.array([f.shape[0], arcs_of(self.part, f)], dtype=np.int64)
            got = group.alltoallv([np.concatenate([e, post]) for e in entries])
            total = int(sum(g[-2] for g in got))
            total_arcs = int(sum(g[-1] for g in got))
            if it > 0 and total == 0:  # the frontier just advanced was empty everywhere
                return self._done(f, it, prior)
            if it > 0:
                prior += total
            f = self._claim(own, [g[:-2] for g in got], label, pred, lev)
            it += 1
            if it >= max_levels or (total_arcs > limit and not self.gated):
                return self._done(f, it, prior)

    def visit_directions(self, frontier, label, pred, level, policy, max_levels):
        """A direction-optimizing traversal's levels from ``frontier`` (its own vertices, labelled ``level`` - 1) across
        every device, each level's direction the one ``policy`` (an "auto" :class:`~mgraph.ops.Direction`, alike on
        every device) chooses for the whole frontier: a push sends the claimed copies to their owners as
        :meth:`visit_levels` does; a pull has each own unvisited vertex look for a frontier vertex among its
        in-neighbours, the copies' bits sent first by their owners (the bits of each peer's block of copies of its
        vertices, as the host's broadcast sends a frontier of own vertices).  Runs until the frontiers empty
        everywhere or ``max_levels`` levels ran: :class:`~mgraph.ops.levels.Levels` (the policy has chosen every
        level itself)."""
        group, sub = self.group, self.part
        f = ops.plain(frontier)
        f = f[f < sub.own_below]  # a broadcast frontier holds copies too: each vertex is its owner's
        levels = emitted = 0
        while levels < max_levels:
            total = sum(group.allgather(int(f.shape[0])))  # the device barrier: every device sees the same total
            if total == 0:
                break
            lev = level + levels
            if policy.choose(total) == "push":
                own, entries = self._advance(f, label, pred, lev)
                f = self._claim(own, group.alltoallv(entries), label, pred, lev)
            else:
                f = ops.advance_visit_pull(sub.reverse(), label, pred, lev, self._frontier_bits(f))
            levels += 1
            emitted += int(f.shape[0])
        self.levels_run += levels
        self.calls += 1
        return Levels(f, levels, emitted)

    def _frontier_bits(self, f):
        """A bitmap over this part's vertices of the whole frontier it holds: ``f`` (own vertices) and the copies of
        the peers' frontier vertices, whose bits each owner sends for the block of copies the receiver keeps."""
        sub, me, p = self.part, self.d, self.peers.p
        blocks = []
        for k in range(p):
            first, held = sub.copies_on(k) if k != me else (0, 0)
            blocks.append(ops.bitmap(f, held, sub.id_on[k], first) if held else np.zeros(0, dtype=np.uint32))
        got = self.group.alltoallv(blocks)
        ids = [f.astype(np.int64, copy=False)]
        for src in range(p):
            if src != me and got[src].shape[0]:
                bits = np.unpackbits(got[src].view(np.uint8), bitorder="little")
                ids.append(sub.copies_of(src) + np.flatnonzero(bits))
        return ops.bitmap(np.concatenate(ids), sub.num_vertices)

    def visit(self, frontier, label, pred, level):
        """One level, as :meth:`visit_levels` runs it, its output a Queue (its count a NumPy word the host has not
        read): the same supersteps and the same batch reads as on a GPU.  One all-to-all of the entries stands in
        for the device barrier (a level alone needs no posts: nothing is decided from them)."""
        own, entries = self._advance(ops.plain(frontier), label, pred, level)
        out = self._claim(own, self.group.alltoallv(entries), label, pred, level)
        self.levels_run += 1
        self.calls += 1
        self.exchanged = Queue(out, np.array([out.shape[0]], dtype=np.uint64))
        return self.exchanged

    def _advance(self, f, label, pred, level):
        """A level's visit from ``f``: the own vertices it claimed, and per peer its entries: the ids there of the
        peer's vertices claimed here, then (where the predecessor is carried) their predecessors' caller ids, one
        int64 array each."""
        sub, me = self.part, self.d
        below, owner = sub.own_below, sub.owner
        out = ops.advance(sub, f, ops.functors.VISIT, label, pred, level)
        own, remote = out[out < below], out[out >= below]
        carry = self.pred_name is not None
        entries = []
        for k in range(self.peers.p):
            sel = remote[owner[remote] == k] if k != me else remote[:0]
            ids = sub.id_on[k][sel].astype(np.int64) if k != me else np.zeros(0, dtype=np.int64)
            entries.append(np.concatenate([ids, self.caller[pred[sel]]]) if carry else ids)
        # what the GPUs' inboxes would hold: an id of the graph's id type, and a caller id where carried
        self.bytes += int(remote.shape[0]) * (sub.indices.dtype.itemsize + (8 if carry else 0))
        return own, entries

    def _claim(self, own, got, label, pred, level):
        """Claim what the peers sent (``got``, their :meth:`_advance` entries for this device), as the exchange's
        combine would: each unvisited vertex once, from the first sender that has it; the next frontier."""
        carry = self.pred_name is not None
        halves = [g.shape[0] // 2 if carry else g.shape[0] for g in got]
        others = [k for k in range(self.peers.p) if k != self.d]
        ids = np.concatenate([got[k][:halves[k]] for k in others]).astype(self.part.indices.dtype, copy=False)
        if not ids.shape[0]:
            return own
        fresh = np.flatnonzero(label[ids] == -1)
        _, first = np.unique(ids[fresh], return_index=True)
        take = fresh[np.sort(first)]
        claimed = ids[take]
        label[claimed] = level
        if carry:
            preds = np.concatenate([got[k][halves[k]:] for k in others])
            pred[claimed] = self.g2l[preds[take]]
        return np.concatenate([own, claimed])

    def _done(self, frontier, levels, prior):
        self.levels_run += levels
        self.calls += 1
        return Levels(frontier, levels, prior + int(frontier.shape[0]))

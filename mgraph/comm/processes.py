"""Transports between worker processes, one process per device (mgraph.spawn starts them).

What a receiver must know before it can receive, each peer's package length
per hop, sits in shared memory (:class:`Signals`): the sender writes the
length and then bumps a sequence number, and the receiver spins on the
numbers of its peers.  A superstep's few host handshakes then cost
microseconds, where a queue round trip or a semaphore barrier between
processes costs tens to hundreds.  Spinning yields the CPU between looks, so
more workers than cores still make progress, and it gives up when the run's
barrier is broken (a peer failed).  The sequence numbers rely on stores
becoming visible in program order, which x86-64 guarantees and Python gives
no fence for elsewhere: ``ORDERED_STORES`` says whether this machine is one,
and mgraph.launch runs threads where it is not.

* :class:`QueueTransport` (NumPy virtual devices): the arrays travel through
  a ``multiprocessing`` queue per receiver.
* :class:`NcclTransport` (GPUs): the arrays go device to device through NCCL
  point-to-point calls, grouped per hop and queued on the compute stream, so
  the host never waits for a copy and stream order keeps the buffers alive.
  Each layout of a package (its arrays' names and dtypes) travels through the
  queue once per pair of devices and hop, the first time it is used.
"""
from __future__ import annotations

import os
import platform
import queue
import threading
import time

import numpy as np

from .transport import Transport, bytes_of

ORDERED_STORES = platform.machine().lower() in ("x86_64", "amd64")  # total store order: the handshakes are safe
TAGS = 2  # hops per superstep (0: to owners, 1: owners to holders)
SPIN = 64  # looks at the shared numbers before each yield of the CPU
NAP = 4096  # looks (a few hundred microseconds) after which a waiter sleeps between looks
CHECK = 256  # looks between checks for a broken barrier (an aborted run)


def spin_until(ready, barrier):
    """Wait until ``ready()`` by looking at shared memory; BrokenBarrierError once the run has been aborted.

    Spins first (a superstep's handshake is usually microseconds away), then
    naps, so that a long wait, or more workers than cores, wastes little CPU.
    """
    looks = 0
    while not ready():
        looks += 1
        if looks >= NAP:
            time.sleep(50e-6)
        elif looks % SPIN == 0:
            os.sched_yield()
        if looks % CHECK == 0 and barrier.broken:
            raise threading.BrokenBarrierError


class Signals:
    """The shared numbers of one pool of p workers: per hop, sequence, package size and layout version."""

    FIELDS = 3  # sequence, size + 1 (0: no package), layout version

    def __init__(self, array, p):
        self.array, self.p = array, p

    @classmethod
    def allocate(cls, ctx, p):
        return ctx.Array("q", TAGS * p * p * cls.FIELDS, lock=False)

    def slot(self, tag, src, dst):
        return ((tag * self.p + src) * self.p + dst) * self.FIELDS


class _SharedBase(Transport):
    """Sequence-numbered hops over :class:`Signals`, plus a queue per receiver for what does not fit there."""

    def __init__(self, signals, queues, me, barrier):
        self.sig, self.queues, self.me, self.barrier = signals, queues, me, barrier
        self.p = len(queues)
        self.seq = [0] * TAGS  # hops sent (and received) per tag; the same on every device
        self.early = {}  # (tag, src) -> queued items that arrived before they were looked for

    def abort(self):
        """Give up on the peers after a failure here (nothing to release for queues)."""

    def _signal(self, packages, tag, version=lambda dst, package: 0):
        """Publish this hop's package sizes to every peer; ``version`` numbers each package's layout."""
        given = dict(packages)
        self.seq[tag] += 1
        a = self.sig.array
        for k in range(self.p):
            if k != self.me:
                at = self.sig.slot(tag, self.me, k)
                package = given.get(k)
                a[at + 1] = 0 if package is None else 1 + _length(package)
                a[at + 2] = 0 if package is None else version(k, package)
                a[at] = self.seq[tag]  # last: the receiver reads the others once it sees this

    def _sizes(self, tag):
        """This hop's (src, length, layout version) from every peer that sent a package, in source order."""
        a, want = self.sig.array, self.seq[tag]
        peers = [self.sig.slot(tag, k, self.me) for k in range(self.p) if k != self.me]
        spin_until(lambda: all(a[at] == want for at in peers), self.barrier)
        out = []
        for k in range(self.p):
            if k != self.me:
                at = self.sig.slot(tag, k, self.me)
                if a[at + 1]:
                    out.append((k, a[at + 1] - 1, a[at + 2]))
        return out

    def _take(self, tag, src):
        """The next item ``src`` queued for this device under ``tag``."""
        waiting = self.early.get((tag, src))
        while not waiting:
            try:
                t, s, item = self.queues[self.me].get(timeout=0.2)
            except queue.Empty:
                if self.barrier.broken:  # a peer failed and will never send
                    raise threading.BrokenBarrierError from None
                continue
            self.early.setdefault((t, s), []).append(item)
            waiting = self.early.get((tag, src))
        return waiting.pop(0)


def _length(package):
    return len(next(iter(package.values())))


class QueueTransport(_SharedBase):
    """NumPy virtual devices in separate processes: the packages go through the receivers' queues."""

    def send(self, src, packages, tag=0):
        for k, package in packages:
            self.queues[k].put((tag, self.me, package))
        self._signal(packages, tag)
        return bytes_of(packages)

    def receive(self, dst, tag=0):
        return [(src, self._take(tag, src)) for src, _, _ in self._sizes(tag)]


class NcclTransport(_SharedBase):
    """GPUs, one process each: NCCL send/recv of each array's bytes, one NCCL group per hop.

    ``unique_id`` comes from the parent (``cupy.cuda.nccl.get_unique_id()``);
    building the communicator is collective, so every worker does it first,
    before anything that could fail on one device alone.
    """

    def __init__(self, signals, queues, me, barrier, unique_id):
        super().__init__(signals, queues, me, barrier)
        from cupy.cuda import nccl

        self.nccl = nccl
        self.comm = nccl.NcclCommunicator(self.p, unique_id, me)
        self.outgoing = {}  # tag -> this hop's packages, sent in receive() together with the receives
        self.sent = {}  # (tag, dst) -> {layout: version} announced to dst
        self.known = {}  # (tag, src) -> {version: layout} announced by src

    def abort(self):
        """End the communicator so that no NCCL call of this process waits on a peer any longer."""
        self.comm.abort()

    def _version(self, tag):
        def version(dst, package):
            layout = tuple((name, a.dtype.str) for name, a in package.items())
            known = self.sent.setdefault((tag, dst), {})
            if layout not in known:  # announced once; a layout seen before (a phase coming back) is free
                known[layout] = len(known) + 1
                self.queues[dst].put((tag, self.me, (known[layout], layout)))
            return known[layout]
        return version

    def send(self, src, packages, tag=0):
        self.outgoing[tag] = packages
        self._signal(packages, tag, self._version(tag))
        return bytes_of(packages)

    def receive(self, dst, tag=0):
        import cupy

        sizes = self._sizes(tag)
        stream = cupy.cuda.get_current_stream().ptr
        nccl, comm = self.nccl, self.comm
        out = []
        nccl.groupStart()
        try:
            for k, package in self.outgoing.pop(tag, []):
                for a in package.values():
                    if a.nbytes:
                        comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, k, stream)
            for src, length, version in sizes:
                known = self.known.setdefault((tag, src), {})
                while version not in known:
                    number, layout = self._take(tag, src)
                    known[number] = layout
                package = {name: cupy.empty(length, dtype=np.dtype(dtype)) for name, dtype in known[version]}
                for a in package.values():
                    if a.nbytes:
                        comm.recv(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, src, stream)
                out.append((src, package))
        finally:
            nccl.groupEnd()
        return out


class SharedBoard:
    """The enactor's per-superstep agreement between processes: each device's numbers and a round counter.

    Same protocol as the thread version (mgraph.enactor): two rows used
    alternately; a device publishes its row, then its round, and reads all
    rows once every round has reached its own.
    """

    WIDTH = 8  # numbers one device may publish at once (global sums, or the three flags)

    def __init__(self, values, rounds, p, barrier):
        self.values, self.rounds, self.p, self.barrier = values, rounds, p, barrier
        self.round = 0

    @classmethod
    def allocate(cls, ctx, p):
        """(values, rounds) shared arrays for p devices."""
        return ctx.Array("d", 2 * p * cls.WIDTH, lock=False), ctx.Array("q", p, lock=False)

    def share(self, d, values):
        values = [float(v) for v in values]
        if len(values) > self.WIDTH:
            raise ValueError(f"a primitive may share at most {self.WIDTH} global sums, got {len(values)}")
        base = (self.round & 1) * self.p * self.WIDTH
        self.round += 1
        row = base + d * self.WIDTH
        self.values[row:row + len(values)] = values
        rounds, want = self.rounds, self.round
        rounds[d] = want
        spin_until(lambda: all(rounds[k] >= want for k in range(self.p)), self.barrier)
        return [tuple(self.values[base + k * self.WIDTH: base + k * self.WIDTH + len(values)])
                for k in range(self.p)]

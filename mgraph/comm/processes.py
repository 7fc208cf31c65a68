"""Transports between worker processes, one process per device (mgraph.spawn starts them).

Each device sends every peer one small control message per hop through a
``multiprocessing`` queue, so a receiver knows what is coming and waits for
exactly its peers' messages; no barrier is needed between send and receive.

* :class:`QueueTransport` (NumPy virtual devices): the arrays travel in the
  control message itself.
* :class:`NcclTransport` (GPUs): the message carries only each array's dtype
  and length; the arrays go device to device through NCCL point-to-point
  calls, grouped per hop and queued on the compute stream, so the host never
  waits for a copy and stream order keeps the buffers alive.
"""
from __future__ import annotations

import queue
import threading

import numpy as np

from .transport import Transport

POLL_S = 0.2  # how often a waiting receiver looks whether another worker has failed


class _QueueBase(Transport):
    """The control channel: ``queues[d]`` is device d's inbox, shared by all processes of the run."""

    def __init__(self, queues, me, barrier):
        self.queues, self.me, self.barrier = queues, me, barrier
        self.p = len(queues)
        self.early = {}  # tag -> messages that arrived before their hop's receive

    def abort(self):
        """Give up on the peers after a failure here (nothing to release for queues)."""

    def _post(self, packages, tag, payload):
        """One message to every peer: ``payload(package)`` for those with a package, None for the rest."""
        given = dict(packages)
        for k in range(self.p):
            if k != self.me:
                self.queues[k].put((tag, self.me, payload(given[k]) if k in given else None))

    def _collect(self, tag):
        """This hop's message from every peer, in source order (``[(src, payload)]``, payload None skipped)."""
        got = self.early.pop(tag, [])
        while len(got) < self.p - 1:
            try:
                t, src, payload = self.queues[self.me].get(timeout=POLL_S)
            except queue.Empty:
                if self.barrier.broken:  # a peer failed and will never send
                    raise threading.BrokenBarrierError from None
                continue
            if t == tag:
                got.append((src, payload))
            else:
                self.early.setdefault(t, []).append((src, payload))
        return sorted((s, m) for s, m in got if m is not None)


class QueueTransport(_QueueBase):
    """NumPy virtual devices in separate processes: the packages themselves go through the queues."""

    def send(self, src, packages, tag=0):
        self._post(packages, tag, lambda package: package)
        return sum(int(a.nbytes) for _, package in packages for a in package.values())

    def receive(self, dst, tag=0):
        return self._collect(tag)


class NcclTransport(_QueueBase):
    """GPUs, one process each: NCCL send/recv of each array's bytes, one NCCL group per hop.

    ``unique_id`` comes from the parent (``cupy.cuda.nccl.get_unique_id()``);
    building the communicator is collective, so every worker does it first,
    before anything that could fail on one device alone.
    """

    def __init__(self, queues, me, barrier, unique_id):
        super().__init__(queues, me, barrier)
        from cupy.cuda import nccl

        self.nccl = nccl
        self.comm = nccl.NcclCommunicator(self.p, unique_id, me)
        self.outgoing = {}  # tag -> this hop's packages, sent in receive() together with the receives

    def abort(self):
        """End the communicator so that no NCCL call of this process waits on a peer any longer."""
        self.comm.abort()

    def send(self, src, packages, tag=0):
        self.outgoing[tag] = packages
        self._post(packages, tag, lambda package: [(name, a.dtype.str, len(a)) for name, a in package.items()])
        return sum(int(a.nbytes) for _, package in packages for a in package.values())

    def receive(self, dst, tag=0):
        import cupy

        layouts = self._collect(tag)
        stream = cupy.cuda.get_current_stream().ptr
        nccl, comm = self.nccl, self.comm
        out = []
        nccl.groupStart()
        try:
            for k, package in self.outgoing.pop(tag, []):
                for a in package.values():
                    if a.nbytes:
                        comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, k, stream)
            for src, layout in layouts:
                package = {name: cupy.empty(length, dtype=np.dtype(dtype)) for name, dtype, length in layout}
                for a in package.values():
                    if a.nbytes:
                        comm.recv(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, src, stream)
                out.append((src, package))
        finally:
            nccl.groupEnd()
        return out


class SharedBoard:
    """The enactor's per-superstep agreement between processes: a shared array of numbers and a barrier.

    Same protocol as the thread version (mgraph.enactor): two rows used
    alternately, one barrier per share.
    """

    WIDTH = 8  # numbers one device may publish at once (global sums, or the three flags)

    def __init__(self, array, p, barrier):
        self.array, self.p, self.barrier = array, p, barrier
        self.round = 0

    @classmethod
    def allocate(cls, ctx, p):
        return ctx.Array("d", 2 * p * cls.WIDTH, lock=False)

    def share(self, d, values):
        values = [float(v) for v in values]
        if len(values) > self.WIDTH:
            raise ValueError(f"a primitive may share at most {self.WIDTH} global sums, got {len(values)}")
        base = (self.round & 1) * self.p * self.WIDTH
        self.round += 1
        row = base + d * self.WIDTH
        self.array[row:row + len(values)] = values
        self.barrier.wait()
        return [tuple(self.array[base + k * self.WIDTH: base + k * self.WIDTH + len(values)]) for k in range(self.p)]

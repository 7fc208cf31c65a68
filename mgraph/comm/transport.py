"""Transports: how the packages of one hop get from a device to its peers.

The exchange calls only :meth:`Transport.send` (sender side, once per hop)
and :meth:`Transport.receive` (receiver side), so a transport between
MPI ranks (mgraph.comm.mpi) plugs in here without touching the
exchange or any primitive.
"""
from __future__ import annotations

from mgraph.backend import copy_to_device, enable_peer_access


class Transport:
    """Delivers packages (dicts of same-length arrays) between the devices of one run."""

    def send(self, src: int, packages: list, tag: int = 0) -> int:
        """Send this hop's ``packages``, (dst, package) pairs, from device ``src`` under ``tag``; the bytes sent.

        Called once per hop by every device, with an empty list when it has
        nothing for anyone.
        """
        raise NotImplementedError

    def receive(self, dst: int, tag: int = 0) -> list:
        """The packages sent to ``dst`` under ``tag`` in this hop, as (src, package) in source order.

        Returns once every device has sent its hop, so it is also where a
        device waits for the slowest.  Tags keep the hops of one superstep
        apart: a fast device may send its next hop before a slow one has
        received the last.
        """
        raise NotImplementedError

    #: whether :meth:`allgatherv` gathers device arrays device to device (NCCL); elsewhere the caller gathers
    #: through the host (``Group.allgatherv``)
    gathers_on_device = False

    def allgatherv(self, array):
        """Every device's 1-D ``array`` concatenated in device order, on every device, without the host."""
        raise NotImplementedError


def bytes_of(packages) -> int:
    """The bytes a hop's (dst, package) pairs carry: what :meth:`Transport.send` returns."""
    return sum(int(a.nbytes) for _, package in packages for a in package.values())


class LocalTransport(Transport):
    """Devices of one process: memory copies between virtual CPU devices, peer copies between GPUs.

    On GPUs the sender copies: it records an event on its compute stream
    after packaging, its own communication stream waits on that event and
    copies the arrays into buffers on the receiver's device
    (cudaMemcpyPeerAsync), and records a second event that the receiver's
    compute stream waits on before combining.  So a package travels while the
    sender goes on to the barrier and slower devices still compute, and no
    host synchronisation orders the devices.  The sender's arrays stay
    referenced here until the receiver's next receive, after its host reads
    have shown the copies done.
    """

    def __init__(self, backends, barrier):
        self.backends = list(backends)
        self.barrier = barrier  # threading.Barrier over the devices: every hop's sends happen before its receives
        if self.backends[0].is_gpu:
            enable_peer_access([b.device for b in self.backends])
        self.mail = {}  # (tag, dst) -> one slot per source
        self.held = [[] for _ in self.backends]  # sources of copies that may still be in flight
        self.streams = [None] * len(self.backends)  # each device's communication stream, made on first push

    def _slots(self, tag, dst):
        return self.mail.setdefault((tag, dst), [None] * len(self.backends))

    def send(self, src, packages, tag=0):
        for dst, package in packages:
            if self.backends[src].is_gpu:
                copies, landed = self._copy_out(package, src, dst)
                self._slots(tag, dst)[src] = (copies, landed, package)
            else:
                self._slots(tag, dst)[src] = ({k: a.copy() for k, a in package.items()}, None, None)
        return bytes_of(packages)

    def receive(self, dst, tag=0):
        self.barrier.wait()
        out, slots = [], self._slots(tag, dst)
        if tag == 0:
            self.held[dst] = []
        for src, slot in enumerate(slots):
            if slot is None:
                continue
            slots[src] = None
            copies, landed, sent = slot
            if landed is not None:
                self.held[dst].append(sent)  # the receiver's next host read orders these copies
                import cupy

                cupy.cuda.get_current_stream().wait_event(landed)
            out.append((src, copies))
        return out

    def _copy_out(self, package, src, dst):
        """Copy ``package`` to device ``dst`` on ``src``'s communication stream; (the copies, their event)."""
        import cupy

        ready = cupy.cuda.Event(disable_timing=True)
        ready.record()  # the packaging kernels on the sender's compute stream
        if self.streams[src] is None:
            self.streams[src] = cupy.cuda.Stream(non_blocking=True)  # on the sender's device, current here
        stream = self.streams[src]
        stream.wait_event(ready)
        device = self.backends[dst].device
        copies = {name: copy_to_device(a, device, stream) for name, a in package.items()}
        landed = cupy.cuda.Event(disable_timing=True)
        landed.record(stream)
        return copies, landed

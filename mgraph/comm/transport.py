"""Transports: how a package of arrays gets from one device to another.

The exchange calls only :meth:`Transport.push` (sender side) and
:meth:`Transport.receive` (receiver side, after a barrier), so a
multi-process transport (MPI, NCCL) plugs in here without touching the
exchange or any primitive.
"""
from __future__ import annotations

from ..backend import copy_to_device, enable_peer_access


class Transport:
    """Delivers packages (dicts of same-length arrays) between the devices of one run."""

    def push(self, src: int, dst: int, package: dict, tag: int = 0) -> int:
        """Send ``package`` from device ``src`` to ``dst`` under ``tag``; return the bytes sent."""
        raise NotImplementedError

    def receive(self, dst: int, tag: int = 0) -> list:
        """The packages sent to ``dst`` under ``tag`` since its last receive, as (src, package) in source order.

        Tags keep the hops of one superstep apart: a fast device may push its
        next hop before a slow one has received the last.
        """
        raise NotImplementedError


class LocalTransport(Transport):
    """Devices of one process: memory copies between virtual CPU devices, peer copies between GPUs.

    On GPUs the sender records an event on its stream after packaging; the
    receiver makes its own stream wait on that event and copies the arrays
    to its device on its own stream (cudaMemcpyPeerAsync), so no host
    synchronisation orders the two devices.  The sender's arrays stay
    referenced here until the receiver has taken them.
    """

    def __init__(self, backends):
        self.backends = list(backends)
        if self.backends[0].is_gpu:
            enable_peer_access([b.device for b in self.backends])
        self.mail = {}  # (tag, dst) -> one slot per source
        self.held = [[] for _ in self.backends]  # sources of copies that may still be in flight

    def _slots(self, tag, dst):
        return self.mail.setdefault((tag, dst), [None] * len(self.backends))

    def push(self, src, dst, package, tag=0):
        nbytes = sum(int(a.nbytes) for a in package.values())
        if self.backends[src].is_gpu:
            import cupy

            event = cupy.cuda.Event(disable_timing=True)
            event.record()
            self._slots(tag, dst)[src] = (package, event)
        else:
            self._slots(tag, dst)[src] = ({k: a.copy() for k, a in package.items()}, None)
        return nbytes

    def receive(self, dst, tag=0):
        out, slots = [], self._slots(tag, dst)
        if tag == 0:
            self.held[dst] = []
        for src, slot in enumerate(slots):
            if slot is None:
                continue
            slots[src] = None
            package, event = slot
            if event is not None:
                self.held[dst].append(package)  # the receiver's next host read orders these copies
                package = self._copy_in(package, event, src, dst)
            out.append((src, package))
        return out

    def _copy_in(self, package, event, src, dst):
        import cupy

        stream = cupy.cuda.get_current_stream()
        stream.wait_event(event)
        device = self.backends[dst].device
        return {name: copy_to_device(a, device, stream) for name, a in package.items()}

"""Transports between MPI ranks, one rank per device.

A hop is one collective on the host: an ``Alltoall`` of a fixed slot per
peer, holding a message's length and its first bytes.  A message is the
packages' headers (each package's field names, dtypes and length, packed as
bytes, never pickled), so every rank knows what it will receive; the rest of
a message longer than its slot follows point to point.  Why slots: a header
is a few dozen bytes, and an ``Alltoall`` of sizes followed by an
``Alltoallv`` of the bytes was two collectives per hop, where the small hops
of a traversal's tail cost their collectives and little else.  Then the arrays:

* :class:`MpiTransport` (NumPy): the packages' bytes follow their headers in
  the same message: a small package fits its slot.
* :class:`StagedTransport` (CuPy ranks that share a GPU, which NCCL does not
  allow): the packages go through host memory and :class:`MpiTransport`.
* :class:`NcclTransport` (CuPy): the arrays go GPU to GPU through NCCL
  send/recv, grouped per hop and queued on the compute stream, so the host
  never waits for a copy.  The communicator's unique id is broadcast over
  MPI; NCCL allows one rank per GPU.  Its ``alltoallv`` routes a part's arcs
  while the part is built, before any hop.
"""
from __future__ import annotations

import struct

import numpy as np

from mgraph import group as groups
from mgraph.backend import to_numpy
from mgraph.comm.transport import Transport, bytes_of

_FIELD = struct.Struct("<H8sq")  # name length, dtype string (padded), element count
SLOT = 256  # bytes per peer of a hop's Alltoall: a message's 8-byte length, then its first SLOT - 8 bytes
_HEAD = SLOT - 8
_REST_TAG = 7201  # the rest of a message longer than its slot, point to point


def _header(package) -> bytes:
    """A package's layout as bytes: field count, then per field its name, dtype and length."""
    out = [struct.pack("<H", len(package))]
    for name, a in package.items():
        raw = name.encode()
        out.append(_FIELD.pack(len(raw), a.dtype.str.encode(), int(a.shape[0])))
        out.append(raw)
    return b"".join(out)


def _layout(buf: memoryview):
    """(name, dtype, length) of each field of a header, and the header's size in bytes."""
    (count,), at = struct.unpack_from("<H", buf, 0), 2
    fields = []
    for _ in range(count):
        size, dtype, length = _FIELD.unpack_from(buf, at)
        at += _FIELD.size
        name = bytes(buf[at:at + size]).decode()
        at += size
        fields.append((name, np.dtype(dtype.rstrip(b"\0").decode()), length))
    return fields, at


class _MpiBase(Transport):
    def __init__(self, group):
        self.group, self.comm, self.MPI = group, group.comm, group.MPI
        self.p, self.me = group.size, group.rank

    def _alltoallv(self, per_dest: list) -> list:
        """Bytes to each rank (b"" for none); the bytes each rank sent here, in rank order.  One ``Alltoall`` of
        :data:`SLOT`-byte slots; what a slot cannot hold goes point to point, in pieces of at most
        ``mgraph.group.MPI_CHUNK`` bytes (MPI counts are 32-bit)."""
        p = self.p
        send = np.zeros((p, SLOT), dtype=np.uint8)
        lengths = send[:, :8].view(np.int64)
        for k, b in enumerate(per_dest):
            lengths[k, 0] = len(b)
            head = min(len(b), _HEAD)
            send[k, 8:8 + head] = np.frombuffer(b, dtype=np.uint8, count=head)
        recv = np.empty((p, SLOT), dtype=np.uint8)
        self.comm.Alltoall(send, recv)
        got = recv[:, :8].view(np.int64)[:, 0]
        requests, out = [], []
        for k in range(p):
            n = int(got[k])
            if n <= _HEAD:
                out.append(memoryview(recv[k, 8:8 + n]))
                continue
            buf = np.empty(n, dtype=np.uint8)
            buf[:_HEAD] = recv[k, 8:]
            requests += [self.comm.Irecv(piece, source=k, tag=_REST_TAG) for piece in _pieces(buf[_HEAD:])]
            out.append(memoryview(buf))
        for k, b in enumerate(per_dest):
            if len(b) > _HEAD:
                rest = np.frombuffer(b, dtype=np.uint8)[_HEAD:]
                requests += [self.comm.Isend(piece, dest=k, tag=_REST_TAG) for piece in _pieces(rest)]
        self.MPI.Request.Waitall(requests)
        return out

    def abort(self):
        """Nothing to release: a failing rank ends the job (mgraph.group.fail_job)."""


def _pieces(a):
    """``a`` in consecutive views of at most ``mgraph.group.MPI_CHUNK`` bytes (one MPI call each, in order: MPI
    keeps the order of messages between two ranks under one tag)."""
    step = max(int(groups.MPI_CHUNK), 1)
    return [a[i:i + step] for i in range(0, a.shape[0], step)]


class MpiTransport(_MpiBase):
    """NumPy devices in separate ranks: each package goes as its header followed by its arrays' bytes."""

    def __init__(self, group):
        super().__init__(group)
        self.outgoing = {}

    def send(self, src, packages, tag=0):
        self.outgoing[tag] = packages
        return bytes_of(packages)

    def receive(self, dst, tag=0):
        per_dest = [b""] * self.p
        for k, package in self.outgoing.pop(tag, []):
            arrays = [np.ascontiguousarray(a) for a in package.values()]
            per_dest[k] = _header(package) + b"".join(a.tobytes() for a in arrays)
        out = []
        for src, buf in enumerate(self._alltoallv(per_dest)):
            if not len(buf):
                continue
            fields, at = _layout(buf)
            package = {}
            for name, dtype, length in fields:
                nbytes = dtype.itemsize * length
                package[name] = np.frombuffer(buf[at:at + nbytes], dtype=dtype).copy()
                at += nbytes
            out.append((src, package))
        return out


class StagedTransport(MpiTransport):
    """GPU ranks that share a GPU: each package is copied to the host, sent as MpiTransport sends, and copied to
    the receiver's GPU (slower than NCCL, but NCCL refuses two ranks on one GPU)."""

    def send(self, src, packages, tag=0):
        return super().send(src, [(k, {n: to_numpy(a) for n, a in p.items()}) for k, p in packages], tag)

    def receive(self, dst, tag=0):
        import cupy

        return [(src, {n: cupy.asarray(a) for n, a in p.items()}) for src, p in super().receive(dst, tag)]


class NcclTransport(_MpiBase):
    """GPUs, one rank each: headers over MPI, the arrays' bytes through NCCL point-to-point in one group per hop."""

    def __init__(self, group):
        super().__init__(group)
        from cupy.cuda import nccl

        self.nccl = nccl
        unique_id = nccl.get_unique_id() if self.me == 0 else None
        unique_id = self.comm.bcast(unique_id, root=0)
        self.nccl_comm = nccl.NcclCommunicator(self.p, unique_id, self.me)
        self.outgoing = {}
        self._connect()

    def _connect(self):
        """Make NCCL's point-to-point connections now, with the communicator: NCCL makes them at their first use
        (over a second between two GPUs), which would otherwise fall inside the first build or the first hop."""
        import cupy

        one = cupy.empty(self.p, dtype=np.uint8)  # what travels is never read: NCCL connects inside groupEnd
        self.alltoallv([one[k:k + 1] for k in range(self.p)])

    def abort(self):
        self.nccl_comm.abort()

    def alltoallv(self, arrays: list) -> list:
        """``arrays[k]`` (CuPy, 1-D, one dtype) to rank k, GPU to GPU; what each rank sent here, in rank order.

        How a GPU rank's part is built (``mgraph.parts.build``): the lengths go
        over MPI, the bytes through NCCL in one group, queued on the current
        stream like a hop's.  NCCL counts are 64-bit, so no rounds are needed.
        """
        import cupy

        dtype = arrays[self.me].dtype
        sent = np.array([a.shape[0] for a in arrays], dtype=np.int64)
        got = np.empty(self.p, dtype=np.int64)
        self.comm.Alltoall(sent, got)
        stream = cupy.cuda.get_current_stream().ptr
        nccl, comm = self.nccl, self.nccl_comm
        out, held = [], []
        nccl.groupStart()
        try:
            for k, a in enumerate(arrays):
                if k == self.me:
                    out.append(a)
                    continue
                a = cupy.ascontiguousarray(a.astype(dtype, copy=False))
                if a.nbytes:
                    held.append(a)  # a copy made here must outlive the group: NCCL reads it at groupEnd
                    comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, k, stream)
                buf = cupy.empty(int(got[k]), dtype=dtype)
                if buf.nbytes:
                    comm.recv(buf.data.ptr, buf.nbytes, nccl.NCCL_UINT8, k, stream)
                out.append(buf)
        finally:
            nccl.groupEnd()
        return out

    gathers_on_device = True

    def allgatherv(self, array):
        """Every rank's 1-D CuPy ``array`` concatenated in rank order, on every rank, GPU to GPU: the lengths and
        dtypes over MPI (dtypes that differ are promoted to a common one, as ``Group.allgatherv`` does), the bytes
        through NCCL in one group straight into their place in the output, queued on the current stream.  Through
        the host, Louvain's coarse arcs at a level's end (GBs at R-MAT 22) were most of its run on two GPUs."""
        import cupy

        meta = self.comm.allgather((int(array.shape[0]), array.dtype.str))
        counts = np.array([m[0] for m in meta], dtype=np.int64)
        dtype = np.result_type(*(np.dtype(m[1]) for m in meta))
        at = np.concatenate([[0], np.cumsum(counts)])
        out = cupy.empty(int(at[-1]), dtype=dtype)
        mine = cupy.ascontiguousarray(array.reshape(-1).astype(dtype, copy=False))
        if mine.nbytes:
            out[at[self.me]: at[self.me + 1]] = mine
        nccl, comm = self.nccl, self.nccl_comm
        stream = cupy.cuda.get_current_stream().ptr
        nccl.groupStart()
        try:
            for k in range(self.p):
                if k == self.me:
                    continue
                if mine.nbytes:
                    comm.send(mine.data.ptr, mine.nbytes, nccl.NCCL_UINT8, k, stream)
                if counts[k]:
                    place = cupy.ascontiguousarray(out[at[k]: at[k + 1]])  # a view of out: received in place
                    comm.recv(place.data.ptr, place.nbytes, nccl.NCCL_UINT8, k, stream)
        finally:
            nccl.groupEnd()
        return out

    def gatherv(self, array, root=0):
        """Every rank's 1-D CuPy ``array`` concatenated in rank order on ``root``'s GPU (None elsewhere), GPU to GPU:
        the lengths and dtypes over MPI (promoted to a common dtype), the bytes through NCCL in one group straight
        into their place, queued on the current stream.  A run's results: through the host, their copies to the
        hosts, ``gatherv`` and the scatter into whole arrays took 250 ms of a 262 ms CC call on two H100 ranks at
        R-MAT 25."""
        import cupy

        meta = self.comm.allgather((int(array.shape[0]), array.dtype.str))
        counts = np.array([m[0] for m in meta], dtype=np.int64)
        dtype = np.result_type(*(np.dtype(m[1]) for m in meta))
        mine = cupy.ascontiguousarray(array.reshape(-1).astype(dtype, copy=False))
        nccl, comm = self.nccl, self.nccl_comm
        stream = cupy.cuda.get_current_stream().ptr
        if self.me != root:
            if mine.nbytes:
                nccl.groupStart()
                try:
                    comm.send(mine.data.ptr, mine.nbytes, nccl.NCCL_UINT8, root, stream)
                finally:
                    nccl.groupEnd()
            return None
        at = np.concatenate([[0], np.cumsum(counts)])
        out = cupy.empty(int(at[-1]), dtype=dtype)
        if mine.nbytes:
            out[at[root]: at[root + 1]] = mine
        nccl.groupStart()
        try:
            for k in range(self.p):
                if k != root and counts[k]:
                    place = out[at[k]: at[k + 1]]  # a contiguous view of out: received in place
                    comm.recv(place.data.ptr, place.nbytes, nccl.NCCL_UINT8, k, stream)
        finally:
            nccl.groupEnd()
        return out

    def send(self, src, packages, tag=0):
        self.outgoing[tag] = packages
        return bytes_of(packages)

    def receive(self, dst, tag=0):
        import cupy

        packages = self.outgoing.pop(tag, [])
        per_dest = [b""] * self.p
        for k, package in packages:
            per_dest[k] = _header(package)
        incoming = []
        for src, buf in enumerate(self._alltoallv(per_dest)):
            if len(buf):
                incoming.append((src, _layout(buf)[0]))
        if not packages and not incoming:  # a hop in which nothing moves here: no NCCL group at all
            return []
        stream = cupy.cuda.get_current_stream().ptr
        nccl, comm = self.nccl, self.nccl_comm
        out, held = [], []
        nccl.groupStart()
        try:
            for k, package in packages:
                for a in package.values():
                    if a.nbytes:
                        a = cupy.ascontiguousarray(a)
                        held.append(a)  # a copy made here must outlive the group: NCCL reads it at groupEnd
                        comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, k, stream)
            for src, fields in incoming:
                package = {name: cupy.empty(length, dtype=dtype) for name, dtype, length in fields}
                for a in package.values():
                    if a.nbytes:
                        comm.recv(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, src, stream)
                out.append((src, package))
        finally:
            nccl.groupEnd()
        return out

"""CuPy's arrays and NCCL stood in for on CPU ranks, so that NcclTransport's own code runs in CI.

``install(comm)`` puts modules named ``cupy``, ``cupy.cuda`` and
``cupy.cuda.nccl`` in ``sys.modules``: arrays are NumPy arrays whose
``data.ptr`` is their host address, and an NCCL group's sends and receives are
MPI point-to-point messages of those addresses' bytes, started at
``groupEnd`` as NCCL starts them.  What this checks is the transport's
bookkeeping (lengths, layouts, which peer gets which bytes, buffers alive
until the group ends), not NCCL: tests/test_gpu_multi.py runs the real one.
"""
from __future__ import annotations

import ctypes
import sys
import types
import weakref

import numpy as np

NCCL_UINT8 = 7
_TAG = 7301


class DeviceArray(np.ndarray):
    """A NumPy array with CuPy's ``data.ptr``; its module is not ``cupy``, so mgraph treats it as NumPy."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


_OWNERS = {}  # address -> a weak reference to the array owning the memory there (as CuPy's pool would hold it)


def _device(a):
    """``a`` as a DeviceArray, its memory's owner remembered: a send checks at groupEnd that it still lives."""
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    view = a.view(DeviceArray)
    _OWNERS[view.ctypes.data] = weakref.ref(owner)
    return view


def _bytes_at(ptr, nbytes):
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(ptr))


class Communicator:
    """An NCCL communicator over ``comm``: send/recv queue until the group ends, then go as MPI messages."""

    groups = []  # the open group's operations (NCCL groups are per thread; these jobs have one)

    def __init__(self, comm):
        self.comm = comm

    def send(self, ptr, nbytes, dtype, peer, stream):
        assert dtype == NCCL_UINT8 and nbytes > 0
        Communicator.groups[-1].append(("send", self, ptr, nbytes, peer, _OWNERS[ptr]))

    def recv(self, ptr, nbytes, dtype, peer, stream):
        assert dtype == NCCL_UINT8 and nbytes > 0
        Communicator.groups[-1].append(("recv", self, ptr, nbytes, peer, _OWNERS[ptr]))

    def abort(self):
        pass


def install(comm):
    """Stand in for CuPy and NCCL in this process (a CPU rank of ``comm``)."""
    nccl = types.ModuleType("cupy.cuda.nccl")
    nccl.NCCL_UINT8 = NCCL_UINT8
    nccl.get_unique_id = lambda: b"fake"
    nccl.NcclCommunicator = lambda size, unique_id, rank: Communicator(comm)

    def group_start():
        Communicator.groups.append([])

    def group_end():
        ops, requests = Communicator.groups.pop(), []
        for kind, c, ptr, nbytes, peer, owner in ops:
            if owner() is None:  # NCCL would read (or write) memory handed back to the pool
                raise AssertionError(f"a buffer queued for NCCL {kind} to/from rank {peer} was freed before groupEnd")
            buf = _bytes_at(ptr, nbytes)
            start = c.comm.Isend if kind == "send" else c.comm.Irecv
            requests.append(start(buf, peer, _TAG))
        for r in requests:
            r.Wait()

    nccl.groupStart, nccl.groupEnd = group_start, group_end
    cuda = types.ModuleType("cupy.cuda")
    cuda.nccl = nccl
    cuda.get_current_stream = lambda: types.SimpleNamespace(ptr=0)
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    cupy.ascontiguousarray = lambda a: _device(np.ascontiguousarray(a))
    cupy.empty = lambda n, dtype: _device(np.empty(n, dtype=dtype))
    sys.modules.update({"cupy": cupy, "cupy.cuda": cuda, "cupy.cuda.nccl": nccl})

"""Device plumbing shared by the operators' CuPy code (:mod:`mgraph.ops.cupy_ops`) and the exchange's
(:mod:`mgraph.comm.cupy_kernels`): compiled kernel modules, launch sizes, absent-array placeholders, and what
each thread keeps per device (pinned host words for small reads, 8-byte counters).

One copy of each serves both: a superstep's advance, split and merge on one thread and device read their counts
through the same pinned words and count into the same kept counters (per thread and device, whichever module's
kernel fills them).
"""
from __future__ import annotations

import threading
from functools import lru_cache, partial

import cupy as cp
import numpy as np

BLOCK = 256  # threads per block of most launches (the kernels' __launch_bounds__ where they name one)
ID_CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}  # vertex-id dtypes and their C types
OPTIONS = ("-std=c++17",)  # NVRTC's options for every module

THREAD = threading.local()  # per thread (each has its own stream): pinned host words and small scratch arrays


def _ctypes(id_dtypes):
    """The C types of one id dtype or of a tuple of them (a module whose source takes several), as a tuple."""
    if isinstance(id_dtypes, tuple):
        return tuple(ID_CTYPES[np.dtype(d)] for d in id_dtypes)
    return (ID_CTYPES[np.dtype(id_dtypes)],)


def _key(id_dtypes):
    """One cache key for the same id types however given (a dtype, its type object, or a tuple of them)."""
    return tuple(np.dtype(d) for d in id_dtypes) if isinstance(id_dtypes, tuple) else np.dtype(id_dtypes)


def module(source, idx_dtype, device_id):
    """Compile ``source(C type of the ids, ...)``, a function returning a module's CUDA source, for one id type (or
    a tuple of id types, ``source`` taking one C type per entry: Louvain's graph ids and labels) on one device,
    cached per source, id types and device (NVRTC also caches on disk)."""
    return _module(source, _key(idx_dtype), device_id)


@lru_cache(maxsize=None)
def _module(source, key, device_id):
    with cp.cuda.Device(device_id):
        return cp.RawModule(code=source(*_ctypes(key)), options=OPTIONS)


@lru_cache(maxsize=None)
def function(source, idx_dtype, device_id, name):
    """A kernel of :func:`module`, looked up once: RawModule.get_function builds a new kernel object per call.
    Cached on the arguments as given (a launch's lookup is one dictionary probe); the module behind it on the id
    types however given."""
    return module(source, idx_dtype, device_id).get_function(name)


def cooperative(source, name, device_id):
    """The kernel ``name`` of ``source`` (a whole CUDA source) compiled for a cooperative launch on ``device_id``,
    and the largest grid of BLOCK-thread blocks that can be resident at once, which such a launch needs (its grid
    syncs wait for every block).  Callers cache it per source and device."""
    with cp.cuda.Device(device_id):
        module = cp.RawModule(code=source, options=OPTIONS, enable_cooperative_groups=True)
        kernel = module.get_function(name)
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, BLOCK, 0)
        if per_sm < 1:
            raise RuntimeError(f"{name}: no block of {BLOCK} threads fits on a multiprocessor")
        return kernel, per_sm * cp.cuda.Device(device_id).attributes["MultiProcessorCount"]


def kernel_lookup(source):
    """``(id dtype, device id, name) -> kernel`` for the module of ``source``: :func:`function` with the source
    bound, one lookup per launch as a cached function of the caller's own took."""
    return partial(function, source)


def blocks(n, per_block=BLOCK):
    """A grid of enough blocks for ``n`` items, ``per_block`` to a block (one at least)."""
    return (max(1, -(-int(n) // per_block)),)


def dummy(dtype):
    """A placeholder argument for an absent array (the kernel never reads it), one per dtype and device."""
    return _dummy_on(np.dtype(dtype), cp.cuda.Device().id)


@lru_cache(maxsize=None)
def _dummy_on(dtype, device_id):
    return cp.empty(1, dtype=dtype)


def read_word(a, index=0):
    """``a[index]`` (an 8-byte integer array on the current device) as a Python int: one copy into pinned host
    memory kept per thread, waiting on this thread's stream only.  ``int(a[index])`` made a view and a new host
    array first, each a CuPy call's worth of host time on a superstep's path."""
    return read_words(a, 1, index)[0]


def read_words(a, count, index=0):
    """``a[index:index + count]`` (8-byte integers on the current device) as Python ints, as :func:`read_word`
    reads one: the split's and the merge's counts, read on every superstep of several devices."""
    word = getattr(THREAD, "word", None)
    if word is None or word.shape[0] < count:
        import cupyx

        word = THREAD.word = cupyx.empty_pinned(max(count, 16), dtype=np.int64)
    stream = cp.cuda.get_current_stream()
    cp.cuda.runtime.memcpyAsync(word.ctypes.data, a.data.ptr + 8 * int(index), 8 * count,
                                cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    return word[:count].tolist()


def counters(device_id, count, zeroed=True):
    """``count`` 8-byte counters (zeroed, or as the last user left them), kept per thread and device: one memset
    at most instead of an allocation and a memset per superstep.  Every user reads its counts before it returns,
    and whatever used them last was queued on this thread's stream before the memset; where the thread has moved
    to another stream since, the last one is waited for first."""
    kept = getattr(THREAD, "counters", None)
    if kept is None:
        kept = THREAD.counters = {}
    stream = cp.cuda.get_current_stream()
    entry = kept.get(device_id)
    if entry is None or entry[0].shape[0] < count:
        entry = kept[device_id] = [cp.empty(max(count, 16), dtype=np.uint64), stream]
    elif entry[1].ptr != stream.ptr:
        entry[1].synchronize()
        entry[1] = stream
    out = entry[0]
    if zeroed:
        cp.cuda.runtime.memsetAsync(out.data.ptr, 0, 8 * count, stream.ptr)
    return out

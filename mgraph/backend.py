"""Array backends: CuPy on a GPU, NumPy on the CPU.

Everything above this layer asks a :class:`Backend` for its array module
(``xp``) and for timing, so that backend differences stay in this module and
in :mod:`mgraph.ops`.
"""
from __future__ import annotations

import contextlib
import os
import platform
import threading
import time
from functools import lru_cache

import numpy as np

BACKENDS = ("auto", "numpy", "cupy")


@lru_cache(maxsize=1)
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, or no device
        return False


class Backend:
    """One array module on one device (``device`` is a GPU id, or 0 on the CPU)."""

    def __init__(self, name: str, device: int = 0):
        self.name = name
        self.device = device
        self.cpu_share = None  # a CPU run's (threads option or None, worker threads of this process): context()
        if name == "cupy":
            import cupy

            self.xp = cupy
        else:
            self.xp = np

    @property
    def is_gpu(self) -> bool:
        return self.name == "cupy"

    def __repr__(self) -> str:
        return f"Backend({self.name!r}, device={self.device})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Backend) and (self.name, self.device) == (other.name, other.device)

    def __hash__(self) -> int:
        return hash((self.name, self.device))

    def device_name(self) -> str:
        return _device_name(self.name, self.device)

    def asarray(self, a, dtype=None):
        """``a`` on this backend (a copy only when it lives elsewhere or needs a cast)."""
        if self.is_gpu:
            cp = self.xp
            with cp.cuda.Device(self.device):
                if isinstance(a, cp.ndarray) and a.device.id != self.device:
                    a = copy_to_device(a, self.device)
                return cp.asarray(a, dtype=dtype)
        if type(a).__module__.startswith("cupy"):
            a = a.get()
        return np.asarray(a, dtype=dtype)

    @contextlib.contextmanager
    def context(self):
        """Make this device current in the calling thread, with its own non-blocking stream (GPU); on the CPU, give
        the calling thread this device's share of the compiled kernels' threads (:func:`cpu_share`)."""
        if not self.is_gpu:
            old = getattr(_CPU, "share", None)
            if self.cpu_share is not None:
                _CPU.share = self.cpu_share
            try:
                yield
            finally:
                _CPU.share = old
            return
        with self.xp.cuda.Device(self.device):
            with _stream(self.device, threading.get_ident()):
                yield

    def synchronize(self) -> None:
        if self.is_gpu:
            self.xp.cuda.Device(self.device).synchronize()

    def synchronize_stream(self) -> None:
        """Wait for the calling thread's current stream only (a device-wide wait also waits for other streams,
        such as NCCL's own)."""
        if self.is_gpu:
            self.xp.cuda.get_current_stream().synchronize()

    def timer(self) -> "Timer":
        return Timer(self)


_STREAMS = {}
_CPU = threading.local()


def cpu_share():
    """The calling thread's share of a CPU run's threads, set by its device's ``context()``: (the run's ``threads``
    option or None for the default, how many worker threads of this process divide them), or None outside a run.
    mgraph.ops.numba_ops reads it (``threads()``)."""
    return getattr(_CPU, "share", None)


def _stream(device: int, thread: int):
    """One non-blocking stream per device and thread, kept: CuPy's memory pool reuses a freed block only on the
    stream that freed it, so a new stream per run would allocate every array of the run afresh (cudaMalloc)."""
    import cupy

    key = (device, thread)
    if key not in _STREAMS:
        _STREAMS[key] = cupy.cuda.Stream(non_blocking=True)
    return _STREAMS[key]


def copy_to_device(a, device: int, stream=None):
    """A copy of CuPy array ``a`` on GPU ``device`` (a peer copy on ``stream``, or the current one)."""
    import cupy

    a = cupy.ascontiguousarray(a)  # on a's own device
    with cupy.cuda.Device(device):
        out = cupy.empty(a.shape, dtype=a.dtype)
        if a.nbytes:
            stream = stream or cupy.cuda.get_current_stream()
            cupy.cuda.runtime.memcpyPeerAsync(out.data.ptr, device, a.data.ptr, a.device.id, a.nbytes, stream.ptr)
        return out


def enable_peer_access(devices) -> None:
    """Let every pair of the given GPUs read each other's memory directly (NVLink / PCIe), where they can."""
    import cupy

    rt = cupy.cuda.runtime
    ids = sorted(set(devices))
    for a in ids:
        for b in ids:
            if a != b and rt.deviceCanAccessPeer(a, b):
                with cupy.cuda.Device(a):
                    try:
                        rt.deviceEnablePeerAccess(b)
                    except rt.CUDARuntimeError:  # already enabled
                        pass


def allocation_error(e: MemoryError, what: str) -> MemoryError:
    """``e`` (an out-of-memory; CuPy's is a MemoryError) naming ``what`` was being allocated, unless it names
    something already (the innermost name is the most precise).  Raised from ``except`` blocks, which cost
    nothing until one is taken, where a ``with`` would cost a few microseconds every superstep."""
    if getattr(e, "allocating", None):
        return e
    named = MemoryError(f"{what}: {e}")
    named.allocating = what
    named.__cause__ = e
    return named


def to_numpy(a):
    """A NumPy array from a NumPy or CuPy array (or a scalar)."""
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)


@lru_cache(maxsize=None)
def _device_name(name, device) -> str:
    """A device's name, asked once (the driver's property query costs about a millisecond per call)."""
    if name == "cupy":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(device)
        return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return platform.processor() or platform.machine() or "cpu"


def to_host(a, dtype=None):
    """``a`` as a NumPy array of ``dtype``: cast where it lives (on a GPU, before the copy, so the host never
    converts), then copied into pinned memory (from CuPy's pinned pool, reused across calls), which the copy
    engine reads at full speed where pageable memory would be staged."""
    if not type(a).__module__.startswith("cupy"):
        return np.asarray(a, dtype=dtype)
    import cupyx

    if dtype is not None:
        a = a.astype(dtype, copy=False)
    out = cupyx.empty_pinned(a.shape, a.dtype)
    a.get(out=out)
    return out


def array_module(a):
    """The array module (numpy or cupy) that ``a`` belongs to."""
    if type(a).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


class Timer:
    """Elapsed seconds of device work: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.seconds = None

    def __enter__(self):
        if self.backend.is_gpu:
            cp = self.backend.xp
            self._start, self._stop = cp.cuda.Event(), cp.cuda.Event()
            self._start.record()
        else:
            self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.backend.is_gpu:
            cp = self.backend.xp
            self._stop.record()
            self._stop.synchronize()
            self.seconds = cp.cuda.get_elapsed_time(self._start, self._stop) / 1e3
        else:
            self.seconds = time.perf_counter() - self._t0
        return False


def resolve(backend: str | Backend | None = "auto", device: int = 0) -> Backend:
    """The backend to run on: ``MGRAPH_BACKEND`` overrides "auto"; "auto" picks CuPy when a GPU is present."""
    if isinstance(backend, Backend):
        return backend
    if backend is None:
        backend = "auto"
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if backend == "auto":
        env = os.environ.get("MGRAPH_BACKEND", "auto").strip().lower() or "auto"
        if env not in BACKENDS:
            raise ValueError(f"MGRAPH_BACKEND={env!r} is not one of {', '.join(BACKENDS)}")
        backend = env
    if backend == "auto":
        backend = "cupy" if gpu_available() else "numpy"
    if backend == "cupy" and not gpu_available():
        raise ValueError("backend 'cupy' needs CuPy and a CUDA GPU, and none was found (install mgraph[gpu] on a GPU machine)")
    return Backend(backend, device)


def reset_peak(backend: Backend, release: bool = False) -> None:
    """Start a new peak-memory reading (:func:`peak_bytes`): the process's resident high-water mark is reset
    (Linux); on a GPU, with ``release``, the pool's cached blocks go back to the driver (never before a timed
    run: its allocations would then reach the driver inside the timing)."""
    if backend.is_gpu:
        if release:
            with backend.xp.cuda.Device(backend.device):
                backend.synchronize()
                backend.xp.get_default_memory_pool().free_all_blocks()
        return
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # not Linux, or not allowed: the reading is then the peak since the process started
        pass


def peak_bytes(backend: Backend) -> int:
    """The most memory this device has held since :func:`reset_peak`: on a GPU the size of CuPy's pool, which
    keeps what it once needed (an upper bound of the peak in use: its cached blocks count too), on the CPU the
    process's resident high-water mark (the whole process: threads sharing it count together)."""
    if backend.is_gpu:
        with backend.xp.cuda.Device(backend.device):
            return int(backend.xp.get_default_memory_pool().total_bytes())
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


class PeakWatch:
    """The most memory in use on this device while the ``with`` block runs (``.bytes`` afterwards).

    On a GPU a CuPy memory hook reads the pool's bytes in use after every
    allocation: the live arrays' high-water mark, whatever the pool keeps
    cached (a hook costs a Python call per allocation, so it watches builds,
    not timed runs).  CuPy's hooks belong to the thread that installs them.
    On the CPU it is the process's resident high-water mark (:func:`peak_bytes`).
    """

    def __init__(self, backend: Backend):
        self.backend, self.bytes, self._hook = backend, 0, None

    def __enter__(self):
        reset_peak(self.backend, release=True)
        if self.backend.is_gpu:
            from cupy.cuda import memory_hook

            pool = self.backend.xp.get_default_memory_pool()
            watch = self

            class _Hook(memory_hook.MemoryHook):
                name = "mgraph-peak"

                def malloc_postprocess(self, **kwargs):
                    watch.bytes = max(watch.bytes, pool.used_bytes())

            self.bytes = pool.used_bytes()
            self._hook = _Hook()
            self._hook.__enter__()
        return self

    def __exit__(self, *exc):
        if self._hook is not None:
            self._hook.__exit__(*exc)
        else:
            self.bytes = peak_bytes(self.backend)
        return False

"""Scatters onto slots where many entries share a slot: ``out[at[i]] += / max= / min= values[i]`` on one GPU.

CuPy's ``add.at``, ``maximum.at`` and ``minimum.at`` are one atomic per
entry, and atomics on one address run one after another: Louvain's
scatters of a power-law graph's pairs onto their rows put every pair of a
hub on the hub's one slot (R-MAT 24's hubs took a second a level that way,
docs/perf-notes.md).  Here the lanes of a warp whose entries land on one
slot combine first (grouped by ``__match_any_sync``; a row's arcs and pairs
lie side by side, so a warp mostly holds one or two slots) and the lowest
of them does the atomic.  Maxima and minima are those of the entries in any
order; sums the same to rounding (integer-valued ones exactly).  The NumPy
twin is NumPy's ``ufunc.at``.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

from mgraph.ops import cuda
from mgraph.ops.cuda import BLOCK
from mgraph.ops.cupy_kernels import PRELUDE

SCATTER = r"""
#define FULL 0xffffffffu
#define I64_MIN ((i64)0x8000000000000000ll)
#define I64_MAX ((i64)0x7fffffffffffffffll)

// out[at[i]] += w[i] (1.0 where not weighted); a combined 0.0 adds nothing and is skipped
extern "C" __global__ void __launch_bounds__(BLOCK)
scatter_add(const idx_t* __restrict__ at, const double* __restrict__ w, int weighted, i64 n,
            double* __restrict__ out) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = i < n;
    const i64 slot = valid ? (i64)at[i] : -1;
    const double x = valid ? (weighted ? w[i] : 1.0) : 0.0;
    const unsigned peers = __match_any_sync(FULL, slot);
    const double sum = warp_combine(x, peers, WarpAdd());
    if (valid && (threadIdx.x & 31) == __ffs(peers) - 1 && sum != 0.0) atomicAdd(&out[slot], sum);
}

// out[at[i]] = max(out[at[i]], v[i]); the smallest int64, which changes nothing, is skipped
extern "C" __global__ void __launch_bounds__(BLOCK)
scatter_max(const idx_t* __restrict__ at, const i64* __restrict__ v, i64 n, i64* __restrict__ out) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = i < n;
    const i64 slot = valid ? (i64)at[i] : -1;
    const unsigned peers = __match_any_sync(FULL, slot);
    const i64 m = warp_combine(valid ? v[i] : I64_MIN, peers, WarpMax());
    if (valid && (threadIdx.x & 31) == __ffs(peers) - 1 && m != I64_MIN)
        atomicMax((long long*)&out[slot], (long long)m);
}

// out[at[i]] = min(out[at[i]], v[i]); the largest int64 is skipped
extern "C" __global__ void __launch_bounds__(BLOCK)
scatter_min(const idx_t* __restrict__ at, const i64* __restrict__ v, i64 n, i64* __restrict__ out) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = i < n;
    const i64 slot = valid ? (i64)at[i] : -1;
    const unsigned peers = __match_any_sync(FULL, slot);
    const i64 m = warp_combine(valid ? v[i] : I64_MAX, peers, WarpMin());
    if (valid && (threadIdx.x & 31) == __ffs(peers) - 1 && m != I64_MAX)
        atomicMin((long long*)&out[slot], (long long)m);
}
"""


def source(idx_ctype: str) -> str:
    """The module's CUDA source (the prelude's ``idx_t`` as ``idx_ctype``: the slots' dtype)."""
    return f"#define IDX_T {idx_ctype}\n#define BLOCK {BLOCK}\n" + PRELUDE + SCATTER


_function = cuda.kernel_lookup(source)  # (slot dtype, device, name) -> a kernel of this module


def _slots(at):
    at = cp.ascontiguousarray(at)
    if at.dtype not in cuda.ID_CTYPES:
        at = at.astype(np.int64)
    return at


def add_at(out, at, weights=None):
    """``out[at] += weights`` entry by entry (``weights`` None: 1.0 each; ``out`` float64, contiguous)."""
    n = at.shape[0]
    if n == 0:
        return out
    at = _slots(at)
    weighted = weights is not None
    w = cp.ascontiguousarray(weights.astype(np.float64, copy=False)) if weighted else cuda.dummy(np.float64)
    _function(at.dtype, out.device.id, "scatter_add")(cuda.blocks(n), (BLOCK,),
                                                      (at, w, np.int32(weighted), np.int64(n), out))
    return out


def max_at(out, at, values):
    """``out[at] = maximum(out[at], values)`` entry by entry (``out`` and ``values`` int64, ``out`` contiguous)."""
    return _extreme("scatter_max", out, at, values)


def min_at(out, at, values):
    """``out[at] = minimum(out[at], values)`` entry by entry (``out`` and ``values`` int64, ``out`` contiguous)."""
    return _extreme("scatter_min", out, at, values)


def _extreme(name, out, at, values):
    n = at.shape[0]
    if n == 0:
        return out
    at = _slots(at)
    v = cp.ascontiguousarray(values.astype(np.int64, copy=False))
    _function(at.dtype, out.device.id, name)(cuda.blocks(n), (BLOCK,), (at, v, np.int64(n), out))
    return out

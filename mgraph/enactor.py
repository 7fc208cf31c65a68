"""The BSP loop: run a primitive superstep by superstep and time it.

The enactor knows a primitive only through its contract (reset, iterate,
converged, result).  The host reads one small thing per superstep: the new
frontier's size.
"""
from __future__ import annotations

import time

from .backend import Backend


def enact(primitive, backend: Backend, source=None):
    """Run ``primitive`` to convergence from ``source``; return (result arrays on the device, stats)."""
    sizes = []
    t0 = time.perf_counter()
    with backend.timer() as timer:
        primitive.step = 0
        frontier = primitive.reset(source)
        while frontier is not None:
            while not primitive.converged(frontier):
                frontier = primitive.iterate(frontier)
                primitive.step += 1
                sizes.append(len(frontier))
            frontier = primitive.next_phase()
        result = primitive.result()
    stats = {
        "iterations": primitive.step,
        "elapsed_s": timer.seconds,
        "host_elapsed_s": time.perf_counter() - t0,
        "frontier_sizes": sizes,
    }
    return result, stats

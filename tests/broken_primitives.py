"""User primitives that break the run's bounds or the contract one way each, shared by the tests in this process
(tests/test_bounded_runs.py) and the MPI job (tests/mpi_job.py)."""
from __future__ import annotations

import numpy as np

from mgraph import ops
from mgraph.primitives.contract import Primitive


class Spin(Primitive):
    """Never converges: every superstep returns all of its own vertices again."""

    name = "spin"
    reads_proxies = False

    def reset(self, source=None):
        self.seen = self.xp.zeros(self.num_vertices, dtype=np.int64)
        return self.graph.own_vertices

    def iterate(self, frontier):
        self.seen[frontier] += 1
        return self.graph.own_vertices

    def result(self):
        return {"seen": self.seen}


class Phases(Primitive):
    """Converges at once in every phase, but next_phase always begins another (never None)."""

    name = "phases"
    phase = "again"

    def reset(self, source=None):
        self.value = self.xp.zeros(self.num_vertices, dtype=np.int64)
        return self.frontier_of(None)

    def iterate(self, frontier):
        return frontier

    def next_phase(self):
        return self.frontier_of(None)

    def result(self):
        return {"value": self.value}


class Finishing(Phases):
    """Device 0 finishes after the first phase while the other devices begin a second: they disagree on
    convergence (on one device nothing disagrees, and the run ends)."""

    name = "finishing"

    def reset(self, source=None):
        self.begun = False
        return super().reset(source)

    def next_phase(self):
        if self.graph.index == 0 or self.begun:
            return None
        self.begun = True
        return self.frontier_of(None)


class Totals(Phases):
    """Declares a global sum on device 1 only: the devices take different shares."""

    name = "totals"
    extra = 0.0

    @property
    def global_sums(self):
        return ("extra",) if self.graph.index == 1 else ()

    def next_phase(self):
        return None


def reached_min(local, received):
    """The smaller hop count, -1 (unreached) losing to any count."""
    return np.where(local < 0, received, np.where(received < 0, local, np.minimum(local, received)))


class Reach(Primitive):
    """Reachability whose hop counts combine by ``hops_combine``, a function (the subclasses below break it)."""

    name = "reach"
    needs_source = True
    hops_combine = staticmethod(reached_min)

    @property
    def combine(self):
        return {"hops": type(self).hops_combine}

    def reset(self, source=None):
        self.hops = ops.unvisited(self.graph, np.int32)
        self.via = ops.unvisited(self.graph, self.graph.indices.dtype)
        if source is not None:
            self.hops[source] = 0
        return self.frontier_of(source)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.hops, self.via, self.step + 1)

    def result(self):
        return {"hops": self.hops}


def first_value_only(local, received):
    return reached_min(local, received)[:1]


def as_floats(local, received):
    return reached_min(local, received).astype(np.float64)


def as_list(local, received):
    return reached_min(local, received).tolist()


def shrinks_past_two(local, received):
    """Right for the phase-start check's two values, wrong (one value short) for a longer package."""
    out = reached_min(local, received)
    return out if out.shape[0] <= 2 else out[:-1]


class FirstValueOnly(Reach):
    hops_combine = staticmethod(first_value_only)


class AsFloats(Reach):
    hops_combine = staticmethod(as_floats)


class AsList(Reach):
    hops_combine = staticmethod(as_list)


class ShrinksPastTwo(Reach):
    hops_combine = staticmethod(shrinks_past_two)

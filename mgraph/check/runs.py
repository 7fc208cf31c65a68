"""Checking a run's result: one entry point, :func:`checker`, for the ``mgraph`` command, ``mgraph graph500`` and
the scripts alike.

Takes a primitive's name (one of :data:`CHECKED`), the graph it ran on and PageRank's alpha; gives a callable
``check(result, source=None)`` that returns None when the result passes and the failure's one-line message
otherwise.  Where the result is checked follows where the graph is:

* a whole graph on the host: against the CPU references of :mod:`mgraph.check.validate` (Graph500's rules, scipy,
  a sparse peeling, NumPy Brandes, one exact PageRank step), those that do not depend on the source computed once
  per checker, so that checking every run of cc, pr or bc costs one reference;
* a whole graph on a GPU: where it lives, as the one part of a group of one (:mod:`mgraph.check.parts`), with no
  host copy; the primitives of :data:`WHOLE_REFERENCE` copy it to the host instead;
* a :class:`~mgraph.parts.partitioned.PartitionedGraph` (MPI ranks, no rank holding the graph): rank 0's gathered
  result is broadcast and every rank checks its own part (:mod:`mgraph.check.parts`); collective, every rank
  gets the same verdict.  The primitives of :data:`WHOLE_REFERENCE` cannot be checked there (a ValueError).
"""
from __future__ import annotations

import numpy as np

from mgraph.backend import to_numpy
from mgraph.check import parts as vp
from mgraph.check.validate import (ValidationError, pagerank_step, reference_betweenness, reference_components,
                                   reference_core_numbers, reference_strong_components, reference_triangles,
                                   validate_bfs, validate_communities, validate_label_propagation, validate_sssp)
from mgraph.group import SoloGroup
from mgraph.parts.partitioned import PartitionedGraph

__all__ = ["checker", "CHECKED", "WHOLE_REFERENCE"]

CHECKED = ("bfs", "dobfs", "sssp", "cc", "scc", "pr", "bc", "tc", "kcore", "lpa", "louvain", "leiden")
WHOLE_REFERENCE = ("scc", "bc", "tc", "kcore", "lpa", "louvain", "leiden")  # checked against a reference over the whole graph, on the host
_ON_PARTS = {"bfs": ("depth", "predecessor"), "dobfs": ("depth", "predecessor"), "sssp": ("distance", "predecessor"),
             "cc": ("labels",), "pr": ("rank",)}  # the result arrays a check on parts reads


def checker(name: str, graph, *, alpha: float = 0.85):
    """``check(result, source=None)`` for runs of primitive ``name`` on ``graph`` (None: pass; else the message):
    on the host's CPU references, where the graph lives on a GPU, or on the ranks' parts (see the module)."""
    if name not in CHECKED:
        raise ValueError(f"no check for {name!r}: checks exist for {', '.join(CHECKED)}")
    if isinstance(graph, PartitionedGraph):
        if name in WHOLE_REFERENCE:
            raise ValueError(f"--validate for {name} needs a reference over the whole graph, which no rank holds "
                             f"under MPI: validate {name} on one process")
        return _OnParts(name, graph.group, graph.built_part, alpha)
    if graph.xp is not np and name not in WHOLE_REFERENCE:  # a whole graph on a GPU: no host copy
        return _OnParts(name, SoloGroup(), lambda: graph, alpha)
    return _Whole(name, graph, alpha)


class _Whole:
    """Checks on the host against references over the whole graph."""

    def __init__(self, name, graph, alpha):
        self.name, self.alpha = name, alpha
        self.graph = graph.to("numpy")
        self._references = {}

    def __call__(self, result, source=None):
        try:
            self._check(result, source)
        except ValidationError as e:
            return str(e)
        return None

    def _reference(self, key, compute):
        if key not in self._references:
            self._references[key] = compute()
        return self._references[key]

    def _check(self, result, source):
        g = self.graph
        if self.name in ("bfs", "dobfs"):
            validate_bfs(g, source, result.depth, result.predecessor)
        elif self.name == "sssp":
            validate_sssp(g, source, result.distance, result.predecessor)
        elif self.name == "cc":
            _same("CC label", result.labels, self._reference("cc", lambda: reference_components(g)))
        elif self.name == "scc":
            _same("SCC label", result.labels, self._reference("scc", lambda: reference_strong_components(g)))
        elif self.name == "pr":
            self._check_pagerank(result)
        elif self.name == "tc":
            _same("triangle count", result.triangles, self._reference("tc", lambda: reference_triangles(g)))
        elif self.name == "kcore":
            _same("core number", result.core, self._reference("kcore", lambda: reference_core_numbers(g)))
        elif self.name == "lpa":
            validate_label_propagation(g, result.labels)
        elif self.name in ("louvain", "leiden"):
            validate_communities(g, result.community, result.stats["modularity"], result.stats["resolution"])
        else:
            key = None if source is None else tuple(source)
            ref = self._reference(key, lambda: reference_betweenness(g, range(g.num_vertices) if key is None else key))
            _same("BC centrality", result.centrality, ref, rtol=1e-6, atol=1e-9 * max(1.0, float(ref.max(initial=0))))

    def _check_pagerank(self, result):
        """One exact power-iteration step from the result must move it by at most alpha × its last L1 change.

        For x_k = T(x_{k-1}), |T(x_k) - x_k|_1 <= alpha·|x_k - x_{k-1}|_1, since
        T contracts by alpha in L1; so a wrong operator or a misreported error
        fails, and |rank - x*|_1 <= step / (1 - alpha) bounds the distance to
        the true ranks.  One sparse product: cheap on R-MAT scale 24 as well.
        """
        step_of = self._reference("pr", lambda: pagerank_step(self.graph, self.alpha))
        rank = np.asarray(result.rank, dtype=np.float64)
        _pagerank_verdict(float(np.abs(step_of(rank) - rank).sum()), self.alpha, result.stats)


class _OnParts:
    """Checks on parts: rank 0's result broadcast, every worker of ``group`` checking the arcs of its ``part()``
    where the part lives (mgraph.check.parts: Graph500's rules, a distributed PageRank step).  Collective."""

    def __init__(self, name, group, part, alpha):
        self.name, self.group, self.part, self.alpha = name, group, part, alpha

    def __call__(self, result, source=None):
        part, group = self.part(), self.group
        if part is None:
            raise ValueError(f"checking {self.name}: no part of the graph is built on this rank yet (run first)")
        arrays = [group.bcast_array(None if group.rank else to_numpy(getattr(result, k))) for k in _ON_PARTS[self.name]]
        try:
            if self.name in ("bfs", "dobfs"):
                vp.validate_bfs_parts(group, part, source, *arrays)
            elif self.name == "sssp":
                vp.validate_sssp_parts(group, part, source, *arrays)
            elif self.name == "cc":
                vp.validate_components_parts(group, part, *arrays)
            else:
                _pagerank_verdict(vp.pagerank_residual_parts(group, part, arrays[0], self.alpha), self.alpha,
                                  result.stats)
        except ValidationError as e:
            return str(e)
        return None


def _pagerank_verdict(step: float, alpha: float, stats) -> None:
    """Raise ValidationError when one exact step moved PageRank's result by more than allowed (L1): alpha x its
    last reported change, and with float32 shares the rounding of one step's gathers, alpha * 2**-24 (the ranks
    sum to 1)."""
    rounding = alpha * 2.0 ** -24 if stats.get("shares") == "float32" else 0.0
    allowed = alpha * float(stats["error"]) * (1 + 1e-6) + 1e-10 + rounding
    if not step <= allowed:
        raise ValidationError(f"PageRank: one more power-iteration step moves the ranks by {step:.3g} (L1), "
                              f"more than alpha x the reported last change allows ({allowed:.3g})")


def _same(what, got, want, *, rtol=0.0, atol=0.0):
    got = np.asarray(got)
    if got.shape != want.shape:
        raise ValidationError(f"{what}: expected {want.shape[0]} values, got shape {got.shape}")
    bad = np.flatnonzero(~np.isclose(got, want, rtol=rtol, atol=atol)) if rtol or atol else np.flatnonzero(got != want)
    if bad.size:
        v = int(bad[0])
        raise ValidationError(f"{what}: vertex {v} has {got[v].item()!r}, the reference {want[v].item()!r} "
                              f"({bad.size} vertices differ)")

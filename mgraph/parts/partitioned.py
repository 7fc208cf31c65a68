"""A graph that no process holds whole: its source, and this rank's part once a run has built it.

Under MPI (``mpiexec -n P``), :func:`mgraph.load` returns a
:class:`PartitionedGraph` instead of a :class:`~mgraph.graph.Graph`: it
knows where the edges come from (a generator spec or a file) and what the
whole graph is (vertices, arcs, directed), and each rank builds only its own
part, on its own device, the first time a run needs it (mgraph.runner).  The
part is kept for the next run with the same partitioning, in the one part
cache (:mod:`mgraph.parts.cache`).
"""
from __future__ import annotations

import contextlib

import numpy as np

from mgraph.backend import array_module, to_numpy
from mgraph.io.sources import source_of
from mgraph.parts import cache


DRAW_ROUNDS = 64  # rounds of random candidates before draw_sources gives up looking


def draw_sources(n: int, k: int, seed: int, vouch, candidates=None) -> list[int]:
    """``k`` vertex ids drawn as Graph500 draws roots: uniform candidates, kept where ``vouch(candidates)`` (a bool
    array) says they have out-degree >= 1; distinct while there are enough.  Whole graphs and ranks' parts draw
    the same sequence from the same seed, so runs on 1 GPU and on P ranks start from the same vertices.

    The draw stops after DRAW_ROUNDS rounds of candidates.  Only a graph where almost no vertex has an arc is left
    short then: a caller that holds every vertex of out-degree >= 1 passes them as ``candidates`` and the rest is
    picked among them (distinct while there are enough); ranks, which hold no such list, repeat what was found.
    """
    rng = np.random.default_rng(seed)
    chosen = []
    for _ in range(DRAW_ROUNDS):
        if len(chosen) >= k or n == 0:
            break
        cand = rng.integers(0, n, size=max(4 * k, 64))
        for v in cand[np.asarray(vouch(cand), dtype=bool)]:
            if int(v) not in chosen:
                chosen.append(int(v))
            if len(chosen) >= k:
                break
    if len(chosen) < k and candidates is not None and len(candidates):
        rest = np.setdiff1d(np.asarray(candidates, dtype=np.int64), chosen)
        more = k - len(chosen)
        chosen += rng.choice(rest, size=min(more, rest.size), replace=False).tolist() if rest.size else []
    if not chosen:
        raise ValueError(f"no vertex with out-degree >= 1 among {DRAW_ROUNDS * max(4 * k, 64)} random draws: the "
                         "graph has no (or almost no) edges; give the sources")
    while len(chosen) < k:
        chosen.append(chosen[len(chosen) % max(len(chosen), 1)])
    return chosen[:k]


class PartitionedGraph:
    """The graph of ``source`` split over the ranks of ``group``; collective: every rank makes one."""

    def __init__(self, source, group, *, directed=None, seed=0, weights=None):
        self.group = group
        self.source = source_of(source, directed=directed, seed=seed, weights=weights)
        self.source.open(group)
        self.num_vertices = int(self.source.num_vertices)
        self.directed = bool(self.source.directed)
        self.is_weighted = bool(self.source.weighted)
        self.weights = True if self.is_weighted else None  # what run functions test ("is it weighted")

    @property
    def num_arcs(self):
        """Stored arcs of the whole graph: known once a run has built this rank's part (duplicates and self-loops
        are dropped then), else None."""
        kept = cache.held(self)
        return None if kept is None else int(kept.parts[0].num_global_arcs)

    @property
    def num_edges(self):
        if self.num_arcs is None:
            return None
        return self.num_arcs if self.directed else self.num_arcs // 2

    def built_part(self):
        """This rank's part built for the last run (the part cache keeps one set at a time), or None before a run
        has built one."""
        kept = cache.held(self)
        return None if kept is None else kept.parts[0]

    def random_sources(self, k: int, seed: int, part) -> list[int]:
        """``k`` random vertices of out-degree >= 1 (distinct while there are enough), the same on every rank: each
        rank vouches for the candidates it owns (:func:`draw_sources`)."""
        return draw_sources(self.num_vertices, k, seed, self.has_edges(part))

    def has_edges(self, part):
        """``f(ids) -> bool array``: which of the caller ids ``ids`` have out-degree >= 1, the same answer on every
        rank; each rank vouches for the candidates ``part`` (its own) owns, and an allgather combines the verdicts.
        Collective."""
        xp = array_module(part.indptr)
        # the part's device, not the current one: a rank's arrays read from another GPU go through peer access
        with contextlib.nullcontext() if xp is np else xp.cuda.Device(part.indptr.device.id):
            own_ids = to_numpy(part.vertex_ids[part.own_vertices]).astype(np.int64)
            deg = to_numpy(part.out_degree()[part.own_vertices])
        order = np.argsort(own_ids)
        own_sorted, deg_sorted = own_ids[order], deg[order]

        def vouch(cand):
            good = np.zeros(cand.shape[0], dtype=np.int64)
            if own_sorted.shape[0]:
                at = np.minimum(np.searchsorted(own_sorted, cand), own_sorted.shape[0] - 1)
                mine = own_sorted[at] == cand
                good[mine] = deg_sorted[at[mine]] > 0
            return np.sum(self.group.allgather(good), axis=0) > 0

        return vouch

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"PartitionedGraph({self.source.name}: {self.num_vertices} vertices, {kind}, "
                f"{self.group.size} ranks)")

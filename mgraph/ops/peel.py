"""Core numbers of a whole graph, level by level and round by round: the NumPy twin of the GPU's peeling kernel
(:mod:`mgraph.ops.cupy_peel`), which runs the same steps in one cooperative launch.

Per level: drop the removed vertices from the remaining list and take its smallest degree k; remove the remaining
vertices of degree k; then cascade, each round taking one from every remaining neighbour's degree per arc of the
round's frontier (out-arcs, and in-arcs on a directed graph, whose degree is both), the neighbours that reach k
being removed and forming the next round's frontier.  ``networkx.core_number`` gives the same numbers.
"""
from __future__ import annotations

import numpy as np


def core_numbers(graph, stats=None):
    """Every vertex's core number (int64) of a whole graph on the CPU; ``stats`` (a dict), where given, gets the
    levels and cascade rounds, as the kernel counts them."""
    n = graph.num_vertices
    rgraph = graph.reverse() if graph.directed else graph
    deg = np.diff(graph.indptr).astype(np.int64)
    if graph.directed:
        deg += np.diff(rgraph.indptr)
    core = np.full(n, -1, dtype=np.int64)
    remaining = np.arange(n, dtype=np.int64)
    levels = rounds = 0
    sides = [graph, rgraph] if graph.directed else [graph]
    while True:
        remaining = remaining[core[remaining] < 0]
        if remaining.shape[0] == 0:
            break
        levels += 1
        k = int(deg[remaining].min())
        frontier = remaining[deg[remaining] <= k]
        core[frontier] = k
        while frontier.shape[0]:
            rounds += 1
            heads = np.concatenate([_targets(side, frontier) for side in sides])
            heads = heads[core[heads] < 0]
            before = deg[heads]  # what the arcs' own decrements start from, summed per neighbour below
            np.subtract.at(deg, heads, 1)
            crossed = np.unique(heads[(deg[heads] <= k) & (before > k)])
            core[crossed] = k
            frontier = crossed
    if stats is not None:
        stats["levels"], stats["rounds"] = levels, rounds
    return core


def _targets(graph, vertices):
    """The heads of ``vertices``' arcs in ``graph`` (int64)."""
    starts, ends = graph.indptr[vertices], graph.indptr[vertices + 1]
    lengths = ends - starts
    at = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(lengths.sum())
    return graph.indices[at].astype(np.int64)

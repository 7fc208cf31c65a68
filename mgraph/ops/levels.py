"""Several push advances in one call: the levels of a traversal whose frontiers stay small.

A long-diameter traversal (a road network, a grid, the tail of a power-law
BFS) runs thousands of levels of a few hundred vertices each; driven from the
host, each level costs a launch sequence and a read of the output's length,
far more than its work.  :func:`advance_levels` runs such levels back to back
on the device instead — on a GPU one persistent cooperative kernel that runs
the functor over the frontier's arcs, synchronises the grid and goes on with
what the level emitted — and returns to the host only when the frontier is
empty, has grown past a bound on its arcs (the load-balanced advance serves a
large frontier better), or a level bound is reached.

The functor is the one a single :func:`mgraph.ops.advance` would run; one of
its ``int`` scalar parameters is the level (BFS's ``level``, SSSP's
``stamp``), one larger on every level.  Levels only fuse where no exchange
must run between them: on a graph that is one device's part of a larger graph
the call runs one level, as :func:`~mgraph.ops.advance` would.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from mgraph.ops.queue import Queue, plain

FUSE_ARCS = 1 << 16  # arcs: a frontier with more out-arcs than this leaves the fused levels for the load-balanced advance
# arcs: the bound for a visit's levels (BFS), which claim each vertex once in the whole traversal, so that the fused
# kernel's work stays the graph's arcs however large the frontiers; a random geometric graph's wavefronts hold 10^5
# arcs and more, and below this bound they fuse (a relaxation, which may revisit vertices, keeps FUSE_ARCS)
FUSE_VISIT_ARCS = 1 << 20
# arcs: on a graph with hubs the levels across devices (mgraph.comm.peer, gated) run a frontier of at most this many
# out-arcs, and leave a larger one to the load-balanced advance and the host's exchange
GATED_ARCS = FUSE_VISIT_ARCS
# arcs: the fused kernel gives each frontier vertex one warp, so a graph with a vertex of more out-arcs than this (a
# power-law hub, which may sit in a small frontier) runs its levels one at a time through the load-balanced advance
FUSE_DEGREE = 1024
# vertices: a direction-optimizing traversal on one GPU runs its levels in one kernel (:func:`visit_directions`) from a
# frontier of at most this many (its start), whose arcs outside hubs are then at most FUSE_VISIT_ARCS
DIRECTIONS_FRONTIER = FUSE_VISIT_ARCS // FUSE_DEGREE
# arcs: in those levels a frontier vertex with more out-arcs is a hub, whose arcs the whole grid takes, not one warp
DIRECTIONS_HUB = 64
# vertices: those levels push a frontier of fewer (a level's hubs are counted in 24 bits of one word), and leave a
# larger push to the load-balanced advance
PUSH_MOST = 1 << 24
_MAX_DEGREE = weakref.WeakKeyDictionary()  # graph -> its largest out-degree, read once while the graph lives
_FUSABLE = weakref.WeakKeyDictionary()  # graph -> fusable(graph)
_WHOLE = weakref.WeakKeyDictionary()  # graph -> is_whole(graph)


class PullRule:
    """Where a direction-optimizing traversal (:class:`mgraph.ops.Direction`) would switch to pulling: after a level
    that emitted m vertices, with ``visited`` vertices in all the frontiers so far, when m·|E|/|V| exceeds
    (|V| − visited)·|V|/visited · do_a — the policy's own test, on the whole graph's sizes."""

    def __init__(self, graph, visited, do_a):
        self.n, self.arcs = graph.num_global_vertices, max(graph.num_global_arcs, 1)
        self.visited, self.do_a = int(visited), float(do_a)

    def pulls_after(self, emitted: int, visited: int) -> bool:
        forward = emitted * self.arcs / self.n
        backward = (self.n - visited) * self.n / max(visited, 1)
        return forward > backward * self.do_a


class Levels(NamedTuple):
    """What :func:`advance_levels` returns."""

    frontier: object   #: the last level's output: the next frontier (each vertex once)
    levels: int        #: how many levels ran (at least one where the frontier had vertices)
    emitted: int       #: vertices emitted over all those levels, the last one's included


def fusable(graph) -> bool:
    """Whether levels may run fused on ``graph``: it holds every vertex's arcs itself (one device, so no exchange
    must run between levels) and has no vertex of more than FUSE_DEGREE out-arcs.  Decided once while the graph
    lives (every batched superstep asks)."""
    if graph not in _FUSABLE:
        _FUSABLE[graph] = is_whole(graph) and max_degree(graph) <= FUSE_DEGREE
    return _FUSABLE[graph]


def max_degree(graph) -> int:
    """``graph``'s largest out-degree, read once (a host read on a GPU) and kept while the graph lives: what fusing
    levels and sizing a push advance's launch from a bound both need."""
    if graph not in _MAX_DEGREE:
        _MAX_DEGREE[graph] = int(graph.out_degree().max()) if graph.num_vertices else 0
    return _MAX_DEGREE[graph]


def is_whole(graph) -> bool:
    """Whether ``graph`` holds every vertex's arcs itself (one device), so that levels may follow each other
    without an exchange between them.  Decided once while the graph lives: a superstep asks, and a whole graph's
    own vertices are an array made on each request."""
    if graph not in _WHOLE:
        _WHOLE[graph] = int(graph.own_vertices.shape[0]) == graph.num_global_vertices
    return _WHOLE[graph]


def arcs_of(graph, frontier) -> int:
    """The out-arcs of ``frontier``'s vertices (the NumPy twin's stop test)."""
    f = frontier.astype(np.int64, copy=False)
    return int((graph.indptr[f + 1] - graph.indptr[f]).sum())


def advance_levels(graph, frontier, functor, args, level_at, limit, max_levels, advance, rule=None):
    """The NumPy twin (``advance``: the one-level operator): where levels may fuse and the frontier's out-arcs are
    at most ``limit``, ``advance`` level after level, the argument at ``level_at`` one larger each time, until the
    output is empty, its out-arcs exceed ``limit``, ``max_levels`` levels ran, or ``rule`` (a :class:`PullRule`)
    says the next level pulls; else one level."""
    fuse = max_levels > 1 and fusable(graph) and 0 < frontier.shape[0] <= limit and arcs_of(graph, frontier) <= limit
    args = list(args)
    levels = emitted = 0
    visited = rule.visited if rule is not None else 0
    while True:
        frontier = advance(graph, frontier, functor, tuple(args))
        levels += 1
        m = int(frontier.shape[0])
        emitted += m
        visited += m
        if not fuse or m == 0 or levels >= max_levels or arcs_of(graph, frontier) > limit or \
                (rule is not None and rule.pulls_after(m, visited)):
            return Levels(frontier, levels, emitted)
        args[level_at] = type(args[level_at])(args[level_at] + 1)


def light_arcs(graph, frontier) -> int:
    """The out-arcs of ``frontier``'s vertices of at most DIRECTIONS_HUB arcs: the part of a push level that the
    direction-optimizing levels' kernel gives one warp per vertex (a hub's arcs it spreads over the whole grid)."""
    f = frontier.astype(np.int64, copy=False)
    deg = graph.indptr[f + 1] - graph.indptr[f]
    return int(deg[deg <= DIRECTIONS_HUB].sum())


def visit_directions(graph, frontier, label, pred, level, policy, limit, max_levels, push, pull):
    """The NumPy twin of a direction-optimizing traversal's levels in one call (the GPU runs them in one kernel):
    from ``frontier`` (labelled ``level`` - 1), each level takes the direction ``policy`` (an "auto"
    :class:`mgraph.ops.Direction`) chooses for its frontier and runs ``push(frontier, level)`` or
    ``pull(frontier, level)`` (one level each), until a level emits nothing, ``max_levels`` levels ran, or the next
    level would push a frontier of more than ``limit`` :func:`light_arcs` (the load-balanced advance's, from the
    host) or of PUSH_MOST vertices or more.  Every level is one ``policy.choose``, as when the host drives them;
    returns :class:`Levels`."""
    levels = emitted = 0
    while True:
        way = policy.choose(int(frontier.shape[0]))
        frontier = (pull if way == "pull" else push)(frontier, level + levels)
        levels += 1
        m = int(frontier.shape[0])
        emitted += m
        if m == 0 or levels >= max_levels or \
                (policy.next_way(m) == "push" and (light_arcs(graph, frontier) > limit or m >= PUSH_MOST)):
            return Levels(frontier, levels, emitted)


def advance_queue(graph, frontier, functor, args, advance):
    """The NumPy twin of a push advance that returns a :class:`~mgraph.ops.queue.Queue` (``advance``: the one-level
    operator): on a graph whose levels may fuse (:func:`fusable`, where the GPU runs its step kernel), the output
    with its count in a word the host has not read, so that the enactor's batches run on the CPU as on a GPU;
    elsewhere the plain output, as the GPU's load-balanced advance gives it."""
    out = advance(graph, plain(frontier), functor, args)
    if not fusable(graph):
        return out
    return Queue(out, np.array([out.shape[0]], dtype=np.uint64))  # counted, not yet read

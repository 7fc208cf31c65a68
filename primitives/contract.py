"""The primitive contract: what a programmer writes, and nothing about devices.

A primitive is a single-device program over one graph.  It declares what the
seed paper says a programmer must: the per-superstep iteration (written with
:mod:`mgraph.ops` only), the per-vertex values that travel with remote
vertices (``combine`` and ``carry``), how received values combine with local
ones, and the stop condition.  The enactor owns the loop, the timing and,
with several devices, the exchange.

What the framework guarantees, so that one program runs on one device or on
many: ``graph`` may be one device's part of a larger graph.  Its
``graph.own_vertices`` are this device's own (their out-arcs, and in
``graph.reverse()`` their in-arcs, are all here); the others are copies
("proxies") of vertices owned elsewhere, with no arcs of their own.  After every superstep, each vertex
of a returned frontier travels with its ``combine`` values to the devices
that hold it (and its ``carry`` values to its owner); there the values are
combined, and every copy whose value changed joins that device's next frontier (``every_own_vertex``: the
own vertices stay the frontier).  When ``reads_proxies`` is
true, all copies of a vertex agree at the start of every superstep.

How the own vertices lie among the others is the graph's business, not the
primitive's: ``graph.own(a)`` gives a per-vertex array's own entries (a view
where it can), ``graph.own_mask()`` marks them, and :mod:`mgraph.ops` writes
or reduces over them (``ops.own_map``, ``ops.l1_distance(graph.own(a),
graph.own(b))``).  Choices that every device must make alike belong to the
operators too: a traversal hands an ``ops.Direction`` to its advance, which
picks push or pull from whole-graph totals.
"""
from __future__ import annotations


class ContractError(ValueError):
    """A primitive broke the contract (a frontier that is not an array of this graph's ids, a result that is not
    per-vertex arrays, an unknown combine): raised the same way on one device and on many, naming the primitive,
    the device and the superstep."""


def owners_value(local, received):
    """A combine for values only a vertex's owner computes (PageRank's shares, label propagation's labels): a copy
    takes what arrives."""
    return received


class Primitive:
    """Base class.  Subclasses set ``name`` and implement reset/iterate/result."""

    name = "primitive"
    #: per-vertex arrays merged when copies of a vertex meet: {"depth": "min"}; "min"|"max"|"sum"|callable
    #: (a callable gets (local values, received values) and returns the combined values).  "min" treats
    #: ops.UNVISITED (-1) in an integer array as unreached, larger than any value.  May depend on the phase.
    combine: dict = {}
    #: per-vertex arrays sent along with a vertex to its owner and taken there where the combine improved
    #: (predecessors); the framework reads them only on owners, so copies elsewhere may hold stale values
    carry: tuple = ()
    #: arrays (in ``carry`` or ``result()``) whose values are vertex ids, renumbered between devices; a ``combine``
    #: array of vertex ids must hold the caller's ids instead (``graph.vertex_ids``, as CC does): ValueError
    vertex_valued: tuple = ()
    #: scalar attributes that are totals over the whole graph: each device sets its own vertices' share in
    #: every reset / iterate / next_phase, and after that superstep each device sees the sum
    global_sums: tuple = ()
    #: scalar attributes that are minima over the whole graph, set and seen like ``global_sums`` (inf: none here).
    #: May be a property that depends on the phase (CC agrees on its hub once), the same on every device
    global_mins: tuple = ()
    #: 1-D arrays (one dtype each) that each device sets in every reset / iterate / next_phase to its own share of
    #: a list that is no per-vertex array (Louvain's moves: a community's total changes wherever its members are),
    #: and after that superstep each device holds every device's entries concatenated in device order.  May be a
    #: property that depends on the phase, the same on every device
    global_lists: tuple = ()
    #: iterate reads the values of vertices other than the frontier's (neighbours, pull): keep copies current.
    #: May be a property that depends on the phase: where it turns on, copies of the arrays combined while it
    #: was off are first brought up to date (a plain False never reads them, and nothing is tracked)
    reads_proxies = True
    #: True: every frontier reset, iterate and next_phase return is ``graph.own_vertices`` itself (every own vertex
    #: changes every superstep: PageRank).  The exchange then sends no frontier to owners and each own vertex's
    #: values to the devices holding copies over lists built once, where the copies take them without joining the
    #: frontier (iterate is handed the own vertices); another frontier is a ContractError
    every_own_vertex = False
    #: True when the run starts from one source vertex: mgraph.run then requires ``source`` (or ``sources``);
    #: False: a source given to mgraph.run is refused
    needs_source = False
    #: False: the primitive needs a whole graph (one device); a run on several is refused before it starts
    runs_on_parts = True
    #: True: on a part, proxies carry their arcs to the other vertices the part holds (rows sorted), fetched from
    #: their owners before the run, so that an own vertex's neighbours' lists are whole where they meet its own
    #: (triangle counting); undirected graphs only
    proxy_arcs = False
    #: set by the enactor before each iterate: how many vertices the whole frontier has, on all devices (in a
    #: batched superstep a number read from the device only where the primitive uses it)
    frontier_total = 0
    #: True: on one device, where the stop condition is the default (an empty frontier) and there are no
    #: totals to share, the enactor runs supersteps in batches: the push advances return ``mgraph.ops.Queue``
    #: frontiers whose length stays on the device, the host reads a batch's lengths at once, and the supersteps
    #: run past the empty frontier inside the last batch are taken back (``step`` too).  Their iterate sees an
    #: empty frontier and must change nothing an advance of nothing would not; set False where it would (a
    #: primitive that keeps a list of its frontiers, or counts its iterates itself)
    batches = True

    #: supersteps run so far in this run's phase, counted by the enactor after each iterate; an iterate that runs
    #: several levels at once (:func:`mgraph.ops.advance_levels`) adds the levels beyond the first itself
    step = 0

    def __init__(self, graph):
        self.graph = graph
        self.xp = graph.xp
        self.num_vertices = graph.num_vertices
        self.step = 0

    def reset(self, source=None):
        """Initialise per-vertex state; return the first frontier.

        ``source`` is the source's id in this graph, or None when the run has
        no source or the source is not on this graph.
        """
        raise NotImplementedError

    def iterate(self, frontier):
        """One superstep on one device; return the next frontier (each vertex at most once)."""
        raise NotImplementedError

    def converged(self, frontier) -> bool:
        """Stop condition of this device: by default, an empty frontier.  The run stops when all agree."""
        return len(frontier) == 0

    def next_phase(self):
        """Called when every device has converged: the first frontier of the next phase, or None to finish."""
        return None

    def result(self) -> dict:
        """Per-vertex results (arrays on the device) by name."""
        raise NotImplementedError

    def frontier_values(self) -> dict:
        """Values that every vertex of the frontier just returned (by reset, iterate or next_phase) holds in
        ``combine`` arrays, the same on every device: BFS's {"depth": level}.  The names may change between phases,
        not within one (the exchange is planned per phase).  Optional; with it a large
        broadcast frontier travels as bits and these values are restored where it arrives, and
        where every combine is a min or max and named here the merges skip their dedupe (what arrives cannot
        change a frontier vertex, nor any vertex twice), so a wrong value here is a wrong frontier."""
        return {}

    def frontier_of(self, vertices):
        """A frontier array of ``vertices`` (None: no vertex) in this graph's id type."""
        if vertices is None:
            vertices = []
        return self.xp.asarray(vertices, dtype=self.graph.indices.dtype).reshape(-1)

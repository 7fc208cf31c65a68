"""The one part cache: the parts built from a graph, kept for the next run that would build the same ones.

A run on several devices splits its graph into parts (worker threads: one
part per device of this process; MPI ranks: this rank's part).  Building them
costs more than most runs, so the parts are kept with what shaped them (the
``key``: the run options that change a part) and the next run with the same
key takes them as they are.  One set per graph is kept (parts are as large as
the graph), replaced when a run needs other parts; they go when the graph goes.

Nothing is written into the graph: the cache is keyed by the graph object and
lets go of its entry when the graph is collected.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

_SETS: dict = {}  # id(graph) -> PartSet: the one set kept for that graph
_WATCHED: set = set()  # id(graph) of the graphs whose collection ends their entry


@dataclass
class PartSet:
    """The parts this process built for one graph and ``key``, how long the build took, and values derived from
    the parts that later runs read again (``kept``: e.g. the caller ids a root gathers from every rank)."""

    key: object
    parts: list
    info: dict  # partition_s, subgraph_s (seconds), build_peak_bytes (one per part)
    kept: dict = field(default_factory=dict)


def parts_for(graph, key, build):
    """(the PartSet of ``graph`` for ``key``, whether it was kept from an earlier run).

    ``build()`` returns (parts, info) when nothing is kept for ``key``; the new
    set replaces the graph's earlier one.  ``key`` None builds and keeps
    nothing (a callable partitioner may partition differently each call).
    Every worker of a group calls this alike, so all of them reuse or all build.
    """
    if key is None:
        parts, info = build()
        return PartSet(None, parts, info), False
    kept = _SETS.get(id(graph))
    if kept is not None and kept.key == key:
        return kept, True
    _SETS.pop(id(graph), None)  # the old parts go before the new ones are built: one set in memory at a time
    parts, info = build()
    kept = PartSet(key, parts, info)
    if id(graph) not in _WATCHED:
        _WATCHED.add(id(graph))
        weakref.finalize(graph, _gone, id(graph))
    _SETS[id(graph)] = kept
    return kept, False


def held(graph) -> PartSet | None:
    """The PartSet kept for ``graph`` (its parts built by the last multi-device run), or None."""
    return _SETS.get(id(graph))


def _gone(graph_id) -> None:
    """The graph was collected: its parts go too (and its id may name another graph from now on)."""
    _SETS.pop(graph_id, None)
    _WATCHED.discard(graph_id)

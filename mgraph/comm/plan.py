"""How a phase's supersteps exchange: decided once, when the phase starts, from the primitive's declarations.

The exchange (:class:`mgraph.comm.Exchange`) runs the same steps for every
primitive, but which of them apply, what a package holds and whether a merge
must dedupe follow from what the primitive declares (``combine``, ``carry``,
``frontier_values``, ``reads_proxies``, ``every_own_vertex``) and from the
part's layout.  A :class:`Plan` states those choices in one place, so the
exchange reads a field instead of re-deriving a condition each superstep, and
a test can read the choices directly.  A primitive's combines may change
between phases (SSSP's tree walk, BC's backward sweep), never within one.
"""
from __future__ import annotations

from dataclasses import dataclass

COMMUNICATIONS = ("selective", "broadcast")


def check_communication(value) -> str:
    """``value`` if it names a communication (a str of COMMUNICATIONS), else a ValueError naming it: the one
    check of the option, made by the run options (mgraph.runner.options) and by :func:`plan` for direct callers."""
    if not isinstance(value, str) or value not in COMMUNICATIONS:
        raise ValueError(f"unknown communication {value!r}: expected one of {', '.join(COMMUNICATIONS)}")
    return value

# Hop 0 (the primitive's output to the devices that must see it):
TO_NOBODY = "nobody"  # every own vertex, selective: each owner has its vertices' values already
TO_OWNERS = "owners"  # selective: each vertex owned elsewhere, to its owner only
TO_EVERY_PEER = "every peer"  # broadcast: the whole frontier to every device
# Hop 1 (owners to the devices holding copies, where copies must stay current):
HOLDERS_NONE = None
HOLDERS_BORDERS = "borders"  # every own vertex changed: fixed lists, one per peer, built once
HOLDERS_OWN_FIRST = "own first"  # 1-hop: the merged frontier's own vertices are its ids below own_below
HOLDERS_BY_OWNER = "by owner"  # duplicate-all: the merged frontier's own vertices picked by owner


@dataclass(frozen=True)
class Plan:
    """One phase's exchange, derived by :func:`plan` (read its fields' comments there)."""

    combines: dict  # name -> "min" | "max" | "sum" | function, as the primitive declared for this phase
    implied: frozenset  # combined names whose values frontier_values() gives for every frontier vertex
    fields: tuple  # combined names whose values travel in packages (the others are implied)
    carry: tuple  # carried names, sent to a vertex's owner only
    function: bool  # some combine is a function: it must see values of vertices present on the receiver
    hop0: str  # TO_NOBODY | TO_OWNERS | TO_EVERY_PEER
    caller_ids: bool  # hop 0's packages name vertices by caller id (broadcast on 1-hop parts), else receiver's ids
    as_bits: bool  # broadcast: a large frontier may go as a bitmap (no value travels with it)
    dedupe: bool  # hop 0's merge may meet a vertex twice (see changes_once); hop 1 also by its frontier
    holders: str | None  # hop 1: HOLDERS_* (None: copies are not kept current this phase)
    track_stale: bool  # no hop 1 now, but reads_proxies may turn on in a later phase: note what changes


def changes_once(implied, combines) -> bool:
    """Whether no vertex can join the frontier twice in a hop: every combined value is a min or max whose value the
    primitive implies for every frontier vertex on every device (``frontier_values``, BFS's level).  What arrives
    then equals what each frontier vertex holds, so a vertex of the frontier never changes, and one outside it
    changes once, to those values: no scratch bitmap, no marks."""
    return bool(combines) and all(name in implied and op in ("min", "max") for name, op in combines.items())


def plan(prim, sub, num_devices: int, communication: str) -> Plan:
    """The exchange of ``prim``'s current phase on part ``sub`` (a SubGraph) of ``num_devices``."""
    check_communication(communication)
    combines = dict(prim.combine)
    implied = frozenset(prim.frontier_values())
    fields = tuple(name for name in combines if name not in implied)
    function = any(callable(op) for op in combines.values())
    selective = communication == "selective"
    whole = bool(getattr(prim, "every_own_vertex", False))
    one_hop = getattr(sub, "id_on", None) is not None
    if not selective:
        hop0 = TO_EVERY_PEER
    else:
        hop0 = TO_NOBODY if whole else TO_OWNERS
    reads = selective and bool(prim.reads_proxies)
    if not reads:
        holders = HOLDERS_NONE
    elif whole:
        holders = HOLDERS_BORDERS
    else:
        holders = HOLDERS_OWN_FIRST if one_hop else HOLDERS_BY_OWNER
    return Plan(combines=combines, implied=implied, fields=fields, carry=tuple(prim.carry), function=function,
                hop0=hop0, caller_ids=not selective and getattr(sub, "global_to_local", None) is not None,
                as_bits=not selective and not fields and not function,
                dedupe=not changes_once(implied, combines), holders=holders,
                track_stale=selective and not reads and _phased(prim))


def _phased(prim) -> bool:
    """Whether the primitive's ``reads_proxies`` depends on its phase (a property), so that it may turn on later
    and copies left stale now must then be brought up to date; a fixed False (push BFS) never reads them."""
    return isinstance(getattr(type(prim), "reads_proxies", None), property)

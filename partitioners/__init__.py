"""Vertex -> device assignment: the first stage of a multi-device run.

``assign(graph, num_parts, partitioner, seed)`` gives every vertex an owner
part (one part per device).  The built-ins are "random" (the seed paper's
default, cheapest), "biased-random" (random, pulled toward the part holding a
vertex's neighbours, balance-bounded) and "metis" (pymetis on the host: the
smallest borders, the slowest).  Any callable ``(graph, num_parts, seed) ->
owner array`` works too, and its output is checked like the built-ins'.

Owners come back as int32 on the graph's array module, so on a GPU graph the
partitioner's work and its result stay on that GPU.  :func:`quality` measures
a partition by what the seed paper says costs communication: the border
|B_i|, next to the edge cut and load imbalance.
"""
from __future__ import annotations

import numbers

import numpy as np

from mgraph.graph import Graph
from mgraph.partitioners.arrays import check_owner, on_device
from mgraph.partitioners.biased import biased_random
from mgraph.partitioners.metis import metis, require_pymetis
from mgraph.partitioners.quality import quality
from mgraph.partitioners.random import random_owner

PARTITIONERS = {"random": random_owner, "biased-random": biased_random, "metis": metis}

__all__ = ["PARTITIONERS", "assign", "check_owner", "quality", "random_owner", "biased_random", "metis"]


def assign(graph, num_parts, partitioner="random", seed=0):
    """The owner part of every vertex: an int32 array of length ``graph.num_vertices`` with values in [0, num_parts).

    ``partitioner`` is one of :data:`PARTITIONERS` ("random", "biased-random",
    "metis") or a callable ``(graph, num_parts, seed) -> owner array``.  The
    result lives on ``graph.xp`` (a CuPy array for a graph on a GPU).  More
    parts than vertices is allowed: some parts are then empty.  Bad arguments
    and a callable's bad output raise ValueError naming the problem; the
    arguments are checked before any work starts.
    """
    if not isinstance(graph, Graph):
        raise ValueError(f"expected an mgraph.Graph, got {type(graph).__name__}")
    if isinstance(num_parts, bool) or not isinstance(num_parts, numbers.Integral) or num_parts < 1:
        raise ValueError(f"num_parts must be a positive integer, got {num_parts!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(partitioner, str):
        if partitioner not in PARTITIONERS:
            raise ValueError(f"unknown partitioner {partitioner!r}: expected one of "
                             f"{', '.join(PARTITIONERS)}, or a callable (graph, num_parts, seed) -> owner array")
        if partitioner == "metis":
            require_pymetis()
        name, run = partitioner, PARTITIONERS[partitioner]
    elif callable(partitioner):
        name, run = getattr(partitioner, "__name__", type(partitioner).__name__), partitioner
    else:
        raise ValueError(f"partitioner must be a name ({', '.join(PARTITIONERS)}) or a callable, "
                         f"got {type(partitioner).__name__}")
    num_parts, seed = int(num_parts), int(seed)
    with on_device(graph):
        owner = run(graph, num_parts, seed)
        return check_owner(graph, owner, num_parts, what=f"partitioner {name!r}")

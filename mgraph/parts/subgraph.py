"""One device's part of a partitioned graph: its own vertices, proxies of remote ones, id maps both ways.

Two layouts, after the seed paper:

* duplicate-1-hop ("1-hop"): a device keeps its own vertices plus proxies of
  every remote vertex adjacent to them (by an out-arc, or for a directed graph
  an in-arc, so that a predecessor arriving with a vertex always has a local
  id on its owner).  Local ids: own vertices first, in the caller's order,
  then proxies grouped by owner.  Only own vertices have arcs.
* duplicate-all ("all"): every device keeps every vertex under its caller's
  id (no conversion), with only its own vertices' arcs.

The subgraph is a :class:`~mgraph.graph.Graph`, so an unmodified primitive
runs on it; ``own_vertices``, ``vertex_ids`` and ``num_global_vertices`` tell
it what it may need to know about the rest.
"""
from __future__ import annotations

import numpy as np

from mgraph.backend import Backend, to_numpy
from mgraph.graph import Graph
from mgraph.ops import idmaps

DUPLICATIONS = ("1-hop", "all")

class SubGraph(Graph):
    """A device's part: CSR rows for its own vertices, empty rows for proxies, and the maps to its peers.

    ``owner`` (per local vertex) names the device that owns it; ``id_on[k]``
    (1-hop only) is each local vertex's id on device k, -1 where k lacks it;
    ``global_to_local`` maps caller ids to local ids (-1 absent).  With
    duplicate-all the maps are identities and stored as None.
    """

    def __init__(self, indptr, indices, weights, *, directed, index, own, vertex_ids, owner, global_to_local,
                 num_global, num_global_arcs, duplication, reverse=None):
        super().__init__(indptr, indices, weights, directed=directed)
        self.index = index
        self._own = own
        self._vertex_ids = vertex_ids
        self.owner = owner
        self.global_to_local = global_to_local
        self.num_global = num_global
        self._num_global_arcs = num_global_arcs
        self.duplication = duplication
        self.id_on = None
        self._rev = reverse
        self._blocks = {}  # cached host reads: copies_on / copies_of, the own vertices' caller ids
        if vertex_ids is not None:  # 1-hop: own vertices first, and only they have arcs (in and out)
            self.arc_rows = int(own.shape[0])
            if reverse is not None:
                reverse.arc_rows = self.arc_rows

    own_vertices = property(lambda self: self._own)
    num_global_vertices = property(lambda self: self.num_global)
    num_global_arcs = property(lambda self: self._num_global_arcs)

    @property
    def vertex_ids(self):
        return self._vertex_ids if self._vertex_ids is not None else self.xp.arange(self.num_vertices, dtype=np.int64)

    def reverse(self) -> Graph:
        """In-arcs of the own vertices (from any vertex here); undirected parts are their own reverse."""
        return self if not self.directed else self._rev

    @property
    def caller_ids(self):
        """The caller's id of each local vertex (1-hop), or None where local ids are the caller's (all)."""
        return self._vertex_ids

    @property
    def own_below(self):
        """With 1-hop proxies the own vertices are the local ids below this (they come first); None otherwise."""
        return None if self._vertex_ids is None else int(self._own.shape[0])

    def count_own(self, ids) -> int:
        """How many of ``ids`` are this device's own vertices."""
        return idmaps.count_own(ids, self.owner, self.index, self.own_below)

    def copies_on(self, k):
        """(first id, how many) of the copies of this part's own vertices on part k (1-hop): k keeps them in one
        block, in this part's order, so own vertex v is bit ``id_on[k][v] - first`` of a bitmap of that block."""
        if ("on", k) not in self._blocks:
            ids = self.id_on[k][: self.own_below]
            held = ids[ids >= 0]
            self._blocks["on", k] = (int(held.min()) if held.shape[0] else 0, int(held.shape[0]))
        return self._blocks["on", k]

    def copies_of(self, d):
        """The first local id of the copies of part d's vertices here (1-hop: proxies come grouped by owner)."""
        if ("of", d) not in self._blocks:
            below = self.own_below
            self._blocks["of", d] = below + int(self.xp.searchsorted(self.owner[below:], d))
        return self._blocks["of", d]

    def to_global(self, ids):
        """Caller ids of local ids (-1 stays -1)."""
        return ids if self._vertex_ids is None else idmaps.translate(ids, self._vertex_ids)

    def to_local(self, ids):
        """Local ids of caller ids (-1 for vertices not on this device, and for -1)."""
        return ids if self.global_to_local is None else idmaps.translate(ids, self.global_to_local)

    def arrays(self) -> dict:
        """Every array this part holds, by name (for moving it and for accounting its memory)."""
        out = {"indptr": self.indptr, "indices": self.indices, "weights": self.weights, "own": self._own,
               "vertex_ids": self._vertex_ids, "owner": self.owner, "global_to_local": self.global_to_local}
        if self.directed:
            out.update(rev_indptr=self._rev.indptr, rev_indices=self._rev.indices, rev_weights=self._rev.weights)
        for k, ids in enumerate(self.id_on or []):
            out[f"id_on_{k}"] = ids
        return {k: v for k, v in out.items() if v is not None}

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays().values()))

    def to(self, backend: Backend) -> "SubGraph":
        """This part with every array on ``backend`` (a real out-of-memory names the device and the buffer)."""
        a = {}
        for name, arr in self.arrays().items():
            try:
                a[name] = backend.asarray(arr)
            except MemoryError as e:  # cupy's OutOfMemoryError is a MemoryError
                raise MemoryError(f"device {backend.device}: out of memory placing subgraph {self.index}'s "
                                  f"{name} ({arr.nbytes} bytes): {e}") from None
        rev = None
        if self.directed:
            rev = Graph(a["rev_indptr"], a["rev_indices"], a.get("rev_weights"), directed=True)
        sub = SubGraph(a["indptr"], a["indices"], a.get("weights"), directed=self.directed, index=self.index,
                       own=a["own"], vertex_ids=a.get("vertex_ids"), owner=a["owner"],
                       global_to_local=a.get("global_to_local"), num_global=self.num_global,
                       num_global_arcs=self._num_global_arcs,
                       duplication=self.duplication, reverse=rev)
        if self.id_on is not None:
            sub.id_on = [a.get(f"id_on_{k}") for k in range(len(self.id_on))]
        return sub

    def local_id(self, vertex):
        """This part's id of caller vertex ``vertex`` (None: None, or not on this part)."""
        if vertex is None:
            return None
        local = int(self.to_local(self.xp.asarray([vertex]))[0])
        return local if local >= 0 else None

    def own_part(self, a):
        """``own(a)`` (Graph's view): a view where own vertices come first (1-hop), else a gather (the caller's
        ids of a duplicate-all part's own vertices are scattered)."""
        return self.own(a)

    def own_values(self, arrays: dict, vertex_valued=()):
        """(caller ids of the own vertices, {name: their values}) as NumPy arrays, vertex ids in caller numbering.
        The ids are the same every run, so they are copied to the host once and kept."""
        out = {}
        for name, a in arrays.items():
            values = self.own(a)
            out[name] = to_numpy(self.to_global(values) if name in vertex_valued else values)
        if "own_ids" not in self._blocks:
            ids = self._blocks["own_ids"] = to_numpy(self.own(self.vertex_ids))
            ids.flags.writeable = False  # kept: whoever hands it to a user hands a copy
        return self._blocks["own_ids"], out

    def __repr__(self) -> str:
        return (f"SubGraph(part {self.index}: {int(self._own.shape[0])} own + "
                f"{self.num_vertices - int(self._own.shape[0])} other vertices, {self.num_arcs} arcs, {self.duplication})")

def build(graph: Graph, owner, num_parts: int, duplication: str = "1-hop") -> list[SubGraph]:
    """Split ``graph`` by ``owner`` into ``num_parts`` subgraphs, on the array module the graph lives on.

    The whole-graph cut, which needs every part's arcs in one place: runs build their parts where they run
    instead (mgraph.parts.build), and tests/test_partbuild.py holds those to this.  Vectorized: a few passes
    over the arcs per part, no per-vertex Python.
    """
    if duplication not in DUPLICATIONS:
        raise ValueError(f"unknown duplication {duplication!r}: expected one of {', '.join(DUPLICATIONS)}")
    xp = graph.xp
    owner = xp.asarray(owner).astype(np.int32, copy=False)
    arc_owner = owner[graph.arc_sources()]  # the owner of each arc's source, in CSR order
    rev = graph.reverse() if graph.directed else None
    rev_owner = owner[rev.arc_sources()] if rev is not None else None
    parts = [_part(graph, owner, arc_owner, rev, rev_owner, d, duplication) for d in range(num_parts)]
    if duplication == "1-hop":
        for sub in parts:
            sub.id_on = [None if k == sub.index else
                         parts[k].global_to_local[sub.vertex_ids].astype(graph.indices.dtype)
                         for k in range(num_parts)]
    return parts

def _rows(xp, indptr_src, rows, arc_mask, indices, weights, num_rows, remap):
    """CSR over ``num_rows`` rows: the listed ``rows`` of a source CSR (arcs picked by ``arc_mask``), remapped."""
    deg = xp.zeros(num_rows, dtype=np.int64)
    deg[remap(rows)] = indptr_src[rows + 1] - indptr_src[rows]
    indptr = xp.zeros(num_rows + 1, dtype=np.int64)
    xp.cumsum(deg, out=indptr[1:])
    cols = remap(indices[arc_mask].astype(np.int64))
    return indptr, cols, None if weights is None else weights[arc_mask]

def _part(graph, owner, arc_owner, rev, rev_owner, d, duplication):
    xp, n = graph.xp, graph.num_vertices
    idx = graph.indices.dtype
    own_global = xp.flatnonzero(owner == d)
    mine = arc_owner == d
    if duplication == "all":
        def remap(ids):
            return ids
        present, g2l, num_present, own = None, None, n, own_global.astype(idx)
        vertex_owner = owner
    else:
        neighbours = graph.indices[mine]
        if rev is not None:
            neighbours = xp.concatenate([neighbours, rev.indices[rev_owner == d]])
        remote = neighbours[owner[neighbours] != d]
        del neighbours
        proxies = xp.unique(remote).astype(np.int64)
        proxies = proxies[xp.argsort(owner[proxies], kind="stable")]  # grouped by owner, caller order inside
        present = xp.concatenate([own_global.astype(np.int64), proxies])
        num_present = int(present.shape[0])
        g2l = xp.full(n, -1, dtype=idx)
        g2l[present] = xp.arange(num_present, dtype=idx)

        def remap(ids):
            return g2l[ids].astype(np.int64)
        own = xp.arange(own_global.shape[0], dtype=idx)
        vertex_owner = owner[present]
    indptr, cols, w = _rows(xp, graph.indptr, own_global, mine, graph.indices, graph.weights, num_present, remap)
    reverse = None
    if rev is not None:
        rp, rc, rw = _rows(xp, rev.indptr, own_global, rev_owner == d, rev.indices, rev.weights, num_present, remap)
        reverse = Graph(rp, rc.astype(idx), rw, directed=True)
    return SubGraph(indptr, cols.astype(idx), w, directed=graph.directed, index=d, own=own, vertex_ids=present,
                    owner=vertex_owner.astype(np.int32), global_to_local=g2l, num_global=n,
                    num_global_arcs=graph.num_arcs,
                    duplication=duplication, reverse=reverse)

def assemble(pieces, n):
    """Whole-graph NumPy arrays from each device's (caller ids, {name: values}) of its own vertices."""
    out = {}
    for ids, arrays in pieces:
        for name, values in arrays.items():
            if name not in out:
                out[name] = np.empty(n, dtype=values.dtype)
            out[name][ids] = values
    return out

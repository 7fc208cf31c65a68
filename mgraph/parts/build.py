"""Build one worker's part of a graph from an edge source, without any worker holding the whole graph.

Every worker of a group (MPI ranks, or threads of one process) calls
:func:`build_part` with the same arguments; each ends with its own
:class:`~mgraph.parts.subgraph.SubGraph`, the same one ``subgraph.build`` cuts
from a whole graph.  The edges go to the owners of their rows by an
all-to-all, a chunk at a time, in two passes over the source: the first
counts each own row's arcs (so the CSR is allocated once, at its final size),
the second fills them in.  Where every worker reads at least
COUNT_BYTES_PER_VERTEX bytes of row ids per vertex of the graph, it counts the
rows of its own share over every vertex and the counts travel once, to their
owners (n counts a worker, against a pass of its arcs); otherwise the rows
travel to their owners and are counted there.  GPU ranks route through NCCL,
device to device; the other workers through their group on the host.
Rows are then sorted and their repeated arcs dropped a block at a time, in
place.  So the peak beyond the finished part is
one chunk of routed edges and one block of row keys, not a copy of the graph.

Owners come from a function of the vertex id (the "random" hash: no table)
or from an owner table every worker holds (n int32: the other partitioners).
"""
from __future__ import annotations

import contextlib
import sys
import time

import numpy as np

from mgraph import memory
from mgraph.backend import Backend, to_numpy
from mgraph.graph import Graph, index_dtype
from mgraph.group import SoloGroup, ThreadGroup
from mgraph.io.sources import CHUNK_EDGES, ROUNDS_MIN
from mgraph.parts.subgraph import SubGraph
from mgraph.partitioners.random import hash_owner

KEY_LIMIT = (1 << 62)  # a block's row keys (row offset * n + column) stay below this


class Owners:
    """The owner of any vertex id: a hash of the id (``table`` None) or a lookup in an owner table."""

    def __init__(self, num_parts, seed=0, table=None):
        self.num_parts, self.seed, self.table = num_parts, seed, table

    def __call__(self, ids, xp):
        if self.num_parts == 1:
            return xp.zeros(ids.shape[0], dtype=np.int32)
        if self.table is None:
            return hash_owner(ids, self.num_parts, self.seed, xp)
        return self.table[ids]


def build_part(group, source, backend: Backend, owners: Owners, duplication="1-hop", *, chunk=None,
               progress=False, move=None) -> SubGraph:
    """This worker's part of the graph of ``source`` (an opened :class:`~mgraph.io.sources.EdgeSource`), on ``backend``.

    ``owners`` names every vertex's part (one part per worker of ``group``).
    ``move`` is the all-to-all that routes arcs (``move(arrays)``: ``arrays[k]``
    to worker k, what each worker sent here in rank order, on ``backend``):
    GPU ranks pass NCCL's, device to device; by default they go through the
    group on the host (:func:`host_move`).
    Collective: every worker calls it.  With one worker the part is the whole
    graph, with no id maps.
    """
    chunk = chunk or CHUNK_EDGES
    xp, n, p, me = backend.xp, source.num_vertices, group.size, group.rank
    idx = index_dtype(n)
    t0 = time.perf_counter()
    chunks = source.ranges(me, p, chunk)
    _check_memory(group, source, backend, chunks)
    own, g2l, num_own = None, None, n  # one worker: every vertex its own, under its own id
    if p > 1:
        own = _own_vertices(xp, owners, n, me)
        num_own = int(own.shape[0])
        g2l = xp.full(n, -1, dtype=idx)
        g2l[own] = xp.arange(num_own, dtype=idx)
    move = move or host_move(group, xp)
    rounds = group.allreduce(len(chunks), "max")
    local = p > 1 and _counts_locally(group, source, chunks, idx)
    with _bar(progress and me == 0, rounds * (2 if source.directed else 1) * 2, source.name) as bar:
        fwd = _rows(group, source, xp, owners, g2l, num_own, chunks, rounds, idx, reverse=False, bar=bar, move=move,
                    local=local)
        rev = None
        if source.directed:
            rev = _rows(group, source, xp, owners, g2l, num_own, chunks, rounds, idx, reverse=True, bar=bar, move=move,
                        local=local)
    num_arcs = group.allreduce(int(fwd[1].shape[0]), "sum")
    if p == 1:  # the whole graph: ids are the caller's, no maps
        sub = SubGraph(*fwd, directed=source.directed, index=0, own=xp.arange(n, dtype=idx), vertex_ids=None,
                       owner=xp.zeros(n, dtype=np.int32), global_to_local=None, num_global=n,
                       num_global_arcs=num_arcs, duplication=duplication,
                       reverse=None if rev is None else Graph(*rev, directed=True))
    elif duplication == "all":
        sub = _all_layout(xp, owners, n, me, own, fwd, rev, source.directed, num_arcs)
    else:
        sub = _one_hop_layout(group, xp, owners, n, me, own, g2l, fwd, rev, source.directed, num_arcs, idx, move)
    sub.build_s = time.perf_counter() - t0
    return sub


def _check_memory(group, source, backend: Backend, chunks) -> None:
    """Every worker's estimate of its part against its device's memory, before anything is sized by the graph.

    Collective, so that a worker short of memory stops them all (none waits
    in the routing for it).  Workers sharing one memory (threads of this
    process, CPU ranks on one node) are counted together.  The arcs are a
    bound: before self-loops and repeated arcs are dropped, spread evenly.
    """
    n, p = source.num_vertices, group.size
    listed = group.allreduce(sum(int(b) - int(a) for a, b in chunks), "sum")  # edges of the whole list
    arcs = listed * (2 if source.both_ways else 1)
    share = -(-arcs // p)
    round_arcs = max((int(b) - int(a) for a, b in chunks), default=0) * (2 if source.both_ways else 1)
    need = memory.chunked_build_bytes(n, share, round_arcs, weighted=source.weighted, parts=p)
    if source.directed:  # the in-arc CSR as well
        need += memory.chunked_build_bytes(n, share, 0, weighted=source.weighted)
    sharing = 1
    if not backend.is_gpu:
        sharing = p if isinstance(group, ThreadGroup) else getattr(group, "local_size", 1)
    short = memory.shortfall(need * sharing, backend)
    errors = [e for e in group.allgather(short) if e]
    if errors:
        what = memory.describe(n, arcs, bound=True)
        per = f" ({p} parts, {sharing} sharing this memory)" if sharing > 1 else f" ({p} parts)" if p > 1 else ""
        raise ValueError(f"{source.name}: building {what}{per} {errors[0]}")


def build_graph(source, backend: Backend, *, chunk=None) -> Graph:
    """The whole graph of ``source`` on ``backend``, built a chunk at a time (a one-worker :func:`build_part`)."""
    source.open(SoloGroup())
    part = build_part(SoloGroup(), source, backend, Owners(1), chunk=chunk)
    num_input = getattr(source, "num_edges", None)
    return Graph(part.indptr, part.indices, part.weights, directed=part.directed, num_input_edges=num_input)


def _own_vertices(xp, owners, n, me, block=1 << 24):
    """This part's vertices in caller order (int64), found a block of ids at a time."""
    if owners.num_parts == 1:
        return xp.arange(n, dtype=np.int64)
    pieces = []
    for a in range(0, n, block):
        ids = xp.arange(a, min(a + block, n), dtype=np.int64)
        pieces.append(ids[owners(ids, xp) == me])
    return xp.concatenate(pieces) if pieces else xp.zeros(0, dtype=np.int64)


def _arcs(source, xp, c, reverse):
    """The arcs of chunk ``c`` as (row vertex, column vertex, weight): both arcs of an edge where the source says
    so, reversed for the in-arc CSR; no self-loops."""
    src, dst, w = source.read(c, xp)
    if source.both_ways:
        src, dst = xp.concatenate([src, dst]), xp.concatenate([dst, src])
        w = None if w is None else xp.concatenate([w, w])
    if reverse:
        src, dst = dst, src
    if not source.simple:
        keep = src != dst
        if not bool(keep.all()):
            src, dst = src[keep], dst[keep]
            w = None if w is None else w[keep]
    return src, dst, w


def _route(move, xp, owners, p, fields):
    """Send each arc to the owner of its row: ``fields`` are (array or None, dtype) with the arcs' rows first;
    the arrays that arrive here, in sender order, on ``xp``."""
    if p == 1:  # nothing moves; the rows stay in their dtype
        return [fields[0][0]] + [None if a is None else a.astype(dtype, copy=False) for a, dtype in fields[1:]]
    dest = owners(fields[0][0], xp)
    order = _by_owner(xp, dest, p)
    cut = np.concatenate([[0], np.cumsum(_host(xp.bincount(dest, minlength=p)))])
    del dest
    out = []
    for a, dtype in fields:
        if a is None:
            out.append(None)
            continue
        sorted_ = a[order].astype(dtype, copy=False)
        out.append(xp.concatenate(move([sorted_[cut[k]:cut[k + 1]] for k in range(p)])))
        del sorted_
    return out


SCAN_OWNERS = 8  # parts: up to this many, arcs are grouped by owner with one compaction per owner, not a sort


def _by_owner(xp, dest, p):
    """The positions of ``dest``'s entries grouped by owner, in their order within each group: a compaction per
    owner where there are few (each a pass over the arcs, where a sort of the arcs' owners takes several), else a
    stable sort."""
    if p <= SCAN_OWNERS:
        return xp.concatenate([xp.flatnonzero(dest == k) for k in range(p)])
    return xp.argsort(dest, kind="stable")


def host_move(group, xp):
    """The build's all-to-all through ``group`` on the host: what a NumPy worker sends as it is, and what a GPU
    worker sends where no device collective joins the workers (threads; ranks sharing one GPU)."""
    def move(arrays):
        return [xp.asarray(a) for a in group.alltoallv([_host(a) for a in arrays])]

    return move


def _counts_locally(group, source, chunks, idx) -> bool:
    """Whether the count pass counts each worker's own share over every vertex (:func:`_own_degrees`) rather
    than routing the rows: where every worker reads at least ``COUNT_BYTES_PER_VERTEX`` bytes of row ids per
    vertex of the graph, so the counts (and their int64 temporaries) are no larger than the part the fill pass
    allocates, and sending n counts costs less than sending the rows.  Collective: every worker takes the same
    path."""
    arcs = sum(int(b) - int(a) for a, b in chunks) * (2 if source.both_ways else 1)
    fewest = group.allreduce(arcs, "min")
    return fewest * np.dtype(idx).itemsize >= COUNT_BYTES_PER_VERTEX * source.num_vertices


COUNT_BYTES_PER_VERTEX = 16  # the local count's bytes per vertex: the counts and bincount's output, both int64


def _own_degrees(xp, owners, hist, num_own, me, p, move, block=1 << 24):
    """This part's own rows' arc counts, in own-vertex order, from every worker's counts over all vertices
    (``hist``): a block of ids at a time, each worker sends each owner the counts of that owner's vertices in id
    order, which is the order of :func:`_own_vertices`.  Collective."""
    deg = xp.zeros(num_own, dtype=np.int64)
    n, at = hist.shape[0], 0
    for a in range(0, n, block):
        ids = xp.arange(a, min(a + block, n), dtype=np.int64)
        dest = owners(ids, xp)
        order = _by_owner(xp, dest, p)
        cut = np.concatenate([[0], np.cumsum(_host(xp.bincount(dest, minlength=p)))])
        counts = hist[a:a + ids.shape[0]][order]
        del ids, dest, order
        got = move([counts[cut[k]:cut[k + 1]] for k in range(p)])
        size = int(cut[me + 1] - cut[me])
        for piece in got:
            deg[at:at + size] += piece
        at += size
    return deg


def _rows(group, source, xp, owners, g2l, num_own, chunks, rounds, idx, reverse, bar, move, local=False):
    """The CSR (indptr, column ids in caller numbering, weights) of this part's own rows: count, fill, then sort
    and dedupe each row.  ``local``: count by :func:`_own_degrees` instead of routing the rows."""
    def routed(count_only):
        for r in range(rounds):
            if r < len(chunks):
                rows, cols, w = _arcs(source, xp, chunks[r], reverse)
            else:  # this worker's share is done; the others still route theirs
                rows, cols, w = (xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=np.int64),
                                 None if not source.weighted else xp.zeros(0, dtype=np.float64))
            if source.weighted and w is None:
                w = xp.zeros(rows.shape[0], dtype=np.float64)
            if count_only:  # counting needs the rows alone
                cols = w = None
            got = _route(move, xp, owners, group.size, [(rows, idx), (cols, idx), (w, np.float64)])
            bar.update(1)
            yield (got[0].astype(np.int64, copy=False) if g2l is None else g2l[got[0]].astype(np.int64)), got[1], got[2]

    if local:  # pass 1: count this worker's rows over every vertex, then send the counts to their owners
        hist = xp.zeros(source.num_vertices, dtype=np.int64)
        for r in range(rounds):
            if r < len(chunks):
                rows = _arcs(source, xp, chunks[r], reverse)[0]
                if rows.shape[0]:
                    hist += xp.bincount(rows, minlength=source.num_vertices)
                del rows
            bar.update(1)
        deg = _own_degrees(xp, owners, hist, num_own, group.rank, group.size, move)
        del hist
    else:  # pass 1: route the rows to their owners, which count them
        deg = xp.zeros(num_own, dtype=np.int64)
        for rows, _, _ in routed(True):
            if rows.shape[0]:
                deg += xp.bincount(rows, minlength=num_own)
    indptr = xp.zeros(num_own + 1, dtype=np.int64)
    xp.cumsum(deg, out=indptr[1:])
    del deg
    total = int(indptr[-1])
    _release(xp)  # the counting round's cached blocks, before the CSR's largest allocation
    indices = xp.empty(total, dtype=idx)
    weights = xp.empty(total, dtype=np.float64) if source.weighted else None
    cursor = indptr[:-1].copy()
    for local, cols, w in routed(False):  # pass 2: fill
        if not local.shape[0]:
            continue
        # grouped by row (kept in arrival order where the rows are final already), each arc's place in its group
        order = xp.argsort(local, kind="stable" if source.simple else None)
        local = local[order]
        first = xp.searchsorted(local, local, side="left")
        pos = cursor[local] + (xp.arange(local.shape[0], dtype=np.int64) - first)
        del first
        indices[pos] = cols[order]
        if weights is not None:
            weights[pos] = w[order]
        cursor += xp.bincount(local, minlength=num_own)
    del cursor
    _release(xp)
    if source.simple and not reverse:  # a built graph's rows: sorted and simple, each read by one worker in order
        return indptr, indices, weights
    return _sort_rows(xp, indptr, indices, weights, max(source.num_vertices, 1), total)


def _sort_rows(xp, indptr, indices, weights, n, total, block_arcs=1 << 25):
    """Sort each row's columns and keep the lightest of repeated arcs, a block of rows at a time, compacting in
    place (a block is written no further than it was read).  Blocks are an eighth of the part at most, so their
    keys stay small beside it."""
    block_arcs = min(block_arcs, max(1 << 16, -(-total // ROUNDS_MIN)))
    num_rows = indptr.shape[0] - 1
    new_deg = xp.zeros(num_rows, dtype=np.int64)
    host = _host(indptr)
    max_rows = max(1, KEY_LIMIT // n)
    write, row = 0, 0
    while row < num_rows:
        stop = int(np.searchsorted(host, host[row] + block_arcs, side="right")) - 1
        stop = min(max(stop, row + 1), num_rows, row + max_rows)
        a, b = int(host[row]), int(host[stop])
        if b > a:
            seg_rows = xp.searchsorted(indptr[row:stop + 1], xp.arange(a, b, dtype=np.int64), side="right") - 1
            key = seg_rows * np.int64(n) + indices[a:b].astype(np.int64)
            del seg_rows
            w = None
            if weights is not None:
                w = weights[a:b]
                order = xp.argsort(w, kind="stable")
                key, w = key[order], w[order]
                order = xp.argsort(key, kind="stable")  # stable: lightest first within a key
                key, w = key[order], w[order]
                del order
            else:
                key.sort()
            keep = xp.empty(key.shape, dtype=bool)
            keep[0] = True
            xp.not_equal(key[1:], key[:-1], out=keep[1:])
            key = key[keep]
            k = int(key.shape[0])
            new_deg[row:stop] = xp.bincount(key // np.int64(n), minlength=stop - row)
            indices[write:write + k] = (key % np.int64(n)).astype(indices.dtype)
            if w is not None:
                weights[write:write + k] = w[keep]
            write += k
            del key, keep, w
        row = stop
    out = xp.zeros(num_rows + 1, dtype=np.int64)
    xp.cumsum(new_deg, out=out[1:])
    return out, indices[:write], None if weights is None else weights[:write]


def _all_layout(xp, owners, n, me, own, fwd, rev, directed, num_arcs):
    """Duplicate-all: every vertex under its caller id, arcs only on own rows."""
    idx = index_dtype(n)

    def spread(indptr):
        deg = xp.zeros(n, dtype=np.int64)
        deg[own] = indptr[1:] - indptr[:-1]
        full = xp.zeros(n + 1, dtype=np.int64)
        xp.cumsum(deg, out=full[1:])
        return full

    owner = _owner_table(xp, owners, n)
    reverse = None if rev is None else Graph(spread(rev[0]), rev[1], rev[2], directed=True)
    return SubGraph(spread(fwd[0]), fwd[1], fwd[2], directed=directed, index=me, own=own.astype(idx),
                    vertex_ids=None, owner=owner, global_to_local=None, num_global=n, num_global_arcs=num_arcs,
                    duplication="all", reverse=reverse)


def _owner_table(xp, owners, n, block=1 << 24):
    if owners.table is not None:
        return owners.table
    return xp.concatenate([owners(xp.arange(a, min(a + block, n), dtype=np.int64), xp)
                           for a in range(0, n, block)]) if n else xp.zeros(0, dtype=np.int32)


def _one_hop_layout(group, xp, owners, n, me, own, g2l, fwd, rev, directed, num_arcs, idx, move, block=1 << 25):
    """Duplicate-1-hop: own vertices first (caller order), then proxies of the remote neighbours grouped by owner;
    columns in local ids; and, per peer, the local id there of each own vertex (learnt by an all-to-all)."""
    num_own = int(own.shape[0])
    seen = xp.zeros(n, dtype=bool)
    for _, cols, _ in (fwd,) + (() if rev is None else (rev,)):
        for a in range(0, cols.shape[0], block):
            seen[cols[a:a + block]] = True
    seen[own] = False
    proxies = xp.flatnonzero(seen).astype(np.int64)
    del seen
    powner = owners(proxies, xp)
    order = xp.argsort(powner, kind="stable")
    proxies, powner = proxies[order], powner[order]
    g2l[proxies] = xp.arange(num_own, num_own + proxies.shape[0], dtype=idx)
    for _, cols, _ in (fwd,) + (() if rev is None else (rev,)):
        for a in range(0, cols.shape[0], block):
            cols[a:a + block] = g2l[cols[a:a + block]]
    present = xp.concatenate([own, proxies])
    owner = xp.concatenate([xp.full(num_own, me, dtype=np.int32), powner.astype(np.int32)])
    total = int(present.shape[0])

    def pad(indptr):  # proxies' rows are empty
        return xp.concatenate([indptr, xp.full(total - num_own, indptr[-1], dtype=np.int64)])

    reverse = None if rev is None else Graph(pad(rev[0]), rev[1], rev[2], directed=True)
    sub = SubGraph(pad(fwd[0]), fwd[1], fwd[2], directed=directed, index=me, own=xp.arange(num_own, dtype=idx),
                   vertex_ids=present, owner=owner, global_to_local=g2l, num_global=n, num_global_arcs=num_arcs,
                   duplication="1-hop", reverse=reverse)
    # Each owner learns which of its vertices are copied here and under which local id, and answers with their ids
    # on it.  So id_on[k] holds, for own vertices, their copy's id on k (-1: none) and, for the proxies k owns,
    # their id on k: what splitting a frontier and sending to holders read (other proxies' entries stay -1).
    counts = _host(xp.bincount(powner, minlength=group.size)) if proxies.shape[0] else np.zeros(group.size, int)
    cut = np.concatenate([[0], np.cumsum(counts)])
    ids, local = proxies.astype(idx), xp.arange(num_own, total, dtype=idx)
    got_ids = move([ids[cut[k]:cut[k + 1]] for k in range(group.size)])
    got_local = move([local[cut[k]:cut[k + 1]] for k in range(group.size)])
    del ids, local
    # theirs[k]: the ids on k of this part's proxies that k owns
    theirs = move([g2l[got_ids[k]] for k in range(group.size)])
    sub.id_on = []
    for k in range(group.size):
        if k == me:
            sub.id_on.append(None)
            continue
        table = xp.full(total, -1, dtype=idx)
        table[g2l[got_ids[k]]] = got_local[k]
        table[num_own + cut[k]: num_own + cut[k + 1]] = theirs[k]
        sub.id_on.append(table)
    return sub


def _release(xp):
    """Give the GPU pool's cached blocks back between a build's phases: each phase allocates arrays of other
    sizes, which the blocks kept from the last one would not fit, so the pool would hold both."""
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()
        xp.get_default_memory_pool().free_all_blocks()


def _host(a):
    return to_numpy(a)


def _bar(show, total, name):
    """A tqdm bar over the routing rounds of a long build on an interactive stderr."""
    if not show or total < 8 or not sys.stderr.isatty():
        return contextlib.nullcontext(_NoBar())
    from tqdm import tqdm

    return tqdm(total=total, desc=f"building {name}", unit="chunk", leave=False)


class _NoBar:
    def update(self, k=1):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

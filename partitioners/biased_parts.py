"""Biased-random partitioning when no worker holds the whole graph: every rank works from its own part.

The whole-graph partitioner (:mod:`mgraph.partitioners.biased`) places vertices in
batches of a random order, each asking for the part holding most of its
already-placed neighbours, with a balance bound, then refines in sweeps.
This is the same algorithm run collectively by the ranks of a
:class:`~mgraph.group.Group`, each holding one part of the graph (built by
:func:`mgraph.parts.build.build_part`, typically with the hash owners):

* The order is a seeded hash of the vertex id (SplitMix64's output
  function, a bijection of uint64, so no two vertices share a key): batch r
  of R holds the vertices whose key lies in the r-th R-th of the key range,
  ordered by key.  Every rank knows the order of any vertex without any
  communication and without an n-sized permutation.
* Per batch, each rank scores only its own vertices of the batch, from its
  own arcs (out-arcs, and in-arcs for a directed graph) against the owner
  table every rank keeps (n int32, -1 = unplaced), plus a hashed random
  tie-break of (seed, pass, vertex, part) below one neighbour.  This is the
  arc work, and it is spread over the ranks.
* The batch's requests (vertex x part, and the vertex's out-degree, its arc
  weight) are allgathered as one int64 buffer, and every rank runs the
  whole-graph partitioner's acceptance on the whole batch in key order
  (``biased._place``: per part the longest prefix that fits its vertex and
  arc room, the rest spilled to the parts with most room; ``biased._move``
  in the sweeps, where only the vertices that want to move are sent).  The
  ranks hold identical tables and loads and apply identical decisions, so
  they stay identical.

Sending the requests rather than per-rank quotas costs the same traffic as
sending the decisions (one int64 pair per vertex per placement batch, per
mover in a sweep) and makes the acceptance exactly the whole-graph one: the
result does not depend on the number of ranks, nor on how the vertices are
split among them (hash, 1-hop or duplicate-all layouts, or a whole graph on
one rank).  It differs from :func:`mgraph.partitioners.biased.biased_random` only in
its random numbers (a hash instead of a drawn permutation and noise) and in
that hash batches are only about n / R vertices each.

Memory per rank: the owner table and one batch's requests (O(n)), the noise
and histogram of its own batch vertices (own batch x parts), and a gather of
its own rows' arcs per batch; never another rank's arcs.  Work per rank: its
own arcs, plus the acceptance of every batch (O(n log n) over all batches,
the same on every rank).
"""
from __future__ import annotations

import numbers

import numpy as np

from mgraph.backend import to_numpy

from mgraph.partitioners.biased import ARC_EPS, EPS, ROUNDS, SWEEPS, TABLE_MAX, _move, _place, _preferred_part, capacity

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def biased_random_parts(group, part, num_parts: int, seed: int = 0, *, eps: float = EPS, rounds: int = ROUNDS,
                        sweeps: int = SWEEPS):
    """The owner part of every vertex (int32, length n, on ``part.xp``), the same table on every rank.

    Collective: every rank of ``group`` calls it with its own ``part`` (a
    :class:`~mgraph.parts.subgraph.SubGraph` from ``build_part``, duplicate-all or
    1-hop; or, on a group of one, a whole :class:`~mgraph.graph.Graph`).  No
    part gets more than ``biased.capacity(n, num_parts, eps)`` vertices;
    stored arcs are bounded softly as in :func:`~mgraph.partitioners.biased.biased_random`.
    The result depends on the graph, ``num_parts``, ``seed``, ``eps``,
    ``rounds`` and ``sweeps`` only: not on the number of ranks or the layout.
    Bad ``num_parts`` or ``seed`` raise ValueError (on every rank alike).
    """
    if isinstance(num_parts, bool) or not isinstance(num_parts, numbers.Integral) or num_parts < 1:
        raise ValueError(f"num_parts must be a positive integer, got {num_parts!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if getattr(part, "owner", None) is None and group.size > 1:  # a whole Graph has no owner map
        raise ValueError(f"with {group.size} ranks each rank passes its own part (a SubGraph from build_part), "
                         f"not a whole {type(part).__name__}")
    xp, n, k = part.xp, int(part.num_global_vertices), int(num_parts)
    if n == 0 or k == 1:
        return xp.zeros(n, dtype=np.int32)
    view = _View(group, part)
    cap = np.array([capacity(n, k, eps), capacity(view.num_arcs, k, ARC_EPS)], dtype=np.int64)
    load = np.zeros((2, k), dtype=np.int64)  # on the host, identical on every rank
    owner = xp.full(n, -1, dtype=np.int32)
    rounds = max(1, rounds, -(-n * k // TABLE_MAX))  # as biased.py: of n, not of this rank's share
    for p in range(1 + sweeps):  # pass 0 places, the others refine
        placing = p == 0
        for i, (batch, local) in enumerate(view.batches(seed, p, rounds)):
            noise = _Noise(xp, _salt(seed, p, 1), batch, k)
            if placing:
                want = _preferred_part(xp, noise, view.rows, owner, local, k, counted=i > 0)
                vertices, want, w = view.gather(batch, want, view.weight(local), _salt(seed, p, 0))
                if vertices.shape[0]:
                    # caps grow with the batches, as in biased.py
                    _place(xp, owner, load, vertices, w, want, -(-cap * (i + 1) // rounds))
            else:
                current = owner[batch]
                want = _preferred_part(xp, noise, view.rows, owner, local, k, current=current)
                moving = want != current  # only movers travel; the others would stay anyway
                vertices, want, w = view.gather(batch[moving], want[moving], view.weight(local[moving]),
                                                _salt(seed, p, 0))
                if vertices.shape[0]:
                    _move(xp, owner, load, vertices, w, owner[vertices], want, cap)
    return owner


class _View:
    """This rank's part seen in caller ids: its own vertices (caller and row ids), rows with caller-id columns."""

    def __init__(self, group, part):
        self.group, self.xp = group, part.xp
        caller = getattr(part, "caller_ids", None)  # 1-hop: caller id of each local id; None: ids are the caller's
        self.num_arcs = int(part.num_global_arcs)
        self.local = part.own_vertices.astype(np.int64)  # row ids in this part's CSR
        self.own = self.local if caller is None else caller[self.local].astype(np.int64)  # the same in caller ids
        self.indptr = part.indptr

        def columns(g):
            return g.indices if caller is None else caller[g.indices]
        self.rows = [(part.indptr, columns(part))]
        if part.directed:  # neighbours by an arc in either direction
            rev = part.reverse()
            self.rows.append((rev.indptr, columns(rev)))

    def weight(self, local):
        """Out-arcs of own vertices (row ids): what a vertex adds to its part's stored arcs."""
        return self.indptr[local + 1] - self.indptr[local]

    def batches(self, seed, p, rounds):
        """Per batch of pass ``p``, this rank's vertices in it: (caller ids, row ids), in key order."""
        xp = self.xp
        key = _keys(xp, self.own, _salt(seed, p, 0))
        order = xp.argsort(key)
        key = key[order]
        cut = np.concatenate([[0], to_numpy(xp.searchsorted(key, xp.asarray(_bounds(rounds)))), [key.shape[0]]])
        own, local = self.own[order], self.local[order]
        return [(own[a:b], local[a:b]) for a, b in zip(cut[:-1], cut[1:])]

    def gather(self, vertices, want, w, salt):
        """Every rank's (vertex, wanted part, arc weight) of a batch, in key order: the same arrays on every rank."""
        xp = self.xp
        m = int(vertices.shape[0])
        mine = np.empty(3 * m, dtype=np.int64)
        mine[:m], mine[m:2 * m], mine[2 * m:] = to_numpy(vertices), to_numpy(want), to_numpy(w)
        got = self.group.alltoallv([mine] * self.group.size) if self.group.size > 1 else [mine]
        cols = [np.concatenate([g[j * (len(g) // 3):(j + 1) * (len(g) // 3)] for g in got]) for j in range(3)]
        vertices, want, w = (xp.asarray(c) for c in cols)
        order = xp.argsort(_keys(xp, vertices, salt))  # unique keys: the order is the same whatever the ranks
        return vertices[order], want[order].astype(np.int32), w[order]


def _bounds(rounds):
    """The inner cuts of the key range into R nearly equal spans: batch r of R holds the keys in [cut r, cut r + 1)."""
    return np.array([(r << 64) // rounds for r in range(1, rounds)], dtype=np.uint64)


class _Noise:
    """Stands in for the generator ``biased._preferred_part`` draws its tie-break from: ``random((b, k))`` is a
    hash of (salt, vertex, part), so a vertex's draw does not depend on which rank scores it, nor on its batch-mates."""

    def __init__(self, xp, salt, vertices, k):
        self.xp, self.salt, self.vertices, self.k = xp, salt, vertices, k

    def random(self, size, dtype=np.float32):
        xp = self.xp
        assert tuple(size) == (int(self.vertices.shape[0]), self.k), size
        ids = self.vertices.astype(np.uint64)[:, None] * np.uint64(self.k) + xp.arange(self.k, dtype=np.uint64)
        z = _keys(xp, ids, self.salt)
        dtype = np.dtype(dtype).type
        return (z >> np.uint64(40)).astype(dtype) * dtype(2.0 ** -24)  # 24 bits: exact in float32, below 1


def _salt(seed: int, p: int, stream: int) -> int:
    """A 64-bit constant per (seed, pass, stream): the order is stream 0, the tie-break stream 1."""
    return _mix_host(_mix_host((int(seed) + 1) * _GAMMA) + (2 * p + stream + 1) * _GAMMA)


def _mix_host(z: int) -> int:
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK64
    return z ^ (z >> 31)


def _keys(xp, ids, salt):
    """SplitMix64's output function of ``ids + salt`` (uint64): a bijection, so distinct ids get distinct keys."""
    z = ids.astype(np.uint64) + np.uint64(salt)
    z ^= z >> np.uint64(30)
    z *= np.uint64(_MIX1)
    z ^= z >> np.uint64(27)
    z *= np.uint64(_MIX2)
    z ^= z >> np.uint64(31)
    return z

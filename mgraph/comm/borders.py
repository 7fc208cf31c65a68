"""Fixed border lists without the host: each owner writes the values of its vertices that a peer holds copies of
straight into that peer, which takes them into its block of copies.

A primitive whose every own vertex changes every superstep (``every_own_vertex``: PageRank) keeps its copies
current through fixed lists (:meth:`mgraph.comm.exchange.Exchange._to_holders`): every superstep, owner d sends
each peer k the values of the own vertices k holds copies of.  Two facts make that hop a copy between two fixed
places: a list is the same every superstep of a run, and on a 1-hop part k keeps its copies of d's vertices as one
block, in d's order (``SubGraph.copies_on`` and ``copies_of``).  So nothing about the hop has to be agreed on the
host each superstep, neither ids nor lengths nor headers; only the values move.

* GPU ranks of one node (:mod:`mgraph.comm.cupy_borders`): each rank gathers each list's values straight into an
  inbox in the peer's memory (CUDA IPC), then posts the superstep's tag there; the peer's stream waits on the
  device for every post of the tag and copies each inbox into its block of copies.  The host only launches.
* The NumPy twin (:class:`NumpyBorders`): the same values into the same blocks through one all-to-all of the
  group per superstep (worker threads or MPI ranks of CPU devices).

Where neither serves (GPUs in worker threads, ranks on several nodes or sharing a GPU, duplicate-all parts, more
values than an inbox holds), the host-driven exchange runs as before; ``.stats["border_path"]`` says which ran.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Borders", "NumpyBorders", "layout"]

# Values per vertex one hop carries at most (arrays the primitive combines in the phase), and their largest size:
# what a GPU inbox is sized for
FIELDS = 1
ITEM = 8


def layout(part, p):
    """Per peer k of ``part`` (of ``p`` 1-hop parts): (own vertices k holds copies of, in this part's order; the
    first local id and the number of this part's copies of k's vertices)."""
    xp, d, below = part.xp, part.index, part.own_below
    lists, blocks = [], []
    for k in range(p):
        if k == d:
            lists.append(None)
            blocks.append((0, 0))
            continue
        lists.append(xp.flatnonzero(part.id_on[k][:below] >= 0).astype(np.int64))
        first = part.copies_of(k)  # proxies come grouped by owner: k's block ends where the next owner's begins
        blocks.append((first, int(part.copies_of(k + 1) - first)))
    return lists, blocks


def consistent(sent, held) -> bool:
    """Whether every list's length (``sent[d][k]``: what d sends k) is the block its receiver keeps
    (``held[k][d]``), as the 1-hop numbering promises: else no device takes the path."""
    p = len(sent)
    return all(sent[d][k] == held[k][d] for d in range(p) for k in range(p) if k != d)


class Borders:
    """Device ``d``'s end of a run's border hops among ``p`` devices: its lists (per peer, the own vertices the peer
    holds copies of) and blocks (per peer, where its copies of that peer's vertices sit here)."""

    def __init__(self, part, d, p, lists, blocks):
        self.part, self.d, self.p = part, d, p
        self.lists, self.blocks = lists, blocks
        self.peers = [k for k in range(p) if k != d]
        self.hops = 0  # border hops this device ran on this path in the run (.stats)
        self.bytes = 0  # values it sent on it

    def serves(self, prim, names) -> bool:
        """Whether a hop of ``prim``'s arrays ``names`` fits: at most FIELDS arrays, one value of 4 or 8 (ITEM)
        bytes per local vertex in one contiguous array, none holding vertex ids (those travel in caller ids).  The
        same answer on every device."""
        if not names or len(names) > FIELDS:
            return False
        for name in names:
            a = getattr(prim, name, None)
            if name in prim.vertex_valued or a is None or a.ndim != 1 or a.shape[0] != self.part.num_vertices \
                    or not a.flags.c_contiguous or a.dtype.itemsize not in (4, ITEM):
                return False
        return True

    def exchange(self, prim, names) -> int:
        """Send every peer the values ``names`` of the own vertices it holds copies of and take what every peer sent
        here into its block; the bytes sent."""
        raise NotImplementedError

    def check(self):
        """Raise what failed on the device in a hop queued earlier (its stream has since been waited for)."""

    def close(self):
        """Release what the link holds (collective between ranks)."""


class NumpyBorders(Borders):
    """The NumPy twin: one all-to-all of the group per hop, each peer's values as bytes, taken into the blocks."""

    def __init__(self, part, d, p, lists, blocks, group):
        super().__init__(part, d, p, lists, blocks)
        self.group = group

    def exchange(self, prim, names):
        arrays = [getattr(prim, name) for name in names]
        out = [np.zeros(0, dtype=np.uint8) if k == self.d else
               np.concatenate([np.ascontiguousarray(a[self.lists[k]]).view(np.uint8) for a in arrays])
               for k in range(self.p)]
        got = self.group.alltoallv(out)
        for k in self.peers:
            first, count = self.blocks[k]
            at = 0
            for a in arrays:
                size = count * a.dtype.itemsize
                a[first:first + count] = got[k][at:at + size].view(a.dtype)
                at += size
        sent = sum(int(b.shape[0]) for b in out)
        self.hops += 1
        self.bytes += sent
        return sent


def thread_links(parts, groups):
    """The NumPy twin's links of worker threads' ``parts`` (one per ThreadGroup of ``groups``), or None where the
    layout does not allow them."""
    p = len(parts)
    made = [layout(part, p) for part in parts]
    sent = [[0 if k == d else int(made[d][0][k].shape[0]) for k in range(p)] for d in range(p)]
    held = [[made[d][1][k][1] for k in range(p)] for d in range(p)]
    if not consistent(sent, held):
        return None
    return [NumpyBorders(part, d, p, lists, blocks, group)
            for d, (part, (lists, blocks), group) in enumerate(zip(parts, made, groups))]


def rank_layout(part, group):
    """This rank's :func:`layout` and whether every rank's agrees with its peers' (collective)."""
    lists, blocks = layout(part, group.size)
    mine = [0 if k == group.rank else int(lists[k].shape[0]) for k in range(group.size)]
    rows = group.allgather((mine, [b[1] for b in blocks]))
    return lists, blocks, consistent([r[0] for r in rows], [r[1] for r in rows])


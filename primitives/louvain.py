"""Community detection by modularity: Louvain's local moving (and Leiden's refinement) on one level of the graph.

One run of :class:`Louvain` is one level of the Louvain method (Blondel et al. 2008): every vertex starts in a
community of its own (or in ``start``'s), vertices move to the neighbouring community of the largest modularity
gain until the modularity stops improving, and the level ends with the arcs of the coarser graph whose vertices
are the communities.  :class:`Leiden` (Traag, Waltman and van Eck 2019) refines each community into well-connected
sub-communities before that, and the coarser graph's vertices are the sub-communities, each starting in its
community.  The levels themselves (build the coarse graph, run the next level on it) are ``mgraph.louvain``'s.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mgraph import ops
from mgraph.ops import propose
from mgraph.primitives.contract import Primitive, owners_value

MOVE, SETTLE, REBUILD, REFINE, AGGREGATE = "move", "settle", "rebuild", "refine", "aggregate"


def check_resolution(resolution) -> float:
    """``resolution`` (networkx's gamma) as a float: a finite real number >= 0."""
    if isinstance(resolution, bool) or not isinstance(resolution, numbers.Real) or not math.isfinite(resolution) \
            or resolution < 0:
        raise ValueError(f"resolution must be a finite real number >= 0, got {resolution!r}")
    return float(resolution)


# the scatter-add of per-arc weights and the best pair per row, shared with ops.best_moves (the fused proposal)
sums, ordered, unordered, best_per_row = propose.sums, propose.ordered, propose.unordered, propose.best_per_row


class Louvain(Primitive):
    """``community``: each vertex's community after one level of Louvain's local moving, labelled by a vertex id
    in the caller's numbering (the vertex whose starting community it is).  ``coarse``: the level is one of
    ``mgraph.louvain``'s coarser ones (it never moves an independent set, below).

    The modularity of a partition with resolution gamma is, as networkx
    defines it, Q = inside / M - gamma * sum over communities of
    out(c) * in(c) / M**2: ``inside`` the weight of the arcs within
    communities, out(c) and in(c) the weighted out- and in-degrees of c's
    members, M the total arc weight (an undirected graph counts each edge
    both ways; a self-loop, ``loops``, once per direction).  Moving vertex u
    into community c changes Q by a constant times
    w(u, c) - gamma * (out(u) * in(c) + in(u) * out(c)) / S,
    w(u, c) the weight of u's arcs to and from c's members, c's degrees
    without u, and S = 2M for an undirected graph (where out = in = degree),
    M for a directed one: each vertex scores the communities of its
    neighbours with the weights summed per community (``ops.pair_totals``
    over ``ops.arcs``: a hash table, where a sort of the arcs took most of
    a round) and the communities' degrees (``total_out``, ``total_in``:
    one entry per vertex id of the whole graph, the same on
    every device, changed by the moves every device publishes in
    ``global_lists``).

    Every vertex chooses at once, from the communities of the superstep
    before, and two neighbours that moved at once on that stale view would
    undo each other's gain (a swap, two singletons joining each other).  So
    a round is two supersteps: the first proposes (each vertex whose best
    community, ties to the smallest label, gains anything gets a priority,
    a hash of its id, the round and ``seed``), the second moves each
    proposer whose move still gains with every proposal of higher priority
    taken as made before it: its neighbours' in its arc weights to its
    community and to its target, everyone's (every device's, gathered in
    ``global_lists``) in the communities' totals, as a sequential pass in
    the order of the priorities would see them had all those proposals
    moved.  A swap, or a chain where the community a vertex joins loses the
    neighbour that drew it there, then leaves only the first vertex moving;
    vertices apart that choose between two communities by their totals
    alone, which would move together and back round after round, settle;
    and many vertices joining one community at once no longer overshoot
    it.  The rule this replaced refused every move that a neighbour of
    higher priority moving into the community it leaves or out of the one
    it joins could spoil, whether it still gained or not: half of the
    proposals of R-MAT 20's second level, which took 92 rounds (14, 92, 6,
    6, 1 per level; now 8, 19, 4, 1); docs/results/louvain-rounds2-2026-11-26-cpu.
    Moving only the proposers whose priority exceeds every proposing
    neighbour's (an independent set, as in Jones and Plassmann's colouring)
    finds 1-2 % more modularity on small R-MAT graphs but takes several
    times the rounds; a first level of fewer than ``STRICT_ARCS`` arcs,
    where rounds are cheap, moves that way (and since most proposals of
    higher priority are then not made, only a vertex that moved the round
    before is held to the totals after them).  The coarse levels never do:
    their vertices with arcs are few and join in a near clique (R-MAT 16's
    third level: 96 of 18,843 vertices, 3,004 arcs), where the independent
    set is one vertex a round (33-81 rounds).  After the first round only
    the vertices that moved, their neighbours and the proposers that did
    not move are scored again (the vertex pruning of Leiden's fast local
    moving).  Each device keeps the communities of the best modularity
    seen, and where the moves end below it the level goes back to them.

    The level ends when no vertex would gain by moving, when ``WINDOW``
    rounds raise the modularity by less than ``ROUND_GAIN``, or when the
    last ``WINDOW`` rounds raised it by less than ``END_FRACTION`` of what
    the level has raised it so far.  A long level is a wave of a few large
    communities absorbing their neighbours round after round, then a tail
    of single vertices trading places between large communities for less
    and less (on R-MAT 18's second level the last 25 of 51 rounds added
    3 % of its gain), which the relative rule cuts, as cuGraph ends a
    level's iterations on a threshold.  A lull of a round or two before
    the wave (R-MAT 16, 18) is shorter than the window.
    """

    name = "louvain"
    combine = {"community": owners_value, "priority": owners_value, "target": owners_value}
    global_sums = ("moves", "inside", "weight", "pending")
    MOVES = ("moved_from", "moved_to", "moved_out", "moved_in")
    PROPOSALS = ("prop_from", "prop_to", "prop_id", "prop_out", "prop_in")
    COARSE = ("coarse_a", "coarse_b", "coarse_w", "sub_label", "sub_community")
    ACTIVE = 0.5  # of the vertices may join a sub-community in one superstep of Leiden's refinement
    ROUND_GAIN = 1e-6  # WINDOW rounds that raise Q by less end the local moving
    END_FRACTION = 0.01  # WINDOW rounds that raise Q by less than this of the level's gain so far end it too
    WINDOW = 4
    STRICT_ARCS = 1 << 16  # a first level of fewer arcs moves an independent set of proposers per round
    MAX_SUPERSTEPS = 1000  # rounds of local moving in one level (and supersteps of refinement)
    refine = False

    def __init__(self, graph, resolution=1.0, loops=None, start=None, seed=0, coarse=False):
        super().__init__(graph)
        self.coarse = bool(coarse)
        self.resolution = check_resolution(resolution)
        self.seed = int(seed or 0)
        g, xp, nv = graph, self.xp, self.num_vertices
        self.n = g.num_global_vertices
        self.ids = g.vertex_ids.astype(np.int64)
        # community labels are caller ids: int32 where the whole graph's ids fit, gathered per arc every round
        self.label_dtype = np.dtype(np.int32 if self.n <= np.iinfo(np.int32).max else np.int64)
        self.own = g.own_vertices
        self.directed = g.directed
        # whole-graph arrays in the caller's numbering: each device takes its vertices' entries
        self.loops = xp.zeros(nv) if loops is None else xp.asarray(loops, dtype=np.float64)[self.ids]
        self.start = None if start is None else xp.asarray(start)[self.ids].astype(self.label_dtype)
        # every arc's ends in the graph's id dtype (the targets are its indices) and its weight, or None on an
        # unweighted graph: the per-arc arrays the level keeps, 4 bytes an arc where ids fit int32 (three int64 and
        # float64 copies, 24 bytes, kept R-MAT 24 off an 80 GB GPU)
        src, dst = ops.arcs(g, narrow=True)
        w = g.weights
        self.src, self.dst = src, dst
        self.w = None if w is None else w.astype(np.float64, copy=False)
        out = sums(xp, src, self.w, nv)
        if self.directed:  # a vertex's in-arcs are its reverse's out-arcs; the neighbours of both ways count
            rg = g.reverse()
            rsrc, rdst = ops.arcs(rg, narrow=True)
            rw = None if rg.weights is None else rg.weights.astype(np.float64, copy=False)
            self.k_out = out + self.loops
            self.k_in = sums(xp, rsrc, rw, nv) + self.loops
            self.nbr_src, self.nbr_dst = xp.concatenate([src, rsrc]), xp.concatenate([dst, rdst])
            self.nbr_w = None if self.w is None else xp.concatenate([self.w, rw])
            self.loop_factor = 1.0
        else:
            self.k_out = self.k_in = out + 2.0 * self.loops
            self.nbr_src, self.nbr_dst, self.nbr_w = src, dst, self.w
            self.loop_factor = 2.0
        # the first round scores the starting communities: where every vertex starts alone and each arc is listed
        # once (an undirected simple graph's), its (vertex, neighbour's community) pairs are the arcs themselves
        self.distinct_start = start is None and not self.directed
        self.own_weight = float(g.own(self.k_out).sum())
        self.own_loops = float(g.own(self.loops).sum())
        self.own_mask = g.own_mask()
        self.phase = MOVE

    @property
    def global_lists(self):
        """The moves of the superstep (every device's, for the community totals), or in a round's first superstep
        its proposals (every device's, for the totals each proposal's gain is checked against); at the end the
        coarser graph."""
        if self.phase == AGGREGATE:
            return self.COARSE
        return self.PROPOSALS if self.phase == MOVE and self.proposed else self.MOVES

    # -- the state every superstep shares -------------------------------------------------------------------------
    def _publish(self, moved, old, new):
        """The moves of own vertices ``moved`` from communities ``old`` to ``new`` (``old`` None: joins only,
        published as -1), for every device's community totals.  Devices publish joins only in the same supersteps
        (where a phase starts its totals afresh) and moves in the others, so ``leaving`` tells for the lists of
        every device whether their vertices leave communities, with no look at them."""
        self.leaving = old is not None
        if old is None:
            old = self.xp.full(moved.shape[0], -1, dtype=np.int64)
        self.moved_from, self.moved_to = old.astype(np.int64), new.astype(np.int64)
        self.moved_out = self.k_out[moved]
        self.moved_in = self.k_in[moved]

    def _apply(self, out_totals, in_totals):
        """Every device's moves of the superstep before (gathered) into the totals, then no move pending."""
        xp, n = self.xp, self.n
        fr, to = self.moved_from, self.moved_to
        out_totals += sums(xp, to, self.moved_out, n)
        if self.leaving:
            out_totals -= sums(xp, fr, self.moved_out, n)
        if in_totals is not out_totals:
            in_totals += sums(xp, to, self.moved_in, n)
            if self.leaving:
                in_totals -= sums(xp, fr, self.moved_in, n)
        self._publish(self.own[:0], fr[:0], fr[:0])

    def _shares(self, moves=0, pending=0):
        """This device's shares of the totals of a superstep."""
        self.moves, self.pending, self.weight = moves, pending, self.own_weight

    def reset(self, source=None):
        xp, n = self.xp, self.n
        self.phase = MOVE
        self.community = self.ids.astype(self.label_dtype) if self.start is None else self.start.copy()
        self.total_out = xp.zeros(n)
        self.total_in = self.total_out if not self.directed else xp.zeros(n)
        own = self.own
        self._publish(own, None, self.community[own])
        self.sub, self.history, self.proposed, self.snapshot = 0, [], False, None
        self.strict = self.graph.num_global_arcs < self.STRICT_ARCS and not self.coarse
        self.priority = xp.full(self.num_vertices, -1, dtype=np.int64)
        self.target = xp.full(self.num_vertices, -1, dtype=self.label_dtype)
        self.clash_at, self.fused_commit = None, False
        self.best_q, self.best = -np.inf, None
        self.inside, self.square, self.M = 0.0, 0.0, 0.0
        self._shares()
        return self.frontier_of(None)

    # -- local moving ---------------------------------------------------------------------------------------------
    def _scores(self, rows, keys, weights, out_totals, in_totals):
        """w(u, c) - gamma * (out(u) in(c) + in(u) out(c)) / S for pairs (u, c) where u is not in c (a pair of u's
        own community gets a score with u counted in c's totals: not a move, so the caller leaves it out); ``weights``
        may be the number 1.0 (every pair one unweighted arc)."""
        ko = self.k_out[rows]
        if self.directed:
            terms = ko * in_totals[keys] + self.k_in[rows] * out_totals[keys]
        else:  # out = in: twice one product, the same bits (x + x is 2x exactly) from half the gathers
            terms = ko * in_totals[keys] * 2.0
        return weights - self.resolution * terms / self.scale

    def _stay(self, w_stay, out_totals, in_totals, current):
        """Each own vertex's score for its own community, ``w_stay`` its arc weight to it (0 where it has none;
        a score of -0.0 then comes out as 0.0, the same to every comparison)."""
        xp, own = self.xp, self.own
        stay = xp.zeros(self.num_vertices)
        ko, c = self.k_out[own], current[own]
        if self.directed:
            ki = self.k_in[own]
            terms = ko * (in_totals[c] - ki) + ki * (out_totals[c] - ko)
        else:
            terms = ko * (in_totals[c] - ko) * 2.0
        stay[own] = -self.resolution * terms / self.scale
        return stay + w_stay

    def _hash(self, ids, salt):
        """A 64-bit hash of each id (caller ids), ``salt`` (a superstep) and the seed: the same on every device."""
        x = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64((salt * 0xBF58476D1CE4E5B9
                                                                               + self.seed * 0x94D049BB133111EB)
                                                                              % (1 << 64))
        x ^= x >> np.uint64(31)
        x *= np.uint64(0xD6E8FEB86659FD93)
        x ^= x >> np.uint64(32)
        return x

    def _active(self, ids, salt):
        """Whether each vertex may join in refinement superstep ``salt``: true for about ``ACTIVE`` of them."""
        return (self._hash(ids, salt) % np.uint64(1 << 16)) < np.uint64(int(self.ACTIVE * (1 << 16)))

    def _inside(self, c):
        """This device's share of the weight of the arcs within communities ``c`` (loops aside): a pass over its
        arcs (unweighted: a count, the same number as a float64 sum of ones)."""
        within = c[self.src] == c[self.dst]
        if self.w is None:
            return self.xp.count_nonzero(within)
        return (self.w * within).sum()

    def _inside_change(self, moved, c):
        """How this device's share of the inside weight changed from the snapshot's communities to ``c``, from the
        arcs of the vertices that ``moved`` alone.  An arc between two moved vertices is listed at each end; an arc
        from one that stayed is not listed at that end, so the moved end counts it for both directions (undirected)
        or for its reverse (directed: the in-arcs, listed after the out-arcs)."""
        xp, old = self.xp, self.snapshot
        if self._fused():  # a group of lanes per moved vertex's row: no compaction of their arcs
            return ops.inside_change(self.graph, moved, c, old)
        at = xp.flatnonzero(moved[self.nbr_src])
        x, y = self.nbr_src[at], self.nbr_dst[at]
        change = (c[x] == c[y]).astype(np.float64) - (old[x] == old[y])
        stayed = ~moved[y]
        times = xp.where(at < self.src.shape[0], 1.0, stayed) if self.directed else 1.0 + stayed
        if self.nbr_w is None:  # unit weights: w * change is change, exactly
            return (change * times).sum()
        return (self.nbr_w[at] * change * times).sum()

    def _measure(self, inside, *more):
        """Q's inside weight (``inside``: this device's share, a device scalar) and square term (the same
        everywhere), with ``more`` device scalars, in one read; ``more``'s values as Python numbers."""
        xp = self.xp
        square = (self.total_out * self.total_in).sum()
        got = xp.stack([xp.asarray(inside, dtype=np.float64), square,
                        *(xp.asarray(x, dtype=np.float64) for x in more)]).tolist()
        self.inside = got[0] + self.loop_factor * self.own_loops
        self.square = got[1]
        return got[2:]

    def _move(self):
        """Propose: each own vertex's best community (``target``, ties to the smallest label) and, where it gains
        by moving there, a priority (else -1); both travel to the copies."""
        self._apply(self.total_out, self.total_in)
        self.M = float(self.weight)
        self.scale = 2.0 * self.M if not self.directed else self.M
        c, xp = self.community, self.xp
        look = self._unsettled(c)
        self.snapshot = c.copy()  # the state measured, kept where it turns out the best
        self.sub += 1
        self.proposed = True
        old_priority, old_target = self.priority, self.target
        target, gain = self._propose_fused(look) if self._fused() else self._propose(look)
        copies = ~self.own_mask  # keep their owners' values
        self.target = xp.where(copies, old_target, target.astype(self.label_dtype))
        self.priority = xp.where(gain, self._rank(self.ids, self.sub), xp.where(copies, old_priority, -1))
        who = xp.flatnonzero(gain)
        self.prop_from, self.prop_to, self.prop_id = c[who], self.target[who], self.ids[who]
        self.prop_out, self.prop_in = self.k_out[who], self.k_in[who]
        # the proposers' arcs, for the check of their moves: positions in the level's arcs, not copies of them (every
        # proposer was scored, so all its arcs were among the rows scored, in the same order); the fused check reads
        # the proposers' rows where they lie (ops.commit_sums) and needs no list
        self.fused_commit = self._fused()
        self.clash_at = None if self.fused_commit else xp.flatnonzero(gain[self.nbr_src])
        self._shares(pending=int(who.shape[0]))
        changed = self.own_mask & ((self.priority != old_priority) | (self.target != old_target))
        frontier = xp.flatnonzero(changed).astype(self.graph.indices.dtype)
        self._measure(self.inside_share)  # after the last launch: the read waits for nothing more
        return frontier

    def _fused(self):
        """Whether the proposal runs as one fused pass (ops.best_moves): an undirected graph that one GPU holds
        whole, whose level's arcs are its CSR rows (``nbr_dst`` its indices, ``nbr_w`` its weights), with
        ``ops.propose.ENABLED`` on.  A part of a graph, a directed one and the CPU keep :meth:`_propose`."""
        g = self.graph
        return ops.fused_moves(g) and self.nbr_dst is g.indices and self.nbr_src.shape[0] == g.num_arcs \
            and (self.nbr_w is None) == (g.weights is None)

    def _propose_fused(self, look):
        """:meth:`_propose` in one pass over the scored rows' arcs (ops.best_moves): no compaction, no pair table
        but for the hubs' arcs; on an unweighted graph the same bits."""
        xp, c, nv = self.xp, self.community, self.num_vertices
        if self.M <= 0:
            return xp.full(nv, -1, dtype=np.int64), xp.zeros(nv, dtype=bool)
        target, best, w_stay = ops.best_moves(self.graph, c, self.k_out, self.total_in, self.resolution, self.scale,
                                              look, distinct=look is None and self.distinct_start)
        stay = self._stay(w_stay, self.total_out, self.total_in, c)
        return target, (best > stay) & self.own_mask

    def _propose(self, look):
        """Each own vertex's best community (-1 where none) among those of its neighbours (the rows of ``look``,
        or every row where None) and whether it gains by moving there: the pairs of the scored rows' arcs in a
        hash table, then their scores and the best per row by scatters."""
        c, xp, nv = self.community, self.xp, self.num_vertices
        if look is None:  # every vertex: every arc as it is
            src, dst, w = self.nbr_src, self.nbr_dst, self.nbr_w
        else:  # one compaction (one wait on a GPU) for the three
            at = xp.flatnonzero(look[self.nbr_src])
            src, dst = self.nbr_src[at], self.nbr_dst[at]
            w = None if self.nbr_w is None else self.nbr_w[at]
            del at
        keys = c[dst]
        del dst
        if look is None and self.distinct_start:  # every pair is one arc: no table (on R-MAT 24 a 16 GiB one)
            rows, weights = src, (1.0 if w is None else w)
        else:
            rows, keys, weights = ops.pair_totals(src, keys, w, self.n)
        del src, w  # the level's arrays, or the compacted ones freed: the scores' temporaries are per pair
        # each vertex's arc weight to its own community and to its target: sums of the pairs masked rather than
        # a scatter of the pairs compacted (each row has one of each at most, so the sum is that pair's weight)
        mine = keys == c[rows]
        w_stay = sums(xp, rows, xp.where(mine, weights, 0.0), nv)
        if self.M > 0 and rows.shape[0]:
            scores = self._scores(rows, keys, weights, self.total_out, self.total_in)
            stay = self._stay(w_stay, self.total_out, self.total_in, c)
            target, best = best_per_row(xp, rows, keys, scores, ~mine, nv)
            gain = (best > stay) & self.own_mask
            del scores, stay, best
        else:
            target, gain = xp.full(nv, -1, dtype=np.int64), xp.zeros(nv, dtype=bool)
        return target, gain

    def _unsettled(self, c):
        """The vertices to score again (a mask): at first all (None); then those that moved or have a neighbour
        that did since the last proposal, and those that would have moved (the vertex pruning of Leiden's fast
        local moving: a vertex whose neighbourhood did not change keeps its choice, though the totals changed)."""
        xp = self.xp
        if self.snapshot is None:  # and the inside weight measured in full, then followed through the moves
            self.inside_share = self._inside(c)
            self.again = xp.zeros(self.num_vertices, dtype=bool)
            return None
        moved = c != self.snapshot
        self.again = moved
        self.inside_share = self.inside_share + self._inside_change(moved, c)
        if self._fused():  # a group of lanes per row, stopping at the first moved neighbour: the same mask
            return ops.unsettled_rows(self.graph, moved, self.priority)
        # the moved vertices' neighbours, by a scatter of every arc whose target moved into an extra last slot:
        # the same mask as the sources of those arcs compacted, without a wait on a GPU to learn how many
        nv = self.num_vertices
        look = xp.zeros(nv + 1, dtype=bool)
        look[xp.where(moved[self.nbr_dst], self.nbr_src, nv)] = True
        look = look[:nv]
        look |= moved | (self.priority >= 0)
        return look

    def _commit(self):
        """Move: each proposer whose move still gains with every proposal of higher priority taken as made before
        it (:meth:`_after`).  On a first level of fewer than ``STRICT_ARCS`` arcs, only where no proposing
        neighbour's priority is higher, and the totals after the higher proposals hold only the vertices that
        moved the round before.  Where priorities tie, each takes the other's as made first."""
        self.proposed = False
        xp, c, p, t = self.xp, self.community, self.priority, self.target
        nv = self.num_vertices
        if self.fused_commit:  # the proposers' rows read where they lie (every vertex is own: p >= 0 is gain)
            w_to, w_stay, blocked = ops.commit_sums(self.graph, p, t, c, blocked=self.strict)
        else:
            at, self.clash_at = self.clash_at, None  # the proposers' arcs (p[u] >= 0), freed after this superstep
            u, v = self.nbr_src[at], self.nbr_dst[at]
            w = 1.0 if self.nbr_w is None else self.nbr_w[at]
            del at
            first = p[v] >= p[u]  # v proposes, at a priority at least u's: its move is taken as made before u's
            # u's arc weight to its target and to its own community once those neighbours are where they propose
            there = xp.where(first, t[v], c[v])
            w_to = sums(xp, u, xp.where(there == t[u], w, 0.0), nv)
            w_stay = sums(xp, u, xp.where(there == c[u], w, 0.0), nv)
            if self.strict:
                blocked = xp.zeros(nv, dtype=bool)
                blocked[u[first]] = True
        cost_to, cost_stay = self._after()
        ids = self.ids
        movable = (p >= 0) & self.own_mask & (w_to - cost_to[ids] > w_stay - cost_stay[ids])
        if self.strict:
            # most higher-priority proposals are blocked here: the totals after all of them would refuse moves on
            # proposals that are not made, so only a vertex that moved the round before is held to them (ending
            # the cycles of _after's docstring)
            movable = (p >= 0) & self.own_mask & ~blocked & (movable | ~self.again)
        moved = xp.flatnonzero(movable)
        new = t[moved]
        self._publish(moved, c[moved], new)
        c[moved] = new
        self._shares(moves=int(moved.shape[0]), pending=self.pending)
        return moved.astype(self.graph.indices.dtype)

    def _after(self):
        """The degree terms of each proposer's score for its target and for staying (two arrays over caller ids,
        gamma * (out(u) in(c) + in(u) out(c)) / S as :meth:`_scores` and :meth:`_stay` give them), with the
        communities' totals changed by every proposal of higher priority (every device's, gathered, whether it is
        made or not), as if those had moved first.

        Proposers apart see none of each other's moves in their arcs, only in the totals: vertices that tie on
        their arcs (one arc to each of two communities, the choice made by the totals alone) leave and join the
        same communities at once, a vertex of community A moving to B, whose total is smaller, while another
        leaves A and a third joins B, so that B's total is now the larger; the next round all of them move back,
        and so on every round (on R-MAT 20, about 5,000 vertices from the fifth round of the first level on, each
        back where it was two rounds before, the modularity flat).  With the totals after the higher-priority
        proposals, of a group that would move together the first ones do and the others, seeing them, stay; and
        many vertices joining one community at once no longer overshoot it."""
        xp, n = self.xp, self.n
        fr, to, ids = self.prop_from, self.prop_to, self.prop_id
        rank = self._rank(ids, self.sub)  # each proposer's priority, a function of its id and the round
        k = fr.shape[0]
        cost_to, cost_stay = xp.zeros(n), xp.zeros(n)
        if k == 0:
            return cost_to, cost_stay
        # each proposal is two events, +degrees where it joins, -degrees where it leaves; per community in order
        # of (rank, id), the events after an event's are those of higher priority
        where = xp.concatenate([to, fr])
        change = xp.stack([xp.concatenate([self.prop_out, -self.prop_out]),
                           xp.concatenate([self.prop_in, -self.prop_in])], axis=1)
        order = xp.lexsort(xp.stack([xp.concatenate([ids, ids]), xp.concatenate([rank, rank]), where]))
        where, change = where[order], change[order]
        running = xp.cumsum(change, axis=0)
        last = xp.searchsorted(where, where, side="right") - 1  # the last event of each event's community
        after = xp.empty_like(running)
        after[order] = running[last] - running  # the higher-priority change to each event's community total
        # the terms of _scores and _stay with the totals so changed (the same bits where nothing changed them)
        ko, ki, out_t, in_t = self.prop_out, self.prop_in, self.total_out, self.total_in
        t_in, t_out = in_t[to] + after[:k, 1], out_t[to] + after[:k, 0]
        cost_to[ids] = self.resolution * (ko * t_in + ki * t_out) / self.scale
        t_in, t_out = (in_t[fr] - ki) + after[k:, 1], (out_t[fr] - ko) + after[k:, 0]
        cost_stay[ids] = self.resolution * (ko * t_in + ki * t_out) / self.scale  # a proposer is listed once
        return cost_to, cost_stay

    def _rank(self, ids, salt):
        """A priority per vertex (caller ids) in round ``salt``: a hash, with the id's low bits below it so that
        neighbours rarely tie (where they do, neither moves this round)."""
        x = self._hash(ids, salt)
        return ((x >> np.uint64(26)) << np.uint64(24) | (ids.astype(np.uint64) & np.uint64(0xFFFFFF))).astype(np.int64)

    def modularity(self):
        """Q of the communities measured in the last superstep of local moving (before its moves)."""
        return self.inside / self.M - self.resolution * self.square / self.M ** 2 if self.M > 0 else 0.0

    def _moving_done(self):
        h = self.history
        h.append((self.moves, self.modularity(), self.pending))
        if h[-1][1] > self.best_q:
            self.best_q, self.best = h[-1][1], self.snapshot
        if h[-1][2] == 0:  # no vertex would gain by moving
            return True
        if len(h) > self.WINDOW:  # the last WINDOW rounds' gain: too little, or too little of the level's so far
            recent = h[-1][1] - h[-1 - self.WINDOW][1]
            if recent < self.ROUND_GAIN or recent < self.END_FRACTION * (h[-1][1] - h[0][1]):
                return True
        return self.sub >= self.MAX_SUPERSTEPS

    # -- the contract ---------------------------------------------------------------------------------------------
    def iterate(self, frontier):
        if self.phase == MOVE:
            return self._commit() if self.proposed else self._move()
        if self.phase == REFINE:
            return self._refine()
        if self.phase == SETTLE:
            self._apply(self.total_out, self.total_in)
            self._measure(self._inside(self.community))
        self._shares()
        return self.frontier_of(None)

    def converged(self, frontier):
        if self.phase == MOVE:
            return self.proposed and self._moving_done()
        if self.phase == REFINE:
            return self._refine_done()
        return True

    def next_phase(self):
        if self.phase == MOVE:  # the moves ended: measure where they left the communities
            self.phase = SETTLE
            self._shares()
            return self.frontier_of(None)
        if self.phase == SETTLE:
            if self.best_q > self.modularity():
                # synchronous moves may have lost modularity since the best state: back to it, on every device (its
                # snapshot holds the copies' values too), and the community totals rebuilt from every device's own
                self.community = self.best
                self.total_out[:] = 0.0
                self.total_in[:] = 0.0
                own = self.own
                self._publish(own, None, self.community[own])
                self.phase = REBUILD
                self._shares()
                return self.frontier_of(None)
            self.phase = REBUILD
        if self.phase == REBUILD:
            self._apply(self.total_out, self.total_in)
            if self.refine:
                return self._begin_refine()
            return self._aggregate(self.community)
        if self.phase == REFINE:
            self._apply(self.ref_out, self.ref_in)
            return self._aggregate(self.refined)
        return None

    def _aggregate(self, labels):
        """The coarser graph's arcs among ``labels`` (summed per pair of labels, loops as arcs from a label to
        itself) and its vertices, every device's in ``global_lists``; for Leiden each sub-community's community."""
        xp, own = self.xp, self.own
        self.phase = AGGREGATE
        a = xp.concatenate([labels[self.src], labels[own]])
        b = xp.concatenate([labels[self.dst], labels[own]])
        # ones where the graph is unweighted: the loops' entries weigh what they weigh, and the sums keep their order
        arc_w = xp.ones(self.src.shape[0]) if self.w is None else self.w
        w = xp.concatenate([arc_w, self.loop_factor * self.graph.own(self.loops)])
        del arc_w
        self.coarse_a, self.coarse_b, self.coarse_w = ops.pair_sums(a, b, w)
        self.sub_label, self.sub_community, _ = ops.pair_sums(labels[own], self.community[own])
        self._shares()
        return self.frontier_of(None)

    def coarse_graph(self):
        """After the run, on every device: the coarser graph's arcs (label pairs a, b and their weights summed
        over the devices; a == b: loops, weighted by the loop factor) and its vertices (the distinct labels, each
        with its community)."""
        a, b, w = ops.pair_sums(self.coarse_a, self.coarse_b, self.coarse_w)
        labels, community, _ = ops.pair_sums(self.sub_label, self.sub_community)
        return a, b, w, labels, community

    def result(self):
        return {"community": self.community}

    def _begin_refine(self):
        raise NotImplementedError  # Leiden's


class Leiden(Louvain):
    """``community`` as :class:`Louvain`'s level, and ``refined``: each community split into well-connected
    sub-communities, which the coarser graph's vertices are (each starting in its community).

    The refinement starts from singletons.  A vertex still alone (none has
    joined it, it has joined none) that is well connected to its community
    C (w(u, C - u) >= gamma * k(u) (k(C) - k(u)) / 2m) joins the
    sub-community T of C among its neighbours' of the highest positive gain
    w(u, T) - gamma * k(u) k(T) / 2m, ties to the smallest label.  Where the
    Leiden algorithm picks T at random (weighted by the gain) one vertex at a
    time, here every vertex chooses at once: in each superstep about half of
    the vertices may join (a hash of id, superstep and ``seed``) and only
    sub-communities whose label vertex may not join that superstep are
    joined, so that no sub-community's vertex leaves it as another joins it,
    and each sub-community stays connected.  Unlike Leiden, the sub-community
    joined is not checked to be well connected itself.  The refinement ends
    when no alone, well-connected vertex has a positive gain left.
    """

    name = "leiden"
    refine = True
    combine = {"community": owners_value, "priority": owners_value, "target": owners_value,
               "refined": owners_value}

    def __init__(self, graph, resolution=1.0, loops=None, start=None, seed=0, coarse=False):
        if graph.directed:
            raise ValueError("leiden runs on undirected graphs, and this graph is directed (networkx's "
                             "leiden_communities refuses directed graphs too)")
        super().__init__(graph, resolution, loops, start, seed, coarse)

    def reset(self, source=None):
        frontier = super().reset(source)
        self.refined = self.ids.copy()
        return frontier

    def _begin_refine(self):
        xp, own = self.xp, self.own
        self.phase = REFINE
        self.refined = self.ids.copy()
        self.ref_out = self.ref_in = xp.zeros(self.n)
        self.fixed = xp.zeros(self.n, dtype=bool)
        self._publish(own, None, self.ids[own])
        self.rsub, self.pending = 0, 0
        self._shares()
        return self.frontier_of(None)

    def _refine(self):
        xp = self.xp
        if self.leaving:  # whoever joined, and whatever was joined, is alone no more
            self.fixed[self.moved_from] = True
            self.fixed[self.moved_to] = True
        self._apply(self.ref_out, self.ref_in)
        c, r = self.community, self.refined
        inside = xp.flatnonzero(c[self.nbr_src] == c[self.nbr_dst])
        rows, keys, weights = ops.pair_totals(self.nbr_src[inside], r[self.nbr_dst[inside]],
                                              None if self.nbr_w is None else self.nbr_w[inside], self.n)
        self.rsub += 1
        if rows.shape[0] == 0:
            self._shares()
            return self.frontier_of(None)
        # each vertex's weight to the rest of its community, against what a random graph would give
        k = self.k_out
        w_c = sums(xp, rows, weights, self.num_vertices)
        rest = self.total_out[c] - k
        connected = w_c - self.resolution * 2.0 * k * rest / self.scale >= 0
        alone = ~self.fixed[self.ids]
        free = (alone & connected)[rows]
        scores = weights - self.resolution * 2.0 * k[rows] * self.ref_out[keys] / self.scale
        nv = self.num_vertices
        target, best = best_per_row(xp, rows, keys, scores, free & ~self._active(keys, self.rsub), nv)
        movable = best_per_row(xp, rows, keys, scores, free, nv)[1]
        self.pending_here = int((movable > 0).sum())
        moved = xp.flatnonzero((best > 0) & self._active(self.ids, self.rsub))
        new = target[moved]
        self._publish(moved, r[moved], new)
        r[moved] = new
        self._shares(moves=int(moved.shape[0]), pending=self.pending_here)
        return moved.astype(self.graph.indices.dtype)

    def _refine_done(self):
        return self.rsub > 0 and (self.pending == 0 or self.rsub >= self.MAX_SUPERSTEPS)

    def result(self):
        return {"community": self.community, "refined": self.refined}

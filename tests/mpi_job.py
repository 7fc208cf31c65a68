"""What tests/test_mpi.py runs under ``mpiexec -n P``: one job, several modes; rank 0 writes what it saw to OUT.

    python tests/mpi_job.py primitives OUT.npz GRAPH PARTITIONER DUPLICATION COMMUNICATION
    python tests/mpi_job.py arcs OUT.npz GRAPH
    python tests/mpi_job.py own OUT.npz GRAPH
    python tests/mpi_job.py gather OUT.npz GRAPH
    python tests/mpi_job.py batches OUT.npz GRAPH
    python tests/mpi_job.py bounds OUT.json
    python tests/mpi_job.py shrinks GRAPH
    python tests/mpi_job.py communities OUT.npz GRAPH
    python tests/mpi_job.py raise GRAPH
    python tests/mpi_job.py contract GRAPH
    python tests/mpi_job.py vanish GRAPH
    python tests/mpi_job.py peak OUT.json SPEC
    python tests/mpi_job.py routes OUT.json SPEC
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

import mgraph
from mgraph.group import world
from mgraph.primitives.bfs import BFS


def by_vertex_range(ids, num_parts, seed):
    """A user's partitioner under MPI: called with this rank's vertex ids, it returns their owners."""
    return (np.asarray(ids) * num_parts // max(int(os.environ["MGRAPH_TEST_N"]), 1)).astype(np.int32)


class Exploding(BFS):
    def iterate(self, frontier):
        if self.step == 1 and world().rank == 1:
            raise ZeroDivisionError("boom on rank 1")
        return super().iterate(frontier)


class Vanishing(BFS):
    def iterate(self, frontier):
        if self.step == 1 and world().rank == 1:
            os._exit(3)  # as a crash or a kill would end it
        return super().iterate(frontier)


class Breaking(BFS):
    """Breaks the contract on one rank only: a list where a frontier array belongs."""

    def iterate(self, frontier):
        out = super().iterate(frontier)
        return out.tolist() if self.step >= 1 and world().rank == 1 else out


def primitives(out, graph, partitioner, duplication, communication):
    g = mgraph.load(graph)
    if partitioner == "callable":
        os.environ["MGRAPH_TEST_N"] = str(g.num_vertices)
        partitioner = by_vertex_range
    opts = dict(partitioner=partitioner, duplication=duplication, communication=communication)
    got = {
        "bfs_depth": mgraph.bfs(g, 0, **opts).depth,
        "bfs_pred": mgraph.bfs(g, 0, **opts).predecessor,
        "dobfs_depth": mgraph.bfs(g, 0, direction="auto", **opts).depth,
        "sssp_distance": mgraph.sssp(g, 0, **opts).distance,
        "sssp_pred": mgraph.sssp(g, 0, **opts).predecessor,
        "cc_labels": mgraph.connected_components(g, **opts).labels,
        "pr_rank": mgraph.pagerank(g, **opts).rank,
        "bc_centrality": mgraph.betweenness_centrality(g, sources=[0, 1, 2], **opts).centrality,
    }
    r = mgraph.bfs(g, 0, **opts)
    if world().rank == 0:
        np.savez(out, devices=r.stats["devices"], workers=r.stats["workers"],
                 bytes_sent=np.array(r.stats["bytes_sent"]), **got)
    else:
        assert all(v is None for v in got.values()), "results land on rank 0 only"


def scc(out, graph):
    """Strongly connected components of a directed edge list on the ranks."""
    r = mgraph.strongly_connected_components(mgraph.load(graph, directed=True))
    if world().rank == 0:
        np.savez(out, labels=r.labels, devices=r.stats["devices"])


def arcs(out, graph):
    """Every rank's arcs in caller ids, gathered: the graph the ranks built together."""
    g = mgraph.load(graph)
    part = mgraph.api.prepare(g)
    ids = part.vertex_ids
    rows = np.repeat(np.arange(part.num_vertices), np.diff(part.indptr))
    src, dst = ids[rows], ids[part.indices.astype(np.int64)]
    w = part.weights if part.weights is not None else np.zeros(src.shape[0])
    group = world()
    pieces = [group.gatherv(a) for a in (src, dst, w)]
    if group.rank == 0:
        np.savez(out, src=np.concatenate(pieces[0]), dst=np.concatenate(pieces[1]), w=np.concatenate(pieces[2]),
                 n=g.num_vertices, directed=g.directed)


def communities(out, graph):
    """Triangles, core numbers and label propagation of a file's graph on the ranks."""
    g = mgraph.load(graph)
    got = {"triangles": mgraph.triangles(g).triangles, "core": mgraph.core_number(g).core,
           "labels": mgraph.label_propagation(g).labels}
    if world().rank == 0:
        np.savez(out, **got)


def own(out, graph):
    """gather=False: each rank keeps its own vertices; rank 0 collects them to show they tile the graph."""
    g = mgraph.load(graph)
    r = mgraph.bfs(g, 0, gather=False)
    group = world()
    assert r.vertices.shape == r.depth.shape == r.predecessor.shape and r.vertices.dtype == np.int64
    pieces = [group.gatherv(a) for a in (r.vertices, r.depth, r.predecessor)]
    if group.rank == 0:
        np.savez(out, vertices=np.concatenate(pieces[0]), depth=np.concatenate(pieces[1]),
                 predecessor=np.concatenate(pieces[2]), sizes=np.array([p.shape[0] for p in pieces[0]]))


def gather(out, graph):
    """gather=False on any number of ranks (one included, where there is no MPI group): rank 0 writes every
    rank's vertices and depths, and the gathered depths of the same run."""
    g = mgraph.load(graph)
    own = mgraph.bfs(g, 0, gather=False)
    whole = mgraph.bfs(g, 0)
    assert own.vertices.shape == own.depth.shape == own.predecessor.shape and own.vertices.dtype == np.int64
    group = world()
    if group is None:
        vertices, depth, sizes = own.vertices, own.depth, [own.vertices.shape[0]]
    else:
        pieces = [group.gatherv(a) for a in (own.vertices, own.depth)]
        if group.rank != 0:
            return
        vertices, depth, sizes = np.concatenate(pieces[0]), np.concatenate(pieces[1]), [p.shape[0] for p in pieces[0]]
    np.savez(out, vertices=vertices, depth=depth, sizes=np.array(sizes), whole=whole.depth,
             ranks=1 if group is None else group.size)


def batches(out, graph):
    """A user's level-by-level BFS and Bellman-Ford (test_batches' primitives): on one rank their supersteps run in
    batches, on several one at a time; rank 0 writes the gathered values and the stats."""
    from test_batches import Relax, Hops

    g = mgraph.load(graph)
    hops, relax = mgraph.run(Hops, g, 0), mgraph.run(Relax, g, 0)
    if world() is None or world().rank == 0:
        np.savez(out, hops=hops.hops, distance=relax.distance, steps=np.array(
            [hops.stats["supersteps"], hops.stats["iterations"], relax.stats["supersteps"],
             relax.stats["iterations"]]), sizes=np.array(hops.stats["frontier_sizes"]))


def bounds(out):
    """Runs that every rank ends with the same ValueError (a bound, a disagreement, a broken contract): each rank
    catches its own and goes on to the next, so that rank 0 can write every rank's message of every case; a
    correct run at the end shows that no rank was left behind in a collective."""
    import broken_primitives as B

    g = mgraph.load("grid:6x6")
    cases = {
        "spin": lambda: mgraph.run(B.Spin, g, max_supersteps=30),
        "spin_default": lambda: mgraph.run(B.Spin, g),
        "phases": lambda: mgraph.run(B.Phases, g, max_supersteps=30),
        "bfs_bound": lambda: mgraph.bfs(g, 0, max_supersteps=5, peer_levels=False),  # a level per superstep
        "finishing": lambda: mgraph.run(B.Finishing, g),
        "totals": lambda: mgraph.run(B.Totals, g),
        "first_value_only": lambda: mgraph.run(B.FirstValueOnly, g, 0),
        "as_floats": lambda: mgraph.run(B.AsFloats, g, 0),
        "as_list": lambda: mgraph.run(B.AsList, g, 0),
        "not_a_primitive": lambda: mgraph.run(lambda graph: None, g),
        "devices_1000": lambda: mgraph.bfs(g, 0, devices=1000),
        "devices_2_63": lambda: mgraph.bfs(g, 0, devices=2**63),
        "too_few_vertices": lambda: mgraph.bfs(mgraph.Graph.from_edges([0], [1]), 0),
        "empty_sources": lambda: mgraph.betweenness_centrality(g, sources=[]),
    }
    got = {}
    for name, call in cases.items():
        try:
            call()
        except ValueError as e:
            got[name] = [type(e).__name__, str(e)]
        else:
            got[name] = ["no error", ""]
    r = mgraph.bfs(g, 0)
    everyone = world().allgather(got)
    if world().rank == 0:
        with open(out, "w") as f:
            json.dump({"cases": everyone, "after": r.depth.tolist(), "supersteps": r.stats["supersteps"]}, f)


def peak(out, spec):
    """The build's peak memory on every rank (or, with one rank, the whole graph's load)."""
    from mgraph.backend import Backend, peak_bytes, reset_peak

    group = world()
    if group is None:
        reset_peak(Backend("numpy"))
        g = mgraph.load(spec, backend="numpy")
        record = {"ranks": 1, "peak_bytes": [peak_bytes(Backend("numpy"))], "arcs": g.num_arcs}
    else:
        g = mgraph.load(spec)
        r = mgraph.bfs(g, 0)
        record = {"ranks": group.size, "peak_bytes": r.stats["build_peak_bytes"], "arcs": g.num_arcs}
    if group is None or group.rank == 0:
        with open(out, "w") as f:
            json.dump(record, f)


def chunks(out):
    """gatherv, allgatherv, bcast_array and alltoallv in rounds of 24 bytes (MPI counts are 32-bit: real rounds are 1 GiB), unequal and
    empty arrays included, and a transport's hop of messages around its slot's size; rank 0 writes what arrived."""
    from mgraph import group as groups

    groups.MPI_CHUNK = 24
    group, r = world(), world().rank
    got = group.gatherv(np.arange(r * 7, r * 7 + 5 + 3 * r, dtype=np.int64))
    empty = group.gatherv(np.empty(0, dtype=np.int32))
    sent = group.bcast_array(np.arange(37, dtype=np.float64) * 1.5 if r == 0 else None)
    # every rank's array on every rank: unequal lengths (rank 1's empty), int32 on rank 2 promoted to int64
    every = group.allgatherv(np.arange(r * 7, r * 7 + (0 if r == 1 else 5 + 3 * r),
                                       dtype=np.int32 if r == 2 else np.int64))
    every_right = group.allgather([every.dtype.str, every.tolist()])
    # rank r sends r + 3 k + 1 values r*100 + k*10 + i to rank k: several rounds of 24 / 3 bytes, one pair empty
    swapped = group.alltoallv([np.array([r * 100 + k * 10 + i for i in range(r + 3 * k + 1)] if (r, k) != (1, 2)
                                        else [], dtype=np.int64) for k in range(group.size)])
    # a hop's messages: one slot each, the rest of a longer one point to point in pieces of 24 bytes
    from mgraph.comm.mpi import SLOT, MpiTransport

    sizes = [0, 1, SLOT - 8, SLOT - 7, SLOT + 100]

    def message(s, k):
        return bytes((s * 31 + k * 7 + i) % 251 for i in range(sizes[(s + 2 * k) % len(sizes)]))

    hop = MpiTransport(group)._alltoallv([message(r, k) for k in range(group.size)])
    hop_right = group.allgather([bytes(b) for b in hop] == [message(s, r) for s in range(group.size)])
    everywhere = group.allgather(sent.tolist() == (np.arange(37) * 1.5).tolist())
    expect = [[s * 100 + r * 10 + i for i in range(s + 3 * r + 1)] if (s, r) != (1, 2) else [] for s in range(group.size)]
    swaps_right = group.allgather([a.tolist() for a in swapped] == expect)
    if r == 0:
        with open(out, "w") as f:
            json.dump({"gather": [a.tolist() for a in got], "empty": [a.size for a in empty],
                       "bcast_everywhere": everywhere, "alltoallv": [a.tolist() for a in swapped],
                       "alltoallv_everywhere": swaps_right, "hop_everywhere": hop_right, "allgatherv": every_right,
                       "hop_sizes": [len(b) for b in hop]}, f)


def routes(out, spec):
    """Each rank builds its part twice, its arcs routed by NCCL's all-to-all (``NcclTransport.alltoallv``) and by
    the host's typed one, and sends one hop of packages through NCCL and through MPI buffers; rank 0 writes which
    arrays differ on any rank.  CPU ranks run NcclTransport's code with CuPy and NCCL stood in for
    (tests/fake_nccl.py: host addresses, NCCL's calls as MPI messages)."""
    from mgraph.backend import resolve, to_numpy
    from mgraph.comm.mpi import MpiTransport, NcclTransport
    from mgraph.runner.workers import device_move, rank_transport
    from mgraph.parts.build import Owners, build_part, host_move
    from mgraph.io.sources import source_of

    group = world()
    backend = resolve("auto")
    if backend.is_gpu:
        import cupy

        backend = resolve("cupy", group.local_rank % cupy.cuda.runtime.getDeviceCount())
    with backend.context():
        source = source_of(spec)
        source.open(group)
        move = device_move(group, backend)
        if backend.is_gpu:
            nccl = rank_transport(group, backend)
        else:
            import fake_nccl

            fake_nccl.install(group.comm)
            nccl = NcclTransport(group)
        parts = [build_part(group, source, backend, Owners(group.size, 3), "1-hop", move=m)
                 for m in (nccl.alltoallv, host_move(group, backend.xp))]
        names = ["indptr", "indices", "weights", "vertex_ids", "owner"]
        differ = [n for n in names if not _same(getattr(parts[0], n), getattr(parts[1], n))]
        differ += [f"id_on[{k}]" for k in range(group.size) if not _same(parts[0].id_on[k], parts[1].id_on[k])]
        # one hop: rank r sends rank k (k != r) r + 2 k ids (a strided array, which the transport copies before the
        # group) and values, nothing where r + k == 1; then a hop in which nothing moves at all
        xp, r, hops = backend.xp, group.rank, []
        for transport in (nccl, MpiTransport(group)):
            packages = [(k, {"ids": (xp.arange(2 * (r + 2 * k), dtype=np.int64) + 100 * r)[::2],  # strided: copied
                             "depth": xp.full(r + 2 * k, k + 0.5, dtype=np.float32)})
                        for k in range(group.size) if k != r and r + k != 1]
            if not isinstance(transport, NcclTransport) or not backend.is_gpu:
                packages = [(k, {n: to_numpy(a) for n, a in p.items()}) for k, p in packages]
            transport.send(r, packages, tag=3)
            got = transport.receive(r, tag=3)
            transport.send(r, [], tag=4)
            nothing = transport.receive(r, tag=4)
            hops.append(([(src, {n: to_numpy(a).tolist() for n, a in p.items()}) for src, p in got], nothing))
        if hops[0] != hops[1]:
            differ.append("hop")
        # a gather of lists (Louvain's): lengths 0, 3, 6 of int32 on rank 0 and int64 elsewhere, promoted alike;
        # then floats with nothing on rank 1
        for a in (xp.arange(3 * r, dtype=np.int32 if r == 0 else np.int64) * (r + 1) - 2 ** 33 * (r == 2),
                  xp.full(0 if r == 1 else 2 + r, r + 0.5)):
            got, want = to_numpy(nccl.allgatherv(a)), group.allgatherv(to_numpy(a))
            if got.dtype != want.dtype or not np.array_equal(got, want):
                differ.append(f"allgatherv {got.dtype} {got.tolist()} {want.dtype} {want.tolist()}")
    everyone = group.allgather(differ)
    if group.rank == 0:
        with open(out, "w") as f:
            json.dump({"device_move": move is not None, "differ": everyone,
                       "hop_from": [src for src, _ in hops[0][0]]}, f)


def _same(a, b):
    from mgraph.backend import to_numpy

    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(to_numpy(a), to_numpy(b)))


def main(argv):
    mode = argv[0]
    if mode == "primitives":
        primitives(*argv[1:])
    elif mode == "arcs":
        arcs(*argv[1:])
    elif mode == "scc":
        scc(*argv[1:])
    elif mode == "communities":
        communities(*argv[1:])
    elif mode == "own":
        own(*argv[1:])
    elif mode == "gather":
        gather(*argv[1:])
    elif mode == "batches":
        batches(*argv[1:])
    elif mode == "bounds":
        bounds(*argv[1:])
    elif mode == "shrinks":
        import broken_primitives as B

        mgraph.run(B.ShrinksPastTwo, mgraph.load(argv[1]), 0)
    elif mode == "raise":  # these break at a later superstep: every level through the host, one per superstep
        mgraph.run(Exploding, mgraph.load(argv[1]), 0, peer_levels=False)
    elif mode == "contract":
        mgraph.run(Breaking, mgraph.load(argv[1]), 0, peer_levels=False)
    elif mode == "vanish":
        mgraph.run(Vanishing, mgraph.load(argv[1]), 0, peer_levels=False)
    elif mode == "raise_in_levels":  # rank 1 raises inside the levels run across the ranks, the others wait there
        from mgraph.comm import peer

        real = peer.NumpyLink.visit_levels

        def failing(self, frontier, label, pred, level, limit, max_levels):
            if world().rank == 1 and level > 1:
                raise ZeroDivisionError(f"boom in levels on rank 1 at level {level}")
            return real(self, frontier, label, pred, level, limit, 3 if level == 1 else max_levels)

        peer.NumpyLink.visit_levels = failing
        mgraph.bfs(mgraph.load(argv[1]), 0)
    elif mode == "peak":
        peak(*argv[1:])
    elif mode == "chunks":
        chunks(*argv[1:])
    elif mode == "routes":
        routes(*argv[1:])
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])

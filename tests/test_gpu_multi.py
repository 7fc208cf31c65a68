"""Multi-GPU runs against one-device NumPy results, and the multi-device kernels against their NumPy twins.

Run on a device machine: ``PYTHONPATH=$PWD python3 -m pytest -m gpu``.  Every
test runs several partitions on one GPU (``devices=[0, 0, 0]``); with two or
more GPUs, also one partition per GPU, with one worker thread per GPU (peer
copies) and with one worker process per GPU (NCCL), and with two or three GPUs
four partitions over two of them (``devices=[0, 1, 0, 1]``, threads).
"""
import functools
import itertools

import numpy as np
import pytest

import mgraph
from mgraph import partitioners
from mgraph.io.generators import with_random_weights
from mgraph.comm import numpy_kernels
from mgraph.ops import numpy_ops
from mgraph.check.validate import validate_bfs, validate_sssp

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from mgraph.comm import cupy_kernels  # noqa: E402 - needs CuPy
from mgraph.ops import cupy_ops  # noqa: E402 - needs CuPy


def device_lists():
    """(GPU ids, workers) to run on: partitions sharing GPU 0, and with several GPUs one per GPU; with fewer than
    4, also four partitions over two GPUs (every exchange of four parts, peers on both GPUs).  One process per GPU
    (MPI ranks) is tests/test_mpi.py's."""
    count = cp.cuda.runtime.getDeviceCount()
    out = [([0, 0, 0], "threads")]
    if count >= 2:
        ids = list(range(min(count, 4)))
        out += [(ids, "threads")]
    if 2 <= count < 4:
        out.append(([0, 1, 0, 1], "threads"))
    return out


@pytest.fixture(scope="module")
def graphs():
    und = with_random_weights(mgraph.load("rmat:13", backend="numpy"), 1, 64, seed=1)
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 6000, 40000), rng.integers(0, 6000, 40000)
    dirg = mgraph.Graph.from_edges(src, dst, rng.integers(1, 9, src.size).astype(float), num_vertices=6010,
                                   directed=True)
    return {"rmat13": und, "random_dir": dirg}


@functools.lru_cache(maxsize=None)
def reference(g, name, source):
    if name == "bfs":
        return mgraph.bfs(g, source, backend="numpy")
    if name == "sssp":
        return mgraph.sssp(g, source, backend="numpy")
    if name == "cc":
        return mgraph.connected_components(g, backend="numpy")
    if name == "pr":
        return mgraph.pagerank(g, backend="numpy")
    return mgraph.betweenness_centrality(g, sources=[source, source + 1], backend="numpy")


@pytest.mark.parametrize("duplication,communication", list(itertools.product(["1-hop", "all"], ["selective", "broadcast"])))
@pytest.mark.parametrize("devices,workers", device_lists(), ids=lambda d: ",".join(map(str, d)) if isinstance(d, list) else d)
@pytest.mark.parametrize("gname", ["rmat13", "random_dir"])
def test_every_primitive_on_gpus_matches_one_cpu_device(graphs, gname, devices, workers, duplication, communication):
    g = graphs[gname]
    source = int(np.flatnonzero(np.diff(g.indptr) > 0)[0])
    opts = dict(backend="cupy", devices=devices, duplication=duplication, communication=communication,
                workers=workers)
    for name in ("bfs", "dobfs", "sssp", "cc", "pr", "bc"):
        ref = reference(g, "bfs" if name == "dobfs" else name, source)
        if name in ("bfs", "dobfs"):
            r = mgraph.bfs(g, source, direction="push" if name == "bfs" else "auto", **opts)
            np.testing.assert_array_equal(r.depth, ref.depth)
            validate_bfs(g, source, r.depth, r.predecessor)
        elif name == "sssp":
            r = mgraph.sssp(g, source, **opts)
            np.testing.assert_array_equal(r.distance, ref.distance)
            validate_sssp(g, source, r.distance, r.predecessor)
        elif name == "cc":
            r = mgraph.connected_components(g, **opts)
            np.testing.assert_array_equal(r.labels, ref.labels)
        elif name == "pr":
            r = mgraph.pagerank(g, **opts)
            np.testing.assert_allclose(r.rank, ref.rank, rtol=0, atol=1e-12)
        else:
            r = mgraph.betweenness_centrality(g, sources=[source, source + 1], **opts)
            np.testing.assert_allclose(r.centrality, ref.centrality, rtol=1e-9, atol=1e-9)
        assert r.stats["devices"] == len(devices) and r.stats["workers"] == workers


@pytest.mark.parametrize("partitioner", ["random", "biased-random"])
def test_partitioners_run_on_the_gpu(graphs, partitioner):
    g = graphs["rmat13"]
    owner = partitioners.assign(g.to("cupy"), 4, partitioner, seed=3)
    assert isinstance(owner, cp.ndarray)
    host = cp.asnumpy(owner)
    assert host.shape == (g.num_vertices,) and host.min() >= 0 and host.max() < 4


def test_segment_min_matches_numpy_twin():
    rng = np.random.default_rng(0)
    seg = rng.integers(0, 500, 20000)
    val = rng.integers(-10**12, 10**12, 20000)
    init = rng.integers(-10**12, 10**12, 600)
    got = cupy_ops.segment_min(cp.asarray(seg), cp.asarray(val), cp.asarray(init))
    np.testing.assert_array_equal(cp.asnumpy(got), numpy_ops.segment_min(seg, val, init))


def _entries(a):
    """A package array's entries as comparable Python values (complex ones as [real, imag])."""
    return a.view(np.float64).reshape(-1, 2).tolist() if a.dtype.kind == "c" else a.tolist()


@pytest.mark.parametrize("own_below", [None, 0, 4321, 10_000])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [0, 1, 2049, 1_000_003])
def test_count_own_matches_numpy_twin(n, id_dtype, own_below):
    rng = np.random.default_rng(n + (own_below or 0))
    owner = rng.integers(0, 3, 10_000).astype(np.int32)
    ids = rng.integers(0, 10_000, n).astype(id_dtype)
    want = numpy_ops.count_own(ids, owner, 1, own_below)
    assert cupy_ops.count_own(cp.asarray(ids), cp.asarray(owner), 1, own_below) == want
    assert cupy_ops.count_own(cp.asarray(ids)[::2], cp.asarray(owner), 1, own_below) == \
        numpy_ops.count_own(ids[::2], owner, 1, own_below)  # a strided view is made contiguous


@pytest.mark.parametrize("below", [None, 700_000])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [0, 1, 2049, 1_000_003])
def test_select_mapped_matches_numpy_twin_up_to_order(n, id_dtype, below):
    rng = np.random.default_rng(n)
    table = np.where(rng.random(2_000_000) < 0.4, rng.integers(0, 2_000_000, 2_000_000), -1).astype(id_dtype)
    vertices = rng.permutation(2_000_000)[:n].astype(id_dtype)
    want_v, want_ids = numpy_kernels.select_mapped(vertices, table, below)
    chosen = vertices[(table[vertices] >= 0) & ((vertices < below) if below is not None else True)]
    assert (want_ids >= 0).all() and (np.sort(want_v) == np.sort(chosen)).all()
    got_v, got_ids = cupy_kernels.select_mapped(cp.asarray(vertices), cp.asarray(table), below)
    got_v, got_ids = cp.asnumpy(got_v), cp.asnumpy(got_ids)
    order = np.argsort(got_v)
    np.testing.assert_array_equal(got_v[order], np.sort(want_v))
    np.testing.assert_array_equal(got_ids[order], want_ids[np.argsort(want_v)])


# one tile (cupy_kernels.SPLIT_ONE_TILE = 2048: the fused split_pack launch) and more
@pytest.mark.parametrize("n,parts,me", [(0, 3, 0), (1, 2, 1), (300, 1, 0), (700, 8, 7), (2048, 5, 2), (2049, 3, 1),
                                        (100000, 2, 0), (77777, 5, 3)])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_split_and_gather_match_numpy_twins_up_to_order_within_packages(n, parts, me, id_dtype):
    assert cupy_kernels.SPLIT_ONE_TILE == 2048  # the cases straddle it
    rng = np.random.default_rng(n)
    size = 3 * n + 10
    vertices = rng.permutation(size)[:n].astype(id_dtype)
    owner = rng.integers(0, parts, size).astype(np.int32)
    caller = rng.permutation(size).astype(np.int64)
    id_on = [None if k == me else rng.integers(-1, size, size).astype(id_dtype) for k in range(parts)]
    values = [rng.integers(-1, size, size).astype(id_dtype),  # vertex-valued: through the table
              rng.random(size), rng.random(size) < 0.5,  # 8- and 1-byte words
              rng.random((size, 2)).view(np.complex128).ravel()]  # 16 bytes: a struct of bytes
    tables = [caller, None, None, None]
    g = [cp.asarray(x) for x in (vertices, owner, caller)]
    g_values = [cp.asarray(v) for v in values]
    g_tables = [g[2], None, None, None]
    for ids_on, g_ids_on in [(None, None), (id_on, [None if a is None else cp.asarray(a) for a in id_on])]:
        counts, packed = cupy_kernels.split(g[0], g[1], me, parts, g_values, g_tables, g_ids_on)
        ref_counts, ref = numpy_kernels.split(vertices, owner, me, parts, values, tables, ids_on)
        assert counts == ref_counts and sorted(packed) == sorted(ref)
        for k, (ids, got) in packed.items():
            rows = sorted(zip(_entries(cp.asnumpy(ids)), *[_entries(cp.asnumpy(x)) for x in got]))
            assert rows == sorted(zip(_entries(ref[k][0]), *[_entries(x) for x in ref[k][1]]))
            assert all(x.dtype == v.dtype for x, v in zip(got, values))
    got = cupy_kernels.gather(g[0], g_values, g_tables)
    for x, want in zip(got, numpy_kernels.gather(vertices, values, tables)):
        np.testing.assert_array_equal(cp.asnumpy(x), want)


def test_one_tile_split_keeps_its_unused_outputs_and_never_hands_them_out_twice():
    """A split of own vertices only keeps its outputs for the thread's next one-tile split; the packages of a split
    that sends must not be overwritten by the splits after it."""
    rng = np.random.default_rng(5)
    size, me = 5000, 0
    owner = rng.integers(0, 3, size).astype(np.int32)
    values = [rng.integers(-1, size, size).astype(np.int64), rng.random(size)]
    g_owner, g_values = cp.asarray(owner), [cp.asarray(v) for v in values]
    own, other = np.flatnonzero(owner == me), np.flatnonzero(owner != me)
    frontiers = [own[:50], np.concatenate([own[50:80], other[:40]]), own[80:200], other[40:1000], own[:3]]
    results = []
    for f in frontiers:
        counts, packed = cupy_kernels.split(cp.asarray(f), g_owner, me, 3, g_values, [None, None])
        assert counts == numpy_kernels.split(f, owner, me, 3, values, [None, None])[0]
        results.append((f, packed))
    for f, packed in results:  # after every later split: each package still holds its own entries
        _, ref = numpy_kernels.split(f, owner, me, 3, values, [None, None])
        assert sorted(packed) == sorted(ref)
        for k, (ids, got) in packed.items():
            rows = sorted(zip(cp.asnumpy(ids).tolist(), *[cp.asnumpy(x).tolist() for x in got]))
            assert rows == sorted(zip(ref[k][0].tolist(), *[x.tolist() for x in ref[k][1]]))


@pytest.mark.parametrize("n", [1, 31, 33, 1_000_003])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_combine_merge_of_bits_matches_numpy_twin(n, id_dtype):
    """A package sent as bits (a broadcast frontier), ids through a table with -1s, one value per field."""
    from mgraph.ops import Bits

    rng = np.random.default_rng(n)
    owner = rng.integers(0, 2, n).astype(np.int32)
    frontier = rng.permutation(n)[: n // 4].astype(id_dtype)
    sent = rng.permutation(n)[: max(1, n // 3)]
    words = numpy_ops.bitmap(sent, n)
    to_local = np.where(rng.random(n) < 0.2, -1, rng.permutation(n)).astype(id_dtype)
    depth = rng.integers(-1, 9, n).astype(np.int32)
    sigma = rng.random(n)

    def run(xp, seen):
        d, s = xp.asarray(depth).copy(), xp.asarray(sigma).copy()
        mod = numpy_kernels if xp is np else cupy_kernels
        out, own = mod.combine_merge(xp.asarray(frontier), [(Bits(xp.asarray(words)), xp.asarray(to_local),
                                                             [(d, "min", 5), (s, "sum", 0.25)], [])],
                                     seen, xp.asarray(owner), 0)
        return [cp.asnumpy(x) if xp is cp else x for x in (d, s, out)], own

    seen = cp.zeros(-(-n // 32), dtype=np.uint32)
    (d_ref, s_ref, out_ref), own_ref = run(np, cp.asnumpy(seen))
    (d, s, out), own = run(cp, seen)
    np.testing.assert_array_equal(d, d_ref)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=0)
    assert len(out) == len(out_ref) and own == own_ref
    np.testing.assert_array_equal(np.sort(out), np.sort(out_ref))
    assert not cp.asnumpy(seen).any()
    np.testing.assert_array_equal(cp.asnumpy(cupy_ops.bitmap(cp.asarray(sent.astype(id_dtype)), n)), words)


@pytest.mark.parametrize("n", [1, 33, 1_000_003])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_bits_of_a_block_match_numpy_twin(n, id_dtype):
    """A 1-hop broadcast's bits: set through the sender's table of ids on the receiver (-1: not there) relative to
    the block's first id, and decoded there as that id plus the bit's index, with no table."""
    from mgraph.ops import Bits

    rng = np.random.default_rng(n)
    base, held = 7, max(1, n // 2)
    table = np.full(n, -1, dtype=id_dtype)
    table[np.sort(rng.permutation(n)[:held])] = base + np.arange(held)  # the block: in the sender's order
    vertices = rng.permutation(n)[: max(1, n // 3)].astype(id_dtype)
    words = numpy_ops.bitmap(vertices, held, table, base)
    np.testing.assert_array_equal(
        cp.asnumpy(cupy_ops.bitmap(cp.asarray(vertices), held, cp.asarray(table), base)), words)
    depth = rng.integers(-1, 9, base + held).astype(np.int32)

    def run(xp):
        d = xp.asarray(depth).copy()
        mod = numpy_kernels if xp is np else cupy_kernels
        out, own = mod.combine_merge(xp.asarray(vertices[:0]), [(Bits(xp.asarray(words), base), None,
                                                                [(d, "min", 3)], [])], None, None, 0, own_below=base)
        return [cp.asnumpy(x) if xp is cp else x for x in (d, out)], own

    (d_ref, out_ref), own_ref = run(np)
    (d, out), own = run(cp)
    np.testing.assert_array_equal(d, d_ref)
    assert own == own_ref == 0
    np.testing.assert_array_equal(np.sort(out), np.sort(out_ref))


FIELD_DTYPES = {"min": np.int32, "max": np.int64, "sum": np.float64, "assign": np.float32}


@pytest.mark.parametrize("repeats", [True, False])
@pytest.mark.parametrize("own_below", [None, 700])
@pytest.mark.parametrize("fields", [("min",), ("max", "sum"), ("sum",), ("assign",), ("min", "min")])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [5000, 1_000_003])
def test_combine_merge_matches_numpy_twin(n, id_dtype, fields, own_below, repeats):
    """Three packages over one frontier: plain ids, ids through a table to local ones (-1 skipped), carried
    values through a table and as they are (the first package's second field, where there is one, a scalar);
    arrays equal after, the output equal as a set, each vertex once.
    Without repeats (no scratch bitmap) the packages and the frontier hold disjoint vertices."""
    rng = np.random.default_rng(n + len(fields))
    owner = rng.integers(0, 3, n).astype(np.int32)
    order = rng.permutation(n).astype(id_dtype)
    frontier = order[: n // 5]
    arrays = [rng.integers(-1, 40, n).astype(FIELD_DTYPES[op]) for op in fields]
    carried = rng.integers(-1, n, n).astype(id_dtype)
    table = rng.permutation(n).astype(id_dtype)
    to_local = np.where(rng.random(n) < 0.3, -1, rng.permutation(n)).astype(id_dtype)
    packages = []
    for k in range(3):
        ids = rng.permutation(n)[: n // 3].astype(id_dtype) if repeats else order[(k + 1) * (n // 5):][: n // 5]
        values = [rng.integers(-1, 40, ids.size).astype(a.dtype) for a in arrays]
        if k == 0 and len(values) > 1:  # a value the primitive implies: one scalar for every entry
            values[-1] = values[-1].dtype.type(7)
        packages.append((ids, to_local if k == 1 and repeats else None, values,
                         rng.integers(-1, n, ids.size).astype(id_dtype), table if k != 2 else None))

    def run(xp, seen):
        a = [xp.asarray(x).copy() for x in arrays]
        c = xp.asarray(carried).copy()
        received = [(xp.asarray(ids), None if t is None else xp.asarray(t),
                     [(a[j], op, xp.asarray(v) if np.ndim(v) else v) for j, (op, v) in enumerate(zip(fields, values))],
                     [(c, xp.asarray(cv), None if ct is None else xp.asarray(ct))])
                    for ids, t, values, cv, ct in packages]
        mod = numpy_kernels if xp is np else cupy_kernels
        out, own = mod.combine_merge(xp.asarray(frontier), received, seen, xp.asarray(owner), 1, own_below)
        return [xp.asnumpy(x) if xp is cp else x for x in a + [c, out]], own

    seen = cp.zeros(-(-n // 32), dtype=np.uint32) if repeats else None
    (*ref, ref_out), ref_own = run(np, None if seen is None else cp.asnumpy(seen))
    (*got, got_out), own = run(cp, seen)
    for x, want in zip(got, ref):
        np.testing.assert_array_equal(x, want)
    assert len(got_out) == len(ref_out) and len(np.unique(got_out)) == len(got_out)  # each vertex once
    np.testing.assert_array_equal(np.sort(got_out), np.sort(ref_out))
    np.testing.assert_array_equal(np.sort(got_out[: len(frontier)]), np.sort(frontier))  # the frontier first
    assert own == ref_own and len(ref_out) > len(frontier)
    assert seen is None or not cp.asnumpy(seen).any()  # the scratch bitmap is zeroed for the next merge
    table_q = rng.integers(-1, n, 4000).astype(id_dtype)
    np.testing.assert_array_equal(cp.asnumpy(cupy_ops.translate(cp.asarray(table_q), cp.asarray(table))),
                                  numpy_ops.translate(table_q, table))


@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [5000, 1_000_003])
def test_marks_kept_between_hops_match_numpy_twin(n, id_dtype):
    """SSSP's superstep: a min hop that keeps its marks, then an assign hop that takes them (``marked``) and
    repeats vertices of the frontier; each hop's output equal as a set and the bitmaps equal after each, zero at
    the end.  Then a kept merge with nothing after it, cleared by unmark (the sweep and the per-vertex clear)."""
    rng = np.random.default_rng(n)
    owner = rng.integers(0, 3, n).astype(np.int32)
    frontier = rng.permutation(n)[: n // 5].astype(id_dtype)
    dist = rng.integers(0, 50, n).astype(np.float64)
    hops = [(rng.permutation(n)[: n // 3].astype(id_dtype), "min"), (rng.permutation(n)[: n // 4].astype(id_dtype),
                                                                      "assign")]
    hops = [(ids, op, rng.integers(0, 50, ids.size).astype(np.float64)) for ids, op in hops]

    def run(xp, mod):
        d, seen = xp.asarray(dist).copy(), xp.zeros(-(-n // 32), dtype=np.uint32)
        front, outs = xp.asarray(frontier), []
        for k, (ids, op, values) in enumerate(hops):
            front, own = mod.combine_merge(front, [(xp.asarray(ids), None, [(d, op, xp.asarray(values))], [])],
                                           seen, xp.asarray(owner), 1, None, marked=k == 1, keep=k == 0)
            outs.append((np.sort(cp.asnumpy(front) if xp is cp else front), own,
                         cp.asnumpy(seen) if xp is cp else seen.copy()))
        last = np.sort(cp.asnumpy(front) if xp is cp else front)  # the GPU's order is any: the same set both ways
        for few in (False, True):
            part = xp.asarray(last[: max(1, n // 300)] if few else last)
            kept, _ = mod.combine_merge(part, [], seen, xp.asarray(owner), 1, keep=True)
            outs.append(cp.asnumpy(seen) if xp is cp else seen.copy())
            mod.unmark(kept, seen)
            outs.append(cp.asnumpy(seen) if xp is cp else seen.copy())
        return outs

    ref, got = run(np, numpy_kernels), run(cp, cupy_kernels)
    for (want_out, want_own, want_seen), (out, own, seen) in zip(ref[:2], got[:2]):
        assert len(np.unique(out)) == len(out)
        np.testing.assert_array_equal(out, want_out)
        assert own == want_own
        np.testing.assert_array_equal(seen, want_seen)
    assert ref[0][2].any() and not ref[1][2].any() and len(ref[1][0]) > len(ref[0][0])
    for want, seen in zip(ref[2:], got[2:]):
        np.testing.assert_array_equal(seen, want)
    assert ref[2].any() and not ref[3].any() and ref[4].any() and not ref[5].any()


@pytest.mark.skipif(cp.cuda.runtime.getDeviceCount() < 2, reason="NCCL needs a GPU per rank")
def test_nccl_routes_a_build_as_the_host_does(tmp_path):
    """Two GPU ranks build their parts with arcs routed through NCCL and through the host: every array agrees, and
    a hop through NCCL delivers what one through MPI buffers does (rank 1 sends rank 0 nothing in it)."""
    import json
    import os

    from conftest import ROOT, run_mpi

    out = tmp_path / "routes.json"
    job = run_mpi(2, ["python", os.path.join(ROOT, "tests", "mpi_job.py"), "routes", out, "rmat:16"],
                  env={"MGRAPH_BACKEND": "cupy"})
    assert job.returncode == 0, job.stderr[-3000:]
    assert json.loads(out.read_text()) == {"device_move": True, "differ": [[], []], "hop_from": []}

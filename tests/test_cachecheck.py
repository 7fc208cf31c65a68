"""An .npz cache is checked like any input: every breach of the graph's invariants, and every kind of damaged
archive, is one GraphFormatError naming the file, from load and from the slice reader (FileEdges) alike."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import mgraph
from mgraph.io import cachecheck
from mgraph.io import loaders as mio
from mgraph.io.loaders import FileEdges, GraphFormatError

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


# -- valid caches of the shipped graphs ----------------------------------------------------------


def chesapeake():
    """Undirected, unweighted (39 vertices, 340 arcs)."""
    return mio.load(DATA / "chesapeake.mtx", backend="numpy")


def chesapeake_weighted():
    """Undirected with a distinct weight per edge, both arcs of an edge weighing the same."""
    g = chesapeake()
    src, dst, _ = g.edges()
    return mgraph.Graph.from_edges(src, dst, np.arange(1.0, src.size + 1), num_vertices=g.num_vertices)


def bips():
    """Directed, weighted with negative weights (7,135 vertices, 27,838 arcs)."""
    return mio.load(DATA / "bips98_606.mtx", backend="numpy")


GRAPHS = {"chesapeake": chesapeake, "chesapeake_weighted": chesapeake_weighted, "bips": bips}


def arrays_of(graph) -> dict:
    """The members save_npz writes for ``graph``, read back with numpy from a real cache."""
    return {
        "format": np.array(mio.NPZ_FORMAT), "indptr": graph.indptr, "indices": graph.indices,
        "directed": np.array(graph.directed), "num_input_edges": np.array(graph.num_input_edges, dtype=np.int64),
        **({"weights": graph.weights} if graph.weights is not None else {}),
    }


def write(path, arrays: dict, **changes) -> Path:
    """An .npz with ``arrays``, where ``changes`` replaces members (None removes one)."""
    members = dict(arrays)
    for name, value in changes.items():
        if value is None:
            members.pop(name, None)
        else:
            members[name] = value
    np.savez(path, **members)
    return Path(path)


def assert_same(a: mgraph.Graph, b: mgraph.Graph):
    for name in ("indptr", "indices", "weights"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert (a.directed, a.num_vertices, a.num_input_edges) == (b.directed, b.num_vertices, b.num_input_edges)


def read_all_parts(path, count: int):
    fe = FileEdges(path)
    parts = [fe.part(i, count) for i in range(count)]
    if count > 1:
        fe.check_count(sum(p[0].shape[0] for p in parts))
    return parts


def refused(path, problem: str, *, parts=(1, 3)):
    """load, mgraph.load, read_edges and the slice reader (as 1 and as 3 readers) all refuse ``path`` with one
    GraphFormatError that names the file and matches ``problem``."""
    name = os.path.basename(path)
    calls = [lambda: mio.load(path, backend="numpy"), lambda: mgraph.load(str(path)), lambda: mio.read_edges(path)]
    calls += [lambda c=c: read_all_parts(path, c) for c in parts]
    for call in calls:
        with pytest.raises(GraphFormatError, match=problem) as info:
            call()
        message = str(info.value)
        assert message.startswith(str(path) + ": "), message
        assert name in message and "\n" not in message
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", GRAPHS)
def test_a_valid_cache_loads_as_the_graph_it_holds(tmp_path, name):
    g = GRAPHS[name]()
    path = tmp_path / "g.npz"
    mio.save_npz(g, path)
    assert_same(mio.load(path, backend="numpy"), g)
    # the same arrays written by numpy itself (and compressed) load too
    assert_same(mio.load(write(tmp_path / "numpy.npz", arrays_of(g)), backend="numpy"), g)
    np.savez_compressed(tmp_path / "z.npz", **arrays_of(g))
    assert_same(mio.load(tmp_path / "z.npz", backend="numpy"), g)
    src, dst, w, n, directed = mio.read_edges(path)
    for count in (1, 2, 3, 7):
        parts = read_all_parts(path, count)
        assert np.array_equal(np.concatenate([p[0] for p in parts]), src)
        assert np.array_equal(np.concatenate([p[1] for p in parts]), dst)
        if w is not None:
            assert np.array_equal(np.concatenate([p[2] for p in parts]), w)


def test_other_integer_dtypes_and_byte_orders_load_as_the_same_graph(tmp_path):
    g = bips()
    a = arrays_of(g)
    path = write(tmp_path / "odd.npz", a, indptr=g.indptr.astype(">i8"), indices=g.indices.astype(np.uint32),
                 weights=g.weights.astype(">f8"), num_input_edges=np.array(g.num_input_edges, dtype=np.uint32))
    h = mio.load(path, backend="numpy")
    assert_same(h, g)
    assert h.indices.dtype == np.int32 and h.indptr.dtype == np.int64 and h.weights.dtype == np.float64


# -- the graph's invariants ----------------------------------------------------------------------


def _drop_arc(indptr, indices, weights, k):
    """The CSR without arc k."""
    row = int(np.searchsorted(indptr, k, side="right") - 1)
    indptr = indptr.copy()
    indptr[row + 1:] -= 1
    keep = np.arange(indices.size) != k
    return indptr, indices[keep], None if weights is None else weights[keep]


def _first_arc(g, u, v):
    lo, hi = g.indptr[u], g.indptr[u + 1]
    return int(lo + np.flatnonzero(g.indices[lo:hi] == v)[0])


def test_nan_and_inf_weights(tmp_path):
    g = chesapeake_weighted()
    a = arrays_of(g)
    k = _first_arc(g, 0, 6)
    for bad in (np.nan, np.inf, -np.inf):
        w = g.weights.copy()
        w[k] = bad
        refused(write(tmp_path / f"w{bad}.npz", a, weights=w), rf"weight {bad} of arc 0->6 is not finite")


@pytest.mark.parametrize("dtype", ["<U4", "S4", complex, bool, "M8[s]"])
def test_weights_that_are_not_real_numbers(tmp_path, dtype):
    g = chesapeake_weighted()
    path = write(tmp_path / "w.npz", arrays_of(g), weights=g.weights.astype(dtype))
    refused(path, "weights must be real numbers")


def test_pickled_object_arrays_are_never_unpickled(tmp_path, monkeypatch):
    g = chesapeake_weighted()
    path = write(tmp_path / "obj.npz", arrays_of(g), weights=g.weights.astype(object))
    for name in ("load", "loads"):
        monkeypatch.setattr(f"pickle.{name}", lambda *a, **k: pytest.fail("a cache member was unpickled"))
    refused(path, r"weights\.npy holds Python objects")


@pytest.mark.parametrize("value", [np.array("no"), np.array(1), np.array([True]), np.array(1.0)])
def test_directed_must_be_a_boolean_scalar(tmp_path, value):
    refused(write(tmp_path / "d.npz", arrays_of(chesapeake()), directed=value), "directed must be a boolean scalar")


def test_unsorted_row(tmp_path):
    g = chesapeake()
    indices = g.indices.copy()
    lo, hi = g.indptr[0], g.indptr[1]
    indices[lo:hi] = indices[lo:hi][::-1]
    path = write(tmp_path / "unsorted.npz", arrays_of(g), indices=indices)
    refused(path, rf"row 0 is not sorted \({indices[lo]} before {indices[lo + 1]}\)")


def test_duplicate_arc(tmp_path):
    g = chesapeake()
    indices = g.indices.copy()
    indices[1] = indices[0]  # row 0 holds 0 -> indices[0] twice
    refused(write(tmp_path / "dup.npz", arrays_of(g), indices=indices), rf"row 0 holds arc 0->{indices[0]} twice")


def test_self_loop(tmp_path):
    g = chesapeake()
    indices = g.indices.copy()
    indices[0] = 0  # still sorted: row 0's first neighbour becomes 0 itself
    refused(write(tmp_path / "loop.npz", arrays_of(g), indices=indices), "self-loop 0->0")


@pytest.mark.parametrize("bad,problem", [(-1, r"vertex id -1 in indices is outside 0\.\.38"),
                                         (39, r"vertex id 39 in indices is outside 0\.\.38")])
def test_ids_out_of_range(tmp_path, bad, problem):
    g = chesapeake()
    indices = g.indices.copy()
    indices[-1] = bad  # the last row's last arc: the last of several readers owns it
    refused(write(tmp_path / "range.npz", arrays_of(g), indices=indices), problem)


def test_indptr_breaches(tmp_path):
    g = chesapeake()
    a = arrays_of(g)
    m = g.num_arcs
    start = g.indptr.copy()
    start[0] = 1
    refused(write(tmp_path / "start.npz", a, indptr=start), f"indptr runs from 1 to {m}; it must run from 0")
    end = g.indptr.copy()
    end[-1] = m - 1
    refused(write(tmp_path / "end.npz", a, indptr=end), f"indptr runs from 0 to {m - 1}")
    down = g.indptr.copy()
    down[5] = down[4] - 1
    refused(write(tmp_path / "down.npz", a, indptr=down), r"row 4 ends before it starts \(indptr\[4\] = ")


@pytest.mark.parametrize("member,value,problem", [
    ("indptr", lambda g: g.indptr.astype(np.float64), "indptr must be a non-empty 1-D integer array"),
    ("indptr", lambda g: g.indptr[:0], "indptr must be a non-empty 1-D integer array"),
    ("indices", lambda g: g.indices.reshape(-1, 2), "indices must be a 1-D integer array"),
    ("indices", lambda g: g.indices.astype(np.float32), "indices must be a 1-D integer array"),
    ("weights", lambda g: g.weights[:-1], "weights has shape"),
    ("num_input_edges", lambda g: np.array("170"), "num_input_edges must be an integer scalar"),
    ("num_input_edges", lambda g: np.array(-2), "num_input_edges must be an integer scalar >= -1"),
    ("format", lambda g: np.array("mgraph-csr-0"), "not an mgraph graph cache"),
    ("format", lambda g: np.array([mio.NPZ_FORMAT]), "not an mgraph graph cache"),
])
def test_wrong_shapes_and_dtypes(tmp_path, member, value, problem):
    g = chesapeake_weighted()
    refused(write(tmp_path / "shape.npz", arrays_of(g), **{member: value(g)}), problem)


@pytest.mark.parametrize("member", ["format", "indptr", "indices", "directed", "num_input_edges"])
def test_missing_member(tmp_path, member):
    path = write(tmp_path / "missing.npz", arrays_of(chesapeake()), **{member: None})
    refused(path, rf"not an mgraph graph cache \(expected format 'mgraph-csr-1', missing {member}\)")


def _cross_shares(g):
    """(u, w, v): u in the first third of the rows, w a neighbour of u in the last third, v a vertex there that is
    not one: with 2 or 3 readers an arc between u and w (or v) joins rows of different shares."""
    third = g.num_vertices // 3
    for u in range(third):
        row = set(g.indices[g.indptr[u]:g.indptr[u + 1]].tolist())
        far = [x for x in range(g.num_vertices - third, g.num_vertices)]
        w = next((x for x in far if x in row), None)
        v = next((x for x in far if x not in row), None)
        if w is not None and v is not None:
            return u, w, v
    raise AssertionError("no such vertices")


def _csr(src, dst, n):
    order = np.lexsort((dst, src))
    src, dst = np.asarray(src)[order], np.asarray(dst)[order]
    return np.searchsorted(src, np.arange(n + 1)).astype(np.int64), dst.astype(np.int32)


def _arcs(g):
    return np.repeat(np.arange(g.num_vertices), np.diff(g.indptr)), g.indices.astype(np.int64)


def test_undirected_cache_must_store_both_arcs(tmp_path):
    g = chesapeake()
    u, w, _ = _cross_shares(g)
    src, dst = _arcs(g)
    keep = ~((src == u) & (dst == w))  # drop u -> w, keep w -> u
    indptr, indices = _csr(src[keep], dst[keep], g.num_vertices)
    path = write(tmp_path / "half.npz", arrays_of(g), indptr=indptr, indices=indices)
    refused(path, rf"undirected, but arc {w}->{u} has no reverse arc {u}->{w}", parts=(1,))
    # with several readers the two arcs lie in different shares: the count over all shares tells
    for count in (2, 3):
        with pytest.raises(GraphFormatError, match=r"half\.npz: undirected, but 169 of its 339 arcs run from a small"):
            read_all_parts(path, count)
    # within one share a missing reverse arc is found by that share
    k = _first_arc(g, 0, 6)
    indptr, indices, _ = _drop_arc(g.indptr, g.indices, None, k)
    path = write(tmp_path / "near.npz", arrays_of(g), indptr=indptr, indices=indices)
    refused(path, "undirected, but arc 6->0 has no reverse arc 0->6", parts=(1, 2, 3))


def test_an_asymmetric_undirected_cache_with_balanced_counts(tmp_path):
    g = chesapeake()
    u, w, v = _cross_shares(g)
    src, dst = _arcs(g)
    keep = ~((src == u) & (dst == w))  # u -> w becomes u -> v: as many arcs each way, two without a reverse
    src, dst = np.append(src[keep], u), np.append(dst[keep], v)
    indptr, indices = _csr(src, dst, g.num_vertices)
    path = write(tmp_path / "bal.npz", arrays_of(g), indptr=indptr, indices=indices)
    x, y = (u, v) if v < w else (w, u)  # the first of the two in (smaller id, larger id) order
    problem = rf"undirected, but arc {x}->{y} has no reverse arc {y}->{x}"
    with pytest.raises(GraphFormatError, match=rf"bal\.npz: {problem}"):
        mio.load(path, backend="numpy")
    with pytest.raises(GraphFormatError, match=problem):
        read_all_parts(path, 1)  # one reader sees every arc
    # several readers, the mismatched arcs across shares: what FileEdges.part documents it cannot see.  The shares
    # then give the undirected graph of the src < dst arcs, never a one-way edge
    for count in (2, 3):
        parts = read_all_parts(path, count)
        got = set(zip(np.concatenate([p[0] for p in parts]).tolist(), np.concatenate([p[1] for p in parts]).tolist()))
        assert got == {(a, b) for a, b in zip(src.tolist(), dst.tolist()) if a < b}
        assert (u, v) in got and (u, w) not in got


def test_unequal_weights_both_ways(tmp_path):
    g = chesapeake_weighted()
    w = g.weights.copy()
    k = _first_arc(g, 6, 0)
    w[k] += 0.5
    path = write(tmp_path / "w.npz", arrays_of(g), weights=w)
    refused(path, rf"undirected, but edge 0-6 weighs {g.weights[k]} one way and {w[k]} the other", parts=(1, 2))


def test_directed_caches_need_no_symmetry(tmp_path):
    g = bips()
    assert not np.array_equal(g.reverse().indices, g.indices)
    assert_same(mio.load(write(tmp_path / "d.npz", arrays_of(g)), backend="numpy"), g)


# -- damaged archives ----------------------------------------------------------------------------


def _patch_headers(data: bytearray, *, flag=None, method=None):
    """Set the flag bits or compression method in every local and central zip header."""
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        i = data.find(sig)
        while i >= 0:
            if flag is not None:
                struct.pack_into("<H", data, i + flag_at, struct.unpack_from("<H", data, i + flag_at)[0] | flag)
            if method is not None:
                struct.pack_into("<H", data, i + method_at, method)
            i = data.find(sig, i + 4)
    return data


def _member_data_offset(path, member):
    with zipfile.ZipFile(path) as zf, open(path, "rb") as raw:
        info = zf.getinfo(member)
        raw.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", raw.read(4))
        return info.header_offset + 30 + name_len + extra_len, info.compress_size


@pytest.fixture
def cache(tmp_path):
    path = tmp_path / "good.npz"
    mio.save_npz(chesapeake_weighted(), path)
    return path


def test_truncated_archive(cache, tmp_path):
    data = cache.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, 100):
        path = tmp_path / f"cut{cut}.npz"
        path.write_bytes(data[:cut])
        refused(path, r"not a readable \.npz archive \(BadZipFile")


def test_not_a_zip(tmp_path):
    path = tmp_path / "junk.npz"
    path.write_bytes(b"\x00" * 1000)
    refused(path, r"not a readable \.npz archive")


def test_flipped_byte_fails_the_crc(cache, tmp_path):
    start, size = _member_data_offset(cache, "indices.npy")
    data = bytearray(cache.read_bytes())
    data[start + size - 3] ^= 0x01  # an id's high byte: the arrays would still look plausible
    path = tmp_path / "flip.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(GraphFormatError, match=r"flip\.npz: not a readable \.npz archive \(BadZipFile: Bad CRC-32"):
        mio.load(path, backend="numpy")


def test_damaged_deflate_stream(tmp_path):
    g = chesapeake_weighted()
    good = tmp_path / "z.npz"
    np.savez_compressed(good, **arrays_of(g))
    start, size = _member_data_offset(good, "indices.npy")
    messages = []
    for k in range(8):  # damage at several places: zlib errors and CRC errors both happen
        data = bytearray(good.read_bytes())
        at = start + 4 + k * size // 10
        data[at:at + 6] = b"\xff" * 6
        path = tmp_path / f"z{k}.npz"
        path.write_bytes(bytes(data))
        for call in (lambda: mio.load(path, backend="numpy"), lambda: read_all_parts(path, 2)):
            with pytest.raises(GraphFormatError, match=rf"z{k}\.npz: ") as info:
                call()
            messages.append(str(info.value))
    assert any("not a readable .npz archive (error: Error -3 while decompressing" in m for m in messages), messages
    assert all("not a readable .npz archive" in m or "inconsistent CSR arrays" in m for m in messages), messages


def test_a_zip_directory_that_lies_about_a_size(cache, tmp_path):
    """A deflated member cannot expand by more than deflate allows; a stored one is as large as it is stored."""
    g = chesapeake_weighted()
    for compression, problem in ((zipfile.ZIP_DEFLATED, "more than deflate can expand to"),
                                 (zipfile.ZIP_STORED, "is stored uncompressed but its sizes differ")):
        path = _zip(tmp_path / f"lie{compression}.npz", _raw_members(g), compression)
        data = bytearray(path.read_bytes())
        i = data.find(b"PK\x01\x02")
        while i >= 0:  # every central directory entry: uncompressed size 2 GiB
            struct.pack_into("<I", data, i + 24, 1 << 31)
            i = data.find(b"PK\x01\x02", i + 4)
        path.write_bytes(bytes(data))
        refused(path, rf"member format\.npy (declares 2147483648 bytes in \d+ compressed bytes, )?{problem}")


@pytest.mark.parametrize("flag", [0x1, 0x41])
def test_encrypted_members(cache, tmp_path, flag):
    path = tmp_path / "enc.npz"
    path.write_bytes(bytes(_patch_headers(bytearray(cache.read_bytes()), flag=flag)))
    refused(path, r"member format\.npy is encrypted")


def test_unsupported_compression(cache, tmp_path):
    path = tmp_path / "method.npz"
    path.write_bytes(bytes(_patch_headers(bytearray(cache.read_bytes()), method=99)))
    refused(path, r"member format\.npy uses zip compression method 99")


def _npy(shape, dtype, payload: bytes, version=(1, 0)) -> bytes:
    import io

    buf = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    (np.lib.format.write_array_header_1_0 if version == (1, 0) else np.lib.format.write_array_header_2_0)(buf, header)
    return buf.getvalue() + payload


def _zip(path, members: dict, compression=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name + ".npy", data)
    return Path(path)


def _raw_members(graph) -> dict:
    import io

    out = {}
    for name, value in arrays_of(graph).items():
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.asarray(value), allow_pickle=False)
        out[name] = buf.getvalue()
    return out


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_forged_header_cannot_ask_for_terabytes(tmp_path, compression):
    g = chesapeake()
    members = _raw_members(g)
    members["indices"] = _npy((10**12,), np.int32, g.indices.tobytes())
    path = _zip(tmp_path / "huge.npz", members, compression)
    refused(path, r"member indices\.npy: its header declares int32 \(1000000000000,\) \(4000000000000 bytes\)")


def test_bad_npy_headers(tmp_path):
    g = chesapeake()
    members = _raw_members(g)
    bad = {
        "magic": b"NOTNUMPY" + members["indptr"][8:],
        "version": b"\x93NUMPY\x07\x00" + members["indptr"][8:],
        "text": members["indptr"][:10] + b"{'descr': '<i8', 'shape': (40,), oops" + members["indptr"][48:],
    }
    for name, data in bad.items():
        path = _zip(tmp_path / f"{name}.npz", dict(members, indptr=data))
        with pytest.raises(GraphFormatError, match=rf"{name}\.npz: (not a readable \.npz archive|member indptr\.npy)"):
            mio.load(path, backend="numpy")
        with pytest.raises(GraphFormatError, match=rf"{name}\.npz: "):
            FileEdges(path)
    structured = _zip(tmp_path / "fields.npz", dict(members, indices=_npy((340,), [("a", "<i4")], g.indices.tobytes())))
    refused(structured, r"member indices\.npy has the structured dtype")


def test_cli_reports_a_bad_cache_in_one_line(tmp_path):
    g = chesapeake_weighted()
    w = g.weights.copy()
    w[:] = np.nan
    path = write(tmp_path / "nan.npz", arrays_of(g), weights=w)
    env = dict(os.environ, PYTHONPATH=str(ROOT), MGRAPH_BACKEND="numpy")
    proc = subprocess.run([sys.executable, "-m", "mgraph", "sssp", str(path), "--source", "0"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"mgraph: error: {path}: weight nan of arc 0->6 is not finite"]


@pytest.mark.parametrize("block", [1, 5, 64, cachecheck.BLOCK_ARCS])
def test_cachecheck_alone_checks_arrays_in_blocks_of_any_size(block):
    g = chesapeake_weighted()
    indptr, indices, weights = cachecheck.check_graph(g.indptr, g.indices, g.weights, directed=False, block=block)
    assert np.array_equal(indptr, g.indptr) and np.array_equal(indices, g.indices)
    assert np.array_equal(weights, g.weights)
    d = bips()
    cachecheck.check_graph(d.indptr, d.indices, d.weights, directed=True, block=block)
    arcs = set(zip(*(x.tolist() for x in _arcs(d))))
    a, b = min((min(e), max(e)) for e in arcs if e[::-1] not in arcs)  # the first one-way edge, as (smaller, larger)
    x, y = (a, b) if (a, b) in arcs else (b, a)
    with pytest.raises(cachecheck.CacheError, match=f"undirected, but arc {x}->{y} has no reverse arc {y}->{x}"):
        cachecheck.check_graph(d.indptr, d.indices, d.weights, directed=False, block=block)
    last = g.indices.copy()
    last[-2:] = last[-2:][::-1]  # the last row, in the last block
    with pytest.raises(cachecheck.CacheError, match="row 38 is not sorted"):
        cachecheck.check_graph(g.indptr, last, g.weights, directed=False, block=block)
    w = g.weights.copy()
    w[-1] = np.nan
    with pytest.raises(cachecheck.CacheError, match=f"weight nan of arc 38->{g.indices[-1]} is not finite"):
        cachecheck.check_graph(g.indptr, g.indices, w, directed=False, block=block)
    w = g.weights.copy()
    w[-1] += 1
    with pytest.raises(cachecheck.CacheError, match=f"edge {g.indices[-1]}-38 weighs"):
        cachecheck.check_graph(g.indptr, g.indices, w, directed=False, block=block)

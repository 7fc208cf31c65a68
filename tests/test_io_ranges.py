"""FileEdges: each of P readers reads only its share of a graph file; the shares add up to read_edges."""
import gzip
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mgraph.io import loaders as mio
from mgraph.graph import Graph
from mgraph.io.loaders import FileEdges, GraphFormatError

DATA = Path(__file__).parent / "data"
REAL = [DATA / "chesapeake.mtx", DATA / "bips98_606.mtx", DATA / "facebook_large_edges.csv",
        DATA / "soc-Slashdot0902.txt.gz"]
COUNTS = (1, 2, 3, 5, 17)

MTX = "%%MatrixMarket matrix coordinate {} {}\n"
HANDWRITTEN = {
    # SNAP: comments of both styles in the middle, CRLF, blank lines, tabs, weights, no trailing newline
    "mixed.edges": b"% konect style\r\n# snap style\r\n0 1 2.5\r\n\r\n1\t2\t-1\r\n# middle\r\n2 0 4\r\n"
                   b"\r\n\r\n3 4 0.5\r\n% late\r\n4 5 1e3",
    "plain.txt": b"".join(b"%d %d\n" % (i, (7 * i) % 31) for i in range(40)),
    "comments.el": b"# head\n" + b"".join(b"%d %d\n" % (i, i + 1) if i % 3 else b"# c %d\n" % i for i in range(30)),
    "notrail.txt": b"0 1\n1 2\n2 3",
    "blank.txt": b"\n\n\n0 1\n\n\n\n1 2\n\n\n",
    "leading_spaces.txt": b"  0 1\n\t1 2  \n 2 3\n",
    "only_comments.txt": b"# nothing\n# here\n",
    "empty.txt": b"",
    "one_line.txt": b"5 6\n",
    # '%' inside a line is a comment only because the file has a '%' line (at its end)
    "inline_percent.txt": b"0 1\n" + b"".join(b"%d %d %% note\n" % (i, i + 1) for i in range(1, 20)) + b"%end\n",
    "hash_percent.txt": b"0 1\n# 50% done\n1 2\n# 100% done\n",
    # CSV: header, weights, CRLF, comments, headerless
    "weighted.csv": b"src,dst,weight\r\n0,1,3\r\n1,2,5\r\n# c\r\n2,3,0.25\r\n",
    "headerless.csv": b"0,1\n1,2\n2,0\n3,4",
    "header_only.csv": b"src,dst,weight\n",
    "spaced.csv": b"id_1, id_2\n 0, 1\n1 ,2\n\n2,3\n",
    # Matrix Market
    "general.mtx": (MTX.format("real", "general") + "% c\n\n5 5 6\n1 2 1.5\n2 3 -2\n% mid\n3 4 3\n\n4 5 4\n5 1 5\n1 1 6").encode(),
    "symmetric.mtx": (MTX.format("pattern", "symmetric") + "4 4 4\r\n2 1\r\n3 1\r\n4 2\r\n4 3\r\n").encode(),
    "integer.mtx": (MTX.format("integer", "general") + "% c\n\n6 6 2\n1 2 7\n3 1 9\n").encode(),
    "sym_real.mtx": (MTX.format("real", "symmetric") + "3 3 2\n2 1 0.5\n3 2 1.5\n").encode(),
    "no_entries.mtx": (MTX.format("real", "general") + "3 3 0\n").encode(),
}


def parts(path, count):
    fe = FileEdges(path)
    return [fe.part(i, count) for i in range(count)]


def concatenated(pieces):
    src = np.concatenate([p[0] for p in pieces])
    dst = np.concatenate([p[1] for p in pieces])
    ws = [p[2] for p in pieces]
    assert len({w is None for w in ws}) == 1  # every part weighted, or none
    return src, dst, None if ws[0] is None else np.concatenate(ws)


def assert_same_edges(got, ref):
    src, dst, w = got
    assert src.dtype == dst.dtype == np.int64
    assert np.array_equal(src, ref[0]) and np.array_equal(dst, ref[1])
    assert (w is None) == (ref[2] is None)
    if w is not None:
        assert w.dtype == np.float64 and np.array_equal(w, ref[2])


def assert_properties(path):
    fe = FileEdges(path)
    src, dst, w, n, directed = mio.read_edges(path)
    assert (fe.directed, fe.num_vertices) == (directed, n)
    if fe.format == "npz":
        assert fe.one_triangle == (not directed)
    else:
        assert fe.one_triangle == mio._read(str(path), fe.format)[5]
    assert fe.weighted == (w is not None)


def write_files(tmp_path, names=HANDWRITTEN):
    out = []
    for name in names:
        f = tmp_path / name
        f.write_bytes(HANDWRITTEN[name])
        out.append(f)
    return out


# -- the shares add up to read_edges -----------------------------------------------------


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_real_files_parts_concatenate_to_read_edges(path):
    ref = mio.read_edges(path)
    # every part of a gzip file decompresses the whole file: two counts are enough there
    for count in (1, 3) if path.suffix == ".gz" else COUNTS:
        assert_same_edges(concatenated(parts(path, count)), ref)
    assert_properties(path)


def test_real_snap_file_gunzipped_is_split_by_bytes(tmp_path):
    path = tmp_path / "soc-Slashdot0902.txt"
    path.write_bytes(gzip.decompress((DATA / "soc-Slashdot0902.txt.gz").read_bytes()))
    assert FileEdges(path).splittable
    ref = mio.read_edges(path)
    for count in COUNTS + (64,):
        assert_same_edges(concatenated(parts(path, count)), ref)
    assert_properties(path)


@pytest.mark.parametrize("name", list(HANDWRITTEN))
def test_handwritten_files_parts_concatenate_to_read_edges(tmp_path, name):
    (path,) = write_files(tmp_path, [name])
    ref = mio.read_edges(path)
    size = path.stat().st_size
    for count in COUNTS + (max(size, 1), size + 3):  # one byte per reader, and more readers than bytes
        assert_same_edges(concatenated(parts(path, count)), ref)
    assert_properties(path)


@pytest.mark.parametrize("name", ["mixed.edges", "weighted.csv", "general.mtx", "symmetric.mtx"])
def test_gzipped_handwritten_files(tmp_path, name):
    path = tmp_path / (name + ".gz")
    path.write_bytes(gzip.compress(HANDWRITTEN[name]))
    fe = FileEdges(path)
    assert fe.gzipped and not fe.splittable
    ref = mio.read_edges(path)
    for count in COUNTS:
        assert_same_edges(concatenated(parts(path, count)), ref)
    assert_properties(path)


def test_gzip_magic_decides_not_the_suffix(tmp_path):
    plain = tmp_path / "plain.txt.gz"
    plain.write_bytes(HANDWRITTEN["plain.txt"])
    zipped = tmp_path / "zipped.txt"
    zipped.write_bytes(gzip.compress(HANDWRITTEN["plain.txt"]))
    assert FileEdges(plain).splittable and not FileEdges(zipped).splittable
    for path in (plain, zipped):
        assert_same_edges(concatenated(parts(path, 5)), mio.read_edges(path))


def test_every_byte_boundary_of_a_small_file(tmp_path):
    """count = 1 .. size + 1 of a file with CRLF, comments and a missing final newline."""
    (path,) = write_files(tmp_path, ["mixed.edges"])
    ref = mio.read_edges(path)
    for count in range(1, path.stat().st_size + 2):
        assert_same_edges(concatenated(parts(path, count)), ref)


def test_random_files_match(tmp_path):
    rng = np.random.default_rng(7)
    for trial in range(20):
        lines = []
        for _ in range(rng.integers(0, 60)):
            r = rng.random()
            if r < 0.1:
                lines.append("# comment " + "x" * int(rng.integers(0, 30)))
            elif r < 0.15:
                lines.append("")
            else:
                lines.append(f"{rng.integers(0, 1000)}{' ' * int(rng.integers(1, 3))}{rng.integers(0, 10**9)}"
                             f" {rng.random():.6g}")
        if not any(line and not line.startswith("#") for line in lines):
            lines.append("1 2 3")
        eol = "\r\n" if trial % 2 else "\n"
        path = tmp_path / f"r{trial}.txt"
        path.write_text(eol.join(lines) + (eol if trial % 3 else ""), newline="")
        ref = mio.read_edges(path)
        for count in COUNTS + (int(rng.integers(1, 200)),):
            assert_same_edges(concatenated(parts(path, count)), ref)


def test_empty_parts_have_the_right_dtypes(tmp_path):
    (path,) = write_files(tmp_path, ["weighted.csv"])
    pieces = parts(path, 100)
    empty = [p for p in pieces if p[0].size == 0]
    assert empty
    for src, dst, w in empty:
        assert src.dtype == dst.dtype == np.int64 and w.dtype == np.float64 and w.size == 0
    (path,) = write_files(tmp_path, ["plain.txt"])
    assert all(p[2] is None for p in parts(path, 1000))


def test_part_arguments_are_checked(tmp_path):
    (path,) = write_files(tmp_path, ["plain.txt"])
    fe = FileEdges(path)
    for index, count in ((0, 0), (2, 2), (-1, 3)):
        with pytest.raises(ValueError, match="need count >= 1"):
            fe.part(index, count)
    with pytest.raises(ValueError, match="no such file"):
        FileEdges(tmp_path / "absent.mtx")
    with pytest.raises(ValueError, match="unknown graph file extension"):
        FileEdges(tmp_path / "graph.xyz")


def test_instances_pickle(tmp_path):
    import pickle

    (path,) = write_files(tmp_path, ["general.mtx"])
    fe = pickle.loads(pickle.dumps(FileEdges(path)))
    assert_same_edges(concatenated([fe.part(i, 3) for i in range(3)]), mio.read_edges(path))


# -- reads only its range --------------------------------------------------------------------


class CountingOpen:
    """``open`` for mgraph.io that counts the bytes read through the files it opens."""

    def __init__(self):
        self.bytes = 0

    def __call__(self, *args, **kwargs):
        f = open(*args, **kwargs)
        counter = self

        class Counted:
            def read(self, n=-1):
                data = f.read(n)
                counter.bytes += len(data)
                return data

            def readinto(self, buf):
                k = f.readinto(buf)
                counter.bytes += k or 0
                return k

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                f.close()

            def __getattr__(self, name):
                return getattr(f, name)

        return Counted()


def test_text_part_reads_its_range_only(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    rng = np.random.default_rng(1)
    with open(path, "w") as f:
        f.write("# generated\n")
        np.savetxt(f, rng.integers(0, 1 << 30, (100_000, 2)), fmt="%d", delimiter="\t")
    size = path.stat().st_size
    ref = mio.read_edges(path)
    fe = FileEdges(path)
    counting = CountingOpen()
    monkeypatch.setattr(mio, "open", counting, raising=False)
    got = []
    for i in range(8):
        counting.bytes = 0
        got.append(fe.part(i, 8))
        assert counting.bytes <= size / 8 + mio._TAIL_BYTES + 1
    assert_same_edges(concatenated(got), ref)


# -- .npz ----------------------------------------------------------------------------------


def npz_graph(directed, weighted, n=300, m=2000, seed=0):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.random(m) if weighted else None
    return Graph.from_edges(src, dst, w, num_vertices=n + 5, directed=directed)  # some isolated vertices


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_npz_parts_concatenate_to_read_edges(tmp_path, directed, weighted):
    path = tmp_path / "g.npz"
    mio.save_npz(npz_graph(directed, weighted), path)
    with zipfile.ZipFile(path) as zf:  # save_npz stores members uncompressed: parts read them in place
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
    ref = mio.read_edges(path)
    for count in COUNTS + (400,):
        assert_same_edges(concatenated(parts(path, count)), ref)
    assert_properties(path)
    fe = FileEdges(path)
    assert (fe.format, fe.num_vertices, fe.weighted, fe.directed) == ("npz", 305, weighted, directed)


@pytest.mark.parametrize("source", REAL[:3], ids=[p.name for p in REAL[:3]])
def test_npz_of_real_graphs(tmp_path, source):
    path = tmp_path / "g.npz"
    mio.save_npz(mio.load(source, backend="numpy"), path)
    ref = mio.read_edges(path)
    for count in COUNTS:
        assert_same_edges(concatenated(parts(path, count)), ref)


def test_compressed_npz_is_read_too(tmp_path):
    g = npz_graph(False, True)
    path = tmp_path / "c.npz"
    np.savez_compressed(path, format=np.array(mio.NPZ_FORMAT), indptr=g.indptr, indices=g.indices,
                        weights=g.weights, directed=np.array(False), num_input_edges=np.array(-1))
    ref = mio.read_edges(path)
    for count in COUNTS:
        assert_same_edges(concatenated(parts(path, count)), ref)


def test_npz_part_reads_a_slice_not_the_file(tmp_path, monkeypatch):
    n, m = 1 << 16, 1 << 20
    rng = np.random.default_rng(3)
    src = np.sort(rng.integers(0, n, m))
    g = Graph.from_edges(src, rng.integers(0, n, m), rng.random(m), num_vertices=n, directed=True)
    path = tmp_path / "big.npz"
    mio.save_npz(g, path)
    size = path.stat().st_size
    ref = g.edges()
    fe = FileEdges(path)

    def refuse(*args, **kwargs):
        raise AssertionError("np.load reads whole arrays")

    monkeypatch.setattr(np, "load", refuse)
    counting = CountingOpen()
    monkeypatch.setattr(mio, "open", counting, raising=False)
    got = fe.part(1, 4)
    assert counting.bytes < size / 3
    rows = (n // 4 <= ref[0]) & (ref[0] < n // 2)
    assert_same_edges(got, (ref[0][rows], ref[1][rows], ref[2][rows]))


def test_npz_errors(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.arange(3))
    with pytest.raises(GraphFormatError, match="not an mgraph graph cache"):
        FileEdges(tmp_path / "other.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(GraphFormatError, match=r"junk\.npz: not a readable \.npz archive"):
        FileEdges(tmp_path / "junk.npz")
    g = npz_graph(True, False)
    np.savez(tmp_path / "bad.npz", format=np.array(mio.NPZ_FORMAT), indptr=g.indptr, indices=g.indices[:-1],
             directed=np.array(True), num_input_edges=np.array(-1))
    with pytest.raises(GraphFormatError, match="inconsistent CSR arrays"):
        FileEdges(tmp_path / "bad.npz")
    indices = g.indices.copy()
    indices[-1] = 10_000  # out of range, in the last reader's rows only
    np.savez(tmp_path / "range.npz", format=np.array(mio.NPZ_FORMAT), indptr=g.indptr, indices=indices,
             directed=np.array(True), num_input_edges=np.array(-1))
    fe = FileEdges(tmp_path / "range.npz")
    fe.part(0, 2)
    with pytest.raises(GraphFormatError, match=r"range\.npz: inconsistent CSR arrays"):
        fe.part(1, 2)


# -- errors ----------------------------------------------------------------------------------

BODY = "".join(f"{i} {i + 1}\n" if i % 5 else f"# comment {i}\n" for i in range(200))

# (name, content, bad line, problem): one bad line far into the file, so a later reader owns it
LATE_ERRORS = [
    ("tok.txt", BODY + "3 x\n" + BODY, "vertex id 'x' is not an integer"),
    ("cols.txt", BODY + "1 2 3 4\n" + BODY, "expected 2 columns, found 4"),
    ("neg.txt", BODY + "-1 2\n" + BODY, "negative source vertex id -1"),
    ("negt.txt", BODY + "1 -2\n" + BODY, "negative target vertex id -2"),
    ("inline.txt", BODY + "1 2 % no percent lines\n" + BODY, "expected 2 columns, found 6"),
    ("inf.txt", "".join(f"{i} {i + 1} 0.5\n" for i in range(300)) + "1 2 inf\n" + "0 1 1\n" * 20,
     "weight inf is not finite"),
    ("badw.csv", "a,b,w\n" + BODY.replace(" ", ",").replace("\n", ",2\n") + "1,2,heavy\n" + "0,1,1\n" * 50,
     "weight 'heavy' is not a number"),
    ("range.mtx", MTX.format("real", "general") + "% c\n300 300 201\n" + "".join(f"{i} {i + 1} 1.0\n" for i in range(1, 200))
     + "1 301 2.0\n1 2 3\n", "column index 301 is outside 1..300"),
    ("zero.mtx", MTX.format("pattern", "symmetric") + "300 300 201\n" + "".join(f"{i + 1} {i}\n" for i in range(1, 200))
     + "0 1\n2 1\n", "row index 0 is outside 1..300"),
]


@pytest.mark.parametrize("name, content, problem", LATE_ERRORS, ids=[e[0] for e in LATE_ERRORS])
def test_error_in_a_later_part_names_file_and_line(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_bytes(content.encode())
    with pytest.raises(GraphFormatError) as whole:
        mio.read_edges(path)
    expected = str(whole.value)
    assert problem in expected and whole.value.line
    fe = FileEdges(path)
    for count in COUNTS:
        errors = []
        for i in range(count):
            try:
                fe.part(i, count)
            except GraphFormatError as e:
                errors.append((i, e))
        assert len(errors) == 1, (count, errors)  # one reader owns the bad line
        i, err = errors[0]
        assert str(err) == expected and err.line == whole.value.line and "\n" not in str(err)
        if count == 5:
            assert i > 0


@pytest.mark.parametrize("name, content, problem", LATE_ERRORS[:4] + LATE_ERRORS[7:], ids=lambda x: str(x)[:12])
def test_error_far_into_a_file_names_the_byte_offset(tmp_path, monkeypatch, name, content, problem):
    monkeypatch.setattr(mio, "_LINE_COUNT_MAX_BYTES", 0)  # as past 1 GiB: the newlines before are not counted
    path = tmp_path / name
    path.write_bytes(content.encode())
    with pytest.raises(GraphFormatError) as whole:
        mio.read_edges(path)
    whole_line = whole.value.line
    fe = FileEdges(path)
    errors = []
    for i in range(4):
        try:
            fe.part(i, 4)
        except GraphFormatError as e:
            errors.append((i, e))
    ((i, err),) = errors
    assert i > 0 and err.line is None and err.problem in str(whole.value)
    assert str(err) == f"{path}, byte offset {err.offset}: {err.problem}"
    data = path.read_bytes()
    assert data[err.offset - 1:err.offset] == b"\n"
    assert data[:err.offset].count(b"\n") + 1 == whole_line  # the offset of the bad line's start


def test_reader_zero_has_exact_lines_even_far_in(tmp_path, monkeypatch):
    monkeypatch.setattr(mio, "_LINE_COUNT_MAX_BYTES", 0)
    path = tmp_path / "tok.txt"
    path.write_bytes((BODY + "3 x\n").encode())
    with pytest.raises(GraphFormatError, match=r"tok\.txt, line 201: vertex id 'x'"):
        FileEdges(path).part(0, 1)


def test_header_errors_are_raised_on_construction(tmp_path):
    cases = [("noheader.mtx", "4 4 1\n1 2 1.0\n", 1, "missing Matrix Market header"),
             ("size.mtx", MTX.format("real", "general") + "3 3\n1 2 1.0\n", 2, "expected the size line"),
             ("rect.mtx", MTX.format("real", "general") + "% c\n3 4 1\n1 2 1.0\n", 3, "must be square"),
             ("hdr.csv", "# c\na,b,c,d\n0,1,2,3\n", 2, "header has 4 columns"),
             ("one.txt", "# c\n\n7\n0 1\n", 3, "1 columns; expected 2")]
    for name, content, line, problem in cases:
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(GraphFormatError) as err:
            FileEdges(path)
        assert str(err.value).startswith(f"{path}, line {line}: ") and problem in str(err.value)
        with pytest.raises(GraphFormatError, match=re.escape(str(err.value))):
            mio.read_edges(path)


def test_truncated_gzip_is_a_format_error(tmp_path):
    path = tmp_path / "cut.txt.gz"
    path.write_bytes((DATA / "soc-Slashdot0902.txt.gz").read_bytes()[:100_000])
    fe = FileEdges(path)  # the header is readable
    with pytest.raises(GraphFormatError, match=re.escape(str(path)) + ": corrupt or truncated gzip data"):
        fe.part(0, 2)
    path.write_bytes(gzip.compress(b"# header\n0 1\n")[:15])
    with pytest.raises(GraphFormatError, match="corrupt or truncated gzip data"):
        FileEdges(path)


def test_mtx_entry_count_is_checked_whole_or_by_check_count(tmp_path):
    head = MTX.format("real", "general")
    for name, content, total, message in [
            ("trunc.mtx", head + "% c\n4 4 3\n1 2 1.0\n3 1 2.0\n", 2, "file ends after 2 of the 3 entries"),
            ("extra.mtx", head + "3 3 1\n1 2 1.0\n2 1 2.0\n", 2, "more entries than the 1")]:
        path = tmp_path / name
        path.write_text(content)
        fe = FileEdges(path)
        assert fe.num_entries == {"trunc.mtx": 3, "extra.mtx": 1}[name]
        with pytest.raises(GraphFormatError) as whole:
            mio.read_edges(path)
        with pytest.raises(GraphFormatError) as one:
            fe.part(0, 1)
        assert str(one.value) == str(whole.value)
        pieces = parts(path, 3)  # shares do not know the total ...
        assert sum(p[0].size for p in pieces) == total
        with pytest.raises(GraphFormatError, match=f"^{re.escape(str(path))}: {message}"):
            fe.check_count(total)  # ... the caller checks it
    fe = FileEdges(DATA / "bips98_606.mtx")
    fe.check_count(fe.num_entries)
    FileEdges(DATA / "facebook_large_edges.csv").check_count(12)  # no-op without a declared count

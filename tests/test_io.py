"""Loaders against independent readers (scipy.io.mmread, csv, plain split), malformed input, caches."""
import csv
import gzip
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import mgraph
import scipy.io
import scipy.sparse as sp

from mgraph.io import loaders as mio
from mgraph.backend import gpu_available
from mgraph.graph import Graph
from mgraph.io.loaders import GraphFormatError

DATA = Path(__file__).parent / "data"
CHESAPEAKE = DATA / "chesapeake.mtx"
BIPS = DATA / "bips98_606.mtx"
SLASHDOT = DATA / "soc-Slashdot0902.txt.gz"
FACEBOOK = DATA / "facebook_large_edges.csv"


def mmread(path):
    """The independent reference reader, as a COO array (spmatrix=False: the default changes in scipy 1.20)."""
    return sp.coo_array(scipy.io.mmread(path, spmatrix=False))


def simple_adjacency(rows, cols, n, weights=None, symmetric=False):
    """Reference adjacency from raw entries: no diagonal, duplicates merged (min weight), optionally symmetrized."""
    rows, cols = np.asarray(rows), np.asarray(cols)
    w = np.ones(rows.size) if weights is None else np.asarray(weights, dtype=float)
    if symmetric:
        rows, cols, w = np.r_[rows, cols], np.r_[cols, rows], np.r_[w, w]
    keep = rows != cols
    rows, cols, w = rows[keep], cols[keep], w[keep]
    pairs = {}
    for r, c, x in zip(rows.tolist(), cols.tolist(), w.tolist()):
        pairs[(r, c)] = min(x, pairs.get((r, c), x))
    if not pairs:
        return sp.csr_matrix((n, n))
    (r, c), x = zip(*pairs), list(pairs.values())
    return sp.csr_matrix((x, (r, c)), shape=(n, n))


def same_matrix(a, b):
    return a.shape == b.shape and abs(sp.csr_matrix(a) - sp.csr_matrix(b)).sum() == 0 and a.nnz == b.nnz


# -- real graphs ---------------------------------------------------------------------


def test_chesapeake_matches_mmread():
    ref = mmread(CHESAPEAKE)
    g = mio.load(CHESAPEAKE, backend="numpy")
    assert not g.directed and not g.is_weighted
    assert g.num_vertices == ref.shape[0] == 39
    expected = simple_adjacency(ref.row, ref.col, 39, symmetric=True)
    assert g.num_edges == expected.nnz // 2 == 170
    assert same_matrix(g.to_scipy(), expected)


def test_bips98_general_real_drops_diagonal_keeps_negative_weights():
    ref = mmread(BIPS)
    assert (ref.row == ref.col).any() and (ref.data < 0).any()  # the file's hard cases are really there
    g = mio.load(BIPS, backend="numpy")
    assert g.directed and g.is_weighted
    assert g.num_vertices == ref.shape[0]
    assert g.num_input_edges == ref.nnz
    expected = simple_adjacency(ref.row, ref.col, ref.shape[0], ref.data)
    assert g.num_edges == expected.nnz
    assert same_matrix(g.to_scipy(), expected)
    src, dst, w, n, directed = mio.read_edges(BIPS)
    assert (n, directed, src.size) == (ref.shape[0], True, ref.nnz)
    assert np.array_equal(w, ref.data)


def test_bips98_undirected_symmetrizes_with_lightest_weight():
    ref = mmread(BIPS)
    g = mio.load(BIPS, directed=False, backend="numpy")
    assert not g.directed
    assert same_matrix(g.to_scipy(), simple_adjacency(ref.row, ref.col, ref.shape[0], ref.data, symmetric=True))


def test_slashdot_snap_directed():
    text = gzip.decompress(SLASHDOT.read_bytes()).decode()
    header = re.search(r"Nodes: (\d+) Edges: (\d+)", text)
    pairs = np.array([line.split() for line in text.splitlines() if line and not line.startswith("#")], dtype=np.int64)
    src, dst, w, n, directed = mio.read_edges(SLASHDOT)
    assert (w, n, directed) == (None, None, True)
    assert src.size == int(header.group(2)) == len(pairs)
    assert np.array_equal(src, pairs[:, 0]) and np.array_equal(dst, pairs[:, 1])
    g = mio.load(SLASHDOT, backend="numpy")
    assert g.directed and g.num_vertices == int(header.group(1))
    nv = g.num_vertices
    ref = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(nv, nv))
    ref.setdiag(0)
    ref.eliminate_zeros()
    assert g.num_edges == ref.nnz
    assert np.array_equal(g.to_scipy().indptr, ref.indptr) and np.array_equal(g.to_scipy().indices, ref.indices)


def test_facebook_csv_undirected():
    with open(FACEBOOK, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id_1", "id_2"]
    pairs = np.array(rows[1:], dtype=np.int64)
    g = mio.load(FACEBOOK, backend="numpy")
    assert not g.directed and g.num_vertices == 22470
    assert g.num_input_edges == len(pairs) == 171002
    expected = simple_adjacency(pairs[:, 0], pairs[:, 1], 22470, symmetric=True)
    assert g.num_edges == expected.nnz // 2
    assert same_matrix(g.to_scipy(), expected)


def test_directed_override_on_symmetric_mtx_gives_both_arcs():
    g = mio.load(CHESAPEAKE, directed=True, backend="numpy")
    u = mio.load(CHESAPEAKE, backend="numpy")
    assert g.directed and g.num_edges == 2 * u.num_edges
    assert same_matrix(g.to_scipy(), u.to_scipy())


# -- gzip, formats ---------------------------------------------------------------------


@pytest.mark.parametrize("source", [CHESAPEAKE, FACEBOOK, BIPS])
def test_gzip_copy_loads_the_same(tmp_path, source):
    gz = tmp_path / (source.name + ".gz")
    gz.write_bytes(gzip.compress(source.read_bytes()))
    a, b = mio.load(source, backend="numpy"), mio.load(gz, backend="numpy")
    assert same_matrix(a.to_scipy(), b.to_scipy()) and a.directed == b.directed


def test_gzip_detected_by_magic_bytes_and_plain_gz_suffix_tolerated(tmp_path):
    plain = gzip.decompress(SLASHDOT.read_bytes())
    (tmp_path / "zipped.txt").write_bytes(SLASHDOT.read_bytes())  # gzip data, no .gz suffix
    (tmp_path / "plain.txt.gz").write_bytes(plain)                 # plain data, .gz suffix
    ref = mio.read_edges(SLASHDOT)
    for name in ("zipped.txt", "plain.txt.gz"):
        src, dst, *_ = mio.read_edges(tmp_path / name)
        assert np.array_equal(src, ref[0]) and np.array_equal(dst, ref[1])


def test_truncated_gzip_is_a_format_error(tmp_path):
    bad = tmp_path / "cut.txt.gz"
    bad.write_bytes(SLASHDOT.read_bytes()[:100_000])
    with pytest.raises(GraphFormatError, match=re.escape(str(bad))):
        mio.load(bad, backend="numpy")


def test_snap_weights_comments_blank_lines_and_crlf(tmp_path):
    f = tmp_path / "w.edges"
    f.write_bytes(b"% konect style\r\n# snap style\r\n0 1 2.5\r\n\r\n1\t2\t-1\r\n# middle\r\n2 0 4\r\n")
    src, dst, w, n, directed = mio.read_edges(f)
    assert src.tolist() == [0, 1, 2] and dst.tolist() == [1, 2, 0] and w.tolist() == [2.5, -1.0, 4.0]
    assert directed and n is None


def test_csv_with_weights_and_headerless_csv(tmp_path):
    (tmp_path / "w.csv").write_text("src,dst,weight\n0,1,3\n1,2,5\n")
    (tmp_path / "plain.csv").write_text("0,1\n1,2\n")
    g = mio.load(tmp_path / "w.csv", backend="numpy")
    assert not g.directed and g.num_edges == 2 and sorted(g.weights.tolist()) == [3, 3, 5, 5]
    assert mio.load(tmp_path / "plain.csv", backend="numpy").num_edges == 2
    assert mio.load(tmp_path / "w.csv", directed=True, backend="numpy").num_edges == 2  # arcs as listed


def test_mtx_integer_field_keeps_isolated_vertices(tmp_path):
    f = tmp_path / "int.mtx"
    f.write_text("%%MatrixMarket matrix coordinate integer general\n% c\n\n6 6 2\n1 2 7\n3 1 9\n")
    g = mio.load(f, backend="numpy")
    assert g.num_vertices == 6 and g.directed and g.weights.tolist() == [7.0, 9.0]


def test_empty_edge_list(tmp_path):
    (tmp_path / "e.txt").write_text("# nothing here\n")
    g = mio.load(tmp_path / "e.txt", backend="numpy")
    assert g.num_vertices == 0 and g.num_edges == 0


def test_chunked_parse_matches_and_counts_lines(tmp_path, monkeypatch):
    lines = ["# head"] + [f"{i} {i + 1}" if i % 7 else "# comment" for i in range(300)]
    f = tmp_path / "many.txt"
    f.write_text("\n".join(lines) + "\n")
    whole = mio.read_edges(f)
    monkeypatch.setattr(mio, "_CHUNK_BYTES", 50)
    chunked = mio.read_edges(f)
    assert np.array_equal(whole[0], chunked[0]) and np.array_equal(whole[1], chunked[1])
    lines[250] = "249 -5"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError, match=r"many\.txt, line 251: negative target vertex id -5"):
        mio.read_edges(f)
    lines[250], lines[280] = "249 250", "279 2x"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError, match=r"many\.txt, line 281: vertex id '2x' is not an integer"):
        mio.read_edges(f)


# -- malformed files -------------------------------------------------------------------

MTX_HEAD = "%%MatrixMarket matrix coordinate real general\n"

MALFORMED = [
    ("tok.txt", "# c\n0 1\n1 2\n3 x\n", 4, "vertex id 'x' is not an integer"),
    ("float_id.txt", "0 1\n1.5 2\n", 2, "vertex id '1.5' is not an integer"),
    ("cols.txt", "0 1\n1 2\n1 2 3 4\n", 3, "expected 2 columns, found 4"),
    ("short.txt", "0 1 1.0\n1 2\n", 2, "expected 3 columns, found 2"),
    ("one.txt", "# c\n7\n", 2, "1 columns; expected 2"),
    ("neg.txt", "0 1\n\n-1 2\n", 3, "negative source vertex id -1"),
    ("badw.txt", "0 1 2\n1 2 heavy\n", 2, "weight 'heavy' is not a number"),
    ("inf.txt", "0 1 2\n1 2 inf\n", 2, "weight inf is not finite"),
    ("short.csv", "src,dst,weight\n0,1,2\n1,2\n", 3, "expected 3 columns, found 2"),
    ("hdr.csv", "a,b,c,d\n0,1,2,3\n", 1, "header has 4 columns"),
    ("neg.csv", "id_1,id_2\n0,1\n2,-4\n", 3, "negative target vertex id -4"),
    ("trunc.mtx", MTX_HEAD + "% c\n4 4 3\n1 2 1.0\n3 1 2.0\n", 6, "file ends after 2 of the 3 entries"),
    ("extra.mtx", MTX_HEAD + "3 3 1\n1 2 1.0\n2 1 2.0\n", 4, "more entries than the 1"),
    ("noheader.mtx", "4 4 1\n1 2 1.0\n", 1, "missing Matrix Market header"),
    ("empty.mtx", "", 1, "missing Matrix Market header"),
    ("banner.mtx", "%%MatrixMarket matrix coordinate real\n2 2 1\n1 2 1\n", 1, "malformed Matrix Market header"),
    ("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "expected 'matrix coordinate'"),
    ("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 1\n", 1, "unsupported Matrix Market field"),
    ("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", 1, "unsupported Matrix Market symmetry"),
    ("size.mtx", MTX_HEAD + "3 3\n1 2 1.0\n", 2, "expected the size line"),
    ("rect.mtx", MTX_HEAD + "3 4 1\n1 2 1.0\n", 2, "must be square"),
    ("range.mtx", MTX_HEAD + "3 3 2\n1 2 1.0\n1 4 2.0\n", 4, "column index 4 is outside 1..3"),
    ("zero.mtx", MTX_HEAD + "3 3 2\n1 2 1.0\n0 1 2.0\n", 4, "row index 0 is outside 1..3"),
    ("cols.mtx", MTX_HEAD + "3 3 2\n1 2 1.0\n2 3\n", 4, "expected 3 columns, found 2"),
    ("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 5\n", 3, "expected 2 columns, found 3"),
]


@pytest.mark.parametrize("name, content, line, problem", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_names_file_and_line(tmp_path, name, content, line, problem):
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(GraphFormatError) as err:
        mio.load(f, backend="numpy")
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{f}, line {line}: "), msg
    assert problem in msg
    assert err.value.line == line and isinstance(err.value, ValueError)


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        mio.load(tmp_path / "absent.mtx")
    (tmp_path / "graph.xyz").write_text("0 1\n")
    with pytest.raises(ValueError, match=r"graph\.xyz: unknown graph file extension"):
        mio.load(tmp_path / "graph.xyz")


# -- .npz cache ------------------------------------------------------------------------


@pytest.mark.parametrize("source", [CHESAPEAKE, BIPS, FACEBOOK])
def test_npz_round_trip_is_exact(tmp_path, source):
    g = mio.load(source, backend="numpy")
    path = tmp_path / "g.npz"
    mio.save_npz(g, path)
    h = mio.load(path, backend="numpy")
    for name in ("indptr", "indices", "weights"):
        a, b = getattr(g, name), getattr(h, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert (h.directed, h.num_input_edges, h.num_vertices) == (g.directed, g.num_input_edges, g.num_vertices)
    assert [p.name for p in tmp_path.iterdir()] == ["g.npz"]  # no temporary left behind


def test_npz_directed_override_and_read_edges(tmp_path):
    g = mio.load(CHESAPEAKE, backend="numpy")
    mio.save_npz(g, tmp_path / "c.npz")
    d = mio.load(tmp_path / "c.npz", directed=True, backend="numpy")
    assert d.directed and d.num_edges == 2 * g.num_edges
    src, dst, w, n, directed = mio.read_edges(tmp_path / "c.npz")
    assert (src.size, n, directed, w) == (g.num_edges, 39, False, None)


def test_npz_rejects_other_archives_and_needs_suffix(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.arange(3))
    with pytest.raises(GraphFormatError, match="not an mgraph graph cache"):
        mio.load(tmp_path / "other.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(GraphFormatError, match="junk.npz"):
        mio.load(tmp_path / "junk.npz")
    g = mio.load(CHESAPEAKE, backend="numpy")
    np.savez(tmp_path / "bad.npz", format=np.array(mio.NPZ_FORMAT), indptr=g.indptr, indices=g.indices[:-1],
             directed=np.array(False), num_input_edges=np.array(-1))
    with pytest.raises(GraphFormatError, match="inconsistent CSR arrays"):
        mio.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=r"\.npz extension"):
        mio.save_npz(Graph.from_edges(np.array([0]), np.array([1])), tmp_path / "g.cache")


# -- specs, backends, progress -----------------------------------------------------------


def test_generator_spec_through_load():
    g = mgraph.load("grid:4x3", backend="numpy")
    assert (g.num_vertices, g.num_edges, g.directed) == (12, 17, False)
    assert mgraph.load("rmat:6:4", backend="numpy", seed=3).num_vertices == 64
    with pytest.raises(ValueError, match="undirected"):
        mgraph.load("rmat:6", directed=True, backend="numpy")
    with pytest.raises(ValueError, match="bad graph spec 'rmat:six'"):
        mgraph.load("rmat:six", backend="numpy")
    with pytest.raises(ValueError, match="generator spec, not a file"):
        mio.load("grid:4x3", backend="numpy")  # the file loaders leave drawing to mgraph.load


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    pytest.importorskip("tqdm")

    class Terminal:
        def __init__(self, stream):
            self.stream = stream

        def isatty(self):
            return True

        def __getattr__(self, name):
            return getattr(self.stream, name)

    monkeypatch.setattr(mio, "_PROGRESS_MIN_BYTES", 0)
    monkeypatch.setattr(sys, "stderr", Terminal(sys.stderr))
    assert mio.read_edges(SLASHDOT)[0].size == 948464
    assert "reading soc-Slashdot0902.txt.gz" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_load_onto_gpu():
    g = mio.load(FACEBOOK, backend="cupy")
    assert g.xp is not np and g.num_edges == mio.load(FACEBOOK, backend="numpy").num_edges
    r = mgraph.load("rmat:12", backend="cupy")
    assert r.xp is not np and r.num_vertices == 4096



# -- messages that name the file --------------------------------------------------------------------


def test_save_npz_checks_its_graph(tmp_path):
    for graph, kind in ((None, "NoneType"), ({"indptr": np.zeros(2)}, "dict")):
        with pytest.raises(ValueError, match=rf"^save_npz needs a Graph \(the whole graph in this process\), got {kind}$"):
            mio.save_npz(graph, tmp_path / "g.npz")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("src, dst, which", [
    (np.array([True, False]), np.array([1, 0]), "src"),
    (np.array([0, 1]), np.array([False, True]), "dst"),
    (np.array([], dtype=bool), np.array([], dtype=np.int64), "src"),
    ([True, False, True], [False, True, False], "src"),
])
def test_boolean_arrays_are_not_vertex_ids(src, dst, which):
    """A mask where ids belong would read as ids 1 and 0: refused, whatever its length."""
    with pytest.raises(ValueError, match=rf"^{which} holds booleans, not vertex ids \(the ids a mask selects are "
                                         r"np\.flatnonzero\(mask\)\)$"):
        Graph.from_edges(src, dst)
    ids = np.flatnonzero(np.array([True, False, True]))  # what the message offers builds
    assert Graph.from_edges(ids, ids[::-1]).num_edges == 1


@pytest.mark.parametrize("blank", [b" ", b"\t", b"   # a note", b"\x0c"], ids=["space", "tab", "comment", "ff"])
@pytest.mark.parametrize("arrow", [True, False], ids=["pyarrow", "loadtxt"])
def test_a_csv_line_of_only_whitespace_names_its_line(tmp_path, monkeypatch, blank, arrow):
    """An empty line is skipped, but NumPy reads whitespace between no commas as a value: the line is named, in the
    whole file, a reader's share, and the gzipped file alike (NumPy's own message was given before)."""
    from mgraph.io import parse

    monkeypatch.setattr(parse, "ENABLED", arrow)
    text = b"src,dst,w\n0,1,2.5\n\n1,2,1\n" + blank + b"\n2,3,1\n"
    plain, gz = tmp_path / "b.csv", tmp_path / "b.csv.gz"
    plain.write_bytes(text)
    gz.write_bytes(gzip.compress(text))
    shown = repr(blank.split(b"#")[0].decode("latin1"))
    for path in (plain, gz):
        for read in (lambda: mio.read_edges(path), lambda: mio.FileEdges(path).part(0, 1)):
            with pytest.raises(GraphFormatError) as info:
                read()
            assert str(info.value) == (f"{path}, line 5: a line of only whitespace {shown}; a line of this file is "
                                       "empty or holds 3 values separated by ','")
    plain.write_bytes(text.replace(blank + b"\n", b"\n"))  # an empty line is fine
    assert mio.read_edges(plain)[0].tolist() == [0, 1, 2]


def test_special_files_are_named_as_what_they_are(tmp_path, capsys):
    """A FIFO, a device (through a link with a graph file's name) and a directory were "no such file" (the FIFO is
    never opened, so nothing waits for a writer)."""
    import os

    from mgraph import cli

    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    (tmp_path / "folder.csv").mkdir()
    expect = {"pipe.txt": "a FIFO (named pipe), not a regular file; the loaders take a file's size and may read it "
                          "twice, so save what it gives to a file first",
              "zero.txt": "a character device, not a regular file; the loaders take a file's size and may read it "
                          "twice, so save what it gives to a file first",
              "folder.csv": "a directory, not a graph file",
              "missing.npz": "no such file"}
    for name, problem in expect.items():
        path = str(tmp_path / name)
        for read in (lambda: mgraph.load(path, backend="numpy"), lambda: mio.read_edges(path),
                     lambda: mio.FileEdges(path)):
            with pytest.raises(ValueError) as info:
                read()
            assert str(info.value) == f"{path}: {problem}"
        assert cli.main(["info", path, "--backend", "numpy"]) == 2
        assert capsys.readouterr().err == f"mgraph: error: {path}: {problem}\n"

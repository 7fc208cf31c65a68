"""The pyarrow parser (mgraph.io.parse) against the line-aware reader it stands in for: same edges, same errors.

Each comparison reads a file twice, once as mgraph reads it (pyarrow first,
the line-aware reader where pyarrow declines) and once with ``parse.ENABLED``
off (the line-aware reader alone, as before pyarrow), and requires the same
arrays or the same one-line message.  Where a test says the fast path is
taken, the line-aware reader is made to fail, so it cannot have been used.
"""
from __future__ import annotations

import gzip
import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from mgraph.io import loaders as mio
from mgraph import memory
from mgraph.io import parse
from mgraph.io.loaders import FileEdges, GraphFormatError

pytest.importorskip("pyarrow")

DATA = Path(__file__).parent / "data"
MTX = "%%MatrixMarket matrix coordinate {} {}\n"


def outcome(fn):
    """("ok", arrays...) or ("error", message, line, offset)."""
    try:
        got = fn()
    except ValueError as e:
        return ("error", str(e), getattr(e, "line", None), getattr(e, "offset", None))
    return ("ok",) + tuple(got)


def same(a, b):
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "error":
        return a == b
    for x, y in zip(a[1:], b[1:]):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype
                    and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")):
                return False
        elif x != y:
            return False
    return True


def line_reader_only(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(parse, "ENABLED", False)
        return fn()


class FastUsed:
    """Counts the tables mgraph.io.parse parsed (returned columns for)."""

    def __init__(self, monkeypatch):
        self.count, original = 0, parse.columns

        def counted(*args, **kwargs):
            got = original(*args, **kwargs)
            self.count += got is not None
            return got

        monkeypatch.setattr(parse, "columns", counted)


def no_line_reader(monkeypatch):
    """Make the line-aware reader fail: whatever parses afterwards is pyarrow."""
    def refuse(*args, **kwargs):
        raise AssertionError("the line-aware reader was used")

    monkeypatch.setattr(mio, "_Table", refuse)


def both_ways(monkeypatch, path):
    """read_edges with pyarrow and with the line-aware reader only: (fast outcome, old outcome)."""
    fast = outcome(lambda: mio._read(str(path), mio.format_of(str(path))))
    old = line_reader_only(monkeypatch, lambda: outcome(lambda: mio._read(str(path), mio.format_of(str(path)))))
    return fast, old


# -- each format through pyarrow equals the line-aware reader ---------------------------------------------

rng = np.random.default_rng(5)
_E = rng.integers(0, 5000, (3000, 2)).tolist()
_W = np.round(rng.random(3000) * 100, 3).tolist()
FILES = {
    "snap.txt": b"# Directed graph\n# Nodes: 5000 Edges: 3000\n# FromNodeId\tToNodeId\n"
                + b"".join(b"%d\t%d\n" % tuple(e) for e in _E),
    "snap_spaces.el": b"".join(b"%d %d\n" % tuple(e) for e in _E),
    "weighted.txt": b"# weights\n" + b"".join(b"%d\t%d\t%r\n" % (a, b, w) for (a, b), w in zip(_E, _W)),
    "konect.edges": b"% sym unweighted\n% 3000 5000 5000\n" + b"".join(b"%d %d\n" % tuple(e) for e in _E),
    "crlf.txt": b"# c\r\n" + b"".join(b"%d\t%d\r\n" % tuple(e) for e in _E),
    "notrail.txt": b"".join(b"%d %d\n" % tuple(e) for e in _E).rstrip(b"\n"),
    "blank_lines.txt": b"\n# c\n\n" + b"".join(b"%d %d\n\n" % tuple(e) for e in _E),
    "header.csv": b"id_1,id_2\n" + b"".join(b"%d,%d\n" % tuple(e) for e in _E),
    "headerless.csv": b"".join(b"%d,%d\n" % tuple(e) for e in _E),
    "weighted.csv": b"src,dst,weight\n" + b"".join(b"%d,%d,%r\n" % (a, b, w) for (a, b), w in zip(_E, _W)),
    "spaced.csv": b"a, b\n" + b"".join(b"%d, %d\n" % tuple(e) for e in _E),
    "general.mtx": (MTX.format("real", "general") + "% c\n5000 5000 3000\n").encode()
                   + b"".join(b"%d %d %r\n" % (a + 1, b + 1, w) for (a, b), w in zip(_E, _W)),
    "symmetric.mtx": (MTX.format("pattern", "symmetric") + "5000 5000 3000\n").encode()
                     + b"".join(b"%d %d\n" % (max(a, b) + 1, min(a, b) + 1) for a, b in _E),
    "pattern.mtx": (MTX.format("pattern", "general") + "5000 5000 3000\n").encode()
                   + b"".join(b"%d %d\n" % (a + 1, b + 1) for a, b in _E),
    "integer.mtx": (MTX.format("integer", "general") + "5000 5000 3000\n").encode()
                   + b"".join(b"%d %d %d\n" % (a + 1, b + 1, k - 1500) for k, (a, b) in enumerate(_E)),
    "integer_sym.mtx": (MTX.format("integer", "symmetric") + "5000 5000 3000\n").encode()
                       + b"".join(b"%d\t%d\t%d\n" % (max(a, b) + 1, min(a, b) + 1, k) for k, (a, b) in enumerate(_E)),
    "real_sym.mtx": (MTX.format("real", "symmetric") + "%\n5000 5000 3000\n").encode()
                    + b"".join(b"%d %d %.17g\n" % (max(a, b) + 1, min(a, b) + 1, w * 1.1) for (a, b), w in zip(_E, _W)),
}


@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_pyarrow_parses_each_format_as_the_line_reader_does(tmp_path, monkeypatch, name, gz):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(FILES[name]) if gz else FILES[name])
    ref = line_reader_only(monkeypatch, lambda: mio._read(str(path), mio.format_of(str(path))))
    graph_ref = line_reader_only(monkeypatch, lambda: mio.load(path, backend="numpy"))
    no_line_reader(monkeypatch)  # from here on only pyarrow can parse
    got = mio._read(str(path), mio.format_of(str(path)))
    assert same(("ok",) + got, ("ok",) + ref)
    assert got[0].flags.writeable and got[0].dtype == np.int64 and (got[2] is None or got[2].dtype == np.float64)
    g = mio.load(path, backend="numpy")
    assert (g.directed, g.num_vertices, g.num_input_edges) == (graph_ref.directed, graph_ref.num_vertices,
                                                              graph_ref.num_input_edges)
    for key in ("indptr", "indices", "weights"):
        a, b = getattr(g, key), getattr(graph_ref, key)
        assert (a is None) == (b is None) and (a is None or (a.dtype == b.dtype and np.array_equal(a, b)))
    if not gz:  # the readers of byte ranges (MPI ranks) take the same path
        fe = FileEdges(path)
        for count in (1, 3, 7):
            pieces = [fe.part(i, count) for i in range(count)]
            assert np.array_equal(np.concatenate([p[0] for p in pieces]), ref[0])
            assert np.array_equal(np.concatenate([p[1] for p in pieces]), ref[1])


@pytest.mark.parametrize("path", [DATA / "chesapeake.mtx", DATA / "bips98_606.mtx", DATA / "soc-Slashdot0902.txt.gz",
                                  DATA / "facebook_large_edges.csv"], ids=lambda p: p.name)
def test_the_shipped_graphs_take_the_fast_path(monkeypatch, path):
    ref = line_reader_only(monkeypatch, lambda: mio.read_edges(path))
    no_line_reader(monkeypatch)
    assert same(("ok",) + mio.read_edges(path), ("ok",) + ref)


def test_a_byte_order_mark_where_a_slice_starts_is_not_skipped(tmp_path, monkeypatch):
    """pyarrow skips a UTF-8 byte-order mark at the start of each buffer (slice); the line reader refuses it."""
    monkeypatch.setattr(parse, "BLOCKS_PER_THREAD", 1)
    monkeypatch.setattr(parse, "BLOCK_BYTES", 4)  # slices of 4 bytes a thread: the mark's line starts the second
    lead = parse.cpu_threads()
    for name, text in (("bom.txt", b"0 1\n" * lead + b"\xef\xbb\xbf2 3\n3 4\n"),
                       ("bom.csv", b"0,1\n" * lead + b"\xef\xbb\xbf1,2\n"),
                       ("first.txt", b"\xef\xbb\xbf0 1\n1 2\n")):
        path = tmp_path / name
        path.write_bytes(text)
        fast, old = both_ways(monkeypatch, path)
        assert same(fast, old) and fast[0] == "error", (fast, old)


def test_comments_between_edges_take_the_line_reader_and_agree(tmp_path, monkeypatch):
    path = tmp_path / "mid.txt"
    path.write_bytes(b"# head\n0 1\n# middle\n1 2\n% konect\n2 3\n")
    fast, old = both_ways(monkeypatch, path)
    assert same(fast, old) and fast[1].tolist() == [0, 1, 2]


# -- token by token --------------------------------------------------------------------------------------

TOKENS = ["0", "7", "+7", "-0", "-7", "007", "1.5", "1.0", "1e3", "1E3", "1e300", "0x1F", "0X1f", "0o7", "0b1",
          "", "nan", "NaN", "-nan", "nan(1)", "inf", "-inf", "Inf", "Infinity", "1_000", "9223372036854775807",
          "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1" * 40, ".5", "5.", "1e",
          "1d3", "\x00", "7\x00", "1e-400", "4294967296", '"7"', "'7'", "true", "+.5", "1e+3", "\xef\xbb\xbf7",
          "7\x0c", "\x0c7", "\u0661", "2147483653"]


@pytest.mark.parametrize("layout", ["snap2", "snap3", "tab3", "csv2", "csv3", "mtx-real", "mtx-int", "mtx-pattern"])
def test_every_token_reads_the_same(tmp_path, monkeypatch, layout):
    """Each token as an id and as a weight, in every layout: the same edges or the same message both ways."""
    fast_used = FastUsed(monkeypatch)
    for k, token in enumerate(TOKENS):
        tok = token.encode("utf-8")
        if layout.startswith("mtx"):
            field = {"mtx-real": "real", "mtx-int": "integer", "mtx-pattern": "pattern"}[layout]
            body = [b"1 2" + (b" 1" if field != "pattern" else b""), b"2 " + tok + (b" 3" if field != "pattern" else b""),
                    b"2 3 " + tok if field != "pattern" else b"3 1"]
            text = MTX.format(field, "general").encode() + b"30 30 3\n" + b"\n".join(body) + b"\n"
            name = f"t{k}.mtx"
        else:
            sep = {"snap": b" ", "tab": b"\t", "csv": b","}[layout[:-1] if layout[-1].isdigit() else layout]
            weighted = layout.endswith("3")
            rows = [[b"0", b"1"], [b"1", tok], [tok, b"2"]]
            if weighted:
                rows = [r + [b"2.5"] for r in rows] + [[b"2", b"3", tok]]
            text = b"".join(sep.join(r) + b"\n" for r in rows)
            name = f"t{k}.{'csv' if layout.startswith('csv') else 'txt'}"
        path = tmp_path / name
        path.write_bytes(text)
        fast, old = both_ways(monkeypatch, path)
        assert same(fast, old), (layout, token, fast, old)
    assert fast_used.count > 0


# -- random files ----------------------------------------------------------------------------------------

PIECES = ["0", "1", "2", "17", "123456", "-3", "+4", "2.5", "1e2", "nan", "inf", "0x10", "x", "", "9" * 20,
          "2147483653", "007", "-0"]
SEPARATORS = [" ", " ", " ", "\t", "\t", "  ", " \t", ",", ", "]
ODD_LINES = ["", "  ", "\t", "# c", "% c", "\r", "\x00", "\xef\xbb\xbf0 1", "0 1 # tail", "1 2 % tail"]


def random_text(r: random.Random, fmt: str) -> bytes:
    """A small file of mostly good lines, with odd ones at a rate that leaves many files clean."""
    ncols = r.choice((2, 3))
    sep = r.choice((",",) if fmt == "csv" else SEPARATORS[:7])
    odd = r.random() < 0.6
    lines = []
    if fmt == "csv" and r.random() < 0.5:
        lines.append(sep.join(["src", "dst", "w"][:ncols]))
    if fmt == "mtx":
        field = r.choice(("real", "integer", "pattern")) if ncols == 3 else "pattern"
        field = "real" if (ncols == 3 and field == "pattern") else field
        lines.append(MTX.format(field, r.choice(("general", "symmetric"))).strip())
        lines.append(r.choice(("% comment", "")))
        size_at = len(lines)
        lines.append("")
    elif r.random() < 0.5:
        lines.append(r.choice(("# header", "% header")))
    m = r.randrange(0, 40)
    for _ in range(m):
        if odd and r.random() < 0.05:
            lines.append(r.choice(ODD_LINES))
            continue
        row = [str(r.randrange(1, 30)) for _ in range(2)]
        if ncols == 3:
            row.append(r.choice(("1", "2.5", "-1", "0.125", "3")))
        if odd and r.random() < 0.08:
            row[r.randrange(len(row))] = r.choice(PIECES)
        if odd and r.random() < 0.03:
            row.append("4") if r.random() < 0.5 else row.pop()
        s = sep if not (odd and r.random() < 0.05) else r.choice(SEPARATORS)
        lines.append((" " if odd and r.random() < 0.03 else "") + s.join(row))
    if fmt == "mtx":
        lines[size_at] = f"30 30 {m if r.random() < 0.8 else r.randrange(0, 45)}"
    eol = "\r\n" if r.random() < 0.2 else "\n"
    text = eol.join(lines) + (eol if r.random() < 0.8 else "")
    return text.encode("utf-8")


TRIALS = int(os.environ.get("MGRAPH_ARROW_TRIALS", "150"))  # more, once: MGRAPH_ARROW_TRIALS=4000 pytest -k random


@pytest.mark.parametrize("fmt, suffix", [("snap", ".txt"), ("csv", ".csv"), ("mtx", ".mtx")])
def test_random_files_read_the_same_both_ways(tmp_path, monkeypatch, fmt, suffix):
    r = random.Random(f"arrow-{fmt}")
    fast_used = FastUsed(monkeypatch)
    errors, block = 0, parse.BLOCK_BYTES
    for trial in range(TRIALS):
        monkeypatch.setattr(parse, "BLOCK_BYTES", 2 if trial % 2 else block)  # slices of a few lines, or one
        path = tmp_path / f"r{trial}{suffix}"
        path.write_bytes(random_text(r, fmt))
        fast, old = both_ways(monkeypatch, path)
        assert same(fast, old), (trial, path.read_bytes()[:400], fast[:2], old[:2])
        errors += fast[0] == "error"
        if trial % 5 == 0 and old[0] == "ok" or trial % 15 == 0:  # and the readers of byte ranges
            for count in (2, 3):
                def shares():
                    fe = FileEdges(path)
                    pieces = [fe.part(i, count) for i in range(count)]
                    fe.check_count(sum(p[0].shape[0] for p in pieces))
                    return tuple(np.concatenate([p[k] for p in pieces]) for k in (0, 1))

                a = outcome(shares)
                b = line_reader_only(monkeypatch, lambda: outcome(shares))
                assert same(a, b), (trial, count, path.read_bytes()[:400], a[:2], b[:2])
    assert 0.1 < errors / TRIALS < 0.9 and fast_used.count > 0.25 * TRIALS  # both kinds drawn; pyarrow parsed many


# -- errors far into a file still name their line ---------------------------------------------------------


def _big_lines(n):
    r = np.random.default_rng(11)
    e = r.integers(0, 1 << 20, (n, 2))
    return [b"%d\t%d" % (a, b) for a, b in e]


@pytest.mark.parametrize("bad, problem", [
    (b"17\tx9", "vertex id 'x9' is not an integer"),
    (b"17 9", None),                           # a space in a tab-separated file: not an error, one column to pyarrow
    (b"17\t9\t3", "expected 2 columns, found 3 in '17\\t9\\t3'"),
    (b"-17\t9", "negative source vertex id -17"),
    (b"17\t0x1F", "vertex id '0x1F' is not an integer"),
    (b"# a late comment", None),               # not an error: the line reader takes the file
])
def test_a_bad_line_deep_in_a_large_file_names_its_line(tmp_path, monkeypatch, bad, problem):
    monkeypatch.setattr(parse, "BLOCK_BYTES", 1 << 16)  # many pyarrow blocks, as in a file of gigabytes
    lines = [b"# generated"] + _big_lines(200_000)
    at = 123_457  # 1-based line number of the bad line
    lines[at - 1] = bad
    path = tmp_path / "big.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    if problem is None:  # the line reader takes the file
        got = mio.read_edges(path)
        assert same(("ok",) + got, ("ok",) + line_reader_only(monkeypatch, lambda: mio.read_edges(path)))
        assert got[0].size == sum(1 for line in lines if not line.startswith(b"#"))
        return
    with pytest.raises(GraphFormatError) as e:
        mio.read_edges(path)
    assert str(e.value) == f"{path}, line {at}: {problem}" and e.value.line == at
    fe = FileEdges(path)  # the reader of the byte range that holds it says the same
    errors = []
    for i in range(4):
        try:
            fe.part(i, 4)
        except GraphFormatError as err:
            errors.append((i, str(err)))
    assert errors == [(2, str(e.value))]


def test_weights_and_mtx_ranges_deep_in_a_file(tmp_path, monkeypatch):
    monkeypatch.setattr(parse, "BLOCK_BYTES", 1 << 16)
    n = 100_000
    rows = [b"%d %d %d.5" % (i % 997 + 1, (7 * i) % 991 + 1, i % 5) for i in range(n)]
    for k, (line, problem) in enumerate([(b"5 6 nan", "weight nan is not finite"),
                                         (b"5 6 1e999", "weight inf is not finite"),
                                         (b"5 1000 1", "column index 1000 is outside 1..999"),
                                         (b"0 6 1", "row index 0 is outside 1..999")]):
        body = list(rows)
        body[77_776] = line
        path = tmp_path / f"w{k}.mtx"
        path.write_bytes(MTX.format("real", "general").encode() + b"999 999 %d\n" % n + b"\n".join(body) + b"\n")
        with pytest.raises(GraphFormatError) as e:
            mio.load(path, backend="numpy")
        assert str(e.value) == f"{path}, line {77_779}: {problem}"
    path = tmp_path / "count.mtx"
    path.write_bytes(MTX.format("real", "general").encode() + b"999 999 %d\n" % (n + 1) + b"\n".join(rows) + b"\n")
    with pytest.raises(GraphFormatError, match=rf"count\.mtx, line {n + 3}: file ends after {n} of the {n + 1}"):
        mio.read_edges(path)


# -- without pyarrow, and short of memory -----------------------------------------------------------------


def test_without_pyarrow_the_line_reader_does_it_all(tmp_path, monkeypatch):
    path = tmp_path / "w.csv"
    path.write_bytes(FILES["weighted.csv"])
    ref = mio.read_edges(path)
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    assert not parse.available()
    assert same(("ok",) + mio.read_edges(path), ("ok",) + ref)
    assert mio.load(path, backend="numpy").num_input_edges == 3000


def test_short_of_memory_for_pyarrow_the_line_reader_parses(tmp_path, monkeypatch):
    """pyarrow's columns and blocks need more than the line reader: where they do not fit, the line reader parses."""
    path = tmp_path / "e.txt"
    path.write_bytes(b"".join(b"%d %d\n" % (a % 500, b % 500) for a, b in _E))  # 3000 lines of 16 bytes in memory
    ref = mio.read_edges(path)
    fast_used = FastUsed(monkeypatch)
    assert parse._plan(path.read_bytes(), 0, path.stat().st_size, 2, 2)[2] > 64_000 > 3000 * 16
    monkeypatch.setenv(memory.ENV_LIMIT, "64000")
    assert same(("ok",) + mio.read_edges(path), ("ok",) + ref)
    assert fast_used.count == 0
    monkeypatch.setenv(memory.ENV_LIMIT, "1G")
    assert same(("ok",) + mio.read_edges(path), ("ok",) + ref)
    assert fast_used.count == 1


# -- slices and the row estimate ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["crlf.txt", "blank_lines.txt", "weighted.csv", "general.mtx", "integer_sym.mtx"])
def test_small_slices_give_the_same_edges(tmp_path, monkeypatch, name):
    """The text goes to pyarrow a slice at a time, cut at line ends: slices of a few lines change nothing."""
    path = tmp_path / name
    path.write_bytes(FILES[name])
    ref = line_reader_only(monkeypatch, lambda: mio._read(str(path), mio.format_of(str(path))))
    no_line_reader(monkeypatch)
    for block in (8, 50, 1000):  # slices of 2 threads x 4 blocks (or parse.cpu_threads() of them)
        monkeypatch.setattr(parse, "BLOCK_BYTES", block)
        assert same(("ok",) + mio._read(str(path), mio.format_of(str(path))), ("ok",) + ref)


def test_more_rows_than_estimated(tmp_path, monkeypatch):
    """Long lines where the estimate samples, short ones after: the columns grow, and end at the exact length."""
    monkeypatch.setattr(parse, "_SAMPLE_BYTES", 200)
    monkeypatch.setattr(parse, "BLOCK_BYTES", 300)
    long = [b"%d %d %.17g" % (10**6 + i, 10**6 - i, 1 / (i + 3)) for i in range(20)]
    short = [b"%d %d 1" % (i % 10, i % 7) for i in range(5000)]
    path = tmp_path / "grow.txt"
    path.write_bytes(b"\n".join(long + short + long) + b"\n")
    assert parse._plan(path.read_bytes(), 0, path.stat().st_size, 3, 2)[0] < 2000  # far fewer than the rows
    ref = line_reader_only(monkeypatch, lambda: mio.read_edges(path))
    no_line_reader(monkeypatch)
    got = mio.read_edges(path)
    assert same(("ok",) + got, ("ok",) + ref) and got[0].shape == (5040,)
    assert all(a.flags.owndata and a.flags.writeable for a in got[:3])


def test_the_fuzz_cases_read_the_same_both_ways(tmp_path, monkeypatch):
    """The damaged text files of tests/test_fuzz.py (plain and gzipped): the same edges or the same message."""
    from test_fuzz import _case_ids, make_case

    fast_used = FastUsed(monkeypatch)
    cases = [c for c in _case_ids() if not c.startswith("npz")]
    for case_id in cases:
        path, what = make_case(case_id, str(tmp_path))
        fast, old = both_ways(monkeypatch, path)
        assert same(fast, old), (case_id, what, fast[:2], old[:2])
    assert len(cases) == 780 and fast_used.count > 100

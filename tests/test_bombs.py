"""Decompression bombs are refused before their memory is taken, with the usual one-line estimate.

A gzip stream or a deflated .npz member can expand about 1000 times, so a
small file may hold more than the machine has.  These bombs are small (tens
of MiB inflated) and the memory lowered to match (``MGRAPH_MEMORY_LIMIT``,
or the host's free-memory reading monkeypatched), and the Python heap's peak
is traced (NumPy's arrays and the inflated bytes are both counted), so the
tests show that nothing of the bomb's size was allocated, not only that the
message is right.
"""
from __future__ import annotations

import gzip
import tracemalloc
import zipfile

import numpy as np
import pytest

import mgraph
from mgraph import cli, memory
from mgraph.io import loaders as mio
from mgraph.io.loaders import FileEdges, GraphFormatError

MiB = 1 << 20


def gzip_of(path, line: bytes, total: int):
    """``path`` holding ``line`` repeated to ``total`` bytes, gzipped a block at a time."""
    block = line * (MiB // len(line))
    with gzip.open(path, "wb", compresslevel=1) as f:
        for _ in range(total // len(block)):
            f.write(block)
    return str(path)


def traced_peak(call):
    """(what ``call()`` raised, the Python heap's peak above where it started, in bytes)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with pytest.raises(ValueError) as info:
            call()
        return info.value, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def one_line(message: str) -> str:
    assert message and "\n" not in message and "MemoryError" not in message, message
    return message


# -- gzip text -------------------------------------------------------------------------------------


def test_a_gzip_bomb_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    """48 MiB of '0' in one line, in about 50 KB of gzip, against 16 MiB of memory: refused having held a few 1 MiB
    blocks of it at a time (the reader inflated it whole before)."""
    path = gzip_of(tmp_path / "zeros.txt.gz", b"0", 48 * MiB)
    monkeypatch.setenv(memory.ENV_LIMIT, "16M")
    monkeypatch.setattr(mio, "_INFLATE_BYTES", MiB)
    error, peak = traced_peak(lambda: mgraph.load(path, backend="numpy"))
    message = one_line(str(error))
    assert message.startswith(f"{path}: its ") and " bytes of gzip inflate to more than 16,777,216 bytes of text " \
        "in 0 lines; parsing them needs at least 16 MiB of host memory, more than the 16 MiB available " \
        "(MGRAPH_MEMORY_LIMIT)" in message
    assert peak < 8 * MiB, peak


def test_a_gzip_bomb_of_lines_counts_the_columns_too(tmp_path, monkeypatch):
    """'0 1' lines: each line costs its 4 bytes of text and at least 16 of ids, so 16 MiB of text (4 Mi lines) needs
    at least 80 MiB, and 24 MiB of memory refuses it after 5 MiB of text, none of it held."""
    path = gzip_of(tmp_path / "lines.txt.gz", b"0 1\n", 16 * MiB)
    monkeypatch.setenv(memory.ENV_LIMIT, "24M")
    monkeypatch.setattr(mio, "_INFLATE_BYTES", MiB)
    error, peak = traced_peak(lambda: mgraph.load(path, backend="numpy"))
    message = one_line(str(error))
    assert " bytes of gzip inflate to more than 5,242,880 bytes of text in 1,310,720 lines; parsing them needs at " \
        "least 25 MiB of host memory, more than the 24 MiB available" in message
    assert peak < 8 * MiB, peak


def test_a_valid_gzip_list_too_big_gives_the_estimate_on_the_command_line(tmp_path, monkeypatch, capsys):
    """The reported 2 GiB-unpacked edge list, in small: the command prints the estimate, not 'MemoryError'."""
    path = gzip_of(tmp_path / "valid.txt.gz", b"12 345\n", 8 * MiB)  # 8 blocks of 149,796 lines
    monkeypatch.setenv(memory.ENV_LIMIT, "20M")
    assert cli.main(["info", path, "--backend", "numpy"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"mgraph: error: {path}: its ")
    # 8,388,576 bytes of text and 16 bytes for each of 1,198,368 lines (and one unfinished) at least
    assert (" bytes of gzip inflate to 8,388,576 bytes of text in 1,198,368 lines; parsing them needs at least "
            "26.3 MiB of host memory, more than the 20 MiB available (MGRAPH_MEMORY_LIMIT)\n") in err


def test_the_free_memory_reading_bounds_the_inflation(tmp_path, monkeypatch):
    """Without MGRAPH_MEMORY_LIMIT, the host's reading (here said to be 64 MiB) is taken once, before the stream;
    the text is kept up to an eighth of it (8 MiB), then only counted."""
    path = gzip_of(tmp_path / "zeros.txt.gz", b"0", 96 * MiB)
    monkeypatch.delenv(memory.ENV_LIMIT, raising=False)
    readings = []
    monkeypatch.setattr(memory, "host_available", lambda: readings.append(1) or 64 * MiB)
    monkeypatch.setattr(mio, "_INFLATE_BYTES", MiB)
    error, peak = traced_peak(lambda: mio.read_edges(path))
    assert "more than the 64 MiB available" in one_line(str(error)) and "(MGRAPH_MEMORY_LIMIT)" not in str(error)
    assert readings == [1] and peak < 16 * MiB, (readings, peak)


def test_a_reader_of_shares_refuses_an_endless_first_line(tmp_path, monkeypatch):
    """FileEdges reads only a file's header, a line at a time: a gzip bomb of one line is refused at that line
    (before, the line was gathered whole, in time quadratic in its length: 91 s for 64 MiB)."""
    path = gzip_of(tmp_path / "zeros.txt.gz", b"0", 48 * MiB)
    monkeypatch.setattr(mio, "_LINE_MAX_BYTES", MiB)
    error, peak = traced_peak(lambda: FileEdges(path))
    assert one_line(str(error)) == (f"{path}, line 1: the line runs on past 1,048,576 bytes without ending; a graph "
                                    "file's lines are short")
    assert peak < 8 * MiB, peak


def _counting_opens(monkeypatch):
    """How many times gzip streams are opened from here on (each is one inflation of the file)."""
    real, opened = mio.gzip.GzipFile, []

    def counted(*args, **kwargs):
        opened.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(mio.gzip, "GzipFile", counted)
    return opened


@pytest.mark.parametrize("limit, inflations", [("64M", 1), ("4M", 2)], ids=["held", "counted-first"])
def test_a_gzip_file_that_fits_reads_as_its_text(tmp_path, monkeypatch, limit, inflations):
    """Several gzip members (gzip's length field tells only the last one's) and blocks that cut lines: the same
    edges as the plain text.  Its parse needs about 1.9 MB: under an eighth of the memory the stream is inflated
    once; above, counted first and inflated again."""
    text = b"".join(b"%d %d %d\n" % (i % 1000, (i * 7919) % 1000, 1 + i % 5) for i in range(60_000))
    plain, gz = tmp_path / "g.txt", tmp_path / "g2.txt.gz"
    plain.write_bytes(text)
    gz.write_bytes(gzip.compress(text[:300_001]) + gzip.compress(text[300_001:]))
    monkeypatch.setenv(memory.ENV_LIMIT, limit)
    monkeypatch.setattr(mio, "_INFLATE_BYTES", 65_536 + 3)
    opened = _counting_opens(monkeypatch)
    got, want = mio.read_edges(str(gz)), mio.read_edges(str(plain))
    assert len(opened) == inflations
    for x, y in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(x, y)
    assert got[0].size == 60_000
    parts = [FileEdges(gz).part(k, 3) for k in range(3)]
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), want[1])


def test_a_gzip_file_that_changes_between_the_passes_is_an_error(tmp_path, monkeypatch):
    """Counted, then inflated into a buffer of that length: a file that grew meanwhile is named.  (Its parse needs
    56 bytes, more than an eighth of 400, so the stream is counted first.)"""
    path = tmp_path / "grows.txt.gz"
    path.write_bytes(gzip.compress(b"0 1\n1 2\n"))
    monkeypatch.setenv(memory.ENV_LIMIT, "400")
    opened = _counting_opens(monkeypatch)
    real = mio.gzip.GzipFile

    def growing(*args, **kwargs):
        if len(opened) == 1:
            path.write_bytes(gzip.compress(b"0 1\n1 2\n2 3\n"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mio.gzip, "GzipFile", growing)
    with pytest.raises(GraphFormatError, match=r"grows\.txt\.gz: file changed while being read .* then to more"):
        mio.read_edges(str(path))


# -- .npz members ----------------------------------------------------------------------------------


def _write_member(zf, name, dtype, shape, data=None):
    """A deflated .npy member: ``data`` (an array), or zeros of ``dtype`` and ``shape`` written a MiB at a time."""
    with zf.open(name + ".npy", "w", force_zip64=True) as f:
        if data is not None:
            np.lib.format.write_array(f, np.asarray(data), allow_pickle=False)
            return
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
        np.lib.format.write_array_header_1_0(f, header)
        left = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        zeros = bytes(MiB)
        while left:
            f.write(zeros[:min(left, MiB)])
            left -= min(left, MiB)


def npz_bomb(path, *, arcs=0, format_bytes=0):
    """A cache of one vertex whose ``indices`` declares ``arcs`` int32 zeros (all in row 0), or whose ``format``
    scalar declares a string of ``format_bytes`` bytes, every member deflated."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        if format_bytes:
            _write_member(zf, "format", f"<U{format_bytes // 4}", ())
        else:
            _write_member(zf, "format", None, None, np.array(mio.NPZ_FORMAT))
        _write_member(zf, "directed", None, None, np.array(True))
        _write_member(zf, "num_input_edges", None, None, np.array(-1, dtype=np.int64))
        _write_member(zf, "indptr", None, None, np.array([0, arcs], dtype=np.int64))
        _write_member(zf, "indices", np.int32, (arcs,))
    return str(path)


def test_an_npz_member_declaring_more_than_memory_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    """A 256 MiB member in about 250 KB, against 64 MiB of memory: refused from its header, having read none of it
    (NumPy allocated the 256 MiB and the checks found a self-loop before)."""
    path = npz_bomb(tmp_path / "bomb.npz", arcs=64 * MiB)
    monkeypatch.setenv(memory.ENV_LIMIT, "64M")
    error, peak = traced_peak(lambda: mgraph.load(path, backend="numpy"))
    assert isinstance(error, GraphFormatError)
    message = one_line(str(error))
    assert message.startswith(f"{path}: loading a graph of 1 vertices and 67,108,864 arcs, whose arrays declare "
                              "256 MiB, needs about ")
    assert message.endswith("of host memory, more than the 64 MiB available (MGRAPH_MEMORY_LIMIT)")
    assert peak < 8 * MiB, peak


def test_an_npz_bomb_read_by_shares_is_refused_before_its_slice(tmp_path, monkeypatch):
    """A reader of a share (an MPI rank) checks each slice it reads against its declared size first."""
    path = npz_bomb(tmp_path / "bomb.npz", arcs=64 * MiB)
    monkeypatch.setenv(memory.ENV_LIMIT, "64M")
    edges = FileEdges(path)
    error, peak = traced_peak(lambda: edges.part(0, 1))
    message = one_line(str(error))
    assert message.startswith(f"{path}: reading the 67,108,864 arcs of rows 0..0 needs at least 1 GiB")
    assert peak < 8 * MiB, peak


def test_an_npz_scalar_declaring_megabytes_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    path = npz_bomb(tmp_path / "scalar.npz", format_bytes=64 * MiB)
    error, peak = traced_peak(lambda: mgraph.load(path, backend="numpy"))
    assert one_line(str(error)) == (f"{path}: member format.npy declares 67,108,992 bytes; a cache's scalars take "
                                    "less than 65,536")
    assert peak < 8 * MiB, peak
    with pytest.raises(GraphFormatError, match="member format.npy declares 67,108,992 bytes"):
        FileEdges(path)


def test_a_cache_that_fits_still_loads_under_a_limit_near_its_estimate(tmp_path, monkeypatch):
    """The estimate does not refuse what it should let through: a cache loads with its estimate as the limit."""
    g = mgraph.load("rmat:12", backend="numpy")
    path = tmp_path / "g.npz"
    mio.save_npz(g, path)
    with zipfile.ZipFile(path) as zf:
        headers = {name: mio.cachecheck.member_header(zf, zf.getinfo(name + ".npy"), path.stat().st_size)[:2]
                   for name in ("indptr", "indices")}
    need = mio.cachecheck.load_bytes(headers, directed=False)
    assert g.indices.nbytes + g.indptr.nbytes < need < 3 * (g.indices.nbytes + g.indptr.nbytes) + 20 * g.num_arcs
    monkeypatch.setenv(memory.ENV_LIMIT, str(need))
    h = mgraph.load(str(path), backend="numpy")
    np.testing.assert_array_equal(h.indices, g.indices)
    monkeypatch.setenv(memory.ENV_LIMIT, str(need - 1))
    with pytest.raises(GraphFormatError, match="needs about"):
        mgraph.load(str(path), backend="numpy")

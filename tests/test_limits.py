"""Inputs that ask for more memory than there is, ids beyond 64 bits, and a closed stdout: each ends in one line.

The reproducers of the reported failures are kept here as they were found:
a 13-byte edge list whose one id is 2**31+1, a small .mtx whose size line
declares 2**31+5 vertices, the id 2**63-1, ``rmat:45``,
``grid:100000x100000``, ``Graph.from_edges(..., num_vertices=10**12)``,
``mgraph bfs rmat:25 --validate`` on a 24 GiB machine and ``mgraph info
x.npz | head -2``.  Sizes that no machine has (2**40 vertices and up) are
refused everywhere; the reported ones that only a small machine refuses are
tested with ``MGRAPH_MEMORY_LIMIT`` set to the reporter's 24 GiB.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import mgraph
from mgraph import cli, memory
from mgraph.io import generators
from mgraph.io import loaders as mio
from mgraph.io.loaders import GraphFormatError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORTER_MACHINE = "24G"  # the machine the failures were seen on: 24 GiB, 2 cores


def one_line(message: str) -> str:
    assert message and "\n" not in message, repr(message)
    assert "Unable to allocate" not in message, message
    return message


UNITS = {"B": 2 ** -30, "KiB": 2 ** -20, "MiB": 2 ** -10, "GiB": 1, "TiB": 2 ** 10, "PiB": 2 ** 20, "EiB": 2 ** 30}


def asked_and_available(message: str) -> tuple[float, float]:
    """The GiB a message says are needed and available."""
    size = r"([\d.,]+) (B|KiB|MiB|GiB|TiB|PiB|EiB)"
    m = re.search(rf"needs (?:about|at least) {size} of \w+ memory, more than the {size} available", message)
    assert m, message
    return (float(m.group(1).replace(",", "")) * UNITS[m.group(2)],
            float(m.group(3).replace(",", "")) * UNITS[m.group(4)])


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# -- files -----------------------------------------------------------------------------------


def test_the_13_byte_edge_list_is_refused_at_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv(memory.ENV_LIMIT, REPORTER_MACHINE)
    path = write(tmp_path, "e.txt", b"0 2147483649\n")
    assert os.path.getsize(path) == 13
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    message = one_line(str(e.value))
    assert e.value.line == 1 and message.startswith(f"{path}, line 1: vertex id 2147483649:")
    assert "2,147,483,650 vertices" in message
    need, room = asked_and_available(message)
    assert need == 32.0 and room == 24.0  # 16 bytes for each of 2**31 + 2 vertices, at least


def test_the_13_byte_edge_list_from_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(memory.ENV_LIMIT, REPORTER_MACHINE)
    path = write(tmp_path, "e.txt", b"0 2147483649\n")
    assert cli.main(["info", path, "--backend", "numpy"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"mgraph: error: {path}, line 1: vertex id 2147483649:") and err.count("\n") == 1


def test_an_id_no_machine_can_index_is_refused_without_a_limit(tmp_path):
    path = write(tmp_path, "e.csv", b"a,b\n0,1\n1,1099511627776\n")
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    assert e.value.line == 3 and "vertex id 1099511627776" in one_line(str(e.value))
    need, room = asked_and_available(str(e.value))
    assert need == 16 * 1024 and room < need  # 16 TiB


def test_an_mtx_size_line_of_2_31_plus_5_vertices_is_refused_at_the_size_line(tmp_path, monkeypatch):
    monkeypatch.setenv(memory.ENV_LIMIT, REPORTER_MACHINE)
    path = write(tmp_path, "m.mtx", b"%%MatrixMarket matrix coordinate pattern general\n% a comment\n"
                                    b"2147483653 2147483653 1\n1 2\n")
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    message = one_line(str(e.value))
    assert e.value.line == 3 and "2147483653 x 2147483653 matrix" in message
    assert asked_and_available(message) == (32.0, 24.0)
    # the readers of shares (MPI) stop at the same line, before reading an entry
    with pytest.raises(GraphFormatError) as e:
        mio.FileEdges(path)
    assert e.value.line == 3


def test_an_mtx_size_line_of_2_63_minus_1_is_refused_not_an_empty_graph(tmp_path):
    """It used to build a Graph with indptr of length 0 (num_vertices -1): arange(2**63) is empty."""
    path = write(tmp_path, "m.mtx", b"%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    b"9223372036854775807 9223372036854775807 1\n2 1\n")
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    assert e.value.line == 2 and "128 EiB" in one_line(str(e.value))


@pytest.mark.parametrize("text, line, words", [
    (b"0 9223372036854775807\n", 1, "vertex id 9223372036854775807: building a graph of 9,223,372,036,854,775,808"),
    (b"# c\n1 2\n9223372036854775808 0\n", 3, "vertex id '9223372036854775808' is outside the 64-bit integer range"),
    (b"0 18446744073709551616\n", 1, "vertex id '18446744073709551616' is outside the 64-bit integer range"),
    (b"1 2\n0 -9223372036854775809\n", 2, "vertex id '-9223372036854775809' is outside the 64-bit integer range"),
    (b"0 99999999999999999999999999999\n", 1, "is outside the 64-bit integer range"),
    (b"1 2\n2 -1\n", 2, "negative target vertex id -1"),
    (b"1 2\n2 1e300\n", 2, "vertex id '1e300' is not an integer"),
    (b"1 2 1\n2 3 nan\n", 2, "weight nan is not finite"),
])
def test_ids_beyond_64_bits_name_the_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, "ids.txt", text)
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    assert e.value.line == line and words in one_line(str(e.value)), str(e.value)


def test_a_carriage_return_inside_a_line_names_the_line(tmp_path):
    """Found by the fuzz test: a doubled CR before the newline was 'cannot parse' without a line."""
    path = write(tmp_path, "cr.csv", b"a,b\r\n0,1\r\n1,2\r\r\n2,3\r\n")
    with pytest.raises(GraphFormatError) as e:
        mgraph.load(path, backend="numpy")
    assert e.value.line == 3 and "a carriage return inside the line" in one_line(str(e.value))


def test_a_crlf_file_still_loads(tmp_path):
    path = write(tmp_path, "crlf.csv", b"a,b\r\n0,1\r\n1,2\r\n")
    g = mgraph.load(path, backend="numpy")
    assert (g.num_vertices, g.num_edges) == (3, 2)


def test_mtx_entries_beyond_the_size_line_and_64_bits(tmp_path):
    head = b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n"
    for entry, words in ((b"2 9223372036854775807\n", "column index 9223372036854775807 is outside 1..3"),
                         (b"2 18446744073709551616\n", "'18446744073709551616' is outside the 64-bit integer range")):
        path = write(tmp_path, "e.mtx", head + entry)
        with pytest.raises(GraphFormatError) as e:
            mgraph.load(path, backend="numpy")
        assert e.value.line == 4 and words in one_line(str(e.value))


# -- generators ------------------------------------------------------------------------------


def test_rmat_45_is_refused_by_its_spec():
    with pytest.raises(ValueError) as e:
        mgraph.load("rmat:45", backend="numpy")
    assert one_line(str(e.value)) == ("bad graph spec 'rmat:45': scale must be at most 40 (MAX_SCALE: vertex ids "
                                      "below 2**40), got 45")


@pytest.mark.parametrize("spec, vertices", [("grid:100000x100000", 10 ** 10), ("rmat:38", 1 << 38),
                                            ("er:1000000000000:5", 10 ** 12)])
def test_specs_too_big_for_any_machine_are_refused_before_drawing(spec, vertices):
    with pytest.raises(ValueError) as e:
        mgraph.load(spec, backend="numpy")
    message = one_line(str(e.value))
    assert message.startswith(f"{spec}: building a graph of {vertices:,} vertices and up to ")
    need, room = asked_and_available(message)
    assert need > 500 and room < need  # GiB
    with pytest.raises(ValueError) as e:  # the whole-graph generators say the same
        generators.from_spec(spec)
    assert one_line(str(e.value)).startswith(f"{spec}: building a graph of {vertices:,} vertices")


def test_generator_functions_check_before_allocating():
    with pytest.raises(ValueError, match=r"^grid\(100000, 100000\): building a graph of 10,000,000,000 vertices"):
        generators.grid(100000, 100000)
    with pytest.raises(ValueError, match=r"^rmat_edges\(40, 16\): drawing 17,592,186,044,416 edges needs about 256 T"):
        generators.rmat_edges(40)
    src, dst, _ = generators.rmat_edges(40, start=5, stop=9)  # a small range of the same list is fine
    assert src.shape == (4,) and 0 <= int(src.min()) and int(src.max()) < 1 << 40


def test_the_estimate_grows_with_what_is_asked(monkeypatch):
    """The check uses the estimate: a limit between two specs' estimates admits the smaller, refuses the larger."""
    small = generators.spec_edges("rmat:14")
    big = generators.spec_edges("rmat:17")
    est = lambda s: memory.chunked_build_bytes(s.num_vertices, 2 * s.num_edges, 2 * min(  # noqa: E731
        1 << 24, max(1 << 16, s.num_edges // 8)))
    assert est(small) < est(big)
    monkeypatch.setenv(memory.ENV_LIMIT, str((est(small) + est(big)) // 2))
    g = mgraph.load("rmat:14", backend="numpy")
    assert g.num_vertices == 1 << 14
    with pytest.raises(ValueError) as e:
        mgraph.load("rmat:17", backend="numpy")
    need, _ = asked_and_available(one_line(str(e.value)))
    assert need == pytest.approx(est(big) / 2 ** 30, rel=0.01)


# -- Graph.from_edges ---------------------------------------------------------------------------


def test_from_edges_with_10_to_the_12_vertices():
    with pytest.raises(ValueError) as e:
        mgraph.Graph.from_edges(np.array([0, 1]), np.array([1, 2]), num_vertices=10 ** 12)
    message = one_line(str(e.value))
    assert message.startswith("Graph.from_edges: building a graph of 1,000,000,000,000 vertices and 4 arcs needs about")
    assert asked_and_available(message)[0] == pytest.approx(14.6 * 1024, rel=0.01)  # 16 bytes a vertex


@pytest.mark.parametrize("ids, shown", [
    ([0, 2 ** 64], "18446744073709551616"),
    (np.array([0, 2 ** 63], dtype=np.uint64), "9223372036854775808"),  # once wrapped to a "negative vertex id"
    (np.array([0.0, 1e300]), "1e+300"),
    (np.array([0.0, np.inf]), "inf"),
])
def test_from_edges_ids_beyond_64_bits(ids, shown):
    with pytest.raises(ValueError) as e:
        mgraph.Graph.from_edges([0, 1], ids)
    assert one_line(str(e.value)) == f"dst holds vertex id {shown}, outside the 64-bit integer range"


def test_from_edges_python_ints_in_range_still_build():
    g = mgraph.Graph.from_edges(np.array([0, 1], dtype=object), np.array([1, 2 ** 20], dtype=object))
    assert (g.num_vertices, g.num_edges) == (2 ** 20 + 1, 2)


def test_from_edges_id_2_63_minus_1_is_a_memory_error_not_an_overflow():
    with pytest.raises(ValueError) as e:
        mgraph.Graph.from_edges([0], [2 ** 63 - 1])
    assert "9,223,372,036,854,775,808 vertices" in one_line(str(e.value))


@pytest.mark.parametrize("bad", [10 ** 400, "12", 1.5, float("inf"), True])
def test_from_edges_num_vertices_must_be_an_integer(bad):
    with pytest.raises(ValueError, match="num_vertices"):
        mgraph.Graph.from_edges([0], [1], num_vertices=bad)


# -- runs on the CPU ----------------------------------------------------------------------------


def test_bfs_rmat_25_validate_on_a_24_gib_machine_is_refused_before_loading(monkeypatch, capsys):
    monkeypatch.setenv(memory.ENV_LIMIT, REPORTER_MACHINE)
    assert cli.main(["bfs", "rmat:25", "--validate", "--backend", "numpy"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("mgraph: error: bfs --validate on rmat:25: running on a graph of 33,554,432 vertices and "
                          "up to 1,073,741,824 arcs needs about")
    need, room = asked_and_available(err)
    assert room == 24.0 and 30 < need < 50  # GiB: the CPU reference's arc arrays are what does not fit


def test_a_cpu_run_that_fits_runs(monkeypatch, capsys):
    monkeypatch.setenv(memory.ENV_LIMIT, REPORTER_MACHINE)
    assert cli.main(["bfs", "rmat:12", "--validate", "--backend", "numpy"]) == 0
    assert "validation  PASS" in capsys.readouterr().out


def test_a_loaded_graph_too_big_to_run_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """Files are checked after loading, with the exact arc count."""
    path = str(tmp_path / "g.npz")
    mio.save_npz(mgraph.load("rmat:14", backend="numpy"), path)
    g = mgraph.load(path, backend="numpy")
    need = memory.run_bytes("cc", g.num_vertices, g.num_arcs, validate=True)
    monkeypatch.setenv(memory.ENV_LIMIT, str(need - 1))
    assert cli.main(["cc", path, "--validate", "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mgraph: error: cc --validate on {path}: running on a graph of 16,384 vertices and "
                          f"{g.num_arcs:,} arcs needs about")
    monkeypatch.setenv(memory.ENV_LIMIT, str(need + (64 << 20)))
    assert cli.main(["cc", path, "--validate", "--backend", "numpy"]) == 0


# -- available memory ---------------------------------------------------------------------------


def test_memory_limit_variable(monkeypatch):
    for text, value in (("1000", 1000), ("1.5G", 3 << 29), ("64 MiB", 64 << 20), ("2t", 2 << 40)):
        monkeypatch.setenv(memory.ENV_LIMIT, text)
        assert memory.available() == value
    monkeypatch.setenv(memory.ENV_LIMIT, "lots")
    with pytest.raises(ValueError, match="MGRAPH_MEMORY_LIMIT='lots' is not a size"):
        memory.available()


def test_host_memory_reading_respects_ulimit():
    """An address-space limit (ulimit -v) caps what is available: NumPy would fail there, not at the OOM killer."""
    code = ("import resource; from mgraph import memory; "
            "size = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize:')); "
            "resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.getrlimit(resource.RLIMIT_AS)[1])); "
            "print(memory.host_available())")
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop(memory.ENV_LIMIT, None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert (1 << 30) - (64 << 20) < int(out.stdout) <= 1 << 30  # the room under the limit, less what the call took
    assert 0 < memory.host_available() <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


# -- a closed stdout ------------------------------------------------------------------------------


def _info_command(path):
    env = dict(os.environ, PYTHONPATH=ROOT, MGRAPH_BACKEND="numpy")
    return [sys.executable, "-m", "mgraph", "info", path], env


def test_info_into_a_closed_pipe_ends_quietly(tmp_path):
    path = str(tmp_path / "x.npz")
    mio.save_npz(mgraph.load(os.path.join(ROOT, "tests", "data", "chesapeake.mtx"), backend="numpy"), path)
    cmd, env = _info_command(path)
    read, write_end = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    try:
        done = subprocess.run(cmd, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode in (0, 141)
    assert done.stderr == b""


def test_info_piped_into_head(tmp_path):
    """``mgraph info x.npz | head -2``: the reader leaves after two lines."""
    path = str(tmp_path / "x.npz")
    mio.save_npz(mgraph.load(os.path.join(ROOT, "tests", "data", "chesapeake.mtx"), backend="numpy"), path)
    cmd, env = _info_command(path)
    shell = " ".join(f"'{c}'" for c in cmd) + " 2>err.txt | head -2; echo ${PIPESTATUS[0]} > rc.txt"
    out = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.splitlines()[0].startswith(f"graph       {path}")
    assert len(out.stdout.splitlines()) == 2
    assert int((tmp_path / "rc.txt").read_text()) in (0, 141)
    assert (tmp_path / "err.txt").read_text() == ""


# -- several ranks ----------------------------------------------------------------------------------


def test_mpi_ranks_refuse_a_graph_too_big_for_their_parts():
    """Every rank builds its part; a spec none can hold ends the job with one line, before any rank allocates."""
    from conftest import run_mpi

    done = run_mpi(2, ["python", "-m", "mgraph", "info", "grid:100000x100000"], timeout=120)
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(
        "mgraph: error: grid:100000x100000: building a graph of 10,000,000,000 vertices and up to 39,999,600,000 "
        "arcs (2 parts"), done.stderr

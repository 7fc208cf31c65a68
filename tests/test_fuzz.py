"""Fuzzing the loaders: damaged copies of the shipped graphs never crash, hang, exhaust memory or mislead.

Every case takes a small graph cut from tests/data in one of the formats
``mgraph.load`` reads (Matrix Market, SNAP edge lists as .txt/.el/.edges,
CSV, each gzipped, and the .npz cache), damages it deterministically (the
case's name seeds the generator: bit flips, truncation, lines deleted,
repeated or inserted, numbers replaced by 2**31+5, 2**63-1, 2**64, -1,
1e300, nan, ..., and for .npz arrays with wrong values, dtypes or shapes),
loads it, and accepts exactly two outcomes:

* a Graph whose CSR holds (offsets from 0, non-decreasing, ending at the arc
  count; ids in range; rows sorted without repeats or self-loops; finite
  weights; an undirected graph symmetric), or
* a ValueError (GraphFormatError is one) whose message is one line and
  names the file.

Anything else (another exception, NumPy's allocation message, a hang) fails
the case, whose test id reproduces it.  Each case runs under an
address-space limit a little above what the process already uses, so that an
allocation the loaders failed to check raises here instead of growing the
process until the OOM killer ends the run, and under a per-case time bound.
Text cases also go through FileEdges in two shares (the MPI readers' path).
"""
from __future__ import annotations

import gzip
import io
import os
import random
import re
import resource
import signal
import struct
import time
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import mgraph
from mgraph.io import loaders as mio

DATA = Path(__file__).parent / "data"
CASE_SECONDS = 5          # per case: loading a damaged file of a few KB takes milliseconds
ADDRESS_SPACE_ROOM = 2 << 30  # what a case may add to the process's address space

HUGE = ["2147483653", "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551616",
        "-1", "-9223372036854775809", "1e300", "-1e300", "nan", "inf", "-inf", "1.5", "0x1F", "+7", "-0", "",
        "99999999999999999999999999999", "1" * 400, "0"]

# Cases per format; "snap" spreads over .txt, .el and .edges, "gz" over the three text formats.
COUNTS = {"mtx": 220, "snap": 220, "csv": 160, "gz": 180, "npz": 220}


# -- the graphs the cases start from ----------------------------------------------------------


def _head(lines, k):
    return b"".join(lines[:k])


@lru_cache(maxsize=None)
def text_bases() -> dict:
    """name -> (suffix, bytes): small files cut from the shipped graphs, one per text layout the loaders know."""
    bases = {"chesapeake": (".mtx", (DATA / "chesapeake.mtx").read_bytes())}
    bips = (DATA / "bips98_606.mtx").read_bytes().splitlines(keepends=True)
    banner = [ln for ln in bips if ln.startswith(b"%")]
    body = [ln for ln in bips if not ln.startswith(b"%")]
    rows = body[0].split()[0]
    entries = body[1:121]
    bases["bips-real"] = (".mtx", b"".join(banner) + b"%s %s %d\n" % (rows, rows, len(entries)) + b"".join(entries))
    ints = [b"%s %s %d\n" % (*ln.split()[:2], int(float(ln.split()[2]) * 100)) for ln in entries]
    bases["bips-integer"] = (".mtx", b"%%MatrixMarket matrix coordinate integer symmetric\n"
                             + b"%s %s %d\n" % (rows, rows, len(ints)) + b"".join(ints))
    with gzip.open(DATA / "soc-Slashdot0902.txt.gz", "rb") as f:
        slash = [next(f) for _ in range(160)]
    bases["slashdot"] = (".txt", _head(slash, 160))
    data = [ln for ln in slash if not ln.startswith(b"#")]
    weighted = (ln.rstrip(b"\n") + b"\t%d.5\n" % (k % 7) for k, ln in enumerate(data))
    bases["slashdot-weighted"] = (".el", b"".join(weighted))
    bases["slashdot-percent"] = (".edges", b"% a comment in the other style\n" + b"".join(data[:100]))
    face = (DATA / "facebook_large_edges.csv").read_bytes().splitlines(keepends=True)
    bases["facebook"] = (".csv", _head(face, 150))
    bases["facebook-weighted"] = (".csv", b"a,b,w\n" + b"".join(ln.rstrip(b"\n") + b",%d\n" % (k % 5)
                                                              for k, ln in enumerate(face[1:120])))
    bases["facebook-headerless"] = (".csv", _head(face[1:], 120))
    return bases


@lru_cache(maxsize=None)
def npz_bases(folder: str) -> dict:
    """name -> the arrays of an .npz cache (save_npz of graphs loaded from the text bases)."""
    out = {}
    for name in ("chesapeake", "bips-real", "slashdot"):
        suffix, data = text_bases()[name]
        path = os.path.join(folder, f"base-{name}{suffix}")
        with open(path, "wb") as f:
            f.write(data)
        cache = os.path.join(folder, f"base-{name}.npz")
        mio.save_npz(mgraph.load(path, backend="numpy"), cache)
        with np.load(cache, allow_pickle=False) as z:
            out[name] = {k: z[k] for k in z.files}
    return out


# -- damage ------------------------------------------------------------------------------------

_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _lines(data):
    return data.splitlines(keepends=True) or [b""]


def bit_flips(rng, data):
    if not data:
        return b"\x00"
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def truncate(rng, data):
    return data[:rng.randrange(len(data) + 1)]


def delete_line(rng, data):
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def duplicate_line(rng, data):
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"] * rng.randint(1, 3)
    return b"".join(lines)


def insert_line(rng, data, sep=b" "):
    lines = _lines(data)
    fields = [rng.choice(HUGE + ["1", "2", "3"]).encode() for _ in range(rng.choice((1, 2, 2, 2, 3, 3, 4)))]
    lines.insert(rng.randrange(len(lines) + 1), sep.join(fields) + b"\n")
    return b"".join(lines)


def replace_number(rng, data):
    spots = list(_NUMBER.finditer(data))
    if not spots:
        return insert_line(rng, data)
    m = rng.choice(spots[:60] if rng.random() < 0.5 else spots)  # the early ones include headers and size lines
    return data[:m.start()] + rng.choice(HUGE).encode() + data[m.end():]


def garbage(rng, data):
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 24)))
    i = rng.randrange(len(data) + 1)
    return data[:i] + junk + data[i:]


def crlf(rng, data):
    return data.replace(b"\n", b"\r\n")


def emptyish(rng, data):
    return rng.choice([b"", b"\n", b"\n\n  \n", b"# only a comment\n", b"%only a comment\n", b"\x00"])


def size_line(rng, data):
    """A Matrix Market size line declaring absurd or inconsistent sizes."""
    lines = _lines(data)
    for i, line in enumerate(lines):
        if not line.startswith(b"%") and line.strip():
            choices = ["2147483653", str(2 ** 40), str(2 ** 63 - 1), str(2 ** 64), "0", "-1", "1e300", "nan", "3",
                       line.split()[0].decode("latin1")]
            pick = lambda: rng.choice(choices)  # noqa: E731
            rows = pick()
            cols = rows if rng.random() < 0.7 else pick()
            nnz = rng.choice([str(2 ** 63 - 1), "0", "1", "2147483653", line.split()[-1].decode("latin1")])
            lines[i] = f"{rows} {cols} {nnz}\n".encode()
            break
    return b"".join(lines)


def banner(rng, data):
    lines = _lines(data)
    words = lines[0].split()
    if words:
        words[rng.randrange(len(words))] = rng.choice(
            [b"array", b"complex", b"hermitian", b"skew-symmetric", b"vector", b"pattern", b"integer", b"real",
             b"", b"%%MatrixMarket", b"general", b"symmetric"])
    lines[0] = b" ".join(words) + b"\n"
    return b"".join(lines)


TEXT_DAMAGE = {"bitflip": bit_flips, "truncate": truncate, "delete-line": delete_line,
               "duplicate-line": duplicate_line, "insert-line": insert_line, "replace-number": replace_number,
               "garbage": garbage, "crlf": crlf, "emptyish": emptyish}
MTX_DAMAGE = dict(TEXT_DAMAGE, **{"size-line": size_line, "banner": banner})


def damage_text(rng, fmt, data):
    """(what was done, damaged bytes) for one text file of format ``fmt``."""
    table = MTX_DAMAGE if fmt == "mtx" else TEXT_DAMAGE
    names = sorted(table)
    if fmt == "mtx":  # the size line and the banner are where a Matrix Market file declares things
        names += ["size-line", "size-line", "banner"]
    steps, out = [], data
    for _ in range(1 if rng.random() < 0.75 else 2):
        name = rng.choice(names)
        fn = table[name]
        out = fn(rng, out, b",") if (name == "insert-line" and fmt == "csv") else fn(rng, out)
        steps.append(name)
    return "+".join(steps), out


def damage_gzip(rng, fmt, data):
    """Damage the text then compress it, or damage the compressed bytes."""
    if rng.random() < 0.6:
        what, text = damage_text(rng, fmt, data)
        return what + "+gzip", gzip.compress(text, mtime=0)
    packed = gzip.compress(data, mtime=0)
    kind = rng.choice(["gzip-bitflip", "gzip-truncate", "gzip-trailing-garbage", "gzip-two-members"])
    if kind == "gzip-bitflip":
        return kind, bit_flips(rng, packed)
    if kind == "gzip-truncate":
        return kind, packed[:rng.randrange(len(packed))]
    if kind == "gzip-trailing-garbage":
        return kind, packed + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return kind, packed + gzip.compress(damage_text(rng, fmt, data)[1], mtime=0)


def _npz_bytes(arrays, compressed=False):
    """The .npz np.savez would write, with a fixed date in the zip headers so that a case's bytes never change."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def damage_npz(rng, base):
    """(what, bytes): a cache whose archive bytes or arrays are damaged."""
    arrays = {k: v.copy() for k, v in base.items()}
    if rng.random() < 0.35:
        kind = rng.choice(["npz-bitflip", "npz-truncate", "npz-garbage", "npz-header", "npz-header",
                           "npz-deflated-header"])
        data = _npz_bytes(arrays, compressed=kind == "npz-deflated-header" or (
            kind != "npz-header" and rng.random() < 0.3))
        if kind == "npz-header":  # a bit of one array's .npy header: its dtype, order or shape
            starts = [m.start() for m in re.finditer(rb"\{'descr'", data)]
            at = rng.choice(starts) + rng.randrange(64)
            return kind, data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
        if kind == "npz-deflated-header":  # the same in a compressed member: the header inflates to other text
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                info = rng.choice(zf.infolist())
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
            at = info.header_offset + 30 + name_len + extra_len + rng.randrange(min(48, info.compress_size))
            return kind, data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
        fn = {"npz-bitflip": bit_flips, "npz-truncate": truncate, "npz-garbage": garbage}[kind]
        return kind, fn(rng, data)
    n = arrays["indptr"].shape[0] - 1
    m = arrays["indices"].shape[0]
    values = [-1, n, n + 5, m + 1, 2 ** 31 + 5, 2 ** 63 - 1, -(2 ** 63)]
    kind = rng.choice(["indptr-value", "indices-value", "indptr-dtype", "indices-dtype", "weights", "member",
                       "format", "directed", "num_input_edges", "shape", "row-order", "self-loop", "asymmetric"])
    if kind == "indptr-value":
        arrays["indptr"][rng.randrange(n + 1)] = rng.choice(values)
    elif kind == "indices-value" and m:
        arrays["indices"] = arrays["indices"].astype(np.int64)
        arrays["indices"][rng.randrange(m)] = rng.choice(values)
    elif kind == "indptr-dtype":
        arrays["indptr"] = arrays["indptr"].astype(rng.choice([np.int32, np.float64, np.uint64, np.int8, bool]))
    elif kind == "indices-dtype":
        arrays["indices"] = arrays["indices"].astype(rng.choice([np.float64, np.uint64, np.int8, bool, np.uint32]))
    elif kind == "weights":
        w = rng.choice(["nan", "inf", "complex", "short", "bool", "huge", "string"])
        base_w = arrays.get("weights", np.ones(m))
        arrays["weights"] = {"nan": np.where(np.arange(m) == m // 2, np.nan, base_w),
                             "inf": np.full(m, np.inf), "complex": base_w.astype(np.complex128),
                             "short": base_w[:max(m - 3, 0)], "bool": base_w > 0, "huge": np.full(m, 1e300),
                             "string": np.array(["x"] * m)}[w]
        kind += "-" + w
    elif kind == "member":
        victim = rng.choice(sorted(arrays))
        del arrays[victim]
        kind += "-" + victim
    elif kind == "format":
        arrays["format"] = np.array(rng.choice(["mgraph-csr-0", "", "mgraph-csr-1 ", "x" * 100]))
    elif kind == "directed":
        arrays["directed"] = rng.choice([np.array([1, 0]), np.array("yes"), np.array(2.5), np.array([])])
    elif kind == "num_input_edges":
        arrays["num_input_edges"] = rng.choice([np.array(-5), np.array(2 ** 63 - 1), np.array(1.5), np.array("x")])
    elif kind == "shape":
        arrays["indptr"] = arrays["indptr"].reshape(1, -1) if rng.random() < 0.5 else arrays["indptr"][:-1]
    elif kind == "row-order" and m > 2:
        lo, hi = int(arrays["indptr"][0]), int(arrays["indptr"][-1])
        arrays["indices"][lo:hi] = arrays["indices"][lo:hi][::-1]
    elif kind == "self-loop" and m:
        arrays["indices"][arrays["indptr"][1] - 1 if arrays["indptr"][1] else 0] = 0
    elif kind == "asymmetric" and m:
        arrays["indices"][rng.randrange(m)] = rng.randrange(n)
    return kind, _npz_bytes(arrays, compressed=rng.random() < 0.25)


# -- the cases --------------------------------------------------------------------------------------


def _case_ids():
    ids = []
    for fmt, count in COUNTS.items():
        ids += [f"{fmt}-{k:03d}" for k in range(count)]
    return ids


def make_case(case_id: str, folder: str):
    """(path written, what was done) for ``case_id``: the same file every time for the same id."""
    rng = random.Random(case_id)
    fmt = case_id.split("-")[0]
    if fmt == "npz":
        name = rng.choice(sorted(npz_bases(folder)))
        what, data = damage_npz(rng, npz_bases(folder)[name])
        suffix = ".npz"
    else:
        bases = text_bases()
        wanted = {"mtx": (".mtx",), "snap": (".txt", ".el", ".edges"), "csv": (".csv",),
                  "gz": (".mtx", ".txt", ".el", ".edges", ".csv")}[fmt]
        name = rng.choice(sorted(k for k, (suffix, _) in bases.items() if suffix in wanted))
        suffix, data = bases[name]
        text_fmt = mio.FORMATS[suffix]
        if fmt == "gz":
            what, data = damage_gzip(rng, text_fmt, data)
            suffix += ".gz"
        else:
            what, data = damage_text(rng, text_fmt, data)
    path = os.path.join(folder, f"{case_id}-{name}{suffix}")
    with open(path, "wb") as f:
        f.write(data)
    return path, f"{name}: {what}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("fuzz"))


class _Timeout(Exception):
    pass


class _bounded:
    """The case's time bound (SIGALRM) and address-space limit, both undone afterwards."""

    def __enter__(self):
        def alarm(signum, frame):
            raise _Timeout(f"still running after {CASE_SECONDS} s")

        self._handler = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        self._limits = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        cap = size + ADDRESS_SPACE_ROOM
        if self._limits[1] == resource.RLIM_INFINITY or cap < self._limits[1]:
            resource.setrlimit(resource.RLIMIT_AS, (cap, self._limits[1]))
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._handler)
        resource.setrlimit(resource.RLIMIT_AS, self._limits)
        return False


def check_graph(g) -> None:
    """The CSR invariants every built graph keeps."""
    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    n = g.num_vertices
    assert indptr.dtype == np.int64 and indptr.shape == (n + 1,)
    assert indptr[0] == 0 and indptr[-1] == indices.shape[0]
    assert (np.diff(indptr) >= 0).all(), "indptr decreases"
    assert indices.ndim == 1 and indices.dtype.kind == "i"
    if indices.size:
        assert 0 <= indices.min() and indices.max() < n, "an id out of range"
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    assert not (rows == indices).any(), "a self-loop"
    keys = rows * max(n, 1) + indices
    assert (np.diff(keys) > 0).all(), "a row unsorted or with a repeated arc"
    if g.weights is not None:
        w = np.asarray(g.weights)
        assert w.shape == indices.shape and w.dtype == np.float64 and np.isfinite(w).all()
    if not g.directed:
        a = g.to_scipy()
        assert (a != a.T).nnz == 0, "undirected but not symmetric"


def check_error(e: BaseException, path: str, what: str) -> None:
    message = str(e)
    assert isinstance(e, ValueError), f"{what}: {type(e).__name__}: {message}"
    assert message and "\n" not in message, f"{what}: not one line: {message!r}"
    assert path in message, f"{what}: the message does not name the file: {message!r}"
    assert "Unable to allocate" not in message, f"{what}: NumPy's allocation error: {message!r}"


def outcome(fn, path, what):
    """Run ``fn`` bounded; return its result, or None after checking the error it raised."""
    with _bounded() as bound:
        try:
            result = fn()
        except _Timeout as e:
            pytest.fail(f"{what}: {e}")
        except Exception as e:  # noqa: BLE001 - anything but a ValueError fails the case
            result = e
    assert bound.elapsed < CASE_SECONDS, f"{what}: took {bound.elapsed:.1f} s"
    if isinstance(result, BaseException):
        check_error(result, path, what)
        return None
    return result


@pytest.mark.parametrize("case_id", _case_ids())
def test_damaged_file_loads_or_is_refused_in_one_line(case_id, folder):
    path, what = make_case(case_id, folder)
    what = f"{case_id} ({what})"
    g = outcome(lambda: mgraph.load(path, backend="numpy"), path, what)
    if g is not None:
        check_graph(g)
    if not case_id.startswith("npz"):  # text, plain or gzipped: the MPI readers' shares too
        def shares():
            fe = mio.FileEdges(path)
            parts = [fe.part(k, 2) for k in range(2)]
            fe.check_count(sum(p[0].shape[0] for p in parts))
            return parts

        parts = outcome(shares, path, what + " in two shares")
        if parts is not None and g is not None:  # the shares together are the edge list load read
            src, dst = mio.read_edges(path)[:2]
            assert np.array_equal(np.concatenate([p[0] for p in parts]), src), what
            assert np.array_equal(np.concatenate([p[1] for p in parts]), dst), what


def test_npz_header_with_an_unclosed_bracket(folder):
    """Found by fuzzing (one header flip in 3000: a space became '('): the archive and its CRCs are fine, the
    header text is not."""
    data = _npz_bytes(npz_bases(folder)["bips-real"])
    data = re.sub(rb"'shape': \((\d\d+,)", rb"'shape':((\1", data, count=1)  # the first array's, not a scalar's
    path = os.path.join(folder, "unclosed-bracket.npz")
    with open(path, "wb") as f:
        f.write(data)
    assert outcome(lambda: mgraph.load(path, backend="numpy"), path, "unclosed bracket") is None
    assert outcome(lambda: mio.FileEdges(path), path, "unclosed bracket, in shares") is None


def test_the_undamaged_bases_load(folder):
    """The starting points are valid graphs, so the damage is what the cases test."""
    for name, (suffix, data) in text_bases().items():
        path = os.path.join(folder, f"undamaged-{name}{suffix}")
        with open(path, "wb") as f:
            f.write(data)
        g = mgraph.load(path, backend="numpy")
        check_graph(g)
        assert g.num_arcs > 50, name
    assert set(npz_bases(folder)) == {"chesapeake", "bips-real", "slashdot"}


def test_case_files_are_deterministic(folder):
    """A case id names one file: a failure's id reproduces it."""
    for case_id in ("mtx-007", "gz-011", "npz-019", "csv-003"):
        first, _ = make_case(case_id, folder)
        a = Path(first).read_bytes()
        second, _ = make_case(case_id, folder)
        assert Path(second).read_bytes() == a


def test_every_kind_of_damage_is_drawn(folder):
    """The mix covers every mutation of every format (a rename or a typo would silently drop one)."""
    seen = {}
    for case_id in _case_ids():
        _, what = make_case(case_id, folder)
        steps = what.split(": ", 1)[1].split("+")
        seen.setdefault(case_id.split("-")[0], set()).update(steps)
    for fmt in ("mtx", "snap", "csv"):
        assert set(TEXT_DAMAGE) <= seen[fmt], fmt
    assert {"size-line", "banner"} <= seen["mtx"]
    assert {"gzip-bitflip", "gzip-truncate", "gzip-trailing-garbage", "gzip-two-members", "gzip"} <= seen["gz"]
    npz = {step.split("-")[0] for step in seen["npz"]}
    assert {"indptr", "indices", "weights", "member", "format", "directed", "num_input_edges", "shape", "row",
            "self", "asymmetric", "npz"} <= npz

"""What a run reports: its JSON record, its status line and its numbers as text.

Takes plain values (dicts and lists of numbers, strings, NumPy scalars and arrays); gives a JSON file written
whole (:func:`write_json`, through :func:`jsonable`) with the :func:`code_version` and date (:func:`now`) every
record carries, one line on an interactive stderr while a long step runs (:func:`status`), numbers as short text
(:func:`fmt_count`, :func:`fmt_ms`, :func:`fmt_bytes`, :func:`fmt_figure`) and Graph500's TEPS summary
(:func:`harmonic_mean`).  The ``mgraph`` command, ``mgraph graph500`` and scripts/bench.py and scaling.py report
through it alike; it knows nothing of graphs or devices.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np

from mgraph import __version__
from mgraph.group import is_root

__all__ = ["code_version", "described", "now", "write_json", "check_json_folder", "jsonable", "status", "fmt_count",
           "fmt_ms", "fmt_bytes", "fmt_figure", "harmonic_mean"]


# -- the JSON record -----------------------------------------------------------------
def code_version() -> dict:
    """mgraph.__version__, and ``git describe --always --dirty`` of mgraph's own source tree where it is a git
    checkout (an install inside some other repository records "unknown", not that repository's commit)."""
    return {"mgraph": __version__, "git": described(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}


def described(root: str) -> str:
    """``git describe`` of ``root`` when ``root`` is the top of a git work tree, else "unknown"."""
    def git(*args):
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""

    try:
        top = git("rev-parse", "--show-toplevel")
        if not top or os.path.realpath(top) != os.path.realpath(root):
            return "unknown"
        return git("describe", "--always", "--dirty") or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def now() -> str:
    """The time in UTC, to the second (ISO 8601), as every record dates itself."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_json(path: str, record: dict) -> None:
    """One JSON object; non-finite floats become null so that strict parsers read it.  Written beside ``path`` and
    then renamed over it, so a process killed while writing leaves the previous file whole."""
    partial = path + ".partial"
    with open(partial, "w") as f:
        json.dump(jsonable(record), f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(partial, path)


def check_json_folder(path) -> None:
    """Before a long run: ValueError when the folder of ``--json`` ``path`` does not exist (None: no record)."""
    if path:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ValueError(f"--json {path}: folder {folder} does not exist")


def jsonable(x):
    """``x`` with NumPy scalars and arrays as lists and numbers, dict keys as strings, NaN and infinities None."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.generic, np.ndarray)):
        return jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


# -- the terminal ----------------------------------------------------------------------
@contextlib.contextmanager
def status(message: str):
    """Show ``message`` on the terminal while a long step runs; nothing when stderr is not a terminal, and under
    MPI nothing off rank 0 (the job speaks once)."""
    tty = sys.stderr.isatty() and is_root()
    if tty:
        sys.stderr.write(f"\r\033[K{message} ...")
        sys.stderr.flush()
    try:
        yield
    finally:
        if tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


# -- numbers as text ---------------------------------------------------------------------
def fmt_count(x) -> str:
    """A count with thousands separators: 1,048,576."""
    return f"{x:,}"


def fmt_ms(seconds: float) -> str:
    """Seconds as milliseconds, four significant digits: 12.35 ms."""
    return f"{seconds * 1e3:.4g} ms"


def fmt_bytes(b: int) -> str:
    """A size in B, KiB, MiB or GiB, four significant digits."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.4g} {unit}" if unit != "B" else f"{b} B"
        b /= 1024


def fmt_figure(x, digits: int = 4) -> str:
    """A table's figure to ``digits`` significant digits, "-" where there is none."""
    return "-" if x is None else f"{x:.{digits}g}"


def harmonic_mean(values) -> float:
    """Graph500's TEPS summary (0 when any value is 0; NaN of no values)."""
    values = list(values)
    return statistics.harmonic_mean(values) if values else float("nan")

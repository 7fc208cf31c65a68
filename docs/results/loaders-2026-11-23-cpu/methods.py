"""The parsers compared on the files of ``scripts/bench.py --mode load --dir DIR``: time, memory, strictness.

    python scripts/bench.py --mode load --edges 10000000 --runs 1 --backend numpy --formats txt,mtx --dir /tmp/lf
    python docs/results/loaders-2026-11-23-cpu/methods.py /tmp/lf

1. ``read_edges`` of edges.txt with pyarrow (mgraph.io.parse, BLOCK_BYTES 4, 8 and 16 MiB) and with the line-aware
   reader alone (parse.ENABLED = False): median of 3 after a warm-up, and the peak resident memory the parse adds
   beyond the file's bytes (fresh processes: VmHWM, reset through /proc/self/clear_refs once the bytes are read,
   against the resident size then), with NumPy's transparent-huge-page request on (its default) and off.
2. edges.mtx and a pattern copy of it: fast_matrix_market.read_coo (where installed) against read_edges.
3. What fast_matrix_market makes of three malformed files that read_edges refuses.
"""
from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)

from mgraph.io import loaders as mio  # noqa: E402
from mgraph.io.loaders import parse  # noqa: E402


def median_time(fn, runs=3):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peak_child(path, block_mib, huge_pages=True, runs=3):
    """Peak MiB a parse adds beyond the bytes, median of ``runs`` fresh processes (block 0: the line-aware reader).

    The high-water mark is reset once the bytes are read (a child's ru_maxrss
    starts from its parent's resident size, so it cannot be used here).
    ``huge_pages=False`` turns off NumPy's request for transparent huge pages
    on its large arrays, which could count untouched memory as resident.
    """
    code = f"""
import os, sys
sys.path.insert(0, {ROOT!r})
import numpy, pyarrow
numpy._core.multiarray._set_madvise_hugepage({huge_pages})
from mgraph.io import loaders as mio, parse
if {block_mib} == 0:
    parse.ENABLED = False
else:
    parse.BLOCK_BYTES = {block_mib} << 20
def status(key):
    return next(int(line.split()[1]) >> 10 for line in open('/proc/self/status') if line.startswith(key + ':'))
data = mio._read_bytes({path!r})
with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')  # the high-water mark starts again from the resident size now
rss = status('VmRSS')
src = mio._parse_edge_list('x', data, delimiter=None, comments='#')
print(status('VmHWM') - rss)
"""
    peaks = [int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
             for _ in range(runs)]
    return f"{statistics.median(peaks):.0f} ({min(peaks)}-{max(peaks)})"


def main(folder):
    txt, mtx = os.path.join(folder, "edges.txt"), os.path.join(folder, "edges.mtx")
    m = mio.read_edges(txt)[0].shape[0]
    print(f"{txt}: {os.path.getsize(txt) / 1e6:.1f} MB, {m:,} edges; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}")
    print("read_edges (read + parse), median of 3 | parsing's peak MiB beside the file's bytes, median (range) of 3"
          " processes: NumPy's huge pages on | off")
    for block in (4, 8, 16):
        parse.BLOCK_BYTES = block << 20
        t = median_time(lambda: mio.read_edges(txt))
        print(f"  pyarrow, {block:2d} MiB blocks ({parse.cpu_threads() * parse.BLOCKS_PER_THREAD * block} MiB slices):"
              f" {t:.3f} s = {m / t / 1e6:.1f} M edges/s | {peak_child(txt, block)} | {peak_child(txt, block, False)}")
    parse.BLOCK_BYTES = 4 << 20
    parse.ENABLED = False
    t = median_time(lambda: mio.read_edges(txt))
    parse.ENABLED = True
    print(f"  line-aware reader (loadtxt):        {t:.3f} s = {m / t / 1e6:.1f} M edges/s | {peak_child(txt, 0)} | "
          f"{peak_child(txt, 0, False)}")

    pattern = os.path.join(folder, "edges-pattern.mtx")
    with open(mtx, "rb") as f, open(pattern, "wb") as g:
        f.readline()
        g.write(b"%%MatrixMarket matrix coordinate pattern general\n")
        line = f.readline()
        while line.startswith(b"%"):
            g.write(line)
            line = f.readline()
        g.write(line)  # the size line
        for line in f:
            g.write(b" ".join(line.split()[:2]) + b"\n")
    try:
        import fast_matrix_market as fmm
    except ImportError:
        fmm = None
    print(f"Matrix Market, median of 3 (load average {os.getloadavg()[0]:.2f})")
    for path in (mtx, pattern):
        t = median_time(lambda: mio.read_edges(path))
        line = f"  {os.path.basename(path)} ({os.path.getsize(path) / 1e6:.0f} MB): read_edges {t:.3f} s"
        if fmm is not None:
            tf = median_time(lambda: fmm.read_coo(path, generalize_symmetry=False))
            line += f", fast_matrix_market {fmm.__version__} read_coo {tf:.3f} s"
        print(line)
    if fmm is None:
        print("fast_matrix_market is not installed: its rows are left out")
        return
    print("malformed entries: fast_matrix_market.read_coo | mgraph.io.read_edges")
    head = "%%MatrixMarket matrix coordinate {} general\n3 3 2\n"
    for field, body in (("pattern", "1 2\n2 3 5\n"), ("integer", "1 2 7\n2 3 1.5\n"), ("real", "1 2 1.0\n2 3 2.5x\n")):
        text = head.format(field) + body
        try:
            (data, (row, col)), _ = fmm.read_coo(io.BytesIO(text.encode()))
            got = f"reads rows {row.tolist()} cols {col.tolist()} values {data.tolist()}"
        except Exception as e:  # noqa: BLE001
            got = f"{type(e).__name__}: {e}"
        path = os.path.join(folder, f"bad-{field}.mtx")
        with open(path, "w") as f:
            f.write(text)
        try:
            mio.read_edges(path)
            ours = "reads it"
        except ValueError as e:
            ours = str(e).replace(folder + os.sep, "")
        print(f"  {field:8s} {body.splitlines()[1]!r}: {got} | {ours}")


if __name__ == "__main__":
    main(sys.argv[1])

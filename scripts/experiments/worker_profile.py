"""cProfile of each worker process's superstep loop (mgraph.enactor.drive) on 2 GPUs: where a superstep's host
time goes.

    PYTHONPATH=$PWD python3 scripts/experiments/worker_profile.py [SCALE [RUNS]]  # writes $OUT/prof_{RUN}_d{0,1}.txt

Workers are spawned processes that re-import this file, so the wrapper around
``drive`` installed below runs in them too; it profiles only while the file
``$OUT/tag.txt`` names a run.  Runs: the overhead experiment's two paths of 2000
edges (one per GPU), then push BFS and direction-optimizing BFS on R-MAT 24,
each once unprofiled and once profiled after a warm-up (SCALE, default 24; RUNS, a comma
list of path, bfs, dobfs, default all).  On a machine without
CuPy it runs on NumPy virtual devices (R-MAT 12).
"""
import cProfile
import os
import pstats
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "scripts"), ROOT]
import numpy as np  # noqa: E402

import mgraph  # noqa: E402
import mgraph.spawn as spawn  # noqa: E402
from mgraph import generators  # noqa: E402
from scaling import PathBFS, path_partitioner, paths_graph  # noqa: E402

try:
    import cupy as xp
except ImportError:
    xp = np
OUT = os.environ.get("OUT", "/tmp")
FLAG = os.path.join(OUT, "tag.txt")
_drive = spawn.drive


def profiled(d, *args, **kwargs):
    tag = open(FLAG).read().strip() if os.path.exists(FLAG) else ""
    if not tag:
        return _drive(d, *args, **kwargs)
    profile = cProfile.Profile()
    profile.enable()
    try:
        return _drive(d, *args, **kwargs)
    finally:
        profile.disable()
        rows = [(nc, tt, ct, f"{os.path.basename(file)}:{line}({name})")
                for (file, line, name), (_, nc, tt, ct, _) in pstats.Stats(profile).stats.items()]
        with open(os.path.join(OUT, f"prof_{tag}_d{d}.txt"), "w") as f:
            for title, key, top in (("own time", 1, 40), ("cumulative time", 2, 50)):
                f.write(f"by {title}, µs (pstats rounds to ms)\n   calls      own      cum  function\n")
                for nc, tt, ct, where in sorted(rows, key=lambda r: -r[key])[:top]:
                    f.write(f"{nc:8d} {1e6 * tt:8.0f} {1e6 * ct:8.0f}  {where}\n")


spawn.drive = profiled


def tag(name):
    with open(FLAG, "w") as f:
        f.write(name)


if __name__ == "__main__":
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 24 if xp is not np else 12
    runs = sys.argv[2].split(",") if len(sys.argv) > 2 else ["path", "bfs", "dobfs"]
    length = 2000
    paths = paths_graph(2, length, xp)
    run = dict(devices=2, partitioner=path_partitioner(length), workers="processes")
    if "path" in runs:
        tag("")
        mgraph.run(PathBFS, paths, **run)
        r = mgraph.run(PathBFS, paths, **run)
        print("overhead unprofiled us/step", 1e6 * r.stats["elapsed_s"] / r.stats["supersteps"])
        tag("path")
        r = mgraph.run(PathBFS, paths, **run)
        print("overhead profiled us/step", 1e6 * r.stats["elapsed_s"] / r.stats["supersteps"])
    g = generators.rmat(scale, 16, xp=xp, seed=1)
    for name, direction in (("bfs", "push"), ("dobfs", "auto")):
        if name not in runs:
            continue
        tag("")
        mgraph.bfs(g, 1, direction=direction, devices=2, workers="processes")
        r = mgraph.bfs(g, 1, direction=direction, devices=2, workers="processes")
        print(name, "unprofiled ms", 1e3 * r.stats["elapsed_s"], r.stats["supersteps"])
        tag(name)
        r = mgraph.bfs(g, 1, direction=direction, devices=2, workers="processes")
        print(name, "profiled ms", 1e3 * r.stats["elapsed_s"])
    tag("")

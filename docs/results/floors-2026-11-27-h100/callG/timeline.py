"""Experiment (not for the tree): where a one-GPU run's host time goes, from perf_counter stamps in an
instrumented copy of the tree (.gpu/inst): direction-optimizing BFS at R-MAT 24, and the overhead experiment's path BFS."""
import sys, collections
sys.path.insert(0, "scripts")
import numpy as np, cupy as cp, mgraph
from mgraph.runner.enactor import S
from mgraph.io import generators
def gaps(label):
    runs, cur = [], None
    for name, t in S:
        if name == "start":
            cur = [(name, t)]; runs.append(cur)
        elif cur is not None:
            cur.append((name, t))
    per = collections.defaultdict(list)
    for r in runs:
        seen = collections.Counter()
        for (a, ta), (b, tb) in zip(r, r[1:]):
            key = f"{a}->{b}"; seen[key] += 1
            per[(key, seen[key])].append((tb - ta) * 1e6)
        per[("total", 1)].append((r[-1][1] - r[0][1]) * 1e6)
    print(f"== {label}: {len(runs)} runs; median us per step of the run (key, occurrence, n)")
    for (k, i), v in per.items():
        if len(v) >= len(runs) // 2:
            print(f"  {k:24s} #{i:<5d} {np.median(v):9.2f}  (n={len(v)})")
    S.clear()
g = generators.rmat(24, 16, xp=cp, seed=0)
for s in (8575447, 1262320):
    for _ in range(3): mgraph.bfs(g, s, backend="cupy", direction="auto", output="device")
    S.clear()
    for _ in range(30): mgraph.bfs(g, s, backend="cupy", direction="auto", output="device")
    gaps(f"dobfs rmat24 source {s}")
from scaling import PathBFS, paths_graph, path_partitioner
p = paths_graph(1, 1000, cp)
run = dict(backend="cupy", devices=1, seed=0, partitioner=path_partitioner(1000))
mgraph.run(PathBFS, p, **run); S.clear()
el = [mgraph.run(PathBFS, p, **run).stats["elapsed_s"] for _ in range(5)]
print("path us/superstep", [round(e / 1003 * 1e6, 2) for e in el])
# per-superstep gaps of the path: aggregate over every occurrence
runs = collections.defaultdict(list)
prev = None
for name, t in S:
    if prev is not None and name != "start":
        runs[f"{prev[0]}->{name}"].append((t - prev[1]) * 1e6)
    prev = (name, t)
print("== path: median us per gap (all occurrences)")
for k, v in sorted(runs.items(), key=lambda kv: -np.sum(kv[1])):
    print(f"  {k:24s} n={len(v):6d} median {np.median(v):8.2f} sum/superstep {np.sum(v) / (5 * 1003):8.2f}")

"""DOBFS per-run host cost: median elapsed and kernel (events) per scale, many runs; TAG OUT [profile-file]."""
import cProfile, io, json, pstats, statistics, sys
import cupy as cp
import mgraph
from mgraph.cli import random_sources
from mgraph.ops import cupy_levels

tag, out = sys.argv[1], sys.argv[2]
inner = cupy_levels.visit_directions
kernel_ms = []
def timed(*a, **k):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record(); r = inner(*a, **k); e.record(); e.synchronize()
    kernel_ms.append(cp.cuda.get_elapsed_time(s, e)); return r
row = {"tree": tag}
for scale, runs in ((16, 100), (24, 20)):
    g = mgraph.load(f"rmat:{scale}", backend="cupy")
    sources = random_sources(g, 4, 0)
    cupy_levels.visit_directions = timed
    for s in sources:
        for _ in range(3): mgraph.bfs(g, s, direction="auto", output="device")
    kernel_ms.clear()
    el = [mgraph.bfs(g, s, direction="auto", output="device").stats["elapsed_s"] * 1e3 for _ in range(runs) for s in sources]
    row[scale] = {"run_ms": statistics.median(el), "kernel_ms": statistics.median(kernel_ms)}
    cupy_levels.visit_directions = inner
    if scale == 16 and len(sys.argv) > 3:
        pr = cProfile.Profile(); pr.enable()
        for _ in range(25):
            for s in sources: mgraph.bfs(g, s, direction="auto", output="device")
        pr.disable()
        buf = io.StringIO(); st = pstats.Stats(pr, stream=buf)
        st.sort_stats("tottime").print_stats(40); open(sys.argv[3], "w").write(buf.getvalue())
    del g
open(out, "a").write(json.dumps(row) + "\n")
print(tag, " | ".join(f"R-MAT {k}: run {v['run_ms']:.3f} kernel {v['kernel_ms']:.3f} outside {v['run_ms'] - v['kernel_ms']:.3f}"
                      for k, v in row.items() if k != "tree"))

"""Per source: the DOBFS run's elapsed time and the direction kernel's device time (CUDA events), R-MAT 24."""
import json, statistics, sys, time
import cupy as cp
import mgraph
from mgraph.cli import random_sources
from mgraph.ops import cupy_levels

tag, out = sys.argv[1], sys.argv[2]
g = mgraph.load("rmat:24", backend="cupy")
sources = random_sources(g, 4, 0)
inner = cupy_levels.visit_directions
kernel_ms = []

def timed(*a, **k):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    r = inner(*a, **k)
    e.record(); e.synchronize()
    kernel_ms.append(cp.cuda.get_elapsed_time(s, e))
    return r

cupy_levels.visit_directions = timed
rows = []
for s in sources:
    for _ in range(3):
        mgraph.bfs(g, s, direction="auto", output="device")
    kernel_ms.clear()
    runs = [mgraph.bfs(g, s, direction="auto", output="device").stats["elapsed_s"] * 1e3 for _ in range(15)]
    rows.append({"source": s, "run_ms": statistics.median(runs), "kernel_ms": statistics.median(kernel_ms),
                 "runs": runs, "kernels": list(kernel_ms)})
open(out, "a").write(json.dumps({"tree": tag, "rows": rows}) + "\n")
print(tag, " ".join(f"{r['source']}: run {r['run_ms']:.3f} kernel {r['kernel_ms']:.3f}" for r in rows),
      "| mean run %.3f kernel %.3f" % (statistics.mean(r["run_ms"] for r in rows), statistics.mean(r["kernel_ms"] for r in rows)))

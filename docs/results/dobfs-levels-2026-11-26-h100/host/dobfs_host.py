"""Experiment: where a DOBFS run's host time goes on R-MAT 24 (bench source 1): per-superstep compute and wait from
.stats, and a cProfile of 30 runs."""
import cProfile, pstats, statistics, sys, io, time
import numpy as np, cupy as cp, mgraph
sys.path.insert(0, "scripts")
import bench
g = mgraph.load("rmat:24", backend="cupy")
s = bench.random_sources(g, 4, 0)[0]
for _ in range(3):
    mgraph.bfs(g, s, direction="auto", output="device")
rows = []
for _ in range(15):
    r = mgraph.bfs(g, s, direction="auto", output="device")
    d = r.stats["per_device"][0]
    rows.append((r.stats["elapsed_s"], d["compute_s"], d["wait_s"]))
rows.sort()
for e, c, w in rows[:3] + rows[7:8] + rows[-2:]:
    print(f"elapsed {1e6*e:.0f} us; compute per superstep {[round(1e6*x) for x in c]}; wait {[round(1e6*x) for x in w]}")
# back to back without output copies vs with numpy output
def t(output):
    ts = []
    for _ in range(10):
        r = mgraph.bfs(g, s, direction="auto", output=output)
        ts.append(r.stats["elapsed_s"])
    return 1e3 * statistics.median(ts)
print("median ms output=device", round(t("device"), 3), "numpy", round(t("numpy"), 3), "device", round(t("device"), 3))
prof = cProfile.Profile()
prof.enable()
for _ in range(30):
    mgraph.bfs(g, s, direction="auto", output="device")
prof.disable()
out = io.StringIO()
st = pstats.Stats(prof, stream=out)
st.sort_stats("tottime").print_stats(45)
st.sort_stats("cumulative").print_stats(60)
print(out.getvalue())

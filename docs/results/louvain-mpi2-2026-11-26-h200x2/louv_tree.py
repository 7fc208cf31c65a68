"""Experiment: Louvain on R-MAT S with whichever tree is on PYTHONPATH: a warm-up, then RUNS timed runs; times,
rounds, modularity, and the last run's communities saved (to compare trees)."""
import sys, time, json
import numpy as np, cupy as cp, mgraph
S, RUNS, tag, outdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
g = mgraph.load(f"rmat:{S}", backend="cupy")
mgraph.louvain(g)
rows = []
for _ in range(RUNS):
    cp.cuda.runtime.deviceSynchronize()
    t = time.perf_counter(); r = mgraph.louvain(g); wall = time.perf_counter() - t
    rows.append({"tree": tag, "scale": S, "elapsed_s": r.stats["elapsed_s"], "wall_s": wall,
                 "rounds": r.stats["level_rounds"], "modularity": r.stats["modularity"],
                 "communities": r.stats["communities"], "coarse_levels_s": r.stats["coarse_levels_s"]})
    print(json.dumps(rows[-1]), flush=True)
np.save(f"{outdir}/comm-{tag}-{S}.npy", np.asarray(r.community))
print("pool GiB", round(cp.get_default_memory_pool().total_bytes() / 2**30, 2))

"""Experiment: Louvain with the fused proposal (ops.propose.ENABLED) on and off in one process, alternating,
R-MAT S: time, rounds, modularity, and whether the communities are the same."""
import sys, time, json
import numpy as np, cupy as cp, mgraph
from mgraph.ops import propose
out = {}
for S in [int(x) for x in sys.argv[1].split(",")]:
    g = mgraph.load(f"rmat:{S}", backend="cupy")
    rows, comms = [], {}
    for on in (True, False):
        propose.ENABLED = on
        mgraph.louvain(g)  # warm-up
    for on in (True, False, True, False):
        propose.ENABLED = on
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter(); r = mgraph.louvain(g); wall = time.perf_counter() - t
        c = r.community.get() if hasattr(r.community, "get") else np.asarray(r.community)
        comms.setdefault(on, c)
        rows.append({"fused": on, "elapsed_s": r.stats["elapsed_s"], "wall_s": wall, "rounds": r.stats["level_rounds"],
                     "modularity": r.stats["modularity"], "communities": r.stats["communities"],
                     "coarse_levels_s": r.stats["coarse_levels_s"]})
        print(S, rows[-1], flush=True)
    same = bool(np.array_equal(comms[True], comms[False]))
    out[S] = {"runs": rows, "same_communities": same}
    print(S, "same communities:", same, flush=True)
    del g
json.dump(out, open(sys.argv[2], "w"), indent=1)

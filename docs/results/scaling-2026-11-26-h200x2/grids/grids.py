"""BFS on grids and rgg on one GPU and on two (levels across GPUs, by blocks per SM; the host path), validated."""
import json, sys, time
import numpy as np
import mgraph
from mgraph.comm import cupy_peer
from mgraph.check.validate import validate_bfs
out = {}
def timed(g, devices, runs=3, **kw):
    r = mgraph.bfs(g, 0, devices=devices, backend="cupy", **kw)  # warm-up (compiles)
    ts = []
    for _ in range(runs):
        r = mgraph.bfs(g, 0, devices=devices, backend="cupy", **kw)
        ts.append(r.stats["elapsed_s"] * 1e3)
    return r, sorted(ts)[len(ts) // 2], ts
for spec in sys.argv[1].split(","):
    g = mgraph.load(spec, backend="numpy")
    r1, t1, ts1 = timed(g, [0])
    validate_bfs(g, 0, r1.depth, r1.predecessor)
    row = {"1gpu_ms": t1, "1gpu_runs": ts1, "levels": int(r1.depth.max())}
    for bps in [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "2,1").split(",")]:
        cupy_peer.BLOCKS_PER_SM = bps
        r2, t2, ts2 = timed(g, [0, 1])
        validate_bfs(g, 0, r2.depth, r2.predecessor)
        assert (r2.depth == r1.depth).all() and r2.stats["level_path"] == "peer"
        row[f"2gpu_peer_bps{bps}_ms"] = t2
        row[f"2gpu_peer_bps{bps}_runs"] = ts2
    cupy_peer.BLOCKS_PER_SM = 2
    out[spec] = row
    print(spec, {k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items() if not k.endswith("runs")}, flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)

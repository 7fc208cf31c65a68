"""Grid size of the peer kernel: BFS on 2 GPUs (threads) with the kernel at several grids, against one GPU."""
import json, statistics, sys, time
import numpy as np
import cupy as cp
import mgraph
from mgraph.comm import cupy_peer

out = sys.argv[1]
np_ = lambda a: cp.asnumpy(a) if isinstance(a, cp.ndarray) else np.asarray(a)
real_grid = cupy_peer._grid
def fixed(blocks):
    def grid(idx, dev):
        k, most = cupy_peer._kernel(idx, dev)
        return k, min(most, blocks)
    return grid
CONFIGS = {"2/SM": (2, real_grid), "1/SM": (1, real_grid), "64": (None, fixed(64)), "16": (None, fixed(16))}
rows = []
for spec in sys.argv[2:]:
    g = mgraph.load(spec, backend="numpy")
    src = 0
    one = [mgraph.bfs(g, src, backend="cupy") for _ in range(4)][1:]
    t1 = statistics.median(r.stats["elapsed_s"] for r in one)
    rows.append({"graph": spec, "config": "1 GPU", "ms": 1e3 * t1, "levels": int(np_(one[0].depth).max())})
    for rnd in range(2):
        for name, (per_sm, grid) in CONFIGS.items():
            cupy_peer.BLOCKS_PER_SM = per_sm
            cupy_peer._grid = grid
            rs = [mgraph.bfs(g, src, devices=[0, 1], backend="cupy") for _ in range(4)][1:]
            ok = all(np.array_equal(np_(r.depth), np_(one[0].depth)) for r in rs)
            t = statistics.median(r.stats["elapsed_s"] for r in rs)
            rows.append({"graph": spec, "config": name, "round": rnd, "ms": 1e3 * t, "same_depths": ok,
                         "path": rs[0].stats["level_path"], "peer_levels": rs[0].stats["peer_levels"]})
            print(json.dumps(rows[-1]), flush=True)
    cupy_peer.BLOCKS_PER_SM, cupy_peer._grid = 2, real_grid
    json.dump(rows, open(out, "w"), indent=1)
for r in rows:
    print(f"{r['graph']:18s} {r['config']:6s} {r.get('round', '-')} {r['ms']:9.2f} ms {r.get('same_depths', '')}")

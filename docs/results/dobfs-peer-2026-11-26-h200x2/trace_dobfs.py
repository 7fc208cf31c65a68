"""Per-level step times of the direction-optimizing levels kernel on each rank (Room.trace), R-MAT SCALE."""
import json, sys
import numpy as np
import cupy as cp
import mgraph
from mgraph.comm import cupy_directions as cd
from mgraph.group import world

real_init = cd.Room.__init__
def init(self, *a, **k):
    real_init(self, *a, **k)
    self.trace = cp.zeros(cd.TRACE_LEVELS * 9 + 2, dtype=np.uint64)
cd.Room.__init__ = init
traces = []
from mgraph.comm import cupy_peer
real = cupy_peer.CupyLink.visit_directions
def wrapped(link, *a, **k):
    link.room.trace.fill(0)
    r = real(link, *a, **k)
    traces.append(cp.asnumpy(link.room.trace))
    return r
cupy_peer.CupyLink.visit_directions = wrapped
scale = int(sys.argv[1])
g = mgraph.load(f"rmat:{scale}", backend="cupy")
rank = world().rank
out = []
for s in (1, 2, 3, 5):
    for rep in range(4):
        r = mgraph.bfs(g, s, backend="cupy", direction="auto")
    t = traces[-1]
    L = cd.TRACE_LEVELS
    levels = []
    for it in range(L):
        row = t[it * 8: it * 8 + 8].astype(np.int64)
        if row[0] == 0:
            break
        marks = [int(x) for x in row if x]
        levels.append({"pull": int(t[8 * L + it]), "steps_us": [round((b - a) / 1e3, 1) for a, b in zip(marks, marks[1:])],
                       "start": marks[0]})
    L9 = 9 * cd.TRACE_LEVELS
    out.append({"started_us": round((int(t[L9 + 1]) - int(t[L9])) / 1e3, 1), "rank": rank, "source": s, "time_ms": r.stats.get("time_s", 0) * 1e3 if "time_s" in r.stats else None,
                "levels": levels, "directions": r.stats["directions"]})
print("TRACE", json.dumps(out), flush=True)

"""CC's operators timed one by one (stream synchronised around each), per superstep, on each rank; R-MAT SCALE."""
import json, sys, time
import cupy as cp
import mgraph
from mgraph import ops
from mgraph.group import world

scale, out = int(sys.argv[1]), sys.argv[2]
g = mgraph.load(f"rmat:{scale}", backend="cupy")
rec = []

def wrap(name):
    f = getattr(ops, name)
    def w(*a, **k):
        s = cp.cuda.get_current_stream()
        s.synchronize(); t = time.perf_counter()
        r = f(*a, **k)
        s.synchronize()
        info = {k: (v if isinstance(v, (int, tuple, type(None))) else int(v.shape[0]) if hasattr(v, "shape") else str(v))
                for k, v in k.items() if k in ("arcs", "lowered", "skip")}
        rec.append({"op": name, "ms": round((time.perf_counter() - t) * 1e3, 3), "n": int(a[0].num_vertices) if hasattr(a[0], "num_vertices") else None,
                    "out": int(r.shape[0]) if hasattr(r, "shape") else None, **info})
        return r
    setattr(ops, name, w)

for name in ("hook_components", "compress", "tree_of", "tree_spread"):
    wrap(name)
for _ in range(2):
    mgraph.connected_components(g, output="device")
rec.clear()
r = mgraph.connected_components(g, output="device")
w = world()
rank = 0 if w is None else w.rank
st = r.stats
row = {"rank": rank, "elapsed_ms": st["elapsed_s"] * 1e3, "ops": rec,
       "per_device": st.get("per_device")}
rows = [row] if w is None else w.comm.gather(row, root=0)
if rank == 0:
    with open(out, "w") as fh:
        json.dump(rows, fh, default=str)
    for x in rows:
        print("rank", x["rank"], "elapsed %.3f ms" % x["elapsed_ms"])
        for o in x["ops"]:
            print("   ", o)

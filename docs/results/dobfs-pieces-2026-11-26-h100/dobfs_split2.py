"""Experiment: a DOBFS run's host pieces on R-MAT 24 (bench's sources): visit_directions stamped line by line
(a copy of its body), reset's pieces, per-superstep compute; then A/B the run's elapsed (argv[2]: label)."""
import statistics, sys, time, json
import numpy as np, cupy as cp, mgraph
sys.path.insert(0, "scripts")
import bench
from mgraph.ops import cupy_levels as cl, cuda
from mgraph.ops.levels import Levels
import mgraph.primitives.bfs as pb
from mgraph import ops
T = {}
def add(k, v): T.setdefault(k, []).append(1e6 * v)
pc = time.perf_counter
def vd(graph, rgraph, frontier, label, pred, level, policy, limit, max_levels):
    t0 = pc()
    idx = np.dtype(graph.indices.dtype); device = graph.indptr.device.id; n = graph.num_vertices
    kernel, grid = cl._directions_kernel(idx, device)
    room = n + grid * (cl.BLOCK // 32) * cl.CHUNK
    buf_a, buf_b = cl._kept(device, idx, "a", room), cl._kept(device, idx, "b", room)
    hubs = cl._HUB_COUNT.get(graph)
    miss = hubs is None
    if hubs is None:
        hubs = cl._HUB_COUNT[graph] = int((graph.out_degree() > cl.DIRECTIONS_HUB).sum()) if n else 0
    t1 = pc()
    state = cuda.counters(device, 20)
    t2 = pc()
    args = (graph.indptr, graph.indices, rgraph.indptr, rgraph.indices, label, pred,
            frontier.astype(idx, copy=False), np.int64(frontier.shape[0]), buf_a, buf_b,
            cl._kept(device, np.uint32, "bits", -(-n // 32)), cl._kept(device, idx, "hubs", hubs),
            cl._kept(device, np.int64, "hub_at", hubs), np.int64(cl.DIRECTIONS_HUB), np.int64(limit),
            np.int32(min(max_levels, 2**31 - 1)), np.int32(level), state, np.int64(n),
            np.int64(policy.num_vertices), np.int64(policy.num_arcs), np.int64(policy.visited),
            np.int32(policy.pulling), np.int32(policy.switched), np.float64(policy.do_a), np.float64(policy.do_b))
    t3 = pc()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record(); kernel((grid,), (cl.BLOCK,), args); e1.record()
    t4 = pc()
    words = cuda.read_words(state, 20)
    t5 = pc()
    levels, slots, emitted, visited, first_pull, first_push, count = (words[2], words[3], words[4], words[7],
                                                                      words[10], words[11], words[14])
    ways, pulling = [], policy.pulling
    for it in range(levels):
        if it + 1 == first_pull: pulling = True
        elif it + 1 == first_push: pulling = False
        ways.append("pull" if pulling else "push")
    policy.took(ways, visited)
    last = (buf_a if levels % 2 == 1 else buf_b)[:slots]
    r = Levels(last.copy() if slots == count else last[last >= 0], levels, emitted)
    t6 = pc()
    add("vd_prep", t1 - t0); add("vd_counters", t2 - t1); add("vd_args", t3 - t2); add("vd_launch", t4 - t3)
    add("vd_read", t5 - t4); add("vd_after", t6 - t5); add("kernel", 1e-3 * cp.cuda.get_elapsed_time(e0, e1))
    T.setdefault("hub_miss", []).append(miss)
    return r
mode = sys.argv[2]
if mode == "split":
    cl.visit_directions = vd
    real_unvisited = ops.unvisited
    def unv(g, dt):
        t = pc(); r = real_unvisited(g, dt); add("reset_unvisited", pc() - t); return r
    ops.unvisited = unv
    real_fo = pb.BFS.frontier_of
    def fo(self, v):
        t = pc(); r = real_fo(self, v); add("reset_frontier_of", pc() - t); return r
    pb.BFS.frontier_of = fo
    real_reset = pb.BFS.reset
    def reset(self, source=None):
        t = pc(); r = real_reset(self, source); add("reset_host", pc() - t); return r
    pb.BFS.reset = reset
g = mgraph.load("rmat:24", backend="cupy")
srcs = bench.random_sources(g, 4, 0)
out = {}
for s in srcs:
    for _ in range(2):
        mgraph.bfs(g, s, direction="auto", output="device")
    T.clear()
    rows = []
    for _ in range(9):
        r = mgraph.bfs(g, s, direction="auto", output="device")
        d = r.stats["per_device"][0]
        rows.append((r.stats["elapsed_s"], [round(1e6 * x) for x in d["compute_s"]]))
    med = {k: round(statistics.median(v), 1) for k, v in T.items() if k != "hub_miss"}
    med["hub_miss"] = sum(T.get("hub_miss", []))
    e = round(1e6 * statistics.median(x for x, _ in rows))
    out[int(s)] = {"elapsed_us": [round(1e6 * x) for x, _ in rows], "compute_us": [c for _, c in rows], **med}
    print(mode, int(s), "elapsed med", e, "us", sorted(rows)[4][1], med, flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)

"""Why does a BFS level on each of 2 GPUs cost what the whole level costs on 1?  (GPU, 2 devices)

On one R-MAT graph, random 2-way partition, duplicate-1-hop:

1. per level: host time of each superstep on 1 GPU (stats superstep_s) beside each device's compute_s,
   wait and combine on 2 GPUs, and the same two partitions sharing GPU 0;
2. the two largest levels' push advances alone, timed with CUDA events: the whole graph on GPU 0, then each
   device's part alone, then both parts at once from two threads; with the arcs each reads and the
   vertices each emits (a part also claims proxies of its remote neighbours);
3. the 2-GPU BFS at several interpreter switch intervals (how long a thread waiting for the GIL waits);
4. PageRank and SSSP on 1 and 2 GPUs, with the 2-GPU breakdown summed over supersteps;
5. where every array of each part lives (a wrong-device array would run over NVLink).

All with one worker thread per device (workers="threads"), the layout this diagnosis was written for.

    PYTHONPATH=$PWD python3 scripts/experiments/two_gpu_bfs_diag.py [SCALE] [OUT.json]
"""
import json
import sys
import threading

import cupy as cp
import numpy as np

import mgraph
import partitioners
from mgraph import generators, ops, subgraph
from mgraph.backend import Backend

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 24
out_path = sys.argv[2] if len(sys.argv) > 2 else None
g = generators.rmat(scale, xp=cp, seed=0)
deg = cp.asnumpy(g.out_degree())
src = int(np.random.default_rng(1).choice(np.flatnonzero(deg > 0)))
report = {"scale": scale, "source": src}

# 1. per level
mgraph.bfs(g, src)
one = mgraph.bfs(g, src).stats
runs = {}
for name, devs in (("2gpu", 2), ("2parts_gpu0", [0, 0])):
    mgraph.bfs(g, src, devices=devs, workers="threads")
    runs[name] = mgraph.bfs(g, src, devices=devs, workers="threads").stats
report["one"] = {k: one[k] for k in ("elapsed_s", "frontier_sizes", "superstep_s")}
report["runs"] = {k: {"elapsed_s": v["elapsed_s"], "per_device": v["per_device"]} for k, v in runs.items()}
print(f"1 GPU {one['elapsed_s'] * 1e3:.2f} ms; 2 GPUs {runs['2gpu']['elapsed_s'] * 1e3:.2f} ms; "
      f"2 parts on GPU 0 {runs['2parts_gpu0']['elapsed_s'] * 1e3:.2f} ms")
print("level | frontier | 1 GPU ms | 2 GPU compute d0/d1 | wait d0/d1 | combine d0/d1 | same-GPU compute d0/d1")
pd, ps = runs["2gpu"]["per_device"], runs["2parts_gpu0"]["per_device"]
for i, (size, t) in enumerate(zip(one["frontier_sizes"], one["superstep_s"])):
    j = i + 1  # superstep 0 of a multi-device run is the reset
    if j >= len(pd[0]["compute_s"]):
        break
    cols = [f"{rec[0][key][j] * 1e3:.2f}/{rec[1][key][j] * 1e3:.2f}"
            for rec, key in ((pd, "compute_s"), (pd, "wait_s"), (pd, "combine_s"), (ps, "compute_s"))]
    print(f"{i + 1} | {size} | {t * 1e3:.2f} | " + " | ".join(cols))

# 2. the two largest levels' advances
depth_host = mgraph.bfs(g, src).depth.astype(np.int32)
sizes = np.bincount(depth_host[depth_host >= 0])
owner = partitioners.assign(g, 2, "random", 0)
parts = [p.to(Backend("cupy", d)) for d, p in enumerate(subgraph.build(g, owner, 2, "1-hop"))]


def case(graph, dev, ids, big):
    """The label array and frontier of the level after ``big`` on ``graph`` (``ids``: its caller ids)."""
    with cp.cuda.Device(dev):
        host = depth_host if ids is None else depth_host[cp.asnumpy(ids)]
        label = cp.asarray(host)
        label[label > big] = -1
        own = graph.num_vertices if ids is None else int(graph.own_vertices.shape[0])
        frontier = cp.flatnonzero(label[:own] == big).astype(graph.indices.dtype)
        arcs = int((graph.indptr[frontier + 1] - graph.indptr[frontier]).sum())
    return label, frontier, arcs


def time_advance(graph, dev, label0, frontier, big, reps, sink):
    with cp.cuda.Device(dev), cp.cuda.Stream(non_blocking=True) as s:
        times, emitted = [], 0
        for _ in range(reps):
            label = label0.copy()
            pred = cp.full(label.shape[0], -1, dtype=graph.indices.dtype)
            a, b = cp.cuda.Event(), cp.cuda.Event()
            s.synchronize()
            a.record()
            new = ops.advance_visit(graph, frontier, label, pred, big + 1)
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b))
            emitted = len(new)
        sink.update(ms=sorted(times)[reps // 2], all_ms=times, emitted=emitted)


report["levels"] = []
for big in np.argsort(sizes)[-2:][::-1].tolist():
    whole = case(g, 0, None, big)
    per = [case(p, d, p.vertex_ids, big) for d, p in enumerate(parts)]
    res = {"level": big + 1, "whole": {"arcs": whole[2]}, "alone": [{}, {}], "together": [{}, {}]}
    time_advance(g, 0, whole[0], whole[1], big, 5, res["whole"])
    for d in (0, 1):
        res["alone"][d]["arcs"] = per[d][2]
        time_advance(parts[d], d, per[d][0], per[d][1], big, 5, res["alone"][d])
    go = threading.Barrier(2)

    def both(d, per=per, res=res, go=go, big=big):
        go.wait()
        time_advance(parts[d], d, per[d][0], per[d][1], big, 5, res["together"][d])

    threads = [threading.Thread(target=both, args=(d,)) for d in (0, 1)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    report["levels"].append(res)
    print(f"\nlevel {big + 1} advance (median of 5, CUDA events):")
    print(f"whole graph, GPU 0: {res['whole']['ms']:.2f} ms, {res['whole']['arcs']} arcs, "
          f"emits {res['whole']['emitted']}")
    for d in (0, 1):
        a, t = res["alone"][d], res["together"][d]
        print(f"part {d}, GPU {d}: alone {a['ms']:.2f} ms, with the other running {t['ms']:.2f} ms; "
              f"{a['arcs']} arcs, emits {a['emitted']} (own vertices {int(parts[d].own_vertices.shape[0])})")

# 3. the interpreter's switch interval (how long a thread waiting for the GIL waits before it asks)
report["switch"] = {}
for interval in (5e-3, 1e-3, 1e-4, 2e-5, 5e-3):
    sys.setswitchinterval(interval)
    times = [mgraph.bfs(g, src, devices=2, workers="threads").stats["elapsed_s"] * 1e3 for _ in range(5)]
    report["switch"].setdefault(str(interval), []).append(times)
    print(f"switch interval {interval * 1e6:.0f} us: 2-GPU BFS {sorted(times)[2]:.2f} ms (median of 5: "
          + ", ".join(f"{t:.1f}" for t in times) + ")")
sys.setswitchinterval(5e-3)

# 4. PageRank and SSSP: where a 2-GPU run's time goes, summed over supersteps, against 1 GPU
for name, fn in (("pagerank", lambda **k: mgraph.pagerank(g, **k)), ("sssp", lambda **k: mgraph.sssp(g, src, **k))):
    fn()
    t1 = fn().stats["elapsed_s"]
    fn(devices=2, workers="threads")
    st = fn(devices=2, workers="threads").stats
    sums = {k: [round(sum(r[k]) * 1e3, 2) for r in st["per_device"]] for k in ("compute_s", "package_s", "push_s",
                                                                                "wait_s", "combine_s")}
    report[name] = {"one_s": t1, "two_s": st["elapsed_s"], "supersteps": st["supersteps"], "sums_ms": sums}
    print(f"{name}: 1 GPU {t1 * 1e3:.2f} ms, 2 GPUs {st['elapsed_s'] * 1e3:.2f} ms in {st['supersteps']} supersteps; "
          f"per device ms {sums}")

# 5. where arrays live
where = {}
for d, p in enumerate(parts):
    where[f"part{d}"] = sorted({f"{k}:{v.device.id}" for k, v in p.arrays().items() if v.device.id != d})
print("\narrays on another device than their part:", where)
report["misplaced"] = where
if out_path:
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1)

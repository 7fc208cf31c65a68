"""Where the device time of a multi-GPU superstep goes, step by step of the exchange.

    PYTHONPATH=$PWD python3 scripts/experiments/exchange_trace.py SCALE [PRIMITIVES] [TOP] [GPUS]

One worker process per GPU (GPUS, default every GPU present; 1: the iteration alone, for comparison), R-MAT SCALE, random partition, 1-hop
proxies, each primitive's default communication.  In the workers the
iteration and each exchange step (split+package, NCCL hop, combine + merge,
the holders' selection and the gathers of broadcast and holders' packages) are wrapped with a stream synchronisation
before and after, so each step's time is its device time, not the time its
launches took; the syncs cost a few microseconds each, so the totals run a
little over an untraced run.  Prints each device's steps for the TOP supersteps
by time (TOP 0: every superstep), for every device, with the whole frontier's size after it and
the direction taken (direction-optimizing BFS), and the run's totals per
step, after the untraced times of each primitive.
"""
import functools
import json
import os
import sys
import tempfile
import time

import cupy

import mgraph
from mgraph.cli import random_sources
from mgraph.generators import with_random_weights
from mgraph.launch import Placement, run
from primitives.bc import BC
from primitives.bfs import BFS
from primitives.cc import CC
from primitives.sssp import SSSP

PRIMITIVES = {"bfs": (functools.partial(BFS), "selective"),  # each with its default communication
              "dobfs": (functools.partial(BFS, direction="auto"), "broadcast"),
              "sssp": (SSSP, "selective"), "bc": (BC, "selective"), "cc": (CC, "broadcast")}
STEPS = ("_split", "_holders", "_package", "_merge")  # Exchange methods timed, with the transport's receive
_TRACE = {"step": [], "name": [], "ms": []}
KEYS = ("compute_s", "package_s", "push_s", "combine_s", "wait_s")


def _timed(name, fn, prim_step):
    def wrapper(*args, **kwargs):
        cupy.cuda.get_current_stream().synchronize()
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        cupy.cuda.get_current_stream().synchronize()
        _TRACE["step"].append(prim_step())
        _TRACE["name"].append(name)
        _TRACE["ms"].append(1e3 * (time.perf_counter() - t))
        return out
    return wrapper


class Traced:
    """A primitive factory that, in the worker, wraps the exchange's steps and the primitive's iterate with timers."""

    def __init__(self, make, out_dir=None):
        self.make, self.out_dir = make, out_dir

    def __call__(self, graph):
        from mgraph.comm import Exchange
        from mgraph.comm.processes import NcclTransport

        prim = self.make(graph)
        for v in _TRACE.values():
            v.clear()
        if not getattr(Exchange, "_traced", False):  # once per worker process
            for name in STEPS:
                setattr(Exchange, name, _timed(name.strip("_"), getattr(Exchange, name), lambda: Traced.current.step))
            NcclTransport.receive = _timed("nccl hop", NcclTransport.receive, lambda: Traced.current.step)
            Exchange._traced = True
        prim.iterate = _timed("iterate", prim.iterate, lambda: prim.step + 1)  # the enactor counts it after
        Traced.current = prim
        prim.trace_step, prim.trace_name, prim.trace_ms = _TRACE["step"], _TRACE["name"], _TRACE["ms"]
        if self.out_dir:  # every worker leaves its own trace, read back by the caller
            result = prim.result

            def result_and_dump():
                with open(f"{self.out_dir}/trace_dev{cupy.cuda.Device().id}.json", "w") as f:
                    json.dump(_TRACE, f)
                return result()
            prim.result = result_and_dump
        return prim


def _options(gpus):
    return {"devices": gpus, "workers": "processes"} if gpus > 1 else {"devices": 1}


def main():
    scale = int(sys.argv[1])
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(PRIMITIVES)
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    gpus = int(sys.argv[4]) if len(sys.argv) > 4 else cupy.cuda.runtime.getDeviceCount()
    g = mgraph.load(f"rmat:{scale}", backend="cupy")
    gw = with_random_weights(g, 1, 64, seed=1)
    source = random_sources(g, 1, seed=0)[0]

    def sources(make):
        return [source if getattr(make, "func", make).needs_source else None]
    print(f"R-MAT {scale} on {gpus} GPUs, one process each; untraced ms per run (median of 3 after a warm-up)")
    for name in names:  # untraced first: a traced run leaves its wrappers in the pool's workers
        make, communication = PRIMITIVES[name]
        place = Placement(gw if name == "sssp" else g, _options(gpus), communication)
        runs = [run(place, make, sources(make))[1] for _ in range(4)][1:]
        times = [1e3 * r["elapsed_s"] for r in runs]
        print(f"  {name}: " + ", ".join(f"{t:.2f}" for t in times) + f"; median {sorted(times)[1]:.2f}", flush=True)
        median = runs[times.index(sorted(times)[1])]
        for dev, rec in enumerate(median.get("per_device", [])):  # the enactor's host-clock records, untraced
            print(f"  {name} median run, device {dev}, µs per superstep: "
                  + "; ".join(" / ".join(f"{1e6 * rec[k][i]:.0f}" for k in KEYS) for i in range(len(rec["wait_s"])))
                  + f" ({' / '.join(KEYS)})", flush=True)
    for name in names:
        make, communication = PRIMITIVES[name]
        place = Placement(gw if name == "sssp" else g, _options(gpus), communication)
        out_dir = tempfile.mkdtemp()
        run(place, Traced(make), sources(make))  # warm-up
        _, stats, s = run(place, Traced(make, out_dir), sources(make))
        traces = {0: {"step": s.trace_step, "name": s.trace_name, "ms": s.trace_ms}}
        for f in sorted(os.listdir(out_dir)):  # the other workers' traces (device 0's too, the same)
            with open(os.path.join(out_dir, f)) as fh:
                traces.setdefault(int(f[len("trace_dev"):-len(".json")]), json.load(fh))
        sizes, directions = stats["frontier_sizes"], getattr(s, "directions", [])
        print(f"\n{name}: {1e3 * stats['elapsed_s']:.1f} ms traced, {len(sizes)} supersteps")
        for dev in sorted(traces):
            _table(traces[dev], dev, sizes, directions, top)


def _table(trace, dev, sizes, directions, top):
    per = {}
    for step, what, ms in zip(trace["step"], trace["name"], trace["ms"]):
        per.setdefault(step, {}).setdefault(what, 0.0)
        per[step][what] += ms
    kinds = sorted({w for d in per.values() for w in d})
    print(f"device {dev}, ms")
    print("| superstep | frontier after | direction | " + " | ".join(kinds) + " |")
    print("|---|---|---|" + "---|" * len(kinds))
    biggest = sorted(per, key=lambda k: -sum(per[k].values()))[:top or None]
    for k in sorted(biggest):
        size = sizes[k - 1] if 0 < k <= len(sizes) else ""
        way = directions[k - 1] if 0 < k <= len(directions) else ""
        print(f"| {k} | {size} | {way} | " + " | ".join(f"{per[k].get(w, 0):.2f}" for w in kinds) + " |")
    print("| all | | | " + " | ".join(f"{sum(d.get(w, 0) for d in per.values()):.2f}" for w in kinds) + " |",
          flush=True)


if __name__ == "__main__":
    main()

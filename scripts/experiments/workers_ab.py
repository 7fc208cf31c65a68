"""Threads against processes (workers=), interleaved in one process: per primitive, ms per run on R-MAT SCALE.

    PYTHONPATH=$PWD python3 scripts/experiments/workers_ab.py SCALE [PRIMITIVES] [ROUNDS]

One partition per GPU present, random partitioner, each primitive's default
communication; a warm-up of each variant first; sources as scripts/scaling.py
picks them.  Prints, per round, elapsed ms (PageRank: ms per iteration) and,
for processes, the untimed start-up (spawn, hand-over of the parts).  With
``gaps``: also, per run, the milliseconds of elapsed time outside device 0's
recorded supersteps, and of those the part after the last superstep (final
synchronisation and barrier).
"""
import statistics
import sys

import cupy

import mgraph
from mgraph.cli import random_sources
from mgraph.generators import with_random_weights

RUNS = {
    "bfs": lambda g, s, **o: mgraph.bfs(g, s, **o),
    "dobfs": lambda g, s, **o: mgraph.bfs(g, s, direction="auto", **o),
    "sssp": lambda g, s, **o: mgraph.sssp(g, s, **o),
    "cc": lambda g, s, **o: mgraph.connected_components(g, **o),
    "pr": lambda g, s, **o: mgraph.pagerank(g, **o),
    "bc": lambda g, s, **o: mgraph.betweenness_centrality(g, sources=[s], **o),
}


def ms(r):
    t = 1e3 * r.stats["elapsed_s"]
    return t / max(r.stats["iterations"], 1) if "ms_per_iteration" in r.stats else t


def main():
    scale = int(sys.argv[1])
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(RUNS)
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    gaps = "gaps" in sys.argv[4:]
    gpus = cupy.cuda.runtime.getDeviceCount()
    g = mgraph.load(f"rmat:{scale}", backend="cupy")
    gw = with_random_weights(g, 1, 64, seed=1)
    sources = random_sources(g, rounds, seed=0)
    print(f"R-MAT {scale}, {gpus} GPUs; ms per run (pr: per iteration); processes start-up s in brackets")
    print("| primitive | workers | " + " | ".join(f"round {k + 1}" for k in range(rounds)) + " | median |")
    print("|---|---|" + "---|" * (rounds + 1))
    for name in names:
        graph = gw if name == "sssp" else g
        times = {"threads": [], "processes": []}
        starts = []
        for w in times:  # warm-up
            RUNS[name](graph, sources[0], devices=gpus, workers=w)
        for k in range(rounds):
            for w in times:
                r = RUNS[name](graph, sources[k], devices=gpus, workers=w)
                times[w].append(ms(r))
                if gaps:
                    host = sum(sum(v) for k, v in r.stats["per_device"][0].items() if k.endswith("_s"))
                    print(f"  {name} {w}: {1e3 * r.stats['elapsed_s']:.2f} ms, outside supersteps "
                          f"{1e3 * (r.stats['elapsed_s'] - host):.2f} ms, after the last "
                          f"{1e3 * r.stats['finish_s']:.2f} ms", flush=True)
                if w == "processes":
                    starts.append(r.stats["startup_s"])
        for w, ts in times.items():
            extra = f" [{statistics.median(starts):.2f} s]" if w == "processes" else ""
            print(f"| {name} | {w} | " + " | ".join(f"{t:.2f}" for t in ts) + f" | {statistics.median(ts):.2f}{extra} |",
                  flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Multi-GPU scaling: the seed paper's strong and weak scaling and per-superstep overhead (Pan et al., IPDPS 2017).

    PYTHONPATH=$PWD python3 scripts/scaling.py --scale 22 --out results/scaling      # every GPU present, up to 4
    PYTHONPATH=$PWD python3 scripts/scaling.py --experiments overhead --gpus-list 1,2,4
    python3 scripts/scaling.py --backend numpy --scale 10 --gpus-list 1,2,4 --out /tmp/s   # CPU, virtual devices
    PYTHONPATH=$PWD python3 scripts/scaling.py --mpiexec "mpiexec --allow-run-as-root" --gpus-list 1,2,4 --scale 26

Where the devices run: without ``--mpiexec``, one process (one GPU, or worker
threads for several, the graph drawn whole on GPU 0 and sliced); with
``--mpiexec CMD``, each count N is its own MPI job ``CMD -n N python
scaling.py ...``, one rank per GPU with NCCL between them, each rank drawing
and building only its own part (mgraph.parts.partitioned), so a graph larger than
one GPU holds can be measured; the jobs' records are merged, speedups taken
against the 1-GPU job, and written and printed here.  The script can also be
started under ``mpiexec -n P`` itself: it then measures P ranks.  Runs on P
ranks are validated on the ranks' parts (mgraph.check.parts, on the GPUs),
except BC, whose reference needs the whole graph.

Experiments (``--experiments``, default all three); the floors of 4 GPUs against 1 are judged last where
the records allow (strong speedups at R-MAT 26, weak efficiency, overhead per superstep):

* strong: one Graph500 R-MAT graph (``--scale``, edge factor 16, drawn on the
  GPU when there is one), every primitive at every GPU count of
  ``--gpus-list`` (capped at the GPUs present; with the NumPy backend the
  counts are virtual devices).  Speedup is against the 1-GPU run.
* weak: the graph grows with the GPU count, scale ``S + log2(GPUs)`` (a
  constant number of edges per GPU; for a count that is not a power of two
  the edge factor makes up the rest).  Speedup is the scaled one: work per
  second (edges of the graph, or Graph500 TEPS) against 1 GPU; ideal = GPUs.
* overhead: the seed's per-superstep cost.  P disjoint directed paths of
  ``--path-length`` edges, path k owned by device k, and a multi-source BFS
  from each path's first vertex, so every device visits one vertex and one
  edge per superstep: microseconds per superstep (elapsed / supersteps) at
  each device count, beside the seed's 66.8 / 124 / 188 us on 1 / 2 / 4 K40s,
  with the per-superstep breakdown from stats["per_device"].

Each measurement is timed as scripts/bench.py times one (the same constants,
and mgraph.cli's sources and runs): one untimed warm-up run per source, then ``--runs`` runs from
each of ``--sources`` random sources of degree >= 1 (traversals; BC one
source at a time; CC and PageRank have no source), median time; traversal
GTEPS is the harmonic mean over sources of Graph500 TEPS, with Gunrock's
directed-edge TEPS beside it; PageRank is ms per iteration.  The tables also
give the fastest and slowest timed run, and a note goes to stderr when the
slowest took over twice the fastest (multi-GPU runs are host-bound and vary).  Each multi-GPU
run partitions and builds its subgraphs first (worker processes keep them from
the warm-up, and report the warm-up's build): their times (partition_s,
subgraph_s, medians) are reported apart from the run time.  One run per
measurement is checked (mgraph.check.runs) unless
``--no-validate``; graphs above ``--validate-max-scale`` are not checked
(a Graph500 BFS check at scale 24 takes ~15 s of host time).  Progress goes
to stderr, one line per measurement; Markdown tables are printed last.  With
``--out DIR``: DIR/scaling.json and PNG plots in the style of the seed's
figures 4 and 5 (matplotlib, the "plot" extra; skipped with a note when it is
missing); the JSON is rewritten after every measurement ("complete": false
until the end), so a run stopped by a time limit keeps its records.  Exit status: 0, 1 when a validation failed, 2 for a user error.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout

import mgraph  # noqa: E402
from mgraph import ops, partitioners  # noqa: E402
from mgraph.backend import BACKENDS, resolve  # noqa: E402
from mgraph.check.runs import WHOLE_REFERENCE, checker  # noqa: E402
from mgraph.cli import (PR_L1_STOP as PR_L1, TRAVERSALS, Parser, on_device, positive, process_device,  # noqa: E402
                        random_sources, run_primitive)
from mgraph.comm.exchange import COMMUNICATIONS  # noqa: E402
from mgraph.graph500 import DEFAULT_WEIGHTS as SSSP_WEIGHTS  # noqa: E402
from mgraph.group import fail_job, is_root, world  # noqa: E402
from mgraph.io import generators  # noqa: E402
from mgraph.parts.partitioned import PartitionedGraph  # noqa: E402
from mgraph.parts.subgraph import DUPLICATIONS  # noqa: E402
from mgraph.primitives.contract import Primitive  # noqa: E402
from mgraph.report import code_version, fmt_figure, harmonic_mean, now, write_json  # noqa: E402

EXPERIMENTS = ("strong", "weak", "overhead")
SEED_OVERHEAD_US = {1: 66.8, 2: 124.0, 4: 188.0}  # the seed's us per superstep on K40s (one vertex + one edge each)
BREAKDOWN = (("compute", "compute_s"), ("split+package", "package_s"), ("push", "push_s"),
             ("combine", "combine_s"), ("wait", "wait_s"))
# The floors at 4 GPUs against 1 (the scaling issue): strong-scaling speedups at R-MAT 26, the overhead per
# superstep, and weak scaling's efficiency (scaled speedup / GPUs)
FLOOR_GPUS, FLOOR_SCALE = 4, 26
SPEEDUP_FLOORS = {"bfs": 3.0, "dobfs": 1.5, "sssp": 2.5, "cc": 2.0, "pr": 3.2, "bc": 2.5}
OVERHEAD_FLOOR_US = 100.0
WEAK_EFFICIENCY_FLOOR = 0.8
SPREAD_WARNING = 2.0  # a note when the slowest timed run of a measurement took this many times the fastest
UNITS = {"bfs": "GTEPS", "dobfs": "GTEPS", "sssp": "GTEPS", "cc": "ms", "pr": "ms/iteration", "bc": "ms/source"}
TITLES = {"bfs": "BFS", "dobfs": "DOBFS", "sssp": "SSSP", "cc": "CC", "pr": "PageRank", "bc": "BC"}
SCALED = tuple(UNITS)  # the primitives the experiments cover (triangles, k-core and LPA are not yet among them)


def _log(message: str) -> None:
    if is_root():  # under MPI every rank measures; rank 0 speaks for the job
        print(f"[scaling] {message}", file=sys.stderr, flush=True)


# -- the overhead experiment's graph, partitioner and primitive -------------------
class PathBFS(Primitive):
    """Multi-source BFS from every path head (in-degree 0) this graph owns: one vertex per path per superstep.

    Written like primitives/bfs.py (push only) with mgraph.ops; nothing here
    knows about devices: on a device's part, ``own_vertices`` and the in-arcs
    in ``reverse()`` are that part's, so each device starts its own paths.
    """

    name = "path_bfs"
    combine = {"depth": "min"}
    carry = ("predecessor",)
    vertex_valued = ("predecessor",)
    reads_proxies = False

    def __init__(self, graph):
        super().__init__(graph)
        own = graph.own_vertices
        self.heads = own[graph.reverse().out_degree()[own] == 0]

    def reset(self, source=None):
        xp, n = self.xp, self.num_vertices
        self.depth = xp.full(n, ops.UNVISITED, dtype=np.int32)
        self.predecessor = xp.full(n, ops.UNVISITED, dtype=self.graph.indices.dtype)
        self.depth[self.heads] = 0
        self.predecessor[self.heads] = self.heads
        return self.frontier_of(self.heads)

    def iterate(self, frontier):
        return ops.advance_visit(self.graph, frontier, self.depth, self.predecessor, self.step + 1)

    def frontier_values(self):
        return {"depth": self.step}  # every vertex of the frontier just returned: the level it was visited at

    def result(self):
        return {"depth": self.depth, "predecessor": self.predecessor}


def paths_graph(num_paths: int, length: int, xp=np):
    """``num_paths`` disjoint directed paths of ``length`` edges; path k is vertices k(L+1) .. k(L+1)+L."""
    n = num_paths * (length + 1)
    v = xp.arange(n, dtype=np.int64)
    tail = v[(v % (length + 1)) != length]
    return mgraph.Graph.from_edges(tail, tail + 1, num_vertices=n, directed=True)


def path_partitioner(length: int):
    """A partitioner that puts path k on device k: (graph, parts, seed) -> owners, or under MPI (ids, parts, seed)
    -> the owners of a rank's range of vertex ids."""
    def by_path(graph_or_ids, num_parts, seed):
        if isinstance(graph_or_ids, np.ndarray):
            return (graph_or_ids // (length + 1)).astype(np.int32)
        return (graph_or_ids.xp.arange(graph_or_ids.num_vertices, dtype=np.int64) // (length + 1)).astype(np.int32)
    return by_path


def check_paths(result, length: int):
    """None when every vertex has its depth along its path and the previous vertex as predecessor."""
    n = result.depth.shape[0]
    v = np.arange(n)
    depth = v % (length + 1)
    pred = np.where(depth == 0, v, v - 1)
    bad = np.flatnonzero((result.depth != depth) | (result.predecessor != pred))
    if bad.size:
        u = int(bad[0])
        return (f"vertex {u}: depth {result.depth[u]}, predecessor {result.predecessor[u]}; expected {depth[u]}, "
                f"{pred[u]} ({bad.size} vertices wrong)")
    return None


# -- arguments ----------------------------------------------------------------------
def _choices(what, allowed):
    def parse(text):
        items = list(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
        bad = [x for x in items if x not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"unknown {what} {bad[0]!r}: choose from {', '.join(allowed)}" if bad
                                             else f"expected a comma list of {', '.join(allowed)}")
        return items
    return parse


def _counts(text):
    try:
        counts = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated GPU counts such as 1,2,4, got {text!r}") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"GPU counts must be >= 1, got {text!r}")
    return counts


def _arguments(argv):
    p = Parser(prog="scaling.py", description=__doc__.split("\n")[0])
    p.add_argument("--experiments", type=_choices("experiment", EXPERIMENTS), default=list(EXPERIMENTS),
                   help=f"comma list of {','.join(EXPERIMENTS)} (default all)")
    p.add_argument("--scale", type=positive, default=22,
                   help="R-MAT scale of the strong-scaling graph and of weak scaling's 1-GPU graph (default 22)")
    p.add_argument("--edge-factor", type=positive, default=16, help="edges per vertex (default 16)")
    p.add_argument("--primitives", type=_choices("primitive", SCALED), default=list(SCALED),
                   help=f"comma list of {','.join(SCALED)} (default all)")
    p.add_argument("--gpus-list", type=_counts,
                   help="GPU counts (virtual devices with the NumPy backend), default 1,2,4, capped at the GPUs present; "
                        "under mpiexec -n P the ranks are the GPUs (P)")
    p.add_argument("--mpiexec", metavar="CMD",
                   help="run each GPU count N as its own MPI job, 'CMD -n N python scaling.py ...' (e.g. "
                        "\"mpiexec --allow-run-as-root\"): one rank per GPU, each building only its own part; the "
                        "jobs' records merged here")
    p.add_argument("--runs", type=positive, default=3, help="timed runs per source (default 3)")
    p.add_argument("--graph", metavar="SPEC", help="strong scaling on this generator spec instead of R-MAT --scale "
                   "(grid:4096x4096, rgg:22: long diameters, where the per-superstep cost decides)")
    p.add_argument("--sources", type=positive, default=4, help="random sources for traversals and BC (default 4)")
    p.add_argument("--path-length", type=positive, default=1000,
                   help="overhead experiment: edges per path, i.e. supersteps per run (default 1000)")
    p.add_argument("--partitioner", choices=tuple(partitioners.PARTITIONERS),
                   help="vertex -> device assignment for strong and weak (default: each primitive's)")
    p.add_argument("--duplication", choices=DUPLICATIONS, help="1-hop or all (default: each primitive's)")
    p.add_argument("--communication", choices=COMMUNICATIONS,
                   help="selective or broadcast (default: each primitive's own)")
    p.add_argument("--workers", choices=mgraph.api.WORKERS,
                   help="devices of this process run in threads (one process per device: --mpiexec)")
    p.add_argument("--peer-levels", action=argparse.BooleanOptionalAction, default=True,
                   help="GPUs (or CPU devices) that reach each other run a push visit's levels and exchanges "
                        "themselves (mgraph.comm.peer; default on); --no-peer-levels: every superstep through "
                        "the host")
    p.add_argument("--peer-borders", action=argparse.BooleanOptionalAction, default=True,
                   help="MPI ranks of one node write fixed border lists (PageRank's) straight into each other's "
                        "GPUs (mgraph.comm.borders; default on); --no-peer-borders: through the host")
    p.add_argument("--seed", type=int, default=0, help="seed for graphs, sources, weights and partitioning")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--validate", action=argparse.BooleanOptionalAction, default=True,
                   help="check one run per measurement on the CPU (default on)")
    p.add_argument("--validate-max-scale", type=positive, default=24,
                   help="do not validate graphs above this R-MAT scale (CPU time; default 24)")
    p.add_argument("--out", metavar="DIR", help="write DIR/scaling.json and the plots here (created if missing)")
    args = p.parse_args(argv)
    if args.seed < 0:
        p.error(f"--seed must be non-negative, got {args.seed}")
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        p.error(f"--out {args.out}: exists and is not a folder")
    return args


# -- measuring ------------------------------------------------------------------------
def _run_options(args, backend, n) -> dict:
    run = {"backend": backend.name, "devices": n, "seed": args.seed}
    # only when given, so that each primitive's own defaults apply (as the mgraph command does)
    run.update({k: getattr(args, k) for k in ("partitioner", "duplication", "communication", "workers")
                if getattr(args, k)})
    if not args.peer_levels:
        run["peer_levels"] = False
    if not args.peer_borders:
        run["peer_borders"] = False
    return run


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _free(backend, count):
    """Give the CuPy pools' cached blocks back between graphs, so that the next (larger) graph fits: every GPU of
    this process, or under MPI the rank's own (touching another would open a context on it)."""
    if backend.is_gpu:
        for d in [backend.device] if world() is not None else range(count):
            with backend.xp.cuda.Device(d):
                backend.xp.get_default_memory_pool().free_all_blocks()


def measure(name, graph, sources, run, runs, check):
    """A warm-up per start, then ``runs`` timed runs per start; the medians, TEPS, setup times and one validation."""
    params = {"tol": PR_L1 / graph.num_vertices} if name == "pr" else {}
    starts = [[s] for s in sources] if name == "bc" else sources if name in TRAVERSALS else [None]
    for s in starts:  # a source can take paths (and compile kernels) that another's warm-up did not
        run_primitive(name, graph, s, run=run, **params)
    per_start, setup = [], []
    for s in starts:
        results = [run_primitive(name, graph, s, run=run, **params) for _ in range(runs)]
        times = [r.stats["elapsed_s"] for r in results]
        middle = sorted(results, key=lambda r: r.stats["elapsed_s"])[(len(results) - 1) // 2]
        per_start.append({"start": s, "times_s": times, "median_s": statistics.median(times),
                          "iterations": middle.stats["iterations"], "supersteps": middle.stats.get("supersteps"),
                          **{k: middle.stats[k] for k in ("edges_in_component", "arcs_traversed", "converged")
                             if k in middle.stats}})
        setup += [r.stats for r in results]
    stats = middle.stats
    every = [t for p in per_start for t in p["times_s"]]
    record = {
        "median_ms": 1e3 * statistics.median(p["median_s"] for p in per_start),
        # the spread of every timed run: one far-off run moves a median of few runs (see _progress)
        "min_ms": 1e3 * min(every), "max_ms": 1e3 * max(every),
        "iterations": statistics.median(p["iterations"] for p in per_start),
        "supersteps": _median(p["supersteps"] for p in per_start),
        "partition_s": _median(s.get("partition_s") for s in setup),
        "subgraph_s": _median(s.get("subgraph_s") for s in setup),
        "bytes_sent": _median(sum(s["bytes_sent"]) if "bytes_sent" in s else None for s in setup),
        "memory_bytes": stats.get("memory_bytes"),
        "communication": stats.get("communication"), "partitioner": stats.get("partitioner"),
        "duplication": stats.get("duplication"),
        "starts": per_start,
        # where one run's time goes (the median run of the last start): ms per part, summed over supersteps and
        # averaged over devices, and the per-superstep, per-device lists themselves
        "breakdown_ms": None if "per_device" not in stats else {
            label: 1e3 * float(np.mean([sum(d[key]) for d in stats["per_device"]])) for label, key in BREAKDOWN},
        "per_device": stats.get("per_device"),
        "frontier_sizes": stats.get("frontier_sizes"),
    }
    if name in TRAVERSALS:
        record["graph500_gteps"] = harmonic_mean(p["edges_in_component"] / p["median_s"] for p in per_start) / 1e9
        record["directed_gteps"] = harmonic_mean(p["arcs_traversed"] / p["median_s"] for p in per_start) / 1e9
    if name == "pr":
        record["ms_per_iteration"] = record["median_ms"] / max(per_start[0]["iterations"], 1)
        record["converged"] = per_start[0]["converged"]
    record["y"] = record["graph500_gteps" if name in TRAVERSALS else "ms_per_iteration" if name == "pr" else "median_ms"]
    if check is None:
        record["validation"] = "not run"
    else:
        t0 = time.perf_counter()
        message = check(results[-1], starts[-1])  # the last run from the last start
        record["validation"] = "PASS" if message is None else f"FAIL: {message}"
        record["validation_s"] = time.perf_counter() - t0
    return record


def _rate(name, record, edges):
    """Work per second: Graph500 TEPS for traversals, graph edges per second (per iteration for PageRank) otherwise."""
    if name in TRAVERSALS:
        return record["graph500_gteps"] * 1e9
    return edges / (1e-3 * (record["ms_per_iteration"] if name == "pr" else record["median_ms"]))


def _speedups(records):
    """speedup (work per second against the 1-GPU record of the same primitive) and efficiency = speedup / GPUs."""
    base = {r["primitive"]: r for r in records if r["gpus"] == 1}
    for r in records:
        b = base.get(r["primitive"])
        r["speedup"] = r["rate"] / b["rate"] if b and b["rate"] > 0 else None
        r["efficiency"] = None if r["speedup"] is None else r["speedup"] / r["gpus"]


def _progress(experiment, r):
    y = f"{r['y']:.4g} {UNITS[r['primitive']]}"
    if r["primitive"] in TRAVERSALS:
        y += f" (Graph500), {r['directed_gteps']:.4g} directed, {r['median_ms']:.4g} ms"
    setup = "" if r["partition_s"] is None else f", partition {r['partition_s']:.3g} s, subgraph {r['subgraph_s']:.3g} s"
    speedup = "" if r.get("speedup") is None else f", speedup {r['speedup']:.3g}"
    _log(f"{experiment} {r['primitive']} scale {r['scale']} on {r['gpus']} GPU(s): {y}{speedup}{setup}; "
         f"{r['validation'].split(':')[0]}")
    if r["max_ms"] > SPREAD_WARNING * r["min_ms"]:
        _log(f"note: {r['primitive']} on {r['gpus']} GPU(s): runs took {r['min_ms']:.4g} to {r['max_ms']:.4g} ms; "
             f"with few runs the median may be one outlier (more --runs)")


def _graph(scale, edge_factor, backend, seed, weights=None, spec=None):
    """The R-MAT graph of ``rmat:SCALE:EDGEFACTOR``, or the generator ``spec`` where given (grid:WxH, rgg:S: long
    diameters), with integer weights in ``weights``, and what describes it.

    In one process the whole graph, drawn on the GPU; under MPI a PartitionedGraph, each rank building only its
    own part when the first run needs it (its build time is that run's partition_s and subgraph_s).  Both draw
    the same edges and weights, so 1 GPU and P ranks run on one graph.
    """
    rmat = spec is None
    spec = spec or f"rmat:{scale}:{edge_factor}"
    w = world()
    t0 = time.perf_counter()
    graph = mgraph.load(spec, backend=backend, seed=seed, weights=weights)  # chunk by chunk: a low peak
    if w is None:
        backend.synchronize()
    generate_s = None if w is not None else time.perf_counter() - t0
    what = (f"R-MAT scale {scale}, edge factor {edge_factor}" if rmat else spec) + (" (weighted)" if weights else "")
    if not rmat:  # what the validation's size bound and the records compare: log2 of the vertex count
        scale, edge_factor = max(graph.num_vertices - 1, 1).bit_length(), None
    if w is None:
        _log(f"generated {what}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges in {generate_s:.3g} s")
    elif weights is None:
        _log(f"{what} on {w.size} MPI ranks: {graph.num_vertices:,} vertices; each rank builds its own part")
    return graph, {"generator": "rmat" if rmat else spec.split(":")[0], "spec": spec, "scale": scale, "edge_factor": edge_factor, "seed": seed,
                   "vertices": graph.num_vertices, "edges": graph.num_edges, "arcs": graph.num_arcs,
                   "generate_s": generate_s, "ranks": None if w is None else w.size}


def _checker(name, graph, args, scale):
    """How one run is checked (mgraph.check.runs): on the ranks' parts under MPI and on a GPU (no host copy of the
    graph), else on the host up to --validate-max-scale; None where no check runs."""
    if not args.validate:
        return None
    if isinstance(graph, PartitionedGraph) or graph.xp is not np:
        if name in WHOLE_REFERENCE:
            _log(f"not validating {name}: its reference needs the whole graph on the host")
            return None
    elif scale > args.validate_max_scale:
        _log(f"not validating {name} at scale {scale} (above --validate-max-scale {args.validate_max_scale})")
        return None
    return checker(name, graph)


def _measure_graph(experiment, graph, info, args, backend, counts, sink, saved):
    """Every primitive at every count in ``counts`` on one graph; records go to ``sink`` as they are measured, and
    ``saved()`` after each."""
    sources = random_sources(graph, args.sources, args.seed, _run_options(args, backend, counts[0]))
    info["sources"] = sources
    for name in args.primitives:
        g = graph
        if name == "sssp":  # the same spec with weights: the same edges, on 1 GPU and on P ranks
            g = _graph(info["scale"], info["edge_factor"], backend, args.seed, weights=SSSP_WEIGHTS,
                       spec=None if info["generator"] == "rmat" else info["spec"])[0]
        check = _checker(name, g, args, info["scale"])
        for n in counts:
            r = {"experiment": experiment, "primitive": name, "gpus": n, "scale": info["scale"],
                 "edge_factor": info["edge_factor"]}
            r.update(measure(name, g, sources, _run_options(args, backend, n), args.runs, check))
            if info["edges"] is None:  # a PartitionedGraph knows its (simple) edges once a part is built
                info.update(edges=graph.num_edges, arcs=graph.num_arcs)
            r["rate"] = _rate(name, r, info["edges"])
            sink.append(r)
            _speedups([x for x in sink if x["primitive"] == name])
            _progress(experiment, r)
            saved()
        del g, check  # the weighted copy and the CPU references
        _free(backend, max(counts))


def strong(args, backend, counts, into, saved):
    """Every primitive on one graph at every GPU count; fills ``into`` as it goes."""
    graph, info = _graph(args.scale, args.edge_factor, backend, args.seed, spec=args.graph)
    into.update(graph=info, records=[])
    _measure_graph("strong", graph, info, args, backend, counts, into["records"], saved)


def weak_size(scale, edge_factor, gpus):
    """(scale, edge factor) with ``gpus`` x the edges of (scale, edge_factor): scale + log2(gpus) for powers of two."""
    k = gpus.bit_length() - 1
    return scale + k, max(1, round(edge_factor * gpus / (1 << k)))


def weak(args, backend, counts, into, saved, strong_result=None):
    """One graph per GPU count; the 1-GPU graph is strong scaling's, whose 1-GPU records are reused when measured.
    Fills ``into`` as it goes."""
    into.update(graphs=[], records=[])
    graphs, records = into["graphs"], into["records"]
    for n in counts:
        scale, ef = weak_size(args.scale, args.edge_factor, n)
        if n == 1 and strong_result is not None:
            graphs.append({**strong_result["graph"], "gpus": 1, "reused_from": "strong"})
            records.extend({**r, "experiment": "weak", "reused_from": "strong"}
                           for r in strong_result["records"] if r["gpus"] == 1)
            _log("weak scaling on 1 GPU: the strong-scaling graph and measurements")
            continue
        graph, info = _graph(scale, ef, backend, args.seed)
        info["gpus"] = n
        graphs.append(info)
        _measure_graph("weak", graph, info, args, backend, [n], records, saved)
        del graph
        _free(backend, max(counts))


def overhead(args, backend, counts, into, saved):
    """Per-superstep cost: one path per device, each device visiting one vertex and one edge per superstep.
    Fills ``into`` as it goes."""
    length = args.path_length
    into.update(path_length=length, records=[])
    records = into["records"]
    for n in counts:
        graph = paths_graph(n, length, np if world() is not None else backend.xp)
        if world() is not None:  # tiny: every rank makes it, and each builds its part (its path) from it
            graph = PartitionedGraph(graph, world())
        run = {"backend": backend.name, "devices": n, "seed": args.seed, "partitioner": path_partitioner(length)}
        run.update({k: getattr(args, k) for k in ("duplication", "communication", "workers") if getattr(args, k)})
        if not args.peer_levels:
            run["peer_levels"] = False
        mgraph.run(PathBFS, graph, **run)  # warm-up
        results = [mgraph.run(PathBFS, graph, **run) for _ in range(args.runs)]
        per_step = [r.stats["elapsed_s"] / r.stats.get("supersteps", r.stats["iterations"]) for r in results]
        middle = sorted(results, key=lambda r: r.stats["elapsed_s"])[(len(results) - 1) // 2]
        s = middle.stats
        rec = {"devices": n, "paths": n, "path_length": length, "vertices": graph.num_vertices,
               "supersteps": s.get("supersteps", s["iterations"]), "iterations": s["iterations"],
               "times_s": [r.stats["elapsed_s"] for r in results], "us_per_superstep": 1e6 * statistics.median(per_step),
               "seed_k40_us": SEED_OVERHEAD_US.get(n), "communication": s.get("communication"),
               "duplication": s.get("duplication"), "level_path": s.get("level_path"), "partition_s": _median(r.stats.get("partition_s") for r in results),
               "subgraph_s": _median(r.stats.get("subgraph_s") for r in results), "breakdown_us": None,
               "bytes_per_superstep": None}
        if "per_device" in s:  # the exchange's parts (nothing on one device), averaged over devices and supersteps
            per = s["per_device"]
            rec["breakdown_us"] = {label: 1e6 * float(np.mean([x for d in per for x in d[key]]))
                                   for label, key in BREAKDOWN}
            rec["bytes_per_superstep"] = float(np.mean([x for d in per for x in d["bytes"]]))
        if args.validate:
            message = check_paths(middle, length) if is_root() else None  # the gathered arrays are rank 0's
            rec["validation"] = "PASS" if message is None else f"FAIL: {message}"
        else:
            rec["validation"] = "not run"
        records.append(rec)
        saved()
        parts = "" if rec["breakdown_us"] is None else " (" + ", ".join(
            f"{k} {v:.3g}" for k, v in rec["breakdown_us"].items()) + " us)"
        seed = "" if rec["seed_k40_us"] is None else f"; seed on K40s: {rec['seed_k40_us']:g} us"
        path = f", exchanges through {rec['level_path']}" if rec["level_path"] else ""
        _log(f"overhead on {n} device(s): {rec['us_per_superstep']:.4g} us per superstep over {rec['supersteps']} "
             f"supersteps{parts}{path}{seed}; {rec['validation'].split(':')[0]}")
        del graph, results, middle


# -- output ---------------------------------------------------------------------------
def _markdown(header, rows) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)])


def _scaling_table(records, weak_scaling, edge_factor):
    rows = []
    for r in records:
        time_ms = r["ms_per_iteration"] if r["primitive"] == "pr" else r["median_ms"]
        scale = f"{r['scale']}" + ("" if r["edge_factor"] == edge_factor else f" (ef {r['edge_factor']})")
        rows.append([r["primitive"], r["gpus"], *([scale] if weak_scaling else []),
                     fmt_figure(time_ms) + (" /iter" if r["primitive"] == "pr" else " /source" if r["primitive"] == "bc" else ""),
                     f"{fmt_figure(r['min_ms'])}–{fmt_figure(r['max_ms'])}",
                     fmt_figure(r.get("graph500_gteps")), fmt_figure(r.get("directed_gteps")), fmt_figure(r.get("speedup"), 3),
                     *([fmt_figure(r.get("efficiency"), 3)] if weak_scaling else []),
                     fmt_figure(r["partition_s"], 3), fmt_figure(r["subgraph_s"], 3), r["validation"].split(":")[0]])
    return _markdown(["primitive", "GPUs", *(["scale"] if weak_scaling else []), "time ms", "runs ms (min–max)",
                      "GTEPS (Graph500)", "GTEPS (directed)", "scaled speedup" if weak_scaling else "speedup",
                      *(["efficiency"] if weak_scaling else []), "partition s", "subgraph s", "valid"], rows)


def _breakdown_table(records):
    """Multi-GPU runs only: where a run's time goes, ms summed over supersteps, averaged over devices."""
    rows = [[r["primitive"], r["gpus"], fmt_figure(r["median_ms"]), r["supersteps"],
             *(fmt_figure(r["breakdown_ms"][label], 3) for label, _ in BREAKDOWN), fmt_figure(r["bytes_sent"] / 2**20, 3)]
            for r in records if r.get("breakdown_ms")]
    return _markdown(["primitive", "GPUs", "time ms", "supersteps", *(f"{label} ms" for label, _ in BREAKDOWN),
                      "MiB sent"], rows)


def _overhead_table(records):
    rows = []
    for r in records:
        b = r["breakdown_us"] or {}
        rows.append([r["devices"], r["supersteps"], fmt_figure(r["us_per_superstep"]), fmt_figure(r["seed_k40_us"]),
                     *(fmt_figure(b.get(label), 3) for label, _ in BREAKDOWN), r.get("level_path") or "-",
                     r["validation"].split(":")[0]])
    return _markdown(["devices", "supersteps", "us/superstep", "seed (K40) us",
                      *(f"{label} us" for label, _ in BREAKDOWN), "exchange", "valid"], rows)


def floors(results) -> list[dict]:
    """The floors these results can be judged on: each one's figure, bound and whether it is met (records at
    FLOOR_GPUS against 1 GPU; strong scaling only at R-MAT FLOOR_SCALE)."""
    out = []
    strong = results.get("strong") or {}
    if strong.get("graph", {}).get("scale") == FLOOR_SCALE:
        for r in strong["records"]:
            if r["gpus"] == FLOOR_GPUS and r.get("speedup") is not None:
                bound = SPEEDUP_FLOORS[r["primitive"]]
                out.append({"what": f"strong {r['primitive']} speedup", "value": r["speedup"], "floor": f">= {bound:g}",
                            "met": r["speedup"] >= bound})
    for r in (results.get("weak") or {}).get("records", []):
        if r["gpus"] == FLOOR_GPUS and r.get("efficiency") is not None:
            out.append({"what": f"weak {r['primitive']} efficiency", "value": r["efficiency"],
                        "floor": f">= {WEAK_EFFICIENCY_FLOOR:g}", "met": r["efficiency"] >= WEAK_EFFICIENCY_FLOOR})
    for r in (results.get("overhead") or {}).get("records", []):
        if r["devices"] == FLOOR_GPUS:
            out.append({"what": "overhead us per superstep", "value": r["us_per_superstep"],
                        "floor": f"<= {OVERHEAD_FLOOR_US:g}", "met": r["us_per_superstep"] <= OVERHEAD_FLOOR_US})
    return out


def _scaling_figure(plt, records, title, path, weak_scaling):
    names = list(dict.fromkeys(r["primitive"] for r in records))
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        rs = sorted((r for r in records if r["primitive"] == name), key=lambda r: r["gpus"])
        x = [r["gpus"] for r in rs]
        ax.plot(x, [r["y"] for r in rs], "o-", label="Graph500" if name in TRAVERSALS else "mgraph")
        if name in TRAVERSALS:
            ax.plot(x, [r["directed_gteps"] for r in rs], "s--", label="directed-edge")
        one = next((r for r in rs if r["gpus"] == 1), None)
        if one is not None and len(rs) > 1:  # ideal: throughput x GPUs; time / GPUs (strong) or constant (weak)
            ideal = ([one["y"] * n for n in x] if name in TRAVERSALS
                     else [one["y"] for _ in x] if weak_scaling else [one["y"] / n for n in x])
            ax.plot(x, ideal, ":", color="grey", label="linear")
        ax.set_title(TITLES[name])
        ax.set_xlabel("number of GPUs")
        ax.set_ylabel(UNITS[name])
        ax.set_xticks(x)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _overhead_figure(plt, records, device, path):
    x = np.arange(len(records))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ours = ax.bar(x - 0.2, [r["us_per_superstep"] for r in records], 0.4, label=f"mgraph ({device})")
    seed = ax.bar(x + 0.2, [r["seed_k40_us"] or 0 for r in records], 0.4, label="seed (K40)")
    ax.bar_label(ours, fmt="%.3g", fontsize="small")
    ax.bar_label(seed, labels=[fmt_figure(r["seed_k40_us"], 3) for r in records], fontsize="small")
    ax.set_xticks(x, [str(r["devices"]) for r in records])
    ax.set_xlabel("number of devices (one path each)")
    ax.set_ylabel("us per superstep")
    ax.set_title("Per-superstep overhead: one vertex and one edge per device", fontsize="medium")
    ax.margins(y=0.15)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plots(out, results, device, args) -> list[str]:
    """The PNG files written to ``out`` (none, with a note, without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _log("matplotlib is missing (pip install mgraph[plot]): no plots")
        return []
    written = []
    if "strong" in results:
        path = os.path.join(out, "strong_scaling.png")
        _scaling_figure(plt, results["strong"]["records"],
                        f"Strong scaling: {args.graph or f'R-MAT scale {args.scale}, edge factor {args.edge_factor}'} "
                        f"({device})", path, False)
        written.append(path)
    if "weak" in results:
        path = os.path.join(out, "weak_scaling.png")
        _scaling_figure(plt, results["weak"]["records"],
                        f"Weak scaling: R-MAT scale {args.scale} + log2(GPUs), edge factor {args.edge_factor} ({device})",
                        path, True)
        written.append(path)
    if "overhead" in results:
        path = os.path.join(out, "overhead.png")
        _overhead_figure(plt, results["overhead"]["records"], device, path)
        written.append(path)
    return written


def main(argv=None) -> int:
    """Run the experiments; 0 ok, 1 a validation failed, 2 a user error (one line on stderr, from rank 0 of an MPI
    job where every rank found it; a rank alone in its error ends the job, as the mgraph command does)."""
    w = world()
    quiet = w is not None and w.rank != 0
    try:
        args = _arguments(sys.argv[1:] if argv is None else list(argv))
        return _main(args, argv)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    except (ValueError, OSError) as e:
        message = " ".join((str(e) or type(e).__name__).split())
        if w is not None and not w.all_failing():  # only this rank: the others wait in a collective
            fail_job(w, ValueError(message))
        if not quiet:
            print(f"scaling.py: error: {message}", file=sys.stderr)
        return 2


def _child_args(args, n, out) -> list[str]:
    """The options of one job of ``--mpiexec``: these arguments, at the one count ``n``, writing to ``out``."""
    argv = ["--experiments", ",".join(args.experiments), "--scale", str(args.scale), "--edge-factor",
            str(args.edge_factor), "--primitives", ",".join(args.primitives), "--gpus-list", str(n), "--runs",
            str(args.runs), "--sources", str(args.sources), "--path-length", str(args.path_length), "--seed",
            str(args.seed), "--backend", args.backend, "--validate" if args.validate else "--no-validate",
            "--validate-max-scale", str(args.validate_max_scale), "--out", out,
            "--peer-levels" if args.peer_levels else "--no-peer-levels",
            "--peer-borders" if args.peer_borders else "--no-peer-borders"]
    for key in ("partitioner", "duplication", "communication", "workers", "graph"):
        if getattr(args, key):
            argv += [f"--{key}", getattr(args, key)]
    return argv


def _merged(jobs, experiments) -> dict:
    """The experiments of several jobs (one GPU count each) as one run's: records side by side, speedups against
    the 1-GPU job's records."""
    order = {name: k for k, name in enumerate(SCALED)}
    results = {}
    for experiment in experiments:
        parts = [job[experiment] for job in jobs if experiment in job]
        if not parts:
            continue
        records = [r for part in parts for r in part["records"]]
        if experiment == "overhead":
            results[experiment] = {"path_length": parts[0]["path_length"],
                                   "records": sorted(records, key=lambda r: r["devices"])}
            continue
        records.sort(key=lambda r: (order[r["primitive"]], r["gpus"]))
        for name in order:
            _speedups([r for r in records if r["primitive"] == name])
        if experiment == "strong":
            graphs = [part["graph"] for part in parts]
            whole = next((g for g in graphs if g.get("ranks") is None), graphs[0])  # the 1-GPU job's, drawn whole
            results[experiment] = {"graph": whole, "graphs_by_job": graphs, "records": records}
        else:
            results[experiment] = {"graphs": sorted((g for part in parts for g in part["graphs"]),
                                                    key=lambda g: g["gpus"]), "records": records}
    return results


def _stderr_fd():
    """Where a job's stdout goes: this process's stderr (its tables are progress here), or inherited stdout where
    stderr is no file (a test's capture)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _launch(args, argv) -> int:
    """--mpiexec: one MPI job per GPU count, each this script under ``CMD -n N``; their records merged, written
    and printed here.  The jobs' own tables go to stderr with their progress."""
    launcher = shlex.split(args.mpiexec)
    if not launcher:
        raise ValueError("--mpiexec is empty: give the launcher, e.g. --mpiexec mpiexec")
    wanted = args.gpus_list or [1, 2, 4]
    backend = resolve(args.backend)  # no CUDA context here: the jobs' ranks open their own
    present = backend.xp.cuda.runtime.getDeviceCount() if backend.is_gpu else None
    counts = [n for n in wanted if present is None or n <= present]  # more ranks than GPUs would share them
    if len(counts) < len(wanted):
        _log(f"this machine has {present} GPU(s): skipping counts "
             f"{', '.join(str(n) for n in wanted if n not in counts)}")
    if not counts:
        raise ValueError(f"--gpus-list {','.join(map(str, wanted))}: this machine has only {present} GPU(s)")
    jobs, meta, code = [], [], 0
    with tempfile.TemporaryDirectory(prefix="mgraph-scaling-") as tmp:
        for n in counts:
            folder = os.path.join(tmp, f"gpus-{n}")
            cmd = [*launcher, "-n", str(n), sys.executable, os.path.abspath(__file__), *_child_args(args, n, folder)]
            _log(f"job on {n} GPU(s): {shlex.join(cmd)}")
            t0 = time.perf_counter()
            try:
                rc = subprocess.run(cmd, stdout=_stderr_fd(), stdin=subprocess.DEVNULL).returncode
            except FileNotFoundError:
                raise ValueError(f"--mpiexec {args.mpiexec!r}: {launcher[0]} not found") from None
            path = os.path.join(folder, "scaling.json")
            record = None
            if os.path.exists(path):
                with open(path) as f:
                    record = json.load(f)
            meta.append({"gpus": n, "command": cmd, "returncode": rc, "wall_s": time.perf_counter() - t0,
                         "complete": bool(record and record["complete"]),
                         **({k: record[k] for k in ("version", "device", "gpus_present", "date")} if record else {})})
            if record:
                jobs.append(record)
            if rc not in (0, 1) or record is None:
                _log(f"the job on {n} GPU(s) failed (exit {rc}): its output is above; the counts after it not run")
                code = 2 if rc == 2 else 1
                break
            code = max(code, rc)
    if not jobs:
        return code
    first = jobs[0]
    results = _merged(jobs, args.experiments)
    finished = _finish(args, argv, results, first["backend"], first["device"], first["gpus_present"],
                       [m["gpus"] for m in meta if m["complete"]], first["version"], jobs=meta,
                       complete=code in (0, 1))
    return code or finished


def _main(args, argv) -> int:
    if args.partitioner == "metis":
        partitioners.require_pymetis()  # before generating a large graph
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    w = world()
    if args.mpiexec is not None:
        if w is not None:
            raise ValueError("--mpiexec starts one MPI job per GPU count itself: run scaling.py without mpiexec")
        return _launch(args, argv)
    backend = process_device(args.backend)  # under MPI the rank's GPU
    with on_device(backend):  # everything outside the runs on this process's device too
        return _measure(args, argv, backend)


def _measure(args, argv, backend) -> int:
    """The experiments of this process (under MPI, of this rank), on ``backend``'s device."""
    w = world()
    device = backend.device_name()
    present = backend.xp.cuda.runtime.getDeviceCount() if backend.is_gpu else None
    if w is not None:  # the ranks are the devices
        if args.gpus_list not in (None, [w.size]):
            raise ValueError(f"--gpus-list {','.join(map(str, args.gpus_list))} in an MPI job of {w.size} ranks: the "
                             f"ranks are the GPUs; for several counts run scaling.py --mpiexec CMD")
        counts = [w.size]
    else:
        wanted = args.gpus_list or [1, 2, 4]
        counts = [n for n in wanted if present is None or n <= present]
        if len(counts) < len(wanted):
            _log(f"this machine has {present} GPU(s): skipping counts "
                 f"{', '.join(str(n) for n in wanted if n not in counts)}")
        if not counts:
            raise ValueError(f"--gpus-list {','.join(map(str, wanted))}: this machine has only {present} GPU(s)")
    _log(f"{backend.name} on {device}" + (f" ({present} present)" if present else ", virtual devices")
         + (f"; {w.size} MPI ranks" if w is not None else f"; device counts {counts}")
         + f"; experiments {','.join(args.experiments)}")
    if backend.is_gpu:  # CuPy's kernel compilation for the generator stays out of generate_s
        generators.rmat(4, xp=backend.xp, seed=args.seed)
        backend.synchronize()
    results, version = {}, code_version()

    def saved():
        _save(args, argv, results, backend.name, device, present, counts, version, complete=False)

    for experiment in args.experiments:
        results[experiment] = {}
        if experiment == "weak":
            weak(args, backend, counts, results["weak"], saved, results.get("strong"))
        else:
            {"strong": strong, "overhead": overhead}[experiment](args, backend, counts, results[experiment], saved)
        _free(backend, max(counts))
    return _finish(args, argv, results, backend.name, device, present, counts, version)


def _save(args, argv, results, backend, device, present, counts, version, *, complete, jobs=None):
    """scaling.json with what is measured so far (``complete``: every experiment, and the plots): a run cut short
    keeps its records.  Rank 0 writes for an MPI job.  The PNG files written."""
    if not args.out or not is_root():
        return []
    written = plots(args.out, results, device, args) if complete else []
    write_json(os.path.join(args.out, "scaling.json"), {
        "date": now(), "command": sys.argv if argv is None else ["scripts/scaling.py", *argv],
        "version": version, "backend": backend, "device": device, "gpus_present": present,
        "gpu_counts": counts, "ranks": None if world() is None else world().size,
        "options": vars(args), "sssp_weights": SSSP_WEIGHTS, "pagerank_l1_stop": PR_L1,
        "seed_overhead_k40_us": SEED_OVERHEAD_US, "complete": complete, **({"jobs": jobs} if jobs else {}),
        "floors": floors(results),
        "plots": [os.path.basename(p) for p in written], **results,
    })
    return written


def _finish(args, argv, results, backend, device, present, counts, version, *, jobs=None, complete=True) -> int:
    """Write the record and plots, print the tables last (rank 0); 1 when a validation failed, else 0."""
    if args.out:
        written = _save(args, argv, results, backend, device, present, counts, version, complete=complete, jobs=jobs)
        _log(f"wrote {os.path.join(args.out, 'scaling.json')}" + (f" and {len(written)} plot(s)" if written else ""))
    failed = [r for res in results.values() for r in res["records"] if r["validation"].startswith("FAIL")]
    if not is_root():
        return 1 if failed else 0
    how = "" if jobs is None else f"; one MPI job per count ({args.mpiexec} -n N)"
    print(f"{backend} on {device}; median of {args.runs} run(s) x {args.sources} source(s) after a warm-up per source; "
          f"{now()}; {version['git']}{how}")
    if "strong" in results:
        g = results["strong"]["graph"]
        what = g["spec"] if g["generator"] != "rmat" else f"R-MAT scale {g['scale']}, edge factor {g['edge_factor']}"
        print(f"\n**Strong scaling**: {what} ({g['vertices']:,} vertices, {g['edges']:,} edges); speedup = work/s "
              "against 1 GPU\n")
        print(_scaling_table(results["strong"]["records"], False, args.edge_factor))
        print("\n**Where the multi-GPU time goes** (one run; per-device sums over supersteps, mean over devices)\n")
        print(_breakdown_table(results["strong"]["records"]))
    if "weak" in results:
        print(f"\n**Weak scaling**: R-MAT scale {args.scale} + log2(GPUs), {args.edge_factor << args.scale:,} edges per "
              f"GPU; scaled speedup = work/s against 1 GPU (ideal = GPUs)\n")
        order = {name: k for k, name in enumerate(SCALED)}
        print(_scaling_table(sorted(results["weak"]["records"], key=lambda r: (order[r["primitive"]], r["gpus"])), True,
                             args.edge_factor))
    if "overhead" in results:
        print(f"\n**Per-superstep overhead**: one directed path of {args.path_length} edges per device; "
              "us per superstep = elapsed / supersteps; breakdown averaged over devices and supersteps\n")
        print(_overhead_table(results["overhead"]["records"]))
    judged = floors(results)
    if judged:
        print(f"\n**Floors** ({FLOOR_GPUS} GPUs against 1; strong scaling at R-MAT {FLOOR_SCALE})\n")
        print(_markdown(["what", "value", "floor", "met"],
                        [[f["what"], fmt_figure(f["value"], 3), f["floor"], "yes" if f["met"] else "no"] for f in judged]))
    for r in failed:
        print(f"{r.get('experiment', 'overhead')} {r.get('primitive', 'path_bfs')} on "
              f"{r.get('gpus', r.get('devices'))} device(s): {r['validation']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

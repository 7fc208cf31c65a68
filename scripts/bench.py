#!/usr/bin/env python3
"""One-GPU benchmark: every primitive on a Graph500 R-MAT graph, against the project's floors at scale 24.

    PYTHONPATH=$PWD python3 scripts/bench.py --scale 24 --json results/bench.json
    PYTHONPATH=$PWD python3 scripts/bench.py --graph grid:4096x4096 --primitives bfs,sssp   # long diameter
    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 scripts/bench.py --backend numpy --scale 20   # CPU vs libraries

Modes (``--mode``, default ``bench``, the benchmark below):

* ``trace``: one run of each primitive after a warm-up on ``--devices``
  devices (under ``mpiexec``, the ranks), printed per superstep and device as
  the enactor records it in ``stats["per_device"]``: frontier, compute,
  split + package, push, wait, combine (us) and bytes sent.
* ``profile``: cProfile of ``--runs`` runs of each primitive after a warm-up,
  in this process: one device, or under ``mpiexec`` each rank's own device
  (rank 0 prints every rank's).  The ``--top`` functions by own and by
  cumulative time, in us summed over the runs.  Under ``mpiexec`` both
  modes give each rank only its own part of the graph, as a run on the
  ranks builds it (``mgraph.load`` of the spec), so that they reach the
  scales that need every rank's GPU.
* ``peer``: how fast a package goes from one device to the others through
  the transport the exchange uses (peer copies between the devices of one
  process, MPI or NCCL between ranks): every device sends ``--sizes`` MiB to
  every other at once, median of ``--runs`` hops after a warm-up, GB/s per
  peer and direction.  No graph is built.
* ``hop``: the host time one device spends per superstep on its exchange,
  with no peer to wait for: ``Exchange.run`` on the first of two parts of a
  path (a transport that delivers nothing), for an output frontier of one own
  vertex (kept) and of one copy of the other part's vertex (packaged for
  it); beside them the superstep's other small reads (a count of own
  vertices, an id range, a one-vertex advance).  Per case the best and the
  median of ``--runs`` batches of 2000 calls, in us per call.  This is the
  floor under the per-superstep overhead of several devices, which the
  scaling script's overhead experiment measures with its waits.  No R-MAT
  graph is generated.
* ``threads``: on the CPU (``--backend numpy``), each primitive with each of
  ``--threads`` counts of compiled-kernel threads (the run option ``threads``,
  e.g. ``1,2``), their runs alternating after a warm-up at each; medians and
  each count's speedup over the first (issue 36's floor: two threads >= 1.6x
  one on BFS, PageRank and CC), and beside each primitive the speedup of a
  compute-bound control loop run right after it: on a shared machine, what
  the cores gave while that primitive ran.
* ``load``: the loaders' rate on files it writes first (``--formats`` of
  ``--edges`` random edges, ids below a power of two near edges / 2.4, in
  ``--dir`` or a temporary folder it removes): SNAP text (tab-separated, a
  comment header), the same gzipped, CSV with a header and Matrix Market
  real general (weights k/8).  Per format, after one untimed read (which
  imports pyarrow and records which parser took the file), ``--runs`` times
  ``mgraph.io.read_edges`` (read + parse) and ``mgraph.load`` (+ building the
  simple CSR graph on ``--backend``'s device); medians in M edges/s, with the
  line-aware reader alone beside them (``--no-baselines`` leaves it out) and
  the SNAP floors at 10 M edges (parse >= 12, load >= 6 M edges/s on the
  project's 2-core CPU box).  No R-MAT graph is generated.

On the CPU (``--backend numpy``; ``--no-libraries`` leaves it out) the
default primitives add core numbers (kcore) and triangles (tc), and the CPU
libraries installed (the ``bench`` extra: networkit, python-igraph; scipy
always) run beside each primitive on the same graph: each warmed up once,
then once after each of mgraph's timed runs from the same start, so that both
see the same machine; networkit on one thread.  The last table gives each
library's median, mgraph's whole API call (what a user waits for, as for a
library's call) and the run's own time, and mgraph's call over the fastest
library's against issue 36's floor (<= 1.5x on one thread: run with
``NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1``).  mgraph's warm-up includes
numba's compilation.

Beside the table (``--no-baselines`` leaves it out): the wall time of a whole
``mgraph.bfs`` call, with NumPy results and with ``output="device"``, next to
the run's own time and the copy of its result arrays alone; and what a user of
the array library would write instead, timed on the same graph in the same
run: PageRank as a loop of sparse matrix-vector products (cuSPARSE through
cupyx on a GPU) in float64 and float32, and BFS as SpMV over a dense frontier,
each with its ratio to mgraph's figure.

Per primitive: one untimed warm-up run, then ``--runs`` timed runs from each
of ``--sources`` random sources of degree >= 1 (traversals and BC; CC and
PageRank have no source).  Times are the runs' own stats (CUDA events on a
GPU); generation is timed apart.  Traversal GTEPS is the harmonic mean over
sources of Graph500 TEPS (undirected input edges in the component / median
time), with Gunrock's directed-edge TEPS beside it.  One run per primitive
is checked against a CPU reference unless ``--no-validate``.  Progress goes
to stderr; the short table is printed last.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout

import mgraph  # noqa: E402
from mgraph.backend import BACKENDS, Backend  # noqa: E402
from mgraph.check.runs import checker  # noqa: E402
from mgraph.cli import (PR_L1_STOP, TRAVERSALS, on_device, process_device, random_sources,  # noqa: E402
                        run_primitive)
from mgraph.graph500 import DEFAULT_WEIGHTS  # noqa: E402
from mgraph.group import is_root, world  # noqa: E402
from mgraph.io import generators  # noqa: E402
from mgraph.parts.partitioned import PartitionedGraph  # noqa: E402
from mgraph.report import code_version, fmt_figure, harmonic_mean, now, write_json  # noqa: E402

MODES = ("bench", "trace", "profile", "peer", "hop", "load", "threads")
HOP_CALLS = 2000  # --mode hop: calls per timed batch
SSSP_WEIGHTS = DEFAULT_WEIGHTS  # integer weights 1..64, as Gunrock's SSSP benchmarks (and mgraph graph500) use
PR_L1 = PR_L1_STOP  # PageRank runs until the rank vector's L1 change is below this (networkx's tol = PR_L1 / |V|)
FLOOR_SCALE, FLOOR_EDGE_FACTOR = 24, 16
# The floors on one GPU at R-MAT scale 24, edge factor 16: (figure, comparison, bound, unit).
# TEPS floors are read against the Graph500 figure, the project's primary TEPS definition.
FLOORS = {
    "bfs": ("graph500_gteps", ">=", 45, "GTEPS"),
    "dobfs": ("graph500_gteps", ">=", 200, "GTEPS"),
    "sssp": ("median_ms", "<=", 20, "ms"),
    "cc": ("median_ms", "<=", 5, "ms"),
    "pr": ("ms_per_iteration", "<=", 3.5, "ms/iter"),
    "bc": ("median_ms", "<=", 18, "ms/source"),
}
BENCHED = tuple(FLOORS)  # the primitives with GPU floors, benchmarked by default on a GPU
# On the CPU (--backend numpy) the default adds core numbers and triangles, which the CPU libraries compare on
CPU_BENCHED = ("bfs", "dobfs", "sssp", "cc", "pr", "kcore", "tc")
CHOICES = BENCHED + ("kcore", "tc")
BASELINE_PR_ITERATIONS = 20
# --mode load: the formats it writes, and the floors of issue 22 on a 10 M-edge SNAP edge list (2-core CPU box)
LOAD_FORMATS = ("txt", "txt.gz", "csv", "mtx")
LOAD_FLOOR_EDGES = 10_000_000
LOAD_FLOORS = {"parse": 12.0, "load": 6.0}  # M edges/s, SNAP .txt
LIBRARY_FLOOR = 1.5  # issue 36: on one CPU thread, mgraph's time <= 1.5x the fastest single-threaded library's


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _arguments(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", type=int, default=24, help="R-MAT scale: 2**SCALE vertices (default 24)")
    p.add_argument("--edge-factor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--graph", metavar="SPEC", help="a generator spec instead of R-MAT --scale: grid:4096x4096 or "
                   "rgg:22 (long-diameter graphs, where the per-superstep cost shows); the floors are R-MAT 24's")
    p.add_argument("--primitives", help=f"comma list of {','.join(CHOICES)} (default {','.join(BENCHED)}; with "
                   f"--backend numpy {','.join(CPU_BENCHED)})")
    p.add_argument("--runs", type=int, default=5, help="timed runs per source (default 5)")
    p.add_argument("--sources", type=int, default=8, help="random sources for traversals and BC (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed for the graph, sources and weights")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--validate", action=argparse.BooleanOptionalAction, default=True,
                   help="check one run per primitive against a CPU reference (default on)")
    p.add_argument("--json", metavar="FILE", help="write the full results here")
    p.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                   help="bench: also time the API call around BFS and the SpMV PageRank / BFS a user would write")
    p.add_argument("--libraries", action=argparse.BooleanOptionalAction, default=None,
                   help="bench on the CPU (--backend numpy; default on there): time scipy.sparse.csgraph, networkit "
                        "and igraph on one thread beside each primitive, alternating with mgraph's runs, and print "
                        f"mgraph's time over the fastest library's (issue 36's floor: <= {LIBRARY_FLOOR:g}x)")
    p.add_argument("--mode", choices=MODES, default="bench",
                   help="bench (default), trace, profile, peer, hop, load or threads")
    p.add_argument("--threads", help="CPU: the run option threads (the compiled kernels' threads) for every run; "
                   "--mode threads: a comma list of counts to compare (default 1,2)")
    p.add_argument("--devices", type=int, default=None,
                   help="trace, peer: devices in this process (default 2); profile: 1; under mpiexec the ranks")
    p.add_argument("--top", type=int, default=25, help="profile: functions listed per table (default 25)")
    p.add_argument("--sizes", default="1,8,64,256", help="peer: MiB per package, a comma list (default 1,8,64,256)")
    p.add_argument("--edges", type=int, default=LOAD_FLOOR_EDGES,
                   help=f"load: edges per generated file (default {LOAD_FLOOR_EDGES:,})")
    p.add_argument("--formats", default=",".join(LOAD_FORMATS),
                   help=f"load: comma list of {','.join(LOAD_FORMATS)} (default all)")
    p.add_argument("--dir", help="load: write the files here and keep them (default: a temporary folder, removed)")
    args = p.parse_args(argv)
    if args.mode == "load":
        args.formats = [x.strip() for x in args.formats.split(",") if x.strip()]
        unknown = sorted(set(args.formats) - set(LOAD_FORMATS))
        if unknown or not args.formats:
            p.error(f"--formats takes a comma list of {', '.join(LOAD_FORMATS)}, got {unknown[0] if unknown else 'none'}")
        if args.edges < 1 or args.runs < 1:
            p.error("--edges and --runs must be >= 1")
        if world() is not None:
            p.error("--mode load times one process's loaders: run it without mpiexec")
        return args
    try:
        counts = [int(x) for x in (args.threads or ("1,2" if args.mode == "threads" else "")).split(",") if x.strip()]
    except ValueError:
        p.error(f"--threads takes a thread count (a comma list with --mode threads), got {args.threads!r}")
    if any(c < 1 for c in counts) or (args.mode != "threads" and len(counts) > 1):
        p.error(f"--threads takes a positive count (a comma list with --mode threads), got {args.threads!r}")
    if (counts or args.mode == "threads") and args.backend != "numpy":
        p.error("--threads and --mode threads are the CPU kernels' threads: add --backend numpy")
    args.threads = counts if args.mode == "threads" else (counts[0] if counts else None)
    if args.mode == "hop":
        if args.runs < 1:
            p.error("--runs must be >= 1")
        if world() is not None:
            p.error("--mode hop times one device of one process: run it without mpiexec")
    if args.devices is None:
        args.devices = 1 if args.mode in ("bench", "profile", "hop", "threads") else 2
    if args.devices < 1 or args.top < 1:
        p.error("--devices and --top must be >= 1")
    if args.mode == "profile" and args.devices > 1 and world() is None:
        p.error("--mode profile sees this process's thread only: profile one device, or start one rank per "
                "device (mpiexec -n P python scripts/bench.py --mode profile ...)")
    if args.mode == "peer" and args.devices < 2 and world() is None:
        p.error("--mode peer needs --devices >= 2 (or mpiexec -n P with P >= 2)")
    try:
        args.sizes = [float(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        p.error(f"--sizes takes MiB as a comma list of numbers, got {args.sizes!r}")
    if not args.sizes or min(args.sizes) <= 0:
        p.error("--sizes must list positive sizes in MiB")
    if args.primitives is None:
        args.primitives = ",".join(CPU_BENCHED if args.backend == "numpy" else BENCHED)
    args.primitives = [x.strip() for x in args.primitives.split(",") if x.strip()]
    unknown = sorted(set(args.primitives) - set(CHOICES))
    if unknown:
        p.error(f"unknown primitive {unknown[0]!r}: choose from {', '.join(CHOICES)}")
    if args.libraries is None:
        args.libraries = args.backend == "numpy"
    elif args.libraries and args.backend != "numpy":
        p.error("--libraries compares the CPU libraries with mgraph's CPU backend: add --backend numpy")
    if args.runs < 1 or args.sources < 1:
        p.error("--runs and --sources must be >= 1")
    return args


def _params(name, graph) -> dict:
    return {"tol": PR_L1 / graph.num_vertices} if name == "pr" else {}


def _starts(name, sources) -> list:
    """What each run starts from: a source (traversals), a list of one (BC), or nothing (CC, PageRank)."""
    return [[s] for s in sources] if name == "bc" else sources if name in TRAVERSALS else [None]


def _weighted(name, graph, args, backend):
    """SSSP's graph: ``graph`` with integer weights SSSP_WEIGHTS; on the ranks the same spec drawn with them."""
    if name != "sssp":
        return graph
    if isinstance(graph, PartitionedGraph):
        spec = args.graph or f"rmat:{args.scale}:{args.edge_factor}"
        return mgraph.load(spec, backend=backend, seed=args.seed, weights=SSSP_WEIGHTS)
    return generators.with_random_weights(graph, *SSSP_WEIGHTS, seed=args.seed)


def bench(name, graph, sources, args, backend, check, beside=None):
    """Warm-up, then ``args.runs`` timed runs per start (source, or the one start of CC and PageRank).  ``beside``
    (library -> its call on a start): each library is warmed up too, then runs once after each of mgraph's runs,
    from the same start, so that both see the same machine; the record's ``libraries`` has their medians."""
    run = {"backend": backend, **({"threads": args.threads} if args.threads else {})}
    params, starts = _params(name, graph), _starts(name, sources)
    beside = beside or {}
    run_primitive(name, graph, starts[0], run=run, **params)  # the warm-up: on the CPU it compiles the kernels
    for lib, call in beside.items():
        _log(f"{name}: warming up {lib}")
        call(starts[0])
    per_start = []
    lib_times = {lib: [] for lib in beside}
    for i, s in enumerate(starts):
        _log(f"{name}: {args.runs} run(s) from start {i + 1}/{len(starts)}"
             + (f", each followed by {', '.join(beside)}" if beside else ""))
        results, walls, mine = [], [], {lib: [] for lib in beside}
        for _ in range(args.runs):
            t = time.perf_counter()
            results.append(run_primitive(name, graph, s, run=run, **params))
            walls.append(time.perf_counter() - t)
            for lib, call in beside.items():
                t = time.perf_counter()
                call(s)
                mine[lib].append(time.perf_counter() - t)
        for lib in beside:
            lib_times[lib].append(mine[lib])
        times = [r.stats["elapsed_s"] for r in results]
        middle = sorted(results, key=lambda r: r.stats["elapsed_s"])[(len(results) - 1) // 2]
        per_start.append({"start": s, "times_s": times, "median_s": statistics.median(times), "call_s": walls,
                          "call_median_s": statistics.median(walls),
                          "iterations": middle.stats["iterations"], "supersteps": middle.stats["supersteps"],
                          **{k: middle.stats[k] for k in ("edges_in_component", "arcs_traversed", "converged",
                                                          "ms_per_iteration") if k in middle.stats}})
    record = {
        "median_ms": 1e3 * statistics.median(p["median_s"] for p in per_start),
        "iterations": statistics.median(p["iterations"] for p in per_start),
        "supersteps": statistics.median(p["supersteps"] for p in per_start),
        "call_median_ms": 1e3 * statistics.median(p["call_median_s"] for p in per_start),
        "starts": per_start,
    }
    if beside:
        # per library the median over starts of its per-start medians, as mgraph's; the ratio compares the whole
        # API call (what a user waits for, as a library's call is) with the fastest library
        record["libraries"] = {lib: {"median_ms": 1e3 * statistics.median(statistics.median(t) for t in ts),
                                     "times_s": ts} for lib, ts in lib_times.items()}
        fastest = min(record["libraries"], key=lambda lib: record["libraries"][lib]["median_ms"])
        record["fastest_library"] = fastest
        record["library_ratio"] = record["call_median_ms"] / record["libraries"][fastest]["median_ms"]
        record["library_floor"] = LIBRARY_FLOOR
        record["library_met"] = record["library_ratio"] <= LIBRARY_FLOOR
    # a superstep's cost where the host drives each one: the run's time over its supersteps (small levels run
    # several to a superstep on one device, so a long-diameter traversal has far fewer supersteps than levels)
    record["us_per_superstep"] = 1e3 * record["median_ms"] / max(record["supersteps"], 1)
    if name in TRAVERSALS:
        record["graph500_gteps"] = harmonic_mean(p["edges_in_component"] / p["median_s"] for p in per_start) / 1e9
        record["directed_gteps"] = harmonic_mean(p["arcs_traversed"] / p["median_s"] for p in per_start) / 1e9
    if name == "pr":
        record["ms_per_iteration"] = 1e3 * per_start[0]["median_s"] / max(per_start[0]["iterations"], 1)
        record["converged"] = per_start[0]["converged"]
    if check is not None:
        _log(f"{name}: validating one run")
        t0 = time.perf_counter()
        message = check(results[-1], starts[-1])  # the last run from the last start
        record["validation"] = "PASS" if message is None else f"FAIL: {message}"
        record["validation_s"] = time.perf_counter() - t0
    if name not in FLOORS:  # core numbers and triangles: no GPU floor, only the CPU libraries' (above)
        record["floor"], record["met"] = None, None
        return record
    figure, op, bound, unit = FLOORS[name]
    record["floor"] = {"figure": figure, "op": op, "bound": bound, "unit": unit}
    if args.graph is None and (args.scale, args.edge_factor) == (FLOOR_SCALE, FLOOR_EDGE_FACTOR):
        record["met"] = record[figure] >= bound if op == ">=" else record[figure] <= bound
    else:
        record["met"] = None  # the floors are set for scale 24 only
    return record


# -- the CPU libraries beside mgraph (--backend numpy) ----------------------------------------------------------
# What each library runs for a primitive: the same problem on the same graph (built once per graph, untimed).
# BFS: scipy's breadth_first_order (with predecessors, as mgraph gives), networkit's BFS, igraph's bfs; SSSP:
# scipy's dijkstra (predecessors too), networkit's Dijkstra; CC: scipy's connected_components, networkit's and
# igraph's; PageRank: networkit's power iteration to the same L1 stop and igraph's PRPACK solve; core numbers:
# networkit's CoreDecomposition, igraph's coreness; triangles at each vertex: networkit's local clustering
# coefficient (turbo) and igraph's transitivity_local_undirected, which count them.
LIBRARIES = {
    "bfs": ("scipy", "networkit", "igraph"), "dobfs": ("scipy", "networkit", "igraph"),
    "sssp": ("scipy", "networkit"), "cc": ("scipy", "networkit", "igraph"), "pr": ("networkit", "igraph"),
    "kcore": ("networkit", "igraph"), "tc": ("networkit", "igraph"),
}


def library_versions() -> dict:
    """The libraries that can be imported here, with their versions and thread settings: networkit on one thread
    (``setNumberOfThreads(1)``); igraph and scipy.sparse.csgraph run on one thread; set ``OMP_NUM_THREADS=1`` too,
    before Python starts, for any library built with OpenMP."""
    out = {}
    import scipy

    out["scipy"] = scipy.__version__
    try:
        import networkit as nk

        nk.setNumberOfThreads(1)
        out["networkit"] = f"{nk.__version__} ({nk.getMaxNumberOfThreads()} thread)"
    except ImportError:
        pass
    try:
        import igraph

        out["igraph"] = igraph.__version__
    except ImportError:
        pass
    out["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS")
    return out


class LibraryGraphs:
    """``graph`` (a whole NumPy Graph) as each library holds it, built on first use: a scipy CSR matrix (the same
    arrays), a networkit Graph and an igraph Graph (each undirected edge once, with its weight)."""

    def __init__(self, graph):
        self.graph, self._made = graph, {}

    def _edges(self):
        g = self.graph
        src = np.repeat(np.arange(g.num_vertices, dtype=np.int64), np.diff(g.indptr))
        dst = g.indices.astype(np.int64)
        w = g.weights
        if not g.directed:  # each edge once
            keep = src < dst
            src, dst, w = src[keep], dst[keep], None if w is None else w[keep]
        return src, dst, w

    def get(self, lib):
        if lib not in self._made:
            g = self.graph
            if lib == "scipy":
                import scipy.sparse as sparse

                data = g.weights if g.weights is not None else np.ones(g.num_arcs, dtype=np.float64)
                self._made[lib] = sparse.csr_matrix((data, g.indices, g.indptr), shape=(g.num_vertices,) * 2)
            elif lib == "networkit":
                import networkit as nk

                src, dst, w = self._edges()
                coo = (src, dst) if w is None else (w.astype(np.float64), (src, dst))
                self._made[lib] = nk.graph.GraphFromCoo(coo, n=g.num_vertices, weighted=w is not None,
                                                        directed=g.directed)
            else:
                import igraph

                src, dst, w = self._edges()
                ig = igraph.Graph(n=g.num_vertices, edges=np.column_stack((src, dst)), directed=g.directed)
                if w is not None:
                    ig.es["weight"] = w.tolist()
                self._made[lib] = ig
        return self._made[lib]


def library_calls(name, graph, lgraphs, available) -> dict:
    """library -> a call of its ``name`` on a start (source or None), for the libraries installed."""
    import scipy.sparse.csgraph as csgraph

    calls = {}
    directed = graph.directed
    for lib in LIBRARIES[name]:
        if lib not in available or (name in ("tc", "kcore") and directed):
            continue
        G = lgraphs.get(lib)
        if lib == "scipy":  # directed=True: the CSR holds both arcs of an undirected edge already, and scipy's
            # directed=False would add the matrix's transpose to it on every call
            if name in ("bfs", "dobfs"):
                calls[lib] = lambda s, G=G: csgraph.breadth_first_order(G, s, directed=True, return_predecessors=True)
            elif name == "sssp":
                calls[lib] = lambda s, G=G: csgraph.dijkstra(G, directed=True, indices=s, return_predecessors=True)
            elif name == "cc":
                calls[lib] = lambda s, G=G: csgraph.connected_components(G, directed=True, connection="weak")
        elif lib == "networkit":
            import networkit as nk

            def nk_run(algorithm):
                algorithm.run()
                return algorithm
            if name in ("bfs", "dobfs"):
                calls[lib] = lambda s, G=G: nk_run(nk.distance.BFS(G, s, storePaths=False))
            elif name == "sssp":
                calls[lib] = lambda s, G=G: nk_run(nk.distance.Dijkstra(G, s, storePaths=False))
            elif name == "cc":
                calls[lib] = lambda s, G=G: nk_run(nk.components.WeaklyConnectedComponents(G) if directed
                                                   else nk.components.ConnectedComponents(G))
            elif name == "pr":
                def pagerank(s, G=G):
                    # sinks' rank spread over every vertex, as networkx and mgraph do
                    pr = nk.centrality.PageRank(G, damp=0.85, tol=PR_L1,
                                                distributeSinks=nk.centrality.SinkHandling.DistributeSinks)
                    pr.norm = nk.centrality.Norm.L1_NORM
                    return nk_run(pr)
                calls[lib] = pagerank
            elif name == "kcore":
                calls[lib] = lambda s, G=G: nk_run(nk.centrality.CoreDecomposition(G))
            elif name == "tc":
                calls[lib] = lambda s, G=G: nk_run(nk.centrality.LocalClusteringCoefficient(G, turbo=True))
        else:
            if name in ("bfs", "dobfs"):
                calls[lib] = lambda s, G=G: G.bfs(s)
            elif name == "cc":
                calls[lib] = lambda s, G=G: G.connected_components(mode="weak")
            elif name == "pr":
                calls[lib] = lambda s, G=G: G.pagerank(damping=0.85)
            elif name == "kcore":
                calls[lib] = lambda s, G=G: G.coreness()
            elif name == "tc":
                calls[lib] = lambda s, G=G: G.transitivity_local_undirected(mode="zero")
    return calls


def _timed(backend, fn):
    """Seconds of ``fn()`` on the host clock, the device idle before and after (what a caller waits)."""
    backend.synchronize()
    t0 = time.perf_counter()
    out = fn()
    backend.synchronize()
    return time.perf_counter() - t0, out


def call_cost(graph, sources, args, backend) -> dict:
    """What a user's ``mgraph.bfs(g, s)`` costs around the algorithm: the call's wall time with NumPy results
    and with results left on the device (``output="device"``), beside the run's own time (``.stats``) and the
    copy of its two result arrays to the host alone.  Medians over ``--runs`` calls from the first source."""
    import mgraph
    from mgraph.backend import to_host

    s = sources[0]
    out = {"source": s}
    def call(output):
        """(wall seconds, run seconds) of one call, its result dropped before the next: a caller who keeps every
        result pays for fresh host memory each call instead (see docs/perf-notes.md)."""
        t, r = _timed(backend, lambda: mgraph.bfs(graph, s, backend=backend.name, output=output))
        return t, r.stats["elapsed_s"]

    for output in ("numpy", "device"):
        mgraph.bfs(graph, s, backend=backend.name, output=output)  # warm-up
        calls = [call(output) for _ in range(args.runs)]
        out[output] = {"wall_ms": 1e3 * statistics.median(t for t, _ in calls),
                       "run_ms": 1e3 * statistics.median(run for _, run in calls)}
        out[output]["overhead_ms"] = out[output]["wall_ms"] - out[output]["run_ms"]
    r = mgraph.bfs(graph, s, backend=backend.name, output="device")
    copies = [_timed(backend, lambda: (to_host(r.depth), to_host(r.predecessor)))[0] for _ in range(args.runs)]
    out["copy_ms"] = 1e3 * statistics.median(copies)
    return out


def baselines(graph, sources, args, backend, results) -> dict:
    """What a user of the array library would write instead, on the same graph in the same run: PageRank as a
    loop of sparse matrix-vector products (cuSPARSE through cupyx on a GPU, scipy on the CPU) in float64 and
    float32, reading the L1 change each iteration; and BFS as SpMV over a dense frontier (GraphBLAS style).
    Each beside mgraph's figure from this run, as a ratio (> 1: mgraph is faster)."""
    xp = backend.xp
    if backend.is_gpu:
        import cupyx.scipy.sparse as sparse
    else:
        import scipy.sparse as sparse
    n = graph.num_vertices
    rg = graph.reverse()
    out = {}
    deg = xp.diff(graph.indptr).astype(xp.float64)
    for dtype in ("float64", "float32"):
        a = sparse.csr_matrix((xp.ones(rg.num_arcs, dtype=dtype), rg.indices, rg.indptr), shape=(n, n))
        inv = xp.where(deg > 0, 1.0 / xp.maximum(deg, 1), 0.0).astype(dtype)
        dangling = deg == 0

        def pagerank(a=a, inv=inv, dangling=dangling, dtype=dtype):
            x = xp.full(n, 1.0 / n, dtype=dtype)
            for _ in range(BASELINE_PR_ITERATIONS):
                new = 0.85 * (a @ (x * inv) + x[dangling].sum() / n) + 0.15 / n
                float(xp.abs(new - x).sum())  # the stop test's read, as a loop to convergence has it
                x = new
            return x
        pagerank()
        times = [_timed(backend, pagerank)[0] for _ in range(max(args.runs, 1))]
        out[f"pr_spmv_{dtype}_ms_per_iter"] = 1e3 * statistics.median(times) / BASELINE_PR_ITERATIONS
        del a
    a = sparse.csr_matrix((xp.ones(rg.num_arcs, dtype=xp.float32), rg.indices, rg.indptr), shape=(n, n))

    def bfs(s):
        frontier = xp.zeros(n, dtype=xp.float32)
        frontier[s] = 1
        visited = frontier > 0
        while True:
            new = ((a @ frontier) > 0) & ~visited
            if not bool(new.any()):
                return visited
            visited |= new
            frontier = new.astype(xp.float32)
    bfs(sources[0])
    out["bfs_spmv_ms"] = 1e3 * statistics.median(
        statistics.median(_timed(backend, lambda: bfs(s))[0] for _ in range(max(args.runs, 1))) for s in sources)
    a = None  # the matrix goes before mgraph's float32-shares runs (bfs keeps the name, not the matrix)
    if "pr" in results:
        for dtype in ("float64", "float32"):
            out[f"pr_ratio_{dtype}"] = out[f"pr_spmv_{dtype}_ms_per_iter"] / results["pr"]["ms_per_iteration"]
        out.update(float32_shares(graph, args, backend))
        out["pr_f32_shares_ratio_float64"] = out["pr_spmv_float64_ms_per_iter"] / out["pr_f32_shares_ms_per_iter"]
    if "bfs" in results:
        out["bfs_ratio"] = out["bfs_spmv_ms"] / results["bfs"]["median_ms"]
    return out


def float32_shares(graph, args, backend) -> dict:
    """mgraph's PageRank with float32 shares (``shares="float32"``) on the same graph and stop: ms per iteration
    (median of --runs after a warm-up), and how far its ranks are from the float64 run's (L1; the API bounds the
    fixed points' distance by alpha * 2**-24 / (1 - alpha) = 3.4e-7, the stop adds its own)."""
    from mgraph.backend import to_numpy

    run, params = _run_options(args, backend), _params("pr", graph)
    exact = to_numpy(run_primitive("pr", graph, run=run, **params).rank)
    run_primitive("pr", graph, run=run, shares="float32", **params)
    results = [run_primitive("pr", graph, run=run, shares="float32", **params) for _ in range(max(args.runs, 1))]
    return {"pr_f32_shares_ms_per_iter": statistics.median(r.stats["ms_per_iteration"] for r in results),
            "pr_f32_shares_iterations": results[-1].stats["iterations"],
            "pr_f32_shares_l1_from_float64": float(np.abs(to_numpy(results[-1].rank) - exact).sum())}


def _side_table(side, results) -> str:
    c = side["call"]
    rows = [["mgraph.bfs call, NumPy results", fmt_figure(c["numpy"]["wall_ms"]), fmt_figure(c["numpy"]["run_ms"]),
             fmt_figure(c["numpy"]["overhead_ms"]), f"copy of the two result arrays alone {fmt_figure(c['copy_ms'])} ms"],
            ["mgraph.bfs call, output='device'", fmt_figure(c["device"]["wall_ms"]), fmt_figure(c["device"]["run_ms"]),
             fmt_figure(c["device"]["overhead_ms"]), ""]]
    if "pr" in results:
        for dtype in ("float64", "float32"):
            rows.append([f"PageRank as an SpMV loop, {dtype} (ms/iter)", fmt_figure(side[f"pr_spmv_{dtype}_ms_per_iter"]),
                         fmt_figure(results["pr"]["ms_per_iteration"]), "",
                         f"mgraph {fmt_figure(side[f'pr_ratio_{dtype}'], 3)}x as fast"])
        rows.append(["mgraph PageRank, float32 shares (ms/iter)", fmt_figure(side["pr_f32_shares_ms_per_iter"]),
                     fmt_figure(side["pr_f32_shares_ms_per_iter"]), "",
                     f"{fmt_figure(side['pr_f32_shares_ratio_float64'], 3)}x the float64 SpMV loop; ranks "
                     f"{fmt_figure(side['pr_f32_shares_l1_from_float64'], 3)} (L1) from float64 shares'"])
    if "bfs" in results:
        rows.append(["BFS as SpMV over a dense frontier", fmt_figure(side["bfs_spmv_ms"]), fmt_figure(results["bfs"]["median_ms"]),
                     "", f"mgraph {fmt_figure(side['bfs_ratio'], 3)}x as fast"])
    return _table(rows, ["side by side (same graph, same run)", "ms", "mgraph ms", "call overhead ms", ""])


def _numba_pool():
    """numba's thread pool (NUMBA_NUM_THREADS), the most threads a run may ask for (None where numba is missing)."""
    try:
        import numba
    except ImportError:
        return None
    return numba.config.NUMBA_NUM_THREADS


def _numba_threads():
    """The threads mgraph's compiled CPU kernels use in this process (None where numba is missing)."""
    try:
        from mgraph.ops import numba_ops
    except ImportError:
        return None
    return numba_ops.threads()


def _library_table(results, libraries) -> str:
    """Per primitive: mgraph's whole call and the run's own time, each library's, and mgraph over the fastest."""
    libs = [lib for lib in ("scipy", "networkit", "igraph") if lib in libraries]
    rows = []
    for name, r in results.items():
        lib_ms = r.get("libraries", {})
        rows.append([name, fmt_figure(r["call_median_ms"]), fmt_figure(r["median_ms"]),
                     *(fmt_figure(lib_ms[lib]["median_ms"]) if lib in lib_ms else "-" for lib in libs),
                     r.get("fastest_library", "-"), fmt_figure(r.get("library_ratio"), 3),
                     "-" if "library_met" not in r else "yes" if r["library_met"] else "no"])
    threads = _numba_threads()
    head = (f"CPU libraries beside mgraph (same graph, same run, alternating; medians; mgraph's numba threads: "
            f"{threads}; {', '.join(f'{k} {v}' for k, v in libraries.items())})")
    return head + "\n" + _table(rows, ["primitive", "mgraph call ms", "mgraph run ms", *(f"{lib} ms" for lib in libs),
                                       "fastest", "mgraph / fastest", f"<= {LIBRARY_FLOOR:g}x"])


def _table(rows, header) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


# -- the diagnostic modes: trace, profile, peer -------------------------------------------------------------
STEP_TIMES = (("compute_s", "compute"), ("package_s", "split+package"), ("push_s", "push"), ("wait_s", "wait"),
              ("combine_s", "combine"))


def _run_options(args, backend) -> dict:
    """mgraph's run options: ``--devices`` in this process; under mpiexec the ranks are the devices."""
    run = {"backend": backend} if world() is not None else {"backend": backend, "devices": args.devices}
    if isinstance(args.threads, int):
        run["threads"] = args.threads
    return run


def control_speedups(counts, runs) -> dict:
    """What the machine gives threads at all: a compute-bound loop (no memory traffic to speak of, no graph) split
    into equal ranges, on each of ``counts`` threads, alternating, median of ``runs`` after a warm-up.  A shared
    machine whose other cores are busy shows it here: the loop's speedup bounds any kernel's."""
    import numba

    @numba.njit(parallel=True)
    def spin(a, parts):
        out = np.zeros(parts)
        n = a.shape[0]
        for c in numba.prange(parts):
            acc = 0.0
            for i in range(n * c // parts, n * (c + 1) // parts):
                x = a[i]
                for _ in range(50):
                    x = x * 1.0000001 + 1e-9
                acc += x
            out[c] = acc
        return out.sum()

    a = np.random.default_rng(0).random(1 << 20)
    times = {t: [] for t in counts}
    before = numba.get_num_threads()
    try:
        for t in counts:
            numba.set_num_threads(t)
            spin(a, 64)
        for _ in range(max(runs, 3)):
            for t in counts:
                numba.set_num_threads(t)
                t0 = time.perf_counter()
                spin(a, 64)
                times[t].append(time.perf_counter() - t0)
    finally:
        numba.set_num_threads(before)
    medians = {t: 1e3 * statistics.median(ts) for t, ts in times.items()}
    return {"median_ms": {str(t): medians[t] for t in counts},
            "speedup": {str(t): medians[counts[0]] / medians[t] for t in counts}}


def thread_counts(name, graph, sources, args, backend) -> dict:
    """``name`` with each of ``args.threads`` kernel thread counts (the run option), one warm-up at each, then
    ``args.runs`` rounds per start, each round one run at every count: medians and speedups over the first count."""
    params, starts = _params(name, graph), _starts(name, sources)
    runs = {t: {"backend": backend, "devices": args.devices, "threads": t} for t in args.threads}
    for t, run in runs.items():
        _log(f"{name}: warm-up with {t} thread(s)")
        run_primitive(name, graph, starts[0], run=run, **params)
    times = {t: [] for t in runs}
    for i, s in enumerate(starts):
        _log(f"{name}: {args.runs} round(s) of {', '.join(map(str, runs))} thread(s) from start {i + 1}/{len(starts)}")
        mine = {t: [] for t in runs}
        for _ in range(args.runs):
            for t, run in runs.items():
                mine[t].append(run_primitive(name, graph, s, run=run, **params).stats["elapsed_s"])
        for t in runs:
            times[t].append(mine[t])
    medians = {t: 1e3 * statistics.median(statistics.median(ts) for ts in times[t]) for t in runs}
    first = args.threads[0]
    return {"starts": starts, "times_s": {str(t): times[t] for t in runs},
            "median_ms": {str(t): medians[t] for t in runs},
            "speedup": {str(t): medians[first] / medians[t] for t in runs}}


def trace(name, graph, sources, args, backend) -> dict:
    """One run of ``name`` after a warm-up (which builds the parts and compiles the kernels): per superstep and
    device, the records every run keeps in ``stats["per_device"]``."""
    run, params, start = _run_options(args, backend), _params(name, graph), _starts(name, sources)[0]
    _log(f"{name}: warm-up, then one traced run")
    run_primitive(name, graph, start, run=run, **params)
    stats = run_primitive(name, graph, start, run=run, **params).stats
    per_device = stats["per_device"]
    steps = [{"superstep": k, "device": d, "frontier": int(rec["frontier"][k]), "bytes": int(rec["bytes"][k]),
              **{key: float(rec[key][k]) for key, _ in STEP_TIMES}}
             for k in range(len(per_device[0]["frontier"])) for d, rec in enumerate(per_device)]
    return {"start": start, "devices": len(per_device), "elapsed_s": stats["elapsed_s"],
            "supersteps": len(per_device[0]["frontier"]), "iterations": stats["iterations"], "steps": steps}


def profile(name, graph, sources, args, backend) -> dict:
    """cProfile of ``args.runs`` runs of ``name`` after a warm-up, in this process (one device, or this rank's);
    under mpiexec the record holds every rank's."""
    import cProfile
    import pstats

    run, params, start = _run_options(args, backend), _params(name, graph), _starts(name, sources)[0]
    _log(f"{name}: warm-up, then {args.runs} profiled run(s)")
    run_primitive(name, graph, start, run=run, **params)
    prof = cProfile.Profile()
    prof.enable()
    try:
        for _ in range(args.runs):
            run_primitive(name, graph, start, run=run, **params)
    finally:
        prof.disable()
    rows = [{"function": f"{os.path.basename(file)}:{line}({func})", "calls": calls, "own_us": 1e6 * own,
             "cumulative_us": 1e6 * cumulative}
            for (file, line, func), (_, calls, own, cumulative, _) in pstats.Stats(prof).stats.items()]
    mine = {"rank": 0 if world() is None else world().rank, "device": backend.device_name(),
            "by_own": sorted(rows, key=lambda r: -r["own_us"])[:args.top],
            "by_cumulative": sorted(rows, key=lambda r: -r["cumulative_us"])[:args.top]}
    ranks = [mine] if world() is None else world().allgather(mine)
    return {"start": start, "runs": args.runs, "ranks": ranks}


def peer(args, backend) -> list:
    """Every device sends a package of each of ``args.sizes`` MiB to every other at once, through the transport the
    exchange uses; per size the median over ``args.runs`` hops (a hop ends when the slowest device has received)."""
    w = world()
    if w is None:
        if backend.is_gpu and args.devices > backend.xp.cuda.runtime.getDeviceCount():
            raise ValueError(f"--devices {args.devices}: this machine has "
                             f"{backend.xp.cuda.runtime.getDeviceCount()} GPU(s)")
        hops = lambda nbytes: _hops_threads(args.devices, backend, nbytes, args.runs)  # noqa: E731
    else:
        transport = _rank_transport(w, backend)
        hops = lambda nbytes: _hops_ranks(w, transport, backend, nbytes, args.runs)  # noqa: E731
    out = []
    for mib in args.sizes:
        nbytes = int(mib * 2**20)
        _log(f"peer: {args.runs} hop(s) of {nbytes:,} bytes per peer after a warm-up")
        times = hops(nbytes)
        hop = statistics.median(times)
        out.append({"mib": mib, "bytes": nbytes, "hop_s": hop, "gb_per_s": nbytes / hop / 1e9, "hops_s": times})
    return out


def hop(args, backend) -> list:
    """Host us per call of one device's exchange and of a superstep's small reads, with no peer (--mode hop)."""
    from mgraph import ops
    from mgraph.parts import subgraph
    from mgraph.ops import idmaps
    from mgraph.comm.exchange import Exchange
    from mgraph.comm.transport import Transport
    from mgraph.runner.enactor import STAT_KEYS
    from mgraph.graph import Graph
    from mgraph.primitives.bfs import BFS

    class Nothing(Transport):  # a peer that sends nothing: what is left is this device's own host time
        sent = None

        def send(self, src, packages, tag=0):
            self.sent = [k for k, _ in packages]
            return 0

        def receive(self, dst, tag=0):
            return []

    xp, half = backend.xp, 64
    with backend.context():
        path = xp.arange(2 * half - 1, dtype=np.int64)
        graph = Graph.from_edges(path, path + 1, num_vertices=2 * half, directed=True)
        part = subgraph.build(graph, (xp.arange(2 * half) >= half).astype(np.int32), 2, "1-hop")[0]
        bfs = BFS(part)
        bfs.reset(part.local_id(0))
        transport = Nothing()
        exchange = Exchange(part, 2, transport, "selective")
        exchange.begin_phase(bfs)
        stats = dict.fromkeys(STAT_KEYS, 0)
        # a superstep's output: one own vertex (kept), or the copy of the peer's first vertex (sent to the peer)
        kept, crossing = (bfs.frontier_of([part.local_id(v)]) for v in (1, half))
        cases = [("exchange, one own vertex", lambda: exchange.run(bfs, kept, stats)),
                 ("exchange, one copy, sent to its owner", lambda: exchange.run(bfs, crossing, stats)),
                 ("count of own vertices", lambda: idmaps.count_own(kept, part.owner, 0, part.own_below)),
                 ("id range", lambda: ops.id_range(kept)),
                 ("advance", lambda: ops.advance_visit(part, kept, bfs.depth, bfs.predecessor, 1))]
        out = []
        for name, call in cases:
            _log(f"hop: {name}, {args.runs} batch(es) of {HOP_CALLS} calls after a warm-up")
            for _ in range(HOP_CALLS // 10):
                call()
            if name.startswith("exchange") and transport.sent != ([1] if call is cases[1][1] else []):
                raise RuntimeError(f"hop: {name} sent packages to {transport.sent}; the case times something else")
            batches = []
            for _ in range(args.runs):
                backend.synchronize()
                t = time.perf_counter()
                for _ in range(HOP_CALLS):
                    call()
                backend.synchronize()
                batches.append((time.perf_counter() - t) / HOP_CALLS)
            out.append({"case": name, "best_us": 1e6 * min(batches), "median_us": 1e6 * statistics.median(batches),
                        "batches_s": batches})
    return out


def _hops_threads(p, backend, nbytes, reps):
    """Hop times of ``p`` devices of this process, a worker thread each (LocalTransport: memory copies between
    virtual CPU devices, peer copies between GPUs)."""
    import threading

    from mgraph.comm.transport import LocalTransport

    backends = [Backend(backend.name, k) for k in range(p)]
    transport = LocalTransport(backends, threading.Barrier(p))
    go = threading.Barrier(p)
    times, errors = [[] for _ in range(p)], []

    def worker(d):
        b, peers = backends[d], [k for k in range(p) if k != d]
        try:
            with b.context():
                data = b.xp.ones(nbytes, dtype="uint8")
                for _ in range(reps + 1):
                    go.wait()
                    t = time.perf_counter()
                    transport.send(d, [(k, {"x": data}) for k in peers])
                    got = transport.receive(d)
                    b.synchronize()
                    times[d].append(time.perf_counter() - t)
                    if [src for src, _ in got] != peers or any(pkg["x"].nbytes != nbytes for _, pkg in got):
                        raise RuntimeError(f"device {d} received {[(s, pkg['x'].nbytes) for s, pkg in got]}")
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
            go.abort()
            transport.barrier.abort()

    threads = [threading.Thread(target=worker, args=(d,)) for d in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise next((e for e in errors if not isinstance(e, threading.BrokenBarrierError)), errors[0])
    return [max(times[d][i] for d in range(p)) for i in range(1, reps + 1)]


def _rank_transport(w, backend):
    """The transport mgraph's ranks use: MPI buffers (NumPy), NCCL (a GPU per rank), or the host (ranks sharing
    a GPU, which NCCL refuses)."""
    import socket

    from mgraph.comm.mpi import MpiTransport, NcclTransport, StagedTransport

    if not backend.is_gpu:
        return MpiTransport(w)
    gpus = w.allgather((socket.gethostname(), backend.device))
    return StagedTransport(w) if len(set(gpus)) < len(gpus) else NcclTransport(w)


def _hops_ranks(w, transport, backend, nbytes, reps):
    """Hop times of this job's ranks, one device each (every rank returns the same list)."""
    with backend.context():
        data = backend.xp.ones(nbytes, dtype="uint8")
        peers = [k for k in range(w.size) if k != w.rank]
        times = []
        for _ in range(reps + 1):
            w.barrier()
            t = time.perf_counter()
            transport.send(w.rank, [(k, {"x": data}) for k in peers])
            got = transport.receive(w.rank)
            backend.synchronize()
            times.append(time.perf_counter() - t)
            if [src for src, _ in got] != peers or any(pkg["x"].nbytes != nbytes for _, pkg in got):
                raise RuntimeError(f"rank {w.rank} received {[(s, pkg['x'].nbytes) for s, pkg in got]}")
    every = w.allgather(times)
    return [max(ts[i] for ts in every) for i in range(1, reps + 1)]


def _report(args, argv, backend, device, graph, records) -> int:
    """Print a diagnostic mode's tables (rank 0 only under mpiexec) and write its JSON record."""
    if not is_root():
        return 0
    devices = world().size if world() is not None else args.devices
    where = f"{backend.name} on {device}; {devices} device(s)" + (" (MPI ranks)" if world() is not None else "")
    if args.json:
        write_json(args.json, {"date": now(), "command": sys.argv if argv is None else ["scripts/bench.py", *argv],
                               "version": code_version(), "mode": args.mode, "backend": backend.name,
                               "device": device, "devices": devices, "graph": graph, "results": records})
        _log(f"wrote {args.json}")
    if graph is not None:
        print(f"{graph['name']}: {graph['vertices']:,} vertices, "
              f"{graph['edges']:,} edges; {where}; {now()}")
    if args.mode == "peer":
        print(f"{where}; every device sends to every other at once; median of {args.runs} hop(s); {now()}")
        print(_table([[f"{r['mib']:g}", f"{1e6 * r['hop_s']:.1f}", f"{r['gb_per_s']:.3g}"] for r in records["peer"]],
                     ["MiB per peer", "hop us", "GB/s per peer and direction"]))
    if args.mode == "hop":
        print(f"{where}; one device's host time per call, no peer to wait for; best and median of {args.runs} "
              f"batch(es) of {HOP_CALLS} calls; {now()}")
        print(_table([[r["case"], f"{r['best_us']:.1f}", f"{r['median_us']:.1f}"] for r in records["hop"]],
                     ["per superstep", "best us", "median us"]))
    for name, r in records.items() if args.mode == "trace" else ():
        print(f"\n{name}: {r['devices']} device(s), start {r['start']}: {r['supersteps']} supersteps, "
              f"{1e3 * r['elapsed_s']:.4g} ms")
        rows = [[s["superstep"], s["device"], s["frontier"], *(f"{1e6 * s[k]:.1f}" for k, _ in STEP_TIMES),
                 s["bytes"]] for s in r["steps"]]
        for d in range(r["devices"]):
            mine = [s for s in r["steps"] if s["device"] == d]
            rows.append(["all", d, sum(s["frontier"] for s in mine),
                         *(f"{1e6 * sum(s[k] for s in mine):.1f}" for k, _ in STEP_TIMES),
                         sum(s["bytes"] for s in mine)])
        print(_table(rows, ["superstep", "device", "frontier", *(f"{label} us" for _, label in STEP_TIMES), "bytes"]))
    if args.mode == "threads":
        counts = [str(t) for t in args.threads]
        print(f"compiled CPU kernels' threads (the run option), alternating; median of {args.runs} round(s) per "
              f"start; numba's pool {_numba_pool()}; {now()}")
        print(_table([[name, *(fmt_figure(r["median_ms"][t]) for t in counts),
                       *(fmt_figure(r["speedup"][t], 3) for t in counts[1:]),
                       *(fmt_figure(r["control"]["speedup"][t], 3) for t in counts[1:])]
                      for name, r in records.items()],
                     ["primitive", *(f"{t} thread(s) ms" for t in counts),
                      *(f"{t} over {counts[0]}" for t in counts[1:]),
                      *(f"control loop right after, {t} over {counts[0]}" for t in counts[1:])]))
    for name, r in records.items() if args.mode == "profile" else ():
        for rank in r["ranks"]:
            print(f"\n{name}, rank {rank['rank']} ({rank['device']}): cProfile of {r['runs']} run(s) from start "
                  f"{r['start']}, us summed over them")
            for title, key in (("by own time", "by_own"), ("by cumulative time", "by_cumulative")):
                print(title)
                print(_table([[x["calls"], f"{x['own_us']:.0f}", f"{x['cumulative_us']:.0f}", x["function"]]
                              for x in rank[key]], ["calls", "own us", "cumulative us", "function"]))
    return 0


# -- the loaders' rate: --mode load ---------------------------------------------------------------------------


def _write_columns(f, cols, delimiter: str) -> None:
    """Rows of ``cols`` (int64 ids, float64 weights) as text: pyarrow's CSV writer, or NumPy's (slow) without it."""
    import numpy as np

    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        fmt = ["%d", "%d", "%.17g"][:len(cols)]
        np.savetxt(f, np.column_stack(cols) if len(cols) == 2 else np.rec.fromarrays(cols), fmt=fmt,
                   delimiter=delimiter)
        return
    table = pa.table({f"c{k}": c for k, c in enumerate(cols)})
    pcsv.write_csv(table, f, pcsv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none",
                                               batch_size=1 << 20))


def write_load_files(folder: str, edges: int, formats, seed: int) -> dict:
    """format -> (path, vertices): ``edges`` random edges (and weights k/8, k in 1..64) in each format."""
    import gzip
    import math
    import shutil

    import numpy as np

    rng = np.random.default_rng(seed)
    n = 1 << max(4, math.ceil(math.log2(max(edges / 2.4, 1))))
    src, dst = rng.integers(0, n, edges), rng.integers(0, n, edges)
    out = {}
    txt = os.path.join(folder, "edges.txt")
    if {"txt", "txt.gz"} & set(formats):
        with open(txt, "wb") as f:
            f.write(b"# generated by scripts/bench.py --mode load\n# Nodes: %d Edges: %d\n# FromNodeId\tToNodeId\n"
                    % (n, edges))
            _write_columns(f, [src, dst], "\t")
        out["txt"] = (txt, n)
    if "txt.gz" in formats:
        with open(txt, "rb") as raw, gzip.open(txt + ".gz", "wb", compresslevel=1) as z:
            shutil.copyfileobj(raw, z, 1 << 24)
        out["txt.gz"] = (txt + ".gz", n)
    if "txt" not in formats and "txt" in out:
        os.remove(txt)
        del out["txt"]
    if "csv" in formats:
        path = os.path.join(folder, "edges.csv")
        with open(path, "wb") as f:
            f.write(b"src,dst\n")
            _write_columns(f, [src, dst], ",")
        out["csv"] = (path, n)
    if "mtx" in formats:
        path = os.path.join(folder, "edges.mtx")
        with open(path, "wb") as f:
            f.write(b"%%%%MatrixMarket matrix coordinate real general\n%% generated by scripts/bench.py\n%d %d %d\n"
                    % (n, n, edges))
            _write_columns(f, [src + 1, dst + 1, rng.integers(1, 65, edges) / 8], " ")
        out["mtx"] = (path, n)
    return out


def load_rates(args, backend) -> dict:
    """Per format: ``args.runs`` timings of read_edges and mgraph.load (and of the line-aware reader alone)."""
    import gc
    import shutil
    import tempfile

    import mgraph
    from mgraph.io import loaders as mio
    from mgraph.io import parse

    folder = args.dir or tempfile.mkdtemp(prefix="mgraph-load-")
    os.makedirs(folder, exist_ok=True)
    try:
        _log(f"load: writing {args.edges:,} edges as {', '.join(args.formats)} in {folder}")
        t0 = time.perf_counter()
        files = write_load_files(folder, args.edges, args.formats, args.seed)
        write_s = time.perf_counter() - t0
        records = {}
        for fmt in args.formats:
            path, n = files[fmt]
            used = []
            columns = parse.columns

            def counted(*a, **k):
                got = columns(*a, **k)
                used.append(got is not None)
                return got

            parse.columns = counted  # the untimed first read says which parser took the file
            try:
                m = int(mio.read_edges(path)[0].shape[0])
            finally:
                parse.columns = columns
            rec = {"path": os.path.basename(path), "bytes": os.path.getsize(path), "edges": m, "vertices": n,
                   "parser": "pyarrow" if used and all(used) else "line reader", "loadavg_before": os.getloadavg(),
                   "parse_s": [], "load_s": []}
            for _ in range(args.runs):
                t = time.perf_counter()
                mio.read_edges(path)
                rec["parse_s"].append(time.perf_counter() - t)
                gc.collect()
                t = time.perf_counter()
                g = mgraph.load(path, backend=backend)
                backend.synchronize()
                rec["load_s"].append(time.perf_counter() - t)
                rec["arcs"] = g.num_arcs
                del g
                gc.collect()
            if args.baselines:
                rec["line_reader_parse_s"] = []
                parse.ENABLED, enabled = False, parse.ENABLED
                try:
                    for _ in range(args.runs):
                        t = time.perf_counter()
                        mio.read_edges(path)
                        rec["line_reader_parse_s"].append(time.perf_counter() - t)
                        gc.collect()
                finally:
                    parse.ENABLED = enabled
            rec["loadavg_after"] = os.getloadavg()
            for key in ("parse_s", "load_s", "line_reader_parse_s"):
                if key in rec:
                    rec[key.replace("_s", "_median_s")] = statistics.median(rec[key])
                    rec[key.replace("_s", "_medges_per_s")] = m / statistics.median(rec[key]) / 1e6
            _log(f"load: {fmt}: parse {rec['parse_medges_per_s']:.3g}, load {rec['load_medges_per_s']:.3g} M edges/s")
            records[fmt] = rec
        return {"write_s": write_s, "threads": parse.cpu_threads(), "pyarrow": parse.available(), "formats": records}
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


def _report_load(args, argv, backend, device, result) -> int:
    at_floor = args.edges == LOAD_FLOOR_EDGES
    floors = {"parse": LOAD_FLOORS["parse"], "load": LOAD_FLOORS["load"]}
    for fmt, rec in result["formats"].items():
        if fmt == "txt":
            rec["floors_medges_per_s"] = floors
            rec["met"] = {k: rec[f"{k}_medges_per_s"] >= v for k, v in floors.items()} if at_floor else None
    if args.json:
        write_json(args.json, {"date": now(), "command": sys.argv if argv is None else ["scripts/bench.py", *argv],
                               "version": code_version(), "mode": "load", "backend": backend.name, "device": device,
                               "cpus": os.cpu_count(), "edges": args.edges, "runs": args.runs, "seed": args.seed,
                               "results": result})
        _log(f"wrote {args.json}")
    rows = []
    for fmt, rec in result["formats"].items():
        met = rec.get("met")
        rows.append([fmt, f"{rec['bytes'] / 1e6:.1f}", f"{rec['edges']:,}", rec["parser"],
                     f"{rec['parse_median_s']:.3f}", f"{rec['parse_medges_per_s']:.3g}",
                     f"{rec['load_median_s']:.3f}", f"{rec['load_medges_per_s']:.3g}",
                     fmt_figure(rec.get("line_reader_parse_median_s")), fmt_figure(rec.get("line_reader_parse_medges_per_s"), 3),
                     "-" if fmt != "txt" else f"{floors['parse']:g} / {floors['load']:g}",
                     "-" if met is None else "/".join("yes" if met[k] else "no" for k in ("parse", "load"))])
    print(f"{args.edges:,} random edges per file (written in {result['write_s']:.3g} s); {backend.name} on {device}; "
          f"{os.cpu_count()} CPUs, pyarrow {'on' if result['pyarrow'] else 'absent'} ({result['threads']} threads); "
          f"median of {args.runs} run(s); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {now()}")
    print(_table(rows, ["format", "MB", "edges", "parser", "parse s", "parse M edges/s", "load s", "load M edges/s",
                        "line reader s", "line reader M edges/s",
                        f"floor (M edges/s, {LOAD_FLOOR_EDGES // 1_000_000} M)", "met" if at_floor else "met (n/a)"]))
    return 0


def main(argv=None) -> int:
    args = _arguments(argv)
    backend = process_device(args.backend)  # under mpiexec the rank's GPU
    with on_device(backend):  # everything outside the runs on this process's device too
        return _main(args, argv, backend)


def _main(args, argv, backend) -> int:
    device = backend.device_name()
    if args.mode == "load":
        return _report_load(args, argv, backend, device, load_rates(args, backend))
    if args.mode == "peer":
        return _report(args, argv, backend, device, None, {"peer": peer(args, backend)})
    if args.mode == "hop":
        return _report(args, argv, backend, device, None, {"hop": hop(args, backend)})
    graph_name = args.graph or f"R-MAT scale {args.scale}, edge factor {args.edge_factor}"
    t0 = time.perf_counter()
    ranks = world() is not None and world().size > 1 and args.mode in ("trace", "profile")
    if ranks:  # trace and profile on the ranks: each builds only its own part, as a run on P ranks does
        _log(f"{graph_name} on {world().size} MPI ranks: each rank builds its own part")
        graph = mgraph.load(args.graph or f"rmat:{args.scale}:{args.edge_factor}", backend=backend, seed=args.seed)
    else:
        _log(f"generating {graph_name} on {backend.name} ({device})")
        if args.graph is None:
            graph = generators.rmat(args.scale, args.edge_factor, xp=backend.xp, seed=args.seed)
        else:
            graph = mgraph.load(args.graph, backend=backend, seed=args.seed)
        backend.synchronize()
    generate_s = time.perf_counter() - t0
    spec = {"generator": "rmat", "scale": args.scale, "edge_factor": args.edge_factor} if args.graph is None \
        else {"spec": args.graph}
    spec.update(name=graph_name, seed=args.seed)
    sources = random_sources(graph, args.sources, args.seed, _run_options(args, backend))
    if ranks:  # a PartitionedGraph knows its edges once a part is built (the sources' draw built them)
        _log(f"built the parts of {graph.num_vertices:,} vertices, {graph.num_edges:,} edges in {generate_s:.3g} s")
    else:
        _log(f"generated {graph.num_vertices:,} vertices, {graph.num_edges:,} edges in {generate_s:.3g} s")
    if args.mode in ("trace", "profile", "threads"):
        step = {"trace": trace, "profile": profile, "threads": thread_counts}[args.mode]
        records = {}
        for name in args.primitives:
            records[name] = step(name, _weighted(name, graph, args, backend), sources, args, backend)
            if args.mode == "threads":  # what the cores gave at this moment: a busy machine shows here first
                _log(f"{name}: a compute-bound control loop on each thread count")
                records[name]["control"] = control_speedups(args.threads, args.runs)
        facts = dict(spec, vertices=graph.num_vertices, edges=graph.num_edges, generate_s=generate_s)
        return _report(args, argv, backend, device, facts, records)
    results = {}
    libraries = library_versions() if args.libraries else None
    lgraphs = {}  # weighted or not -> the graph as the libraries hold it, built once
    for name in args.primitives:
        g = _weighted(name, graph, args, backend)
        check = checker(name, g) if args.validate else None
        beside = None
        if args.libraries:
            key = name == "sssp"
            if key not in lgraphs:
                _log(f"building the libraries' graphs{' (weighted)' if key else ''}")
                lgraphs[key] = LibraryGraphs(g)
            beside = library_calls(name, g, lgraphs[key], libraries)
        results[name] = bench(name, g, sources, args, backend, check, beside)
        del g, check, beside  # free the weighted copy and the CPU references before the next primitive
    lgraphs.clear()
    side = None
    if args.baselines:
        _log("timing the API call around BFS, and the array-library baselines")
        side = {"call": call_cost(graph, sources, args, backend), **baselines(graph, sources, args, backend, results)}
    met_known = args.graph is None and (args.scale, args.edge_factor) == (FLOOR_SCALE, FLOOR_EDGE_FACTOR)
    if args.json:
        write_json(args.json, {
            "date": now(), "command": sys.argv if argv is None else ["scripts/bench.py", *argv],
            "version": code_version(), "backend": backend.name, "device": device,
            "graph": dict(spec, vertices=graph.num_vertices, edges=graph.num_edges, arcs=graph.num_arcs,
                          generate_s=generate_s),
            "options": {k: v for k, v in vars(args).items() if k != "json"},
            "sources": sources, "sssp_weights": SSSP_WEIGHTS, "pagerank_l1_stop": PR_L1,
            "results": results, "side_by_side": side, "libraries": libraries,
            "numba_threads": _numba_threads() if backend.name == "numpy" else None,
        })
        _log(f"wrote {args.json}")
    rows = []
    for name, r in results.items():
        figure, op, bound, unit = FLOORS.get(name, (None, "", "none", ""))
        time_ms = r["ms_per_iteration"] if name == "pr" else r["median_ms"]
        rows.append([name + (" (ms/iter)" if name == "pr" else " (per source)" if name == "bc" else ""),
                     fmt_figure(time_ms), fmt_figure(r.get("graph500_gteps")), fmt_figure(r.get("directed_gteps")),
                     fmt_figure(r["iterations"]), fmt_figure(r["supersteps"]), fmt_figure(r["us_per_superstep"]),
                     f"{op} {bound} {unit}",
                     "-" if r["met"] is None else "yes" if r["met"] else "no",
                     r.get("validation", "not run").split(":")[0]])
    if side is not None:
        print(_side_table(side, results))
    print(f"{graph_name}: {graph.num_vertices:,} vertices, "
          f"{graph.num_edges:,} edges (generated in {generate_s:.3g} s); {backend.name} on {device}; "
          f"median of {args.runs} run(s) x {args.sources} source(s); {now()}")
    print(_table(rows, ["primitive", "time ms", "GTEPS (Graph500)", "GTEPS (directed)", "iterations", "supersteps",
                        "us / superstep",
                        f"floor (scale {FLOOR_SCALE})", "met" if met_known else "met (n/a)", "valid"]))
    if args.libraries:
        print(_library_table(results, libraries))
    failed = [name for name, r in results.items() if r.get("validation", "").startswith("FAIL")]
    for name in failed:
        print(f"{name}: {results[name]['validation']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

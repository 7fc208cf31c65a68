"""The ``mgraph`` command: run a primitive on a graph, partition, describe or convert a graph.

    mgraph bfs|dobfs|sssp|cc|pr|bc|tc|kcore|lpa|louvain|leiden GRAPH [--source S] [--runs N] [--validate] [--json FILE]
                                         [--output FILE.csv|.parquet|.npz [--no-gather]]
                                         [--devices N | --gpus 0,1,..] [--partitioner P]
                                         [--workers auto|threads] ...
    mpiexec -n P mgraph bfs ...                 (one rank per device; docs/distributed.md)
    mgraph partition GRAPH --parts N [--partitioner P] [--seed S] [--json FILE]
    mgraph graph500 SCALE [--edge-factor 16] [--roots 64] [--sssp] [--json FILE] ...   (mgraph.graph500)
    mgraph info GRAPH
    mgraph convert IN OUT.npz

GRAPH is a file (.mtx, edge list, .csv, .npz) or a generator spec
(rmat:SCALE[:EF], grid:WxH, er:N:M).  Run times come from the result's stats
(CUDA events on a GPU); loading or generating is timed separately, and
every backend gets one untimed warm-up run first (``--no-warm-up`` skips it)
so that kernel compilation stays out of the numbers: CUDA kernels on a GPU,
numba's compiled CPU kernels on the CPU (compiled at a process's first use,
or loaded from numba's disk cache, which still takes a second or more).  A user error (bad file, spec, option or vertex) is one
line on stderr and exit status 2; a failed ``--validate`` is exit status 1.

What the command shares with scripts/bench.py and scaling.py is public here (the primitives, their sources and
runs, this process's device, the argument types); the JSON record, status line and number formats are
mgraph.report's, and the checks of ``--validate`` mgraph.check.runs's, which ``mgraph graph500`` uses too.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import warnings

import numpy as np

from mgraph import __version__, api, graph500, memory, output, partitioners
from mgraph.backend import BACKENDS, Backend, PeakWatch, resolve, to_numpy
from mgraph.check.runs import checker
from mgraph.comm.exchange import COMMUNICATIONS
from mgraph.group import fail_job, is_root, world
from mgraph.io import loaders
from mgraph.io.generators import is_spec, spec_edges, with_random_weights
from mgraph.parts.loading import load
from mgraph.parts.partitioned import PartitionedGraph, draw_sources
from mgraph.parts.subgraph import DUPLICATIONS
from mgraph.report import (check_json_folder, code_version, fmt_bytes, fmt_count, fmt_ms, harmonic_mean, now, status,
                           write_json)

TRAVERSALS = ("bfs", "dobfs", "sssp")
PRIMITIVES = TRAVERSALS + ("cc", "scc", "pr", "bc", "tc", "kcore", "lpa", "louvain", "leiden")
BC_ALL_SOURCES_MAX = 5000  # all-sources BC is |V| traversals: beyond this it must be asked for explicitly


class UsageError(ValueError):
    """A bad command line; reported like every other user error."""


# -- shared with scripts/bench.py and scaling.py ---------------------------------------
def random_sources(graph, k: int, seed: int, run: dict | None = None) -> list[int]:
    """``k`` random vertices of out-degree >= 1 (distinct while there are enough), as Graph500 picks roots; the
    same vertices for a whole graph and for ranks holding parts of it, from the same seed
    (mgraph.parts.partitioned.draw_sources).  A PartitionedGraph needs the ``run`` options: each rank builds (or
    keeps) its part for them and vouches for the candidates it owns; collective."""
    if isinstance(graph, PartitionedGraph):
        return graph.random_sources(k, seed, api.prepare(graph, **(run or {})))
    degree = to_numpy(graph.out_degree())
    candidates = np.flatnonzero(degree > 0)
    if candidates.size == 0:
        raise ValueError("the graph has no edges, so no vertex has out-degree >= 1: give --source")
    return draw_sources(graph.num_vertices, k, seed, lambda cand: degree[cand] > 0, candidates)


def process_device(backend="auto") -> Backend:
    """The device of this process before it has a graph: ``backend``'s device 0, or under MPI the rank's GPU (its
    local rank modulo the node's GPUs), the one a run of one device per rank takes (mgraph.api.run_backend).
    Do the work outside the runs (generating, picking sources, checking) :func:`on_device` it, so that no rank
    opens a context on GPU 0 or runs a kernel there on another GPU's arrays."""
    b, w = resolve(backend), world()
    if w is not None and b.is_gpu:
        b = resolve(backend, w.local_rank % b.xp.cuda.runtime.getDeviceCount())
    return b


@contextlib.contextmanager
def on_device(backend: Backend):
    """Do the enclosed work on ``backend``'s device, as the runs do (``Backend.context()``).  Under MPI the device
    (the rank's) is first made this process's current device for good: leaving a device context makes the device
    before it current again, and CUDA opens a context on a device it makes current, so a rank on GPU 1 that left
    one with GPU 0 still current would hold a context (memory, and any stray kernel) on GPU 0."""
    if world() is not None and backend.is_gpu:
        backend.xp.cuda.Device(backend.device).use()
    with backend.context():
        yield backend


def graph_device(graph, run: dict) -> Backend:
    """Where this process works on ``graph`` outside its runs: under MPI the rank's device as the runs place it
    (mgraph.api.run_backend, for the options ``run``), else the device that holds the whole graph."""
    if isinstance(graph, PartitionedGraph):
        return api.run_backend(graph, **run)
    return Backend("numpy") if graph.xp is np else Backend("cupy", graph.indptr.device.id)


def run_primitive(name: str, graph, source=None, *, run: dict, direction="push", alpha=0.85, tol=1e-6,
                  max_iter=100, do_a=None, do_b=None, shares="float64"):
    """One run of primitive ``name`` through mgraph.api; ``source`` is a vertex, or for bc a list of them.

    PageRank's non-convergence warning is dropped: callers report
    ``stats["converged"]`` in their own output instead.
    """
    if name in ("bfs", "dobfs"):
        switch = {k: v for k, v in (("do_a", do_a), ("do_b", do_b)) if v is not None}
        return api.bfs(graph, source, direction="auto" if name == "dobfs" else direction, **switch, **run)
    if name == "sssp":
        return api.sssp(graph, source, **run)
    if name == "cc":
        return api.connected_components(graph, **run)
    if name == "scc":
        return api.strongly_connected_components(graph, **run)
    if name == "pr":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return api.pagerank(graph, alpha=alpha, tol=tol, max_iter=max_iter, shares=shares, **run)
    if name == "bc":
        return api.betweenness_centrality(graph, sources=source, **run)
    if name == "tc":
        return api.triangles(graph, **run)
    if name == "kcore":
        return api.core_number(graph, **run)
    if name == "lpa":
        return api.label_propagation(graph, **run)
    if name in ("louvain", "leiden"):
        return getattr(api, name)(graph, **run)
    raise ValueError(f"unknown primitive {name!r}: expected one of {', '.join(PRIMITIVES)}")


PR_L1_STOP = 1e-6  # the command line's PageRank stop without --tol: an L1 change below this, whatever the size


def _pagerank_tol(tol, n):
    """networkx's per-vertex tol for the API: --tol as given, else PR_L1_STOP spread over the N vertices."""
    return tol if tol is not None else PR_L1_STOP / max(n, 1)


# -- argument parsing --------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """argparse, but errors raise (one line, exit 2 from main) instead of printing usage and exiting."""

    def error(self, message):
        raise UsageError(message)


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def gpu_ids(text: str) -> list[int]:
    try:
        ids = [int(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated GPU ids such as 0,1,2,3, got {text!r}") from None
    if any(i < 0 for i in ids):
        raise argparse.ArgumentTypeError(f"GPU ids must be non-negative, got {text!r}")
    return ids


def weight_range(text: str) -> tuple[int, int]:
    try:
        lo, hi = (int(p) for p in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO:HI integers, got {text!r}") from None
    if not 0 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"expected 0 <= LO <= HI, got {text!r}")
    return lo, hi


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="mgraph", description="Multi-GPU graph analytics (after Gunrock).")
    p.add_argument("--version", action="version", version=f"mgraph {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def graph_args(q):
        q.add_argument("graph", metavar="GRAPH", help="a file (.mtx, .txt/.el, .csv, .npz) or rmat:S[:EF], grid:WxH, er:N:M")
        d = q.add_mutually_exclusive_group()
        d.add_argument("--directed", dest="directed", action="store_const", const=True, default=None,
                       help="read an edge list as directed")
        d.add_argument("--undirected", dest="directed", action="store_const", const=False,
                       help="read an edge list as undirected")
        q.add_argument("--backend", choices=BACKENDS, default="auto", help="cupy (GPU), numpy (CPU) or auto")

    helps = {"bfs": "breadth-first search", "dobfs": "direction-optimizing BFS", "sssp": "single-source shortest paths",
             "cc": "connected components", "scc": "strongly connected components (a directed graph: --directed)",
             "pr": "PageRank", "bc": "betweenness centrality",
             "tc": "triangle counting (triangles through each vertex)", "kcore": "k-core decomposition (core numbers)",
             "lpa": "label propagation communities (networkx's semi-synchronous rule)",
             "louvain": "Louvain communities (modularity)", "leiden": "Leiden communities (modularity, refined)"}
    for name in PRIMITIVES:
        q = sub.add_parser(name, help=helps[name], description=helps[name])
        graph_args(q)
        q.add_argument("--runs", type=positive, default=1, help="timed runs (default 1)")
        d = q.add_mutually_exclusive_group()
        d.add_argument("--devices", type=positive, default=1, help="GPUs (or CPU virtual devices) to use (default 1)")
        d.add_argument("--gpus", type=gpu_ids, metavar="0,1,..",
                       help="GPU ids to use, one partition each (repeats put several partitions on one GPU)")
        q.add_argument("--partitioner", choices=tuple(partitioners.PARTITIONERS),
                       help="vertex -> device assignment (default: the primitive's)")
        q.add_argument("--duplication", choices=DUPLICATIONS,
                       help="proxies of remote neighbours only (1-hop) or of every vertex (all)")
        q.add_argument("--communication", choices=COMMUNICATIONS,
                       help="send remote frontier vertices to their owner (selective) or to every device (broadcast)")
        q.add_argument("--workers", choices=api.WORKERS,
                       help="devices of one process run in threads (for one process per device start MPI ranks: "
                            "mpiexec -n P mgraph ...)")
        q.add_argument("--peer-levels", action=argparse.BooleanOptionalAction, default=True,
                       help="devices of one process run a push traversal's levels without the host, exchanging "
                            "through peer memory (default on; --no-peer-levels: every level through the host)")
        q.add_argument("--peer-borders", action=argparse.BooleanOptionalAction, default=True,
                       help="PageRank's border values go device to device: GPU ranks of one node write them into "
                            "each other's memory, CPU devices send them in one all-to-all (default on; "
                            "--no-peer-borders: through the host's exchange)")
        q.add_argument("--seed", type=int, default=0, help="seed for random sources, weights and partitioning")
        q.add_argument("--threads", type=positive, metavar="N",
                       help="CPU backend: threads of the compiled kernels in this process, divided among --devices "
                            "(default NUMBA_NUM_THREADS where set, else the cores divided among the node's MPI ranks)")
        q.add_argument("--max-supersteps", type=positive, metavar="N",
                       help="end a run that has not finished after N supersteps, with an error (default 4|V| + 1000)")
        q.add_argument("--warm-up", action=argparse.BooleanOptionalAction, default=True,
                       help="one untimed run before the timed ones, so that compiling the kernels (CUDA on a GPU, "
                            "numba's on the CPU) stays out of the times (default on)")
        q.add_argument("--validate", action="store_true", help="check every run against a CPU reference")
        q.add_argument("--json", metavar="FILE", help="write one JSON record of this invocation")
        q.add_argument("--output", metavar="FILE",
                       help="write the per-vertex values to FILE, .csv, .parquet or .npz by its suffix: a vertex "
                            "column (the vertex ids --source takes: 0-based, a .mtx file's ids less one), then one column per result array; with several runs "
                            "the first run's values (its source is the first on the sources line and in --json's "
                            "runs); values as the API gives them (-1: no predecessor, unreached; inf: no distance); "
                            "under MPI rank 0 writes every vertex's")
        q.add_argument("--no-gather", action="store_true",
                       help="under MPI: leave each rank's values on the rank (no gather to rank 0), and with --output "
                            "each rank writes its own vertices to FILE with its rank before the suffix "
                            "(out.rank1.parquet); one process writes FILE whole")
        if name in TRAVERSALS:
            q.add_argument("--source", type=int, help="source vertex (default: a random one of out-degree >= 1 per run)")
        if name == "bfs":
            q.add_argument("--direction", choices=("push", "pull", "auto"), default="push")
        if name in ("bfs", "dobfs"):
            q.add_argument("--do-a", type=float, help="direction-optimizing: pull once forward work > do_a x backward")
            q.add_argument("--do-b", type=float, help="direction-optimizing: push again once forward work < do_b x backward")
        if name == "sssp":
            q.add_argument("--weights", type=weight_range, metavar="LO:HI",
                           help="draw random integer weights in LO..HI for an unweighted graph")
        if name == "pr":
            q.add_argument("--alpha", type=float, default=0.85, help="damping factor (default 0.85)")
            q.add_argument("--tol", type=float, default=None,
                           help="stop when the L1 change < N*tol (networkx's rule, the API's default tol=1e-6); "
                                f"by default the L1 change must fall below {PR_L1_STOP:g} whatever N, since N*1e-6 "
                                "stops a graph of a million vertices after an iteration or two")
            q.add_argument("--max-iter", type=positive, default=100)
            q.add_argument("--shares", choices=("float64", "float32"), default="float64",
                           help="the values each iteration gathers: float32 halves their bytes and moves the ranks "
                                "by at most 3.4e-7 in L1 at alpha 0.85 (ranks stay float64; default float64)")
        if name == "bc":
            s = q.add_mutually_exclusive_group()
            s.add_argument("--source", type=int, help="one source vertex")
            s.add_argument("--sources", type=positive, metavar="K", help="K random sources of out-degree >= 1")
    q = sub.add_parser("graph500", help="the Graph500 benchmark: generate, build, search from 64 roots, validate each",
                       description="Graph500's kernels on an R-MAT graph of 2^SCALE vertices: generation and "
                                   "construction timed, then one BFS (and with --sssp one SSSP) per root, each "
                                   "validated; the reference's report (docs/graph500.md).")
    q.add_argument("scale", type=int, metavar="SCALE", help="log2 of the number of vertices")
    q.add_argument("--edge-factor", type=positive, default=16, help="edges per vertex (default 16)")
    q.add_argument("--roots", type=positive, default=64, help="search keys, vertices of degree >= 1 (default 64)")
    q.add_argument("--sssp", action="store_true", help="kernel 3 as well: one SSSP per root")
    q.add_argument("--weights", type=weight_range, metavar="LO:HI",
                   help="SSSP's random integer edge weights (default 1:64)")
    q.add_argument("--direction", choices=("push", "pull", "auto"), default="auto",
                   help="BFS direction (default auto: direction-optimizing)")
    q.add_argument("--backend", choices=BACKENDS, default="auto", help="cupy (GPU), numpy (CPU) or auto")
    d = q.add_mutually_exclusive_group()
    d.add_argument("--devices", type=positive, default=1, help="GPUs (or CPU virtual devices) to use (default 1)")
    d.add_argument("--gpus", type=gpu_ids, metavar="0,1,..", help="GPU ids to use, one partition each")
    q.add_argument("--partitioner", choices=tuple(partitioners.PARTITIONERS), help="vertex -> device assignment")
    q.add_argument("--duplication", choices=DUPLICATIONS, help="proxies of remote neighbours (1-hop) or of all")
    q.add_argument("--communication", choices=COMMUNICATIONS, help="selective or broadcast frontier exchange")
    q.add_argument("--workers", choices=api.WORKERS, help="devices of one process run in threads")
    q.add_argument("--seed", type=int, default=0, help="seed of the graph, the roots and the partitioner")
    q.add_argument("--json", metavar="FILE", help="write the report and every root's figures as one JSON record")
    q = sub.add_parser("partition", help="partition a graph and report each part's size, border and edge cut",
                       description="Assign vertices to N parts and report per part: vertices, edges (stored arcs), "
                                   "border |B_i| (remote vertices adjacent to it), edge cut and load imbalance.")
    graph_args(q)
    q.add_argument("--parts", type=positive, required=True, metavar="N", help="number of parts (devices)")
    q.add_argument("--partitioner", choices=tuple(partitioners.PARTITIONERS), default="random",
                   help="random (default), biased-random or metis")
    q.add_argument("--seed", type=int, default=0, help="seed of the partitioner")
    q.add_argument("--json", metavar="FILE", help="write one JSON record of this invocation")
    q = sub.add_parser("info", help="size, degrees and memory of a graph")
    graph_args(q)
    q = sub.add_parser("convert", help="load a graph and save it as .npz")
    graph_args(q)
    q.add_argument("out", metavar="OUT.npz")
    return p


# -- commands ----------------------------------------------------------------------
def _load(args, weights=None):
    """The graph and the seconds its loading or generation took.  Under MPI a PartitionedGraph: each rank reads
    only its share of the source, and builds its part when a run first needs it."""
    with status(f"loading {args.graph}"):
        t0 = time.perf_counter()
        seed = getattr(args, "seed", 0)
        if world() is not None:
            graph = load(args.graph, directed=args.directed, seed=seed, weights=weights)
        else:
            backend = resolve(args.backend)
            with PeakWatch(backend) as watch:
                graph = load(args.graph, directed=args.directed, backend=backend, seed=seed, weights=weights)
                backend.synchronize()
            graph.load_peak_bytes = watch.bytes
        return graph, time.perf_counter() - t0


def _describe(graph) -> str:
    kind = "directed" if graph.directed else "undirected"
    edges = "?" if graph.num_edges is None else fmt_count(graph.num_edges)
    return f"{fmt_count(graph.num_vertices)} vertices, {edges} edges, {kind}{', weighted' if graph.is_weighted else ''}"


def _sources(args, graph, run):
    """What each timed run starts from: a vertex, for bc a list of vertices (None: all)."""
    def pick(k):
        return random_sources(graph, k, args.seed, run)  # under MPI each rank vouches for the candidates it owns

    if args.command in TRAVERSALS:
        if args.source is not None:
            return [args.source] * args.runs
        return pick(args.runs)
    if args.command == "bc":
        if args.source is not None:
            chosen = [args.source]
        elif args.sources is not None:
            chosen = pick(args.sources)
        elif graph.num_vertices <= BC_ALL_SOURCES_MAX:
            chosen = None
        else:
            raise ValueError(f"bc from all {fmt_count(graph.num_vertices)} vertices would take that many traversals: "
                             f"give --source S or --sources K (all sources only up to "
                             f"{fmt_count(BC_ALL_SOURCES_MAX)} vertices)")
        return [chosen] * args.runs
    return [None] * args.runs


def _check_run_memory(args, n: int, arcs: int, weighted: bool, *, loaded: bool) -> None:
    """The runs (and --validate's CPU references) of a graph of ``n`` vertices and ``arcs`` arcs must fit in host
    memory: ValueError naming the command and the graph before the build (``loaded=False``: the graph itself
    counts too, ``arcs`` a bound from the spec) or before the first run, never the OOM killer after an hour.

    Host runs only, and validation on the host; a GPU run's working set is on the GPU, and under MPI each rank
    holds its part (mgraph.parts.build checks those).
    """
    if world() is not None:
        return
    name, backend = args.command, resolve(args.backend)
    devices = args.devices if isinstance(args.devices, int) else len(args.devices)
    graph = memory.csr_bytes(n, arcs, weighted=weighted)
    if not backend.is_gpu:
        need = memory.run_bytes(name, n, arcs, validate=args.validate, runs=args.runs)
        if devices > 1:  # the parts the virtual devices build beside the whole graph
            need += graph + memory.PART_MAP_VERTEX_BYTES * n
    elif args.validate and name == "bc":  # the other checks run where the graph is (mgraph.check.runs)
        need = graph + memory.run_bytes(name, n, arcs, validate=True) - memory.run_bytes(name, n, arcs)
    else:
        return
    if not loaded:
        need += graph
    what = f"{name}{' --validate' if args.validate else ''} on {args.graph}"
    memory.check(need, f"{what}: running on {memory.describe(n, arcs, bound=not loaded)}", None)


def _output_path(args):
    """Before the load and the runs: the file this process writes with ``--output`` (this rank's own with
    ``--no-gather`` under MPI; None where it writes none), checked where it will be written (mgraph.output), so
    that a bad suffix or an unwritable path is a one-line error now.  Under MPI every rank raises the same error:
    the writing rank's verdict is shared (collective)."""
    w = world()
    if w is not None and getattr(args, "no_gather", False) and args.validate:
        raise UsageError("--validate checks the gathered result: drop --no-gather to validate under MPI")
    if not getattr(args, "output", None):
        return None
    spread = w is not None and getattr(args, "no_gather", False)
    path = output.rank_path(args.output, w.rank) if spread else args.output if is_root() else None
    problem = None
    if path is not None:
        try:
            output.check_path(path)
        except ValueError as e:
            problem = str(e)
    if w is not None:
        problems = w.allgather(problem) if spread else [w.bcast(problem, root=0)]
        problem = next((p for p in problems if p), None)
    if problem:
        raise ValueError(f"--output {problem}")
    return path


def _write_output(args, graph, path, sources, results) -> None:
    """The first run's values to ``path`` (this process's file, None: none here), and one line saying so.  Under
    MPI a write that fails (a disk filled by the run) is shared, so that every rank ends with the same one line
    instead of the others waiting for the failed one (collective)."""
    w = world()
    spread = w is not None and args.no_gather
    rows, problem = 0, None
    if path is not None:
        try:
            with status(f"writing {path}"):
                rows = results[0].write(path)
        except (OSError, ValueError) as e:
            if w is None:
                raise
            problem = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.strerror else str(e)
    if w is not None:
        shared = w.allgather((rows, problem))
        problem = next((p for _, p in shared if p), None)
        if problem:
            raise ValueError(f"--output {problem}")
        rows = sum(r for r, _ in shared)
    names = ", ".join(n for n in results[0].keys() if n != "vertices")
    where = (f"{output.rank_path(args.output, 0)} .. {output.rank_path(args.output, w.size - 1)} (each rank's own "
             f"vertices)" if spread else args.output)
    first = f"; the first run's, from source {sources[0]}" if len({repr(s) for s in sources}) > 1 else ""
    print(f"output      {where}: {fmt_count(rows)} vertices; vertex, {names}{first}")


def _run(args) -> int:
    name = args.command
    check_json_folder(args.json)
    out_path = _output_path(args)
    if args.gpus is not None:
        args.devices = args.gpus
    backend = resolve(args.backend)
    spec_weights = name == "sssp" and args.weights and is_spec(args.graph) and not os.path.exists(args.graph)
    if is_spec(args.graph) and not os.path.exists(args.graph):  # before a build that the run could not follow
        spec = spec_edges(args.graph, seed=args.seed, weights=args.weights if spec_weights else None)
        _check_run_memory(args, spec.num_vertices, 2 * spec.num_edges, spec.weighted, loaded=False)
    graph, load_s = _load(args, weights=args.weights if spec_weights else None)
    if not isinstance(graph, PartitionedGraph):
        _check_run_memory(args, graph.num_vertices, graph.num_arcs,
                          graph.is_weighted or bool(name == "sssp" and args.weights), loaded=True)
    if name == "sssp" and args.weights and not spec_weights:
        if graph.is_weighted:
            raise ValueError(f"--weights: {args.graph} already has edge weights")
        if isinstance(graph, PartitionedGraph):
            raise ValueError("--weights draws weights for a generated graph under MPI; a file's graph needs its own")
        graph = with_random_weights(graph, *args.weights, seed=args.seed)
    params = {"direction": getattr(args, "direction", "push"), "alpha": getattr(args, "alpha", 0.85),
              "tol": _pagerank_tol(getattr(args, "tol", None), graph.num_vertices),
              "max_iter": getattr(args, "max_iter", 100),
              "do_a": getattr(args, "do_a", None), "do_b": getattr(args, "do_b", None),
              "shares": getattr(args, "shares", "float64")}
    run = {"backend": backend, "devices": args.devices, "seed": args.seed}
    # only when given, so that the API's per-primitive defaults apply
    run.update({k: getattr(args, k) for k in ("partitioner", "duplication", "communication", "workers",
                                              "max_supersteps", "threads") if getattr(args, k)})
    if getattr(args, "no_gather", False):
        run["gather"] = False
    if not getattr(args, "peer_levels", True):
        run["peer_levels"] = False
    if not getattr(args, "peer_borders", True):
        run["peer_borders"] = False
    with on_device(graph_device(graph, run)):  # sources and checks where this process's graph or part lives
        sources, results, failures = _runs(args, graph, run, params)
    summary = _summary(name, results)
    if name == "kcore" and world() is not None:  # rank 0 holds every core, or with --no-gather each rank its own
        summary["max_core"] = max((c for c in world().allgather(summary["max_core"]) if c is not None), default=0)
    _print_summary(args, graph, load_s, sources, results, summary, failures)
    if getattr(args, "output", None):
        _write_output(args, graph, out_path, sources, results)
    if args.json and is_root():
        write_json(args.json, {
            "command": name, "argv": ["mgraph", *args.argv],
            "graph": {"input": args.graph, "vertices": graph.num_vertices, "edges": graph.num_edges,
                      "arcs": graph.num_arcs, "directed": graph.directed, "weighted": graph.is_weighted,
                      "load_s": load_s, "load_peak_bytes": getattr(graph, "load_peak_bytes", None)},
            "options": {k: v for k, v in vars(args).items() if k not in ("command", "graph", "json", "argv")},
            "runs": [{"source": s, **r.stats} for s, r in zip(sources, results)],
            "times_s": [r.stats["elapsed_s"] for r in results],
            "summary": summary,
            "validation": {"status": ("FAIL" if failures else "PASS") if args.validate else "not run",
                           "failures": failures},
            "backend": backend.name, "devices": sorted({r.stats["device"] for r in results}),
            "warm_up": args.warm_up, "version": code_version(), "date": now(),
        })
    return 1 if failures else 0


def _runs(args, graph, run, params):
    """The sources, the results of the runs from them (after a warm-up run, which compiles the kernels: CUDA's on
    a GPU, numba's on the CPU) and, with --validate, the failures of their checks."""
    name = args.command
    sources = _sources(args, graph, dict(run, communication=run.get("communication", "selective")))
    if args.warm_up:
        with status("warm-up run"):
            run_primitive(name, graph, sources[0], run=run, **params)
    results = []
    for i, s in enumerate(sources):
        with status(f"run {i + 1}/{len(sources)}"):
            results.append(run_primitive(name, graph, s, run=run, **params))
    failures = []
    if args.validate:
        check = checker(name, graph, alpha=params["alpha"])
        for i, (s, r) in enumerate(zip(sources, results)):
            with status(f"validating run {i + 1}/{len(results)}"):
                message = check(r, s)
            if message:
                failures.append({"run": i, "source": s, "message": message})
    return sources, results, failures


def _summary(name, results) -> dict:
    times = [r.stats["elapsed_s"] for r in results]
    out = {"median_s": statistics.median(times), "iterations_median": statistics.median(r.stats["iterations"] for r in results)}
    if name in TRAVERSALS:
        out["graph500_teps_hmean"] = harmonic_mean(r.stats["graph500_teps"] for r in results)
        out["directed_edge_teps_hmean"] = harmonic_mean(r.stats["directed_edge_teps"] for r in results)
    if name == "pr":
        out["ms_per_iteration_median"] = statistics.median(r.stats["ms_per_iteration"] for r in results)
        out["converged"] = all(r.stats["converged"] for r in results)
    if name in ("cc", "scc"):
        out["num_components"] = results[-1].stats["num_components"]
    if name == "tc":
        out["triangles"] = results[-1].stats["triangles"]
    if name == "kcore":  # off rank 0 under MPI the gathered core is None: that rank prints nothing
        core = results[-1].core
        out["max_core"] = None if core is None else int(np.max(core, initial=0))
    if name in ("lpa", "louvain", "leiden") and "communities" in results[-1].stats:
        out["communities"] = results[-1].stats["communities"]
    if "modularity" in results[-1].stats:
        out["modularity"] = results[-1].stats["modularity"]
    if name == "bc":
        out["sources"] = results[-1].stats["sources"]
        out["ms_per_source_median"] = 1e3 * out["median_s"] / max(out["sources"], 1)
    return out


def _print_summary(args, graph, load_s, sources, results, summary, failures):
    name = args.command
    stats = results[-1].stats
    print(f"graph       {args.graph}: {_describe(graph)} (load/generate {load_s:.3g} s)")
    extra = {"bfs": f", {args.direction}" if name == "bfs" else "", "dobfs": ", direction-optimizing"}.get(name, "")
    print(f"run         {name}{extra} on {stats['backend']} ({stats['device']}), {len(results)} timed run"
          f"{'s' if len(results) > 1 else ''}{', after a warm-up' if args.warm_up else ''}")
    if stats.get("devices", 1) > 1:
        per = stats["per_device"]
        mean = lambda key: 1e6 * sum(sum(r[key]) for r in per) / len(per) / max(stats["supersteps"], 1)  # noqa: E731
        print(f"devices     {stats['devices']} (ids {','.join(map(str, stats['device_ids']))}): {stats['partitioner']} "
              f"partition, duplicate-{stats['duplication']}, "
              f"{stats['communication']} communication, {stats['workers']}; partition {fmt_ms(stats['partition_s'])}, "
              f"subgraphs {fmt_ms(stats['subgraph_s'])}")
        print(f"per device  {', '.join(fmt_bytes(b) for b in stats['memory_bytes'])} of subgraph; "
              f"{', '.join(fmt_bytes(b) for b in stats['bytes_sent'])} sent")
        print(f"superstep   {fmt_count(stats['supersteps'])} in all; mean per device: compute {mean('compute_s'):.4g} us, "
              f"split+package {mean('package_s'):.4g} us, push {mean('push_s'):.4g} us, combine {mean('combine_s'):.4g} us, "
              f"waiting for the others {mean('wait_s'):.4g} us")
        if stats.get("level_path") == "peer":  # the last run's levels, most of them inside the supersteps above
            print(f"levels      {fmt_count(stats['peer_levels'])} run on the devices, "
                  f"{', '.join(fmt_bytes(b) for b in stats['peer_bytes'])} sent through peer memory "
                  f"(--no-peer-levels: each level through the host)")
        if stats.get("border_path") == "peer":
            print(f"borders     {fmt_count(max(stats['border_hops']))} hops device to device, "
                  f"{', '.join(fmt_bytes(b) for b in stats['border_bytes'])} sent "
                  f"(--no-peer-borders: through the host)")
    build = stats.get("build_peak_bytes") or ([graph.load_peak_bytes] if hasattr(graph, "load_peak_bytes") else None)
    if build:
        print(f"peak memory {', '.join(fmt_bytes(b) for b in build)} building, "
              f"{', '.join(fmt_bytes(b) for b in stats['run_peak_bytes'])} running (per device; "
              f"{'GPU: arrays in use building, memory pool running' if stats['backend'] == 'cupy' else 'process resident set'})")
    if name in TRAVERSALS:
        shown = list(dict.fromkeys(sources))
        print(f"source{'s' if len(shown) > 1 else ' '}     {', '.join(map(str, shown[:8]))}{' ...' if len(shown) > 8 else ''}")
    times = ", ".join(f"{r.stats['elapsed_s'] * 1e3:.4g}" for r in results)
    print(f"time        {fmt_ms(summary['median_s'])} median" + (f" (runs: {times} ms)" if len(results) > 1 else ""))
    if name in TRAVERSALS:
        print(f"GTEPS       {summary['graph500_teps_hmean'] / 1e9:.4g} (Graph500: undirected edges in component, "
              f"harmonic mean); {summary['directed_edge_teps_hmean'] / 1e9:.4g} directed-edge (Gunrock)")
    if name == "pr":
        print(f"ms/iter     {summary['ms_per_iteration_median']:.4g} median; "
              f"{'converged' if summary['converged'] else 'NOT converged'} (L1 change {stats['error']:.3g})")
    if name in ("cc", "scc"):
        print(f"components  {fmt_count(summary['num_components'])}")
    if name == "tc":
        print(f"triangles   {fmt_count(summary['triangles'])}")
    if name == "kcore":
        print(f"max core    {fmt_count(summary['max_core'])}")
    if "communities" in summary:
        print(f"communities {fmt_count(summary['communities'])}")
    if "modularity" in summary:
        print(f"modularity  {summary['modularity']:.6f}")
    if name == "bc":
        print(f"ms/source   {summary['ms_per_source_median']:.4g} median over {fmt_count(summary['sources'])} source"
              f"{'s' if summary['sources'] > 1 else ''}")
    print(f"iterations  {summary['iterations_median']:g}" + (" (median)" if len(results) > 1 else ""))
    if args.validate:
        if failures:
            print(f"validation  FAIL ({len(failures)} of {len(results)} runs)")
            for f in failures:
                print(f"  run {f['run'] + 1}: {f['message']}")
        else:
            print(f"validation  PASS ({len(results)} run{'s' if len(results) > 1 else ''})")


def _partition(args) -> int:
    """Partition once (timed apart from loading; on a GPU after a warm-up on a small graph) and report each part."""
    check_json_folder(args.json)
    if args.seed < 0:
        raise ValueError(f"--seed must be non-negative, got {args.seed}")
    if args.partitioner == "metis":
        partitioners.require_pymetis()  # before loading a large graph
    backend = resolve(args.backend)
    graph, load_s = _load(args)
    warm = backend.is_gpu and args.partitioner != "metis"
    if warm:  # compile and load the kernels outside the timing (a skewed graph takes every path: spills, moves)
        with status("warm-up"):
            partitioners.assign(load("rmat:10", backend=backend), args.parts, args.partitioner, seed=args.seed)
    with status(f"partitioning into {args.parts} parts"):
        t0 = time.perf_counter()
        owner = partitioners.assign(graph, args.parts, args.partitioner, seed=args.seed)
        backend.synchronize()
        partition_s = time.perf_counter() - t0
    with status("measuring the parts"):
        parts = partitioners.quality(graph, owner, args.parts)
    totals = {"vertices": sum(p["vertices"] for p in parts), "edges": sum(p["edges"] for p in parts),
              "border": sum(p["border"] for p in parts), "edge_cut": sum(p["edge_cut"] for p in parts),
              "edge_imbalance_max": max(p["edge_imbalance"] for p in parts),
              "vertex_imbalance_max": max(p["vertex_imbalance"] for p in parts)}
    device = f"{backend.name} ({backend.device_name()})"
    print(f"graph       {args.graph}: {_describe(graph)} (load/generate {load_s:.3g} s)")
    print(f"partition   {args.partitioner} into {args.parts} part{'s' if args.parts > 1 else ''}, seed {args.seed}, "
          f"on {device}{', after a warm-up' if warm else ''}")
    print(f"time        {fmt_ms(partition_s)} (partitioning only)")
    header = ("part", "vertices", "edges", "border", "edge cut", "edge imb", "vertex imb")
    rows = [(str(p["part"]), fmt_count(p["vertices"]), fmt_count(p["edges"]), fmt_count(p["border"]),
             fmt_count(p["edge_cut"]), f"{p['edge_imbalance']:.3f}", f"{p['vertex_imbalance']:.3f}") for p in parts]
    rows.append(("total", fmt_count(totals["vertices"]), fmt_count(totals["edges"]), fmt_count(totals["border"]),
                 fmt_count(totals["edge_cut"]), f"{totals['edge_imbalance_max']:.3f}",
                 f"{totals['vertex_imbalance_max']:.3f}"))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print("(edges and edge cut count stored arcs, two per undirected edge; border |B_i|: distinct vertices of other\n"
          " parts adjacent to the part; imbalance: part / mean part, the largest on the total line)")
    if args.json:
        write_json(args.json, {
            "command": "partition", "argv": ["mgraph", *args.argv],
            "graph": {"input": args.graph, "vertices": graph.num_vertices, "edges": graph.num_edges,
                      "arcs": graph.num_arcs, "directed": graph.directed, "weighted": graph.is_weighted,
                      "load_s": load_s},
            "options": {k: v for k, v in vars(args).items() if k not in ("command", "graph", "json", "argv")},
            "partition_s": partition_s, "parts": parts, "totals": totals,
            "backend": backend.name, "device": backend.device_name(), "warm_up": warm,
            "version": code_version(), "date": now(),
        })
    return 0


def _info(args) -> int:
    graph, load_s = _load(args)
    if isinstance(graph, PartitionedGraph):
        return _info_parts(args, graph, load_s)
    g = graph.to("numpy")
    out_deg = to_numpy(g.out_degree())
    degrees = [("out-degree" if g.directed else "degree", out_deg)]
    touched = out_deg > 0
    if g.directed:
        in_deg = np.bincount(to_numpy(g.indices), minlength=g.num_vertices)
        degrees.append(("in-degree", in_deg))
        touched |= in_deg > 0
    arrays = [graph.indptr, graph.indices] + ([graph.weights] if graph.is_weighted else [])
    print(f"graph       {args.graph} (load/generate {load_s:.3g} s)")
    print(f"vertices    {fmt_count(g.num_vertices)}")
    print(f"edges       {fmt_count(g.num_edges)} ({fmt_count(g.num_arcs)} stored arcs)")
    print(f"directed    {'yes' if g.directed else 'no'}")
    print(f"weighted    {'yes' if g.is_weighted else 'no'}")
    for label, d in degrees:
        if d.size:
            print(f"{label:<11} min {d.min()}, mean {d.mean():.4g}, max {d.max()}")
    print(f"isolated    {fmt_count(int(np.count_nonzero(~touched)))} vertices")
    print(f"memory      {fmt_bytes(sum(int(a.nbytes) for a in arrays))} (CSR{' + weights' if g.is_weighted else ''})")
    print(f"load peak   {fmt_bytes(graph.load_peak_bytes)} "
          f"({'GPU arrays in use' if graph.xp is not np else 'process resident set'})")
    return 0


def _info_parts(args, graph, load_s) -> int:
    """Under MPI: each rank builds its part (the random partition, 1-hop proxies) and reports it."""
    run = {"backend": args.backend}
    with on_device(graph_device(graph, run)):
        t0 = time.perf_counter()
        part = api.prepare(graph, **run)
        build_s = time.perf_counter() - t0
        group = graph.group
        rows = group.allgather((group.rank, int(part.own_vertices.shape[0]), part.num_vertices, part.num_arcs,
                                part.nbytes, part.build_info["build_peak_bytes"]))
    print(f"graph       {args.graph} (open {load_s:.3g} s, parts built in {build_s:.3g} s on {group.size} ranks)")
    print(f"vertices    {fmt_count(graph.num_vertices)}")
    print(f"edges       {fmt_count(graph.num_edges)} ({fmt_count(graph.num_arcs)} stored arcs)")
    print(f"directed    {'yes' if graph.directed else 'no'}")
    print(f"weighted    {'yes' if graph.is_weighted else 'no'}")
    print("rank  own vertices  with proxies  arcs  part memory  build peak")
    for r, own, local, arcs, nbytes, peak in rows:
        print(f"{r:>4}  {fmt_count(own):>12}  {fmt_count(local):>12}  {fmt_count(arcs)}  {fmt_bytes(nbytes)}  "
              f"{fmt_bytes(peak)}")
    return 0


def _convert(args) -> int:
    if not args.out.endswith(".npz"):
        raise ValueError(f"output {args.out!r} must end in .npz")
    graph, load_s = _load(args)
    with status(f"writing {args.out}"):
        loaders.save_npz(graph, args.out)
    print(f"wrote {args.out}: {_describe(graph)} (loaded in {load_s:.3g} s)")
    return 0


def main(argv=None) -> int:
    """Run the command line ``argv`` (default sys.argv[1:]); the exit status: 0 ok, 1 validation failed, 2 user error,
    141 when whoever read stdout closed it early (``mgraph info g | head -2``)."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below, not in the flush at exit
        return code
    except BrokenPipeError:
        return _closed_stdout()


def _closed_stdout() -> int:
    """End quietly on a closed stdout, as a command killed by SIGPIPE does (status 128 + 13).

    Python ignores SIGPIPE, so the write raised BrokenPipeError instead; what
    is left in stdout's buffer goes to /dev/null, so that the flush at exit
    does not raise it again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 141


def _main(argv=None) -> int:
    w = world()
    quiet = w is not None and w.rank != 0
    if quiet:  # the job prints once, from rank 0
        sys.stdout = open(os.devnull, "w")
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        args = _parser().parse_args(argv)
        args.argv = argv
        if args.command == "info":
            return _info(args)
        if w is not None and args.command in ("convert", "partition"):
            raise ValueError(f"mgraph {args.command} works on the whole graph in one process: run it without mpiexec")
        if args.command == "convert":
            return _convert(args)
        if args.command == "partition":
            return _partition(args)
        if args.command == "graph500":
            return graph500.main(args)
        return _run(args)
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except BrokenPipeError:  # stdout closed: main ends quietly
        raise
    except (ValueError, OSError, MemoryError) as e:
        message = str(e) or type(e).__name__
        if isinstance(e, OSError) and e.filename is not None and e.strerror:
            message = f"{e.filename}: {e.strerror}"
        if w is not None and not w.all_failing():  # only this rank: the others wait in a collective
            fail_job(w, ValueError(" ".join(message.split())))
        if not quiet:
            print(f"mgraph: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - under MPI a rank's failure must end every rank
        if w is None:
            raise
        fail_job(w, e)
        return 1
    except KeyboardInterrupt:
        print("mgraph: interrupted", file=sys.stderr)
        return 130

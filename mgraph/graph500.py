"""``mgraph graph500 SCALE``: the Graph500 benchmark (its kernels 1, 2 and 3) run on mgraph, reported as the
reference implementation reports it.

The reference (graph500.org, ``src/main.c`` of version 3) generates the R-MAT edge list into memory, builds its
graph from that list (kernel 1, "construction"), picks 64 search keys, runs and validates one BFS per key
(kernel 2) and, built with SSSP, one SSSP per key (kernel 3), and prints ``key: value`` lines of order
statistics.  This module does the same with mgraph's generator, builder, primitives and validators, so that a
figure from ``mgraph graph500`` can be read beside a reference run's: the same keys, the same quartile rule, the
same harmonic mean and harmonic standard deviation of TEPS.  What differs from the reference, and why, is in
docs/graph500.md.

Generation and construction are timed apart, as the reference does: each process (each MPI rank) first draws
its share of the edge list into memory (:class:`DrawnEdges`), then builds its part from that list through the
usual chunked build (mgraph.parts.build).  ``mgraph bfs rmat:S`` instead draws and routes a chunk at a time, which
keeps its peak lower but leaves no moment at which "the edges exist and the graph does not".

Only the statistics (:func:`summary_statistics`, :func:`teps_statistics`) and the root choice
(:func:`choose_roots`) are free of MPI and devices, so that they can be tested against hand-computed values.
"""
from __future__ import annotations

import contextlib
import math
import sys
import time

import numpy as np
from tqdm import tqdm

from mgraph import api, memory
from mgraph.backend import resolve, to_numpy
from mgraph.check.runs import checker
from mgraph.group import is_root, world
from mgraph.io.generators import MAX_SCALE, spec_edges
from mgraph.io.sources import SpecSource
from mgraph.parts.build import build_graph
from mgraph.parts.partitioned import PartitionedGraph
from mgraph.runner.workers import rank_transport
from mgraph.report import check_json_folder, code_version, now, status, write_json

DEFAULT_WEIGHTS = (1, 64)  # SSSP's integer weights when --weights is not given (scripts/bench.py's)
ROOT_BATCH = 1024  # candidate roots drawn (and, under MPI, checked in one allgather) at a time
KEY_WIDTH = 32  # the reference pads "key:" to this column


# -- statistics, as the reference computes them ----------------------------------------
def summary_statistics(values) -> dict:
    """min, first quartile, median, third quartile, max, mean and sample standard deviation of ``values``.

    The reference's rule (``get_statistics``), kept exactly so that figures compare: with ``x`` sorted and
    ``n`` values, a quartile is the mean of ``x[(n-1)//4]`` and ``x[n//4]`` (the third from the top end
    likewise), the median the usual one, and the standard deviation divides by ``n - 1`` (NaN for one value,
    where the reference divides zero by zero).
    """
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = x.size
    if n == 0:
        raise ValueError("statistics of no values")
    mean = float(x.mean())
    std = math.sqrt(float(((x - mean) ** 2).sum()) / (n - 1)) if n > 1 else float("nan")
    return {"min": float(x[0]),
            "firstquartile": float((x[(n - 1) // 4] + x[n // 4]) / 2),
            "median": float((x[(n - 1) // 2] + x[n // 2]) / 2),
            "thirdquartile": float((x[n - 1 - (n - 1) // 4] + x[n - 1 - n // 4]) / 2),
            "max": float(x[-1]), "mean": mean, "stddev": std}


def teps_statistics(times, nedges) -> dict:
    """TEPS order statistics, harmonic mean and harmonic standard deviation of runs of ``nedges[i]`` edges in
    ``times[i]`` seconds.

    As the reference: the statistics are those of seconds per edge, inverted, so that a quartile of TEPS is the
    inverse of the opposite quartile of seconds per edge and the mean becomes the harmonic mean (the right mean
    of rates over the same kind of work); the harmonic standard deviation is Norris's (1940) standard error,
    ``stddev(s) / (mean(s)**2 * sqrt(n - 1))`` for seconds per edge ``s`` (NaN for one run).
    """
    times = np.asarray(times, dtype=np.float64)
    nedges = np.asarray(nedges, dtype=np.float64)
    if times.shape != nedges.shape:
        raise ValueError(f"{times.size} times but {nedges.size} edge counts")
    with np.errstate(divide="ignore", invalid="ignore"):
        s = summary_statistics(times / nedges)
        inv = lambda v: 1.0 / v if v else float("inf")  # noqa: E731 - a run timed at 0 s is infinitely fast
        n = times.size
        return {"min": inv(s["max"]), "firstquartile": inv(s["thirdquartile"]), "median": inv(s["median"]),
                "thirdquartile": inv(s["firstquartile"]), "max": inv(s["min"]), "harmonic_mean": inv(s["mean"]),
                "harmonic_stddev": (s["stddev"] / (s["mean"] ** 2 * math.sqrt(n - 1))
                                    if n > 1 and s["mean"] else float("nan"))}


ORDER = ("min", "firstquartile", "median", "thirdquartile", "max")


def report(*, scale, edge_factor, generation_s, processes, construction_s, bfs, sssp=None) -> list:
    """The reference's report as (key, value, format) rows, in its order; ``bfs`` and ``sssp`` are lists of
    per-root records with ``time_s``, ``nedge`` and ``validate_s``.

    The edge counts are printed once, unprefixed, as the reference prints them: BFS and SSSP from one root
    of an undirected graph traverse the same component, so their counts are the same.
    """
    rows = [("SCALE", scale, "d"), ("edgefactor", edge_factor, "d"), ("NBFS", len(bfs), "d"),
            ("graph_generation", generation_s, "g"), ("num_mpi_processes", processes, "d"),
            ("construction_time", construction_s, "g")]
    kernels = [("bfs ", bfs)] + ([("sssp", sssp)] if sssp is not None else [])

    def block(prefix, stats, suffix, keys, fmt="g"):
        for k in keys:
            rows.append((f"{prefix}{' ' if prefix else ''}{k}_{suffix}", stats[k], fmt))

    for prefix, records in kernels:
        block(prefix, summary_statistics([r["time_s"] for r in records]), "time", ORDER + ("mean", "stddev"))
    block("", summary_statistics([r["nedge"] for r in bfs]), "nedge", ORDER + ("mean", "stddev"), ".11g")
    for prefix, records in kernels:
        block(prefix, teps_statistics([r["time_s"] for r in records], [r["nedge"] for r in records]), "TEPS",
              ORDER + ("harmonic_mean", "harmonic_stddev"))
    for prefix, records in kernels:
        block(prefix, summary_statistics([r["validate_s"] for r in records]), "validate",
              ORDER + ("mean", "stddev"))
    return rows


def report_lines(rows) -> list[str]:
    """``key: value`` lines, the value in the reference's column and format (``%g`` times and TEPS, ``%.11g``
    edge counts)."""
    return [f"{key + ':':<{KEY_WIDTH}}{value:{fmt}}" for key, value, fmt in rows]


def report_dict(rows) -> dict:
    """The report's figures keyed as printed, blanks as underscores (``bfs  min_time`` -> ``bfs_min_time``)."""
    return {"_".join(key.split()): value for key, value, _ in rows}


# -- search keys ------------------------------------------------------------------------
def choose_roots(num_vertices: int, k: int, seed: int, has_edges) -> list[int]:
    """Up to ``k`` distinct random vertices that ``has_edges`` accepts, drawn as the reference draws its keys.

    Candidates are uniform random vertex ids from a generator seeded with ``seed``, taken in order: a repeat or
    a vertex of degree 0 is skipped, and the search gives up after ``2 * num_vertices`` candidates (the reference
    stops after ``num_vertices``), so a graph with fewer than ``k`` vertices of degree >= 1 gives fewer keys.
    ``has_edges(ids)`` returns a bool per id; it is asked about ``ROOT_BATCH`` candidates at a time (under MPI
    each call is collective), and the answer does not depend on the batch, only on ``seed`` and the graph.
    """
    rng = np.random.default_rng(seed)
    chosen, seen, drawn, limit = [], set(), 0, 2 * num_vertices
    while len(chosen) < k and drawn < limit:
        candidates = rng.integers(0, num_vertices, size=ROOT_BATCH, dtype=np.int64)
        good = np.asarray(has_edges(candidates), dtype=bool)
        for v, ok in zip(candidates.tolist(), good.tolist()):
            if len(chosen) >= k or drawn >= limit:
                break
            drawn += 1
            if v not in seen:
                seen.add(v)
                if ok:
                    chosen.append(v)
    return chosen


def _degree_check(graph, part=None):
    """``has_edges`` for :func:`choose_roots`: the degrees of this process's graph, or under MPI each rank vouches
    for the candidates it owns and an allgather combines the verdicts (every rank gets the same answer)."""
    if part is None:
        degree = to_numpy(graph.out_degree())
        return lambda ids: degree[ids] > 0
    return graph.has_edges(part)  # a PartitionedGraph: each rank vouches for its own vertices


# -- kernel 0 and 1: the edge list, then the graph ------------------------------------------
def _on(xp, a):
    """``a`` on the array module ``xp`` (a GPU array comes to the host when ``xp`` is NumPy)."""
    if a is None:
        return None
    return to_numpy(a) if xp is np else xp.asarray(a)


class DrawnEdges(SpecSource):
    """A generator spec whose share of edges this process draws once, into memory, before the build reads it.

    Reading a chunk then slices the drawn arrays, so that the build (kernel 1) does no generating and the two
    are timed apart, as the reference times its generation and construction.  :meth:`release` frees the list;
    a later read (a rebuild for other run options) draws its chunk again, exactly the same edges.
    """

    def __init__(self, spec: str, *, seed: int = 0, weights=None):
        super().__init__(spec, seed=seed, weights=weights)
        self._drawn = None  # (first edge, src, dst, w) of this process's share

    def draw(self, rank: int, size: int, xp=np) -> int:
        """Draw the edges of share ``rank`` of ``size`` (the one the build will ask for); returns their number."""
        chunks = self.ranges(rank, size)
        start, stop = (chunks[0][0], chunks[-1][1]) if chunks else (0, 0)
        self._drawn = (start, *self.spec.edges(start, stop, xp=xp))
        return stop - start

    def read(self, chunk, xp=np):
        if self._drawn is None:
            return super().read(chunk, xp)
        start, src, dst, w = self._drawn
        a, b = chunk[0] - start, chunk[1] - start
        return _on(xp, src[a:b]), _on(xp, dst[a:b]), None if w is None else _on(xp, w[a:b])

    def release(self) -> None:
        self._drawn = None


def _device(graph, run):
    """This process's device, as the searches place it: under MPI the rank's (``graph`` its PartitionedGraph),
    else the run's first."""
    if graph is not None:
        return api.run_backend(graph, **run)
    devices = run["devices"]
    return resolve(run["backend"], devices[0] if isinstance(devices, list) else 0)


def _build(args, source, graph, backend, run, weights):
    """The graph (a Graph, or under MPI the PartitionedGraph ``graph`` of ``source``), this rank's part (None
    without MPI), and the seconds of generation and of construction, on ``backend``, the current device.

    Under MPI every rank draws and builds only its own part, on its own device; the seconds are the slowest
    rank's, each step started together after a barrier.  On one process the graph is built whole on the run's
    first device (with devices > 1 the devices' parts are built from it by the first search: see main).
    """
    w = world()
    if backend.is_gpu:  # CuPy compiles the generator's and the build's kernels on first use: not in the timing
        with status("warm-up on a small graph"):
            build_graph(SpecSource("rmat:10", seed=args.seed, weights=weights), backend)
            if w is not None:  # the ranks' NCCL communicator and its connections, set up as MPI_Init sets up MPI's
                rank_transport(w, backend)
    if w is not None:
        w.barrier()
    with status("generating the edge list"):
        t0 = time.perf_counter()
        source.draw(0 if w is None else w.rank, 1 if w is None else w.size, backend.xp)
        backend.synchronize()
        generation_s = time.perf_counter() - t0
    if w is not None:
        generation_s = w.allreduce(generation_s, "max")
        w.barrier()
    with status("building the graph"):
        t0 = time.perf_counter()
        if w is not None:
            part = api.prepare(graph, **run)
        else:
            graph, part = build_graph(source, backend), None
            backend.synchronize()
        construction_s = time.perf_counter() - t0
    if w is not None:
        construction_s = w.allreduce(construction_s, "max")
    source.release()
    return graph, part, generation_s, construction_s


def _check_host_memory(spec, weighted: bool, sssp: bool) -> None:
    """A one-process CPU run must hold the edge list, the graph and a run with its validation: a one-line error
    before any of it is drawn, never the OOM killer at scale 30."""
    n, arcs = spec.num_vertices, 2 * spec.num_edges
    need = (spec.num_edges * (24 if weighted else 16) + memory.whole_build_bytes(n, arcs, weighted=weighted)
            + memory.run_bytes("sssp" if sssp else "dobfs", n, arcs, validate=True))
    memory.check(need, f"graph500 {spec.args[0]}: generating, building and searching "
                       f"{memory.describe(n, arcs, bound=True)}", None)


# -- kernels 2 and 3: one search per root, each validated -------------------------------------
def _search(name, graph, root, run, direction):
    if name == "bfs":
        return api.bfs(graph, root, direction=direction, **run)
    return api.sssp(graph, root, **run)


def _kernel(name, graph, roots, run, direction, check):
    """One timed search per root, each validated before the next; stops at the first invalid one, as the
    reference does.  Returns (per-root records, the failure or None)."""
    records = []
    with _progress(len(roots), name) as bar:
        for i, root in enumerate(roots):
            r = _search(name, graph, root, run, direction)
            t0 = time.perf_counter()
            message = check(r, root)
            validate_s = time.perf_counter() - t0
            s = r.stats
            record = {"root": root, "time_s": s["elapsed_s"], "nedge": s["edges_in_component"],
                      "teps": s["graph500_teps"], "directed_edge_teps": s["directed_edge_teps"],
                      "validate_s": validate_s, "iterations": s["iterations"], "supersteps": s["supersteps"],
                      "valid": message is None}
            if "directions" in s:
                record["directions"] = s["directions"]
            records.append(record)
            bar.update(1)
            if message:
                return records, {"kernel": name, "run": i, "root": root, "message": message}
    return records, None


@contextlib.contextmanager
def _progress(total, name):
    """A tqdm bar over the roots on an interactive stderr, from rank 0 only."""
    if total < 2 or not sys.stderr.isatty() or not is_root():
        yield _NoBar()
        return
    with tqdm(total=total, desc=f"{name} + validation", unit="root", leave=False) as bar:
        yield bar


class _NoBar:
    def update(self, k=1):
        pass


# -- the command ------------------------------------------------------------------------
def main(args) -> int:
    """``mgraph graph500`` with parsed ``args`` (mgraph.cli); the exit status: 0 when every search validated, 1
    when one did not (the report is then withheld, as the reference withholds it)."""
    check_json_folder(args.json)
    if not 1 <= args.scale <= MAX_SCALE:
        raise ValueError(f"SCALE must be between 1 and {MAX_SCALE}, got {args.scale}")
    if args.seed < 0:
        raise ValueError(f"--seed must be non-negative, got {args.seed}")
    if args.weights is not None and not args.sssp:
        raise ValueError("--weights gives SSSP's edge weights: add --sssp")
    weights = (args.weights or DEFAULT_WEIGHTS) if args.sssp else None
    spec_text = f"rmat:{args.scale}:{args.edge_factor}"
    spec = spec_edges(spec_text, seed=args.seed, weights=weights)
    if args.gpus is not None:
        args.devices = args.gpus
    run = {"backend": args.backend, "devices": args.devices, "seed": args.seed}
    run.update({k: getattr(args, k) for k in ("partitioner", "duplication", "communication", "workers")
                if getattr(args, k)})
    w = world()
    backend = resolve(args.backend)
    if w is None and not backend.is_gpu:
        _check_host_memory(spec, weights is not None, args.sssp)

    source = DrawnEdges(spec_text, seed=args.seed, weights=weights)
    graph = None if w is None else PartitionedGraph(source, w)
    device = _device(graph, run)
    if w is not None and device.is_gpu:  # the rank's GPU current for good: leaving a device context makes the one
        device.xp.cuda.Device(device.device).use()  # before current again, and CUDA opens a context where it does
    with device.context():  # every step on this process's device, as the searches: never a rank on GPU 0's context
        return _benchmark(args, spec, spec_text, weights, run, source, graph, device)


def _benchmark(args, spec, spec_text, weights, run, source, graph, device) -> int:
    """Kernels 0 to 3 on ``device`` (current), the report printed and recorded; the exit status of :func:`main`."""
    w = world()
    graph, part, generation_s, construction_s = _build(args, source, graph, device, run, weights)
    roots = choose_roots(graph.num_vertices, args.roots, args.seed, _degree_check(graph, part))
    if not roots:
        why = ("every generated edge is a self-loop" if not graph.num_arcs else
               f"none came up in {2 * graph.num_vertices} random draws")
        raise ValueError(f"{spec_text} (seed {args.seed}) has no vertex of degree >= 1 to search from: {why}")
    if len(roots) < args.roots and is_root():
        print(f"mgraph: graph500: only {len(roots)} distinct vertices of degree >= 1 found in "
              f"{2 * graph.num_vertices} random draws: NBFS = {len(roots)}", file=sys.stderr)

    kernels = ["bfs"] + (["sssp"] if args.sssp else [])
    records, failure, warm = {}, None, {}
    for name in kernels:
        with status(f"{name} warm-up"):  # untimed, as the reference's: compiles kernels, builds parts of devices>1
            warm[name] = _search(name, graph, roots[0], run, args.direction).stats
        if w is None and "partition_s" in warm[name] and not warm[name].get("parts_reused"):
            construction_s += warm[name]["partition_s"] + warm[name]["subgraph_s"]  # devices > 1 in this process
        records[name], failure = _kernel(name, graph, roots, run, args.direction, checker(name, graph))
        if failure:
            break

    stats = warm["bfs"]
    rows = None
    if failure is None:
        rows = report(scale=args.scale, edge_factor=args.edge_factor, generation_s=generation_s,
                      processes=1 if w is None else w.size, construction_s=construction_s,
                      bfs=records["bfs"], sssp=records.get("sssp"))
        extra = [("bfs  direction", args.direction, "s"),
                 ("devices", f"{stats['devices']} ({stats['backend']}: {stats['device']})", "s")]
        if args.sssp:
            extra.append(("sssp weights", f"integers {weights[0]}..{weights[1]}", "s"))
        extra.append(("validation", "PASS (" + ", ".join(f"{len(records[k])} {k.upper()}" for k in kernels)
                      + " searches by Graph500's rules)", "s"))
        for line in report_lines(rows + extra):
            print(line)
    else:
        print(f"validation: FAIL: {failure['kernel'].upper()} from root {failure['root']} (search "
              f"{failure['run'] + 1} of {len(roots)}): {failure['message']}")
        print("No results printed for invalid run.")
    if args.json and is_root():
        write_json(args.json, {
            "command": "graph500", "argv": ["mgraph", *args.argv],
            "graph": {"input": spec_text, "scale": args.scale, "edge_factor": args.edge_factor,
                      "vertices": graph.num_vertices, "edges": graph.num_edges, "input_edges": spec.num_edges,
                      "arcs": graph.num_arcs, "weighted": weights is not None, "weights": weights},
            "options": {k: v for k, v in vars(args).items() if k not in ("command", "json", "argv")},
            "report": report_dict(rows) if rows else None,
            "roots": roots, "runs": records,
            "validation": {"status": "FAIL" if failure else "PASS", "failures": [failure] if failure else []},
            "num_mpi_processes": 1 if w is None else w.size, "backend": stats["backend"],
            "devices": sorted({stats["device"]}), "device_count": stats["devices"], "warm_up": True,
            "version": code_version(), "date": now(),
        })
    return 1 if failure else 0

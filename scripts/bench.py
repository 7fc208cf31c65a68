#!/usr/bin/env python3
"""One-GPU benchmark: every primitive on a Graph500 R-MAT graph, against the issue's floors at scale 24.

    PYTHONPATH=$PWD python3 scripts/bench.py --scale 24 --json results/bench.json
    python3 scripts/bench.py --backend numpy --scale 12          # CPU, for testing

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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout

from mgraph import generators  # noqa: E402
from mgraph.backend import BACKENDS, resolve  # noqa: E402
from mgraph.cli import (PRIMITIVES, TRAVERSALS, Validator, code_version, harmonic_mean, now,  # noqa: E402
                        random_sources, run_primitive, write_json)

SSSP_WEIGHTS = (1, 64)  # integer weights, as Gunrock's SSSP benchmarks use
PR_L1 = 1e-6  # PageRank runs until the rank vector's L1 change is below this (networkx's tol = PR_L1 / |V|)
FLOOR_SCALE, FLOOR_EDGE_FACTOR = 24, 16
# The floors on one GPU at R-MAT scale 24, edge factor 16: (figure, comparison, bound, unit).
# TEPS floors are read against the Graph500 figure, the project's primary TEPS definition.
FLOORS = {
    "bfs": ("graph500_gteps", ">=", 15, "GTEPS"),
    "dobfs": ("graph500_gteps", ">=", 50, "GTEPS"),
    "sssp": ("median_ms", "<=", 200, "ms"),
    "cc": ("median_ms", "<=", 60, "ms"),
    "pr": ("ms_per_iteration", "<=", 10, "ms/iter"),
    "bc": ("median_ms", "<=", 100, "ms/source"),
}


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _arguments(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", type=int, default=24, help="R-MAT scale: 2**SCALE vertices (default 24)")
    p.add_argument("--edge-factor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--primitives", default=",".join(PRIMITIVES), help=f"comma list of {','.join(PRIMITIVES)}")
    p.add_argument("--runs", type=int, default=5, help="timed runs per source (default 5)")
    p.add_argument("--sources", type=int, default=8, help="random sources for traversals and BC (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed for the graph, sources and weights")
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--validate", action=argparse.BooleanOptionalAction, default=True,
                   help="check one run per primitive against a CPU reference (default on)")
    p.add_argument("--json", metavar="FILE", help="write the full results here")
    args = p.parse_args(argv)
    args.primitives = [x.strip() for x in args.primitives.split(",") if x.strip()]
    unknown = sorted(set(args.primitives) - set(PRIMITIVES))
    if unknown:
        p.error(f"unknown primitive {unknown[0]!r}: choose from {', '.join(PRIMITIVES)}")
    if args.runs < 1 or args.sources < 1:
        p.error("--runs and --sources must be >= 1")
    return args


def bench(name, graph, sources, args, backend, check):
    """Warm-up, then ``args.runs`` timed runs per start (source, or the one start of CC and PageRank)."""
    run = {"backend": backend}
    params = {"tol": PR_L1 / graph.num_vertices} if name == "pr" else {}
    starts = [[s] for s in sources] if name == "bc" else sources if name in TRAVERSALS else [None]
    run_primitive(name, graph, starts[0], run=run, **params)
    per_start = []
    for i, s in enumerate(starts):
        _log(f"{name}: {args.runs} run(s) from start {i + 1}/{len(starts)}")
        results = [run_primitive(name, graph, s, run=run, **params) for _ in range(args.runs)]
        times = [r.stats["elapsed_s"] for r in results]
        middle = sorted(results, key=lambda r: r.stats["elapsed_s"])[(len(results) - 1) // 2]
        per_start.append({"start": s, "times_s": times, "median_s": statistics.median(times),
                          "iterations": middle.stats["iterations"],
                          **{k: middle.stats[k] for k in ("edges_in_component", "arcs_traversed", "converged",
                                                          "ms_per_iteration") if k in middle.stats}})
    record = {
        "median_ms": 1e3 * statistics.median(p["median_s"] for p in per_start),
        "iterations": statistics.median(p["iterations"] for p in per_start),
        "starts": per_start,
    }
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
    figure, op, bound, unit = FLOORS[name]
    record["floor"] = {"figure": figure, "op": op, "bound": bound, "unit": unit}
    if (args.scale, args.edge_factor) == (FLOOR_SCALE, FLOOR_EDGE_FACTOR):
        record["met"] = record[figure] >= bound if op == ">=" else record[figure] <= bound
    else:
        record["met"] = None  # the floors are set for scale 24 only
    return record


def _table(rows, header) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def _fmt(x, digits=4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def main(argv=None) -> int:
    args = _arguments(argv)
    backend = resolve(args.backend)
    device = backend.device_name()
    _log(f"generating R-MAT scale {args.scale}, edge factor {args.edge_factor} on {backend.name} ({device})")
    t0 = time.perf_counter()
    graph = generators.rmat(args.scale, args.edge_factor, xp=backend.xp, seed=args.seed)
    backend.synchronize()
    generate_s = time.perf_counter() - t0
    _log(f"generated {graph.num_vertices:,} vertices, {graph.num_edges:,} edges in {generate_s:.3g} s")
    sources = random_sources(graph, args.sources, args.seed)
    results = {}
    for name in args.primitives:
        g = graph
        if name == "sssp":
            g = generators.with_random_weights(graph, *SSSP_WEIGHTS, seed=args.seed)
        check = Validator(name, g) if args.validate else None
        results[name] = bench(name, g, sources, args, backend, check)
        del g, check  # free the weighted copy and the CPU references before the next primitive
    met_known = (args.scale, args.edge_factor) == (FLOOR_SCALE, FLOOR_EDGE_FACTOR)
    if args.json:
        write_json(args.json, {
            "date": now(), "command": sys.argv if argv is None else ["scripts/bench.py", *argv],
            "version": code_version(), "backend": backend.name, "device": device,
            "graph": {"generator": "rmat", "scale": args.scale, "edge_factor": args.edge_factor, "seed": args.seed,
                      "vertices": graph.num_vertices, "edges": graph.num_edges, "arcs": graph.num_arcs,
                      "generate_s": generate_s},
            "options": {k: v for k, v in vars(args).items() if k != "json"},
            "sources": sources, "sssp_weights": SSSP_WEIGHTS, "pagerank_l1_stop": PR_L1,
            "results": results,
        })
        _log(f"wrote {args.json}")
    rows = []
    for name, r in results.items():
        figure, op, bound, unit = FLOORS[name]
        time_ms = r["ms_per_iteration"] if name == "pr" else r["median_ms"]
        rows.append([name + (" (ms/iter)" if name == "pr" else " (per source)" if name == "bc" else ""),
                     _fmt(time_ms), _fmt(r.get("graph500_gteps")), _fmt(r.get("directed_gteps")),
                     _fmt(r["iterations"]), f"{op} {bound} {unit}",
                     "-" if r["met"] is None else "yes" if r["met"] else "no",
                     r.get("validation", "not run").split(":")[0]])
    print(f"R-MAT scale {args.scale}, edge factor {args.edge_factor}: {graph.num_vertices:,} vertices, "
          f"{graph.num_edges:,} edges (generated in {generate_s:.3g} s); {backend.name} on {device}; "
          f"median of {args.runs} run(s) x {args.sources} source(s); {now()}")
    print(_table(rows, ["primitive", "time ms", "GTEPS (Graph500)", "GTEPS (directed)", "iterations",
                        f"floor (scale {FLOOR_SCALE})", "met" if met_known else "met (n/a)", "valid"]))
    failed = [name for name, r in results.items() if r.get("validation", "").startswith("FAIL")]
    for name in failed:
        print(f"{name}: {results[name]['validation']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""networkx's own functions against the same calls dispatched to mgraph (``backend="mgraph"``), per family.

    python scripts/networkx_speed.py --graphs facebook,slashdot,rmat:18 --json out.json
    python scripts/networkx_speed.py --graphs rmat:18 --backend cupy --families pagerank,betweenness,louvain

Each family is one networkx call on a networkx graph: networkx runs it once (it is the slow side); mgraph runs it
once to fill networkx's cache of converted graphs (``conversion`` is that call less a cached one), then
``--runs`` more from the cache, whose median is mgraph's time.  Both results are compared (the same answer, or for
Louvain modularity within 1 %), and the table gives networkx's time over mgraph's.  ``facebook`` and
``slashdot`` are tests/data's real graphs (self-loops removed: mgraph's graphs have none); a generator spec
(``rmat:18``) is drawn by mgraph and handed to networkx as its edge list.  ``--backend`` picks where mgraph runs
(``nx.config.backends.mgraph``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import networkx as nx
import numpy as np

import mgraph

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data")


def load(name):
    """A networkx graph: tests/data's facebook or slashdot, or an mgraph generator spec."""
    if name == "facebook":
        import pandas as pd

        G = nx.from_pandas_edgelist(pd.read_csv(os.path.join(DATA, "facebook_large_edges.csv")), "id_1", "id_2")
    elif name == "slashdot":
        G = nx.read_edgelist(os.path.join(DATA, "soc-Slashdot0902.txt.gz"), nodetype=int, create_using=nx.Graph)
    else:
        src, dst, _ = mgraph.load(name, backend="numpy").edges()
        G = nx.Graph()
        G.add_edges_from(zip(src.tolist(), dst.tolist()))
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    return G


def families(G, k, source):
    """name -> (call(**backend), compare(networkx's result, mgraph's) -> None or what differs)."""
    def same_dict(tol):
        def compare(a, b):
            if set(a) != set(b):
                return "different vertices"
            worst = max((abs(a[v] - b[v]) for v in a), default=0.0)
            return None if worst <= tol else f"largest difference {worst:.3g}"
        return compare

    def same_sets(a, b):
        return None if sorted(map(sorted, a)) == sorted(map(sorted, b)) else "different components"

    def modularity(a, b):
        qa, qb = nx.community.modularity(G, a), nx.community.modularity(G, b)
        return None if qb >= qa - 0.01 * abs(qa) else f"modularity {qb:.4f} against networkx's {qa:.4f}"

    return {
        "bfs": (lambda **kw: nx.single_source_shortest_path_length(G, source, **kw), same_dict(0)),
        "components": (lambda **kw: list(nx.connected_components(G, **kw)), same_sets),
        "pagerank": (lambda **kw: nx.pagerank(G, tol=1e-8, **kw), same_dict(1e-6)),
        "betweenness": (lambda **kw: nx.betweenness_centrality(G, k=k, seed=0, **kw), same_dict(1e-9)),
        "triangles": (lambda **kw: nx.triangles(G, **kw), same_dict(0)),
        "core_number": (lambda **kw: nx.core_number(G, **kw), same_dict(0)),
        "louvain": (lambda **kw: nx.community.louvain_communities(G, seed=0, **kw), modularity),
    }


def run(graph, wanted, k, runs, log):
    G = load(graph)
    source = next(iter(G))
    rows = []
    log(f"{graph}: {G.number_of_nodes():,} vertices, {G.number_of_edges():,} edges")
    for name, (call, compare) in families(G, k, source).items():
        if name not in wanted:
            continue
        G.__networkx_cache__.clear()  # a conversion of its own per family, timed
        t = time.perf_counter()
        reference = call()
        t_nx = time.perf_counter() - t
        t = time.perf_counter()
        first = call(backend="mgraph")
        t_first = time.perf_counter() - t
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            got = call(backend="mgraph")
            times.append(time.perf_counter() - t)
        t_mg = statistics.median(times)
        check = compare(reference, got)  # betweenness: the backend samples networkx's k sources by the same seed
        del first
        rows.append({"graph": graph, "family": name, "networkx_s": t_nx, "mgraph_s": t_mg, "mgraph_runs_s": times,
                     "conversion_s": max(t_first - t_mg, 0.0), "speedup": t_nx / t_mg if t_mg else None,
                     "check": check or "same"})
        log(f"  {name}: networkx {t_nx:.3g} s, mgraph {t_mg:.3g} s (conversion {rows[-1]['conversion_s']:.3g} s), "
            f"{rows[-1]['speedup']:.3g}x; {rows[-1]['check']}")
    return rows


def table(rows):
    out = ["| graph | family | networkx s | mgraph s | conversion s | networkx ÷ mgraph | result |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['graph']} | {r['family']} | {r['networkx_s']:.3g} | {r['mgraph_s']:.3g} | "
                   f"{r['conversion_s']:.3g} | {r['speedup']:.3g} | {r['check']} |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", default="facebook,slashdot", help="comma list: facebook, slashdot, generator specs")
    p.add_argument("--families", default="bfs,components,pagerank,betweenness,triangles,core_number,louvain")
    p.add_argument("--k", type=int, default=100, help="betweenness: sampled sources (default 100)")
    p.add_argument("--runs", type=int, default=3, help="mgraph's cached runs per family (default 3)")
    p.add_argument("--backend", choices=("numpy", "cupy"), default="numpy", help="where mgraph runs")
    p.add_argument("--json", metavar="FILE", help="every figure, as JSON")
    args = p.parse_args(argv)
    wanted = [f for f in args.families.split(",") if f]
    unknown = set(wanted) - set(families(nx.Graph([(0, 1)]), 1, 0))
    if unknown or args.runs < 1 or args.k < 1:
        p.error(f"unknown families {sorted(unknown)}" if unknown else "--runs and --k must be at least 1")
    cfg = getattr(nx.config.backends, "mgraph", None)
    if cfg is None:  # networkx finds backends by their installed entry points, not on the path
        p.error("networkx has no backend 'mgraph': install the project (pip install -e .) so that its entry point "
                "is registered")
    before = (cfg["backend"], nx.config.cache_converted_graphs)
    cfg["backend"], nx.config.cache_converted_graphs = args.backend, True
    try:
        rows = _measure(args, wanted)
    finally:  # networkx's configuration is the process's: leave it as it was (a caller may go on using networkx)
        cfg["backend"], nx.config.cache_converted_graphs = before
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": args.backend, "k": args.k, "runs": args.runs, "networkx": nx.__version__,
                       "numpy": np.__version__, "rows": rows}, f, indent=1)


def _measure(args, wanted):
    small = load("rmat:8")  # compiled kernels loaded before any timing (numba's on the CPU, CUDA's on a GPU)
    for name, (call, _) in families(small, 4, next(iter(small))).items():
        if name in wanted:
            call(backend="mgraph")
    rows = []
    for graph in (g for g in args.graphs.split(",") if g):
        rows += run(graph, wanted, args.k, args.runs, lambda m: print(m, file=sys.stderr, flush=True))
    return rows


if __name__ == "__main__":
    main()

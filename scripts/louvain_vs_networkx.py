"""mgraph's Louvain against networkx's louvain_communities on a real graph, both judged by networkx's modularity.

    python scripts/louvain_vs_networkx.py slashdot|facebook MGRAPH_SEEDS [NX_SEEDS] [--devices 1,4]

e.g. ``python scripts/louvain_vs_networkx.py facebook 0,1,2 0,1,2,3,4``.  The graphs are tests/data's
(provenance in its README); self-loops are removed, since mgraph graphs drop them.  Prints one line per run:
the modularity (mgraph's own figure and networkx's of the same partition), the communities, the time.
"""
from __future__ import annotations

import argparse
import os
import time

import networkx as nx
import pandas as pd

import mgraph

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data")


def graph(name):
    if name == "facebook":
        df = pd.read_csv(os.path.join(DATA, "facebook_large_edges.csv"))
        G = nx.from_pandas_edgelist(df, "id_1", "id_2")
    else:
        G = nx.read_edgelist(os.path.join(DATA, "soc-Slashdot0902.txt.gz"), nodetype=int, create_using=nx.Graph)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    return G


def seeds(text):
    return [int(x) for x in text.split(",") if x]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("graph", choices=("slashdot", "facebook"))
    p.add_argument("seeds", type=seeds, help="mgraph's seeds, comma-separated")
    p.add_argument("nx_seeds", type=seeds, nargs="?", default=[], help="networkx's seeds, comma-separated")
    p.add_argument("--devices", type=seeds, default=[1, 4], help="device counts (threads on a CPU)")
    args = p.parse_args()
    G = graph(args.graph)
    print(args.graph, G.number_of_nodes(), "vertices,", G.number_of_edges(), "edges (self-loops removed)", flush=True)
    g = mgraph.from_networkx(G)
    for s in args.seeds:
        for d in args.devices:
            t = time.perf_counter()
            r = mgraph.louvain(g, devices=d, seed=s)
            t = time.perf_counter() - t
            parts = {}
            for v, c in zip(G, r.community.tolist()):
                parts.setdefault(c, set()).add(v)
            print(f"mgraph   seed={s} devices={d} Q={r.stats['modularity']:.5f} (networkx's modularity of it "
                  f"{nx.community.modularity(G, parts.values()):.5f}) communities={len(parts)} "
                  f"levels={r.stats['levels']} time {t:.1f} s", flush=True)
    for s in args.nx_seeds:
        t = time.perf_counter()
        parts = nx.community.louvain_communities(G, seed=s)
        t = time.perf_counter() - t
        print(f"networkx seed={s} Q={nx.community.modularity(G, parts):.5f} communities={len(parts)} time {t:.1f} s",
              flush=True)


if __name__ == "__main__":
    main()

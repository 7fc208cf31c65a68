"""Direction-optimizing BFS: harmonic-mean Graph500 GTEPS over 8 sources for a grid of do_a, do_b (GPU).

    PYTHONPATH=$PWD python3 scripts/experiments/dobfs_switch_sweep.py 24
"""
import sys, numpy as np, cupy as cp, mgraph
from mgraph import generators
g = generators.rmat(int(sys.argv[1]), xp=cp, seed=0)
deg = cp.asnumpy(g.out_degree()); rng = np.random.default_rng(1)
srcs = rng.choice(np.flatnonzero(deg > 0), 8, replace=False)
mgraph.bfs(g, int(srcs[0]), direction="auto")
for do_a in (0.01, 1e-3, 1e-4, 1e-5, 1e-6):
    for do_b in (0.1, 1.0):
        st = [min((mgraph.bfs(g, int(s), direction="auto", do_a=do_a, do_b=do_b).stats for _ in range(3)), key=lambda x: x["elapsed_s"]) for s in srcs]
        hm = len(st) / sum(1 / x["graph500_teps"] for x in st) / 1e9
        print(f"do_a={do_a:g} do_b={do_b:g} hmean GTEPS {hm:.1f} ms {[round(x['elapsed_s']*1e3,2) for x in st]}", flush=True)

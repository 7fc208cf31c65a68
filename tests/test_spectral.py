"""primitives/spectral.py through mgraph.run: eigenvector centrality, Katz centrality and HITS against networkx,
on 1 to 4 devices, with each partitioner and both proxy duplications (the normalisations are global sums over
own vertices, applied one superstep later on every copy: a part that counted a copy would be off)."""
from __future__ import annotations

import functools

import networkx as nx
import numpy as np
import pytest

import mgraph
from mgraph.primitives.spectral import HITS, EigenvectorCentrality, KatzCentrality


def _graphs():
    d = nx.gnp_random_graph(80, 0.06, directed=True, seed=7)
    for k, (u, v) in enumerate(d.edges()):
        d[u][v]["weight"] = 0.5 + (k * 13 % 7) / 3
    u = nx.connected_watts_strogatz_graph(90, 6, 0.2, seed=3)
    for k, (a, b) in enumerate(u.edges()):
        u[a][b]["weight"] = 1 + k % 4
    return {"directed": d, "undirected": u}


GRAPHS = _graphs()
RUNS = [dict(devices=1), dict(devices=2), dict(devices=3, partitioner="biased-random"),
        dict(devices=4, duplication="all"), dict(devices=2, partitioner="metis")]


def _vector(G, values) -> np.ndarray:
    return np.array([values[v] for v in G])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("weight", [None, "weight"])
def test_eigenvector_and_katz_are_networkx_iterations(name, weight, run):
    G = GRAPHS[name]
    g = mgraph.from_networkx(G, weight=weight)
    r = mgraph.run(functools.partial(EigenvectorCentrality, tol=1e-9, max_iter=1000), g, **run)
    want = _vector(G, nx.eigenvector_centrality(G, tol=1e-9, max_iter=1000, weight=weight))
    assert r["converged"].tolist() == [1] * len(G)
    np.testing.assert_allclose(r["centrality"], want, rtol=1e-9, atol=1e-12)
    alpha = 0.02
    r = mgraph.run(functools.partial(KatzCentrality, alpha=alpha, beta=1.0, tol=1e-10, max_iter=1000), g, **run)
    x = r["centrality"]
    want = _vector(G, nx.katz_centrality(G, alpha=alpha, tol=1e-10, weight=weight, normalized=False))
    np.testing.assert_allclose(x, want, rtol=1e-9)
    beta = np.arange(len(G)) % 3 + 1.0
    r = mgraph.run(functools.partial(KatzCentrality, alpha=alpha, beta=beta, tol=1e-10), g, **run)
    want = _vector(G, nx.katz_centrality(G, alpha=alpha, beta=dict(zip(G, beta.tolist())), tol=1e-10,
                                         weight=weight, normalized=False))
    np.testing.assert_allclose(r["centrality"], want, rtol=1e-9)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
@pytest.mark.parametrize("name", GRAPHS)
def test_hits_reaches_networkx_singular_vectors(name, run):
    G = GRAPHS[name]
    g = mgraph.from_networkx(G, weight="weight")
    r = mgraph.run(functools.partial(HITS, tol=1e-12, max_iter=2000), g, **run)
    assert r["converged"].tolist() == [1] * len(G)
    hubs, authorities = nx.hits(G, tol=1e-12, max_iter=2000)
    np.testing.assert_allclose(r["hubs"] / r["hubs"].sum(), _vector(G, hubs), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(r["authorities"] / r["authorities"].sum(), _vector(G, authorities), rtol=1e-6,
                               atol=1e-9)


def test_unconverged_runs_say_so():
    G = GRAPHS["directed"]
    g = mgraph.from_networkx(G)
    for prim in (functools.partial(EigenvectorCentrality, tol=1e-15, max_iter=3),
                 functools.partial(KatzCentrality, alpha=0.1, tol=1e-15, max_iter=3),
                 functools.partial(HITS, tol=1e-15, max_iter=3)):
        for devices in (1, 3):
            r = mgraph.run(prim, g, devices=devices)
            assert r["converged"].tolist() == [0] * len(G)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.eigenvector_centrality(G, tol=1e-15, max_iter=3)
    with pytest.raises(ValueError, match="tol must be positive"):
        mgraph.run(functools.partial(HITS, tol=0), g)

"""Fixed border lists between two GPU ranks through CUDA IPC (mgraph.comm.cupy_borders) against the host's path,
the NumPy twin (mgraph.comm.borders.NumpyBorders) and networkx.  Needs two GPUs that reach each other's memory."""
import json
import textwrap

import networkx as nx
import numpy as np
import pytest

import mgraph

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
if cp.cuda.runtime.getDeviceCount() < 2 or not cp.cuda.runtime.deviceCanAccessPeer(0, 1):
    pytest.skip("needs two GPUs with peer access", allow_module_level=True)

SCRIPT = """
import json, sys
import numpy as np
import mgraph
g = mgraph.load(sys.argv[1], backend="cupy")
shares = sys.argv[3]
for peer in (True, False):
    r = mgraph.pagerank(g, tol=1e-10, max_iter=500, shares=shares, peer_borders=peer)
    r2 = mgraph.pagerank(g, tol=1e-10, max_iter=500, shares=shares, peer_borders=peer)  # a second call: new inboxes
    if r.rank is not None:
        np.save(sys.argv[2] + ("-peer" if peer else "-host") + ".npy", np.stack([r.rank, r2.rank]))
        print(json.dumps({"path": r.stats["border_path"], "hops": r.stats["border_hops"],
                          "bytes": r.stats["border_bytes"], "supersteps": r.stats["supersteps"]}), flush=True)
"""


@pytest.mark.parametrize("spec, shares", [("rmat:14", "float64"), ("grid:90x70", "float64"), ("rmat:12", "float32")])
def test_two_gpu_ranks_write_their_borders_into_each_other(tmp_path, spec, shares):
    from conftest import run_mpi

    script = tmp_path / "ranks.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = run_mpi(2, ["python", str(script), spec, str(tmp_path / "r"), shares], env={"MGRAPH_BACKEND": "cupy"},
                  timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    peer, host = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    assert peer["path"] == "peer" and host["path"] == "host"
    assert peer["hops"] == [peer["supersteps"] - 1] * 2 and peer["supersteps"] == host["supersteps"]
    a, b = np.load(tmp_path / "r-peer.npy"), np.load(tmp_path / "r-host.npy")
    np.testing.assert_array_equal(a[0], b[0])  # the same values reach the same copies: the same bits
    np.testing.assert_array_equal(a[0], a[1])
    g = mgraph.load(spec, backend="numpy")
    twin = mgraph.pagerank(g, devices=2, backend="numpy", tol=1e-10, max_iter=500, shares=shares)
    assert twin.stats["border_path"] == "peer" and twin.stats["border_bytes"] == peer["bytes"]
    np.testing.assert_allclose(a[0], twin.rank, rtol=1e-5 if shares == "float32" else 1e-9)
    G = nx.from_scipy_sparse_array(g.to_scipy(), create_using=nx.DiGraph if g.directed else nx.Graph)
    ref = nx.pagerank(G, tol=1e-10, max_iter=500, weight=None)
    np.testing.assert_allclose(a[0], [ref[v] for v in range(g.num_vertices)],
                               atol=1e-6 if shares == "float32" else 1e-9)


def test_gpus_in_threads_keep_the_hosts_path():
    g = mgraph.load("rmat:10", backend="numpy")
    r = mgraph.pagerank(g, devices=[0, 1], backend="cupy")
    assert r.stats["border_path"] == "host"
    np.testing.assert_allclose(r.rank, mgraph.pagerank(g, devices=2).rank, rtol=1e-9)


FAILING = """
import mgraph
from mgraph.comm import cupy_borders
cupy_borders.WAIT_S = 2.0
real = cupy_borders.CupyBorders.exchange
def skipping(self, prim, names):
    if self.d == 1 and self.tag == 2:  # rank 1 never sends its third hop
        self.tag += 1
        return 0
    return real(self, prim, names)
cupy_borders.CupyBorders.exchange = skipping
mgraph.pagerank(mgraph.load("rmat:12", backend="cupy"))
"""


def test_a_post_that_never_comes_ends_the_job_with_an_error_naming_the_hop(tmp_path):
    """Rank 0's stream waits on the device for rank 1's post of hop 3, which never comes: the wait gives up after
    WAIT_S, the host raises at its next check with the hop's number, and the job ends (no hang, no traceback
    from rank 1)."""
    from conftest import run_mpi

    script = tmp_path / "fail.py"
    script.write_text(textwrap.dedent(FAILING))
    out = run_mpi(2, ["python", str(script)], env={"MGRAPH_BACKEND": "cupy"}, timeout=120)
    assert out.returncode != 0
    assert "rank 0 of 2: RuntimeError: device 0: no post of border hop 3 from a peer device within 2 s" in out.stderr

"""Results of GPU ranks gathered GPU to GPU (NCCL) onto rank 0's GPU (mgraph.runner.workers.Ranks): the same
arrays as one device and as the host's gather.  Needs two GPUs."""
import json
import textwrap

import numpy as np
import pytest

import mgraph
from mgraph.check.validate import validate_bfs

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
if cp.cuda.runtime.getDeviceCount() < 2:
    pytest.skip("needs two GPUs", allow_module_level=True)

SCRIPT = """
import json, sys
import numpy as np
import mgraph
g = mgraph.load(sys.argv[1], backend="cupy")
b = mgraph.bfs(g, 3)
c = mgraph.connected_components(g)
p = mgraph.pagerank(g)
dev = mgraph.bfs(g, 3, output="device")
mine = mgraph.bfs(g, 3, gather=False)
sizes = mgraph.group.world().allgather(int(mine.vertices.shape[0]))
if b.depth is not None:
    np.savez(sys.argv[2], depth=b.depth, pred=b.predecessor, labels=c.labels, rank=p.rank,
             dev_depth=dev.depth.get())
    print(json.dumps({"sizes": sizes, "dev_type": type(dev.depth).__module__}), flush=True)
"""


@pytest.mark.parametrize("spec", ["rmat:14", "grid:50x40"])
def test_two_gpu_ranks_gather_their_results_on_rank_0s_gpu(tmp_path, spec):
    from conftest import run_mpi

    script = tmp_path / "ranks.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = run_mpi(2, ["python", str(script), spec, str(tmp_path / "r.npz")], env={"MGRAPH_BACKEND": "cupy"},
                  timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    g = mgraph.load(spec, backend="numpy")
    assert sum(info["sizes"]) == g.num_vertices and min(info["sizes"]) > 0
    assert info["dev_type"].startswith("cupy")
    r = np.load(tmp_path / "r.npz")
    one = mgraph.bfs(g, 3)
    np.testing.assert_array_equal(r["depth"], one.depth)
    np.testing.assert_array_equal(r["dev_depth"], one.depth)
    validate_bfs(g, 3, r["depth"], r["pred"])
    np.testing.assert_array_equal(r["labels"], mgraph.connected_components(g).labels)
    np.testing.assert_allclose(r["rank"], mgraph.pagerank(g).rank, rtol=1e-9)

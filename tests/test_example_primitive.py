"""The guide's example primitive (docs/examples/khop.py), loaded from its own file as a user would,
runs unchanged on one device and on several, and agrees with scipy's hop distances cut at k."""
import importlib.util
import os

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import mgraph
from conftest import get_case

HERE = os.path.dirname(__file__)


def load_user_file():
    path = os.path.join(HERE, "..", "docs", "examples", "khop.py")
    spec = importlib.util.spec_from_file_location("khop_user_file", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KHop


@pytest.mark.parametrize("devices,opts", [
    (1, {}),
    (2, {}),
    (3, dict(duplication="all", communication="broadcast")),
    (5, dict(partitioner="biased-random", communication="broadcast")),
])
@pytest.mark.parametrize("name", ["chesapeake", "rand_dir", "grid20x15"])
@pytest.mark.parametrize("k", [0, 1, 3])
def test_khop_matches_scipy(name, k, devices, opts):
    KHop = load_user_file()
    case = get_case(name)
    hops = csgraph.shortest_path(case.csr, method="D", directed=True, unweighted=True, indices=0)
    expected = np.where(hops <= k, hops, -1).astype(np.int64)
    r = mgraph.run(lambda g: KHop(g, k=k), case.graph, source=0, devices=devices, **opts)
    np.testing.assert_array_equal(r.hops, expected)


def test_khop_rejects_negative_k():
    KHop = load_user_file()
    with pytest.raises(ValueError, match="k must be"):
        mgraph.run(lambda g: KHop(g, k=-1), get_case("chesapeake").graph, source=0)


def test_khop_in_a_users_script_with_one_process_per_device(tmp_path):
    """As the guide shows it: the user's own file and script, devices in worker processes of their own."""
    import shutil
    import subprocess
    import sys

    shutil.copy(os.path.join(HERE, "..", "docs", "examples", "khop.py"), tmp_path / "khop.py")
    (tmp_path / "script.py").write_text(
        "import functools, sys\n"
        "import mgraph\n"
        "from khop import KHop\n"
        "if __name__ == '__main__':\n"
        "    g = mgraph.load(sys.argv[1], backend='numpy')\n"
        "    two = functools.partial(KHop, k=2)\n"
        "    r = mgraph.run(two, g, source=0, devices=3, workers='processes')\n"
        "    one = mgraph.run(two, g, source=0)\n"
        "    print(r.stats['workers'], int((r.hops == one.hops).all()), int((r.hops >= 0).sum()))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, ".."), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "script.py", "grid:20x15"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    workers, same, reached = out.stdout.split()
    assert workers == "processes" and same == "1" and int(reached) > 1

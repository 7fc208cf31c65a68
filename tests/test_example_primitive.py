"""The guide's example primitive (docs/examples/khop.py), loaded from its own file as a user would,
runs unchanged on one device and on several, and agrees with scipy's hop distances cut at k."""
import functools
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


@pytest.mark.parametrize("k", [-1, 1.5, True, "2", None])
def test_khop_rejects_a_k_that_is_not_a_non_negative_integer(k):
    KHop = load_user_file()
    with pytest.raises(ValueError, match="k must be"):
        mgraph.run(lambda g: KHop(g, k=k), get_case("chesapeake").graph, source=0)


def test_khop_in_a_users_script_on_mpi_ranks(tmp_path):
    """As the guide shows it: the user's own file and script, one MPI rank per device."""
    import shutil

    from conftest import run_mpi

    shutil.copy(os.path.join(HERE, "..", "docs", "examples", "khop.py"), tmp_path / "khop.py")
    (tmp_path / "script.py").write_text(
        "import functools, sys\n"
        "import mgraph\n"
        "from khop import KHop\n"
        "g = mgraph.load(sys.argv[1])\n"
        "r = mgraph.run(functools.partial(KHop, k=2), g, source=0)\n"
        "if r.hops is not None:\n"
        "    print(r.stats['workers'], r.stats['devices'], ' '.join(map(str, r.hops.tolist())))\n")
    out = run_mpi(3, ["python", "script.py", "grid:20x15"], cwd=tmp_path,
                  env={"PYTHONPATH": os.pathsep.join([str(tmp_path), os.path.join(HERE, "..")])})
    assert out.returncode == 0, out.stderr
    workers, devices, *hops = out.stdout.split()
    KHop = load_user_file()
    one = mgraph.run(functools.partial(KHop, k=2), mgraph.load("grid:20x15"), source=0)
    assert (workers, devices) == ("mpi", "3")
    assert [int(h) for h in hops] == one.hops.tolist() and int((one.hops >= 0).sum()) > 1

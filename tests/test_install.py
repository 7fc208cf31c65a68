"""The install: mgraph's subpackages install inside it, nothing collides with other top-level packages, and the
version comes from the distribution's metadata."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile

import pytest

import mgraph
from conftest import ROOT


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def test_every_package_folder_is_listed_for_the_install():
    """The package list is explicit (two subpackages live outside mgraph/): a new folder must be added to it."""
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = set()
    for top in ("mgraph", "mgraph_nx_info"):
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" in files:
                found.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    found |= {"mgraph.primitives", "mgraph.partitioners"}
    assert listed == found


def test_the_version_is_the_distributions():
    from importlib import metadata

    assert mgraph.__version__ == metadata.version("mgraph-analytics") == _pyproject()["project"]["version"]


def test_the_wheel_holds_only_mgraph_and_its_networkx_info(tmp_path):
    import shutil

    tree = tmp_path / "tree"  # a copy of what the wheel is built from: setuptools writes build/ beside its sources
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(os.path.join(ROOT, name), tree / name)
    for name in ("mgraph", "mgraph_nx_info", "primitives", "partitioners"):
        shutil.copytree(os.path.join(ROOT, name), tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                          "-w", str(tmp_path), str(tree)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        pytest.fail(out.stderr[-2000:])
    (wheel,) = tmp_path.glob("mgraph_analytics-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"mgraph", "mgraph_nx_info"}
    for module in ("mgraph/primitives/bfs.py", "mgraph/primitives/contract.py", "mgraph/partitioners/metis.py",
                   "mgraph/ops/cupy_kernels.py", "mgraph/nx_backend/__init__.py"):
        assert module in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_a_users_own_primitives_folder_does_not_shadow_mgraphs(tmp_path):
    """Before the subpackages moved inside mgraph, a folder named primitives/ in the working directory made every
    call fail with ModuleNotFoundError."""
    for name in ("primitives", "partitioners"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user\\'s own package was imported')\n")
    code = "import mgraph; print(int(mgraph.bfs(mgraph.load('grid:5x4'), 0).depth.max()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "7"

"""Where mgraph's subpackages live, and its version.

The repository keeps ``primitives/`` and ``partitioners/`` at its top level, and an install puts them inside
the package as ``mgraph.primitives`` and ``mgraph.partitioners`` (``package-dir`` in pyproject.toml), so that
they never collide with other distributions' top-level packages or a user's own ``primitives/`` folder.  Run from
a source tree (``PYTHONPATH=$PWD``, as on the device machines), the folders sit beside ``mgraph/`` instead: a
finder maps the two names there, and only there, so both ways import the same code under the same names.
"""
from __future__ import annotations

import importlib.abc
import importlib.metadata
import importlib.util
import os
import sys

DISTRIBUTION = "mgraph-analytics"  # the name on PyPI ("mgraph" there is an unrelated package); import name mgraph
SUBPACKAGES = ("primitives", "partitioners")
_HERE = os.path.dirname(os.path.abspath(__file__))
_TOP = os.path.dirname(_HERE)


class _SourceTreeFinder(importlib.abc.MetaPathFinder):
    """Finds ``mgraph.primitives`` and ``mgraph.partitioners`` in the folders beside ``mgraph/``; their modules
    are then found through the subpackage's ``__path__`` as usual."""

    def find_spec(self, fullname, path=None, target=None):
        name = fullname.partition("mgraph.")[2]
        if not fullname.startswith("mgraph.") or name not in SUBPACKAGES:
            return None
        folder = os.path.join(_TOP, name)
        return importlib.util.spec_from_file_location(fullname, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


def _in_source_tree() -> bool:
    return all(not os.path.isdir(os.path.join(_HERE, n)) and os.path.isfile(os.path.join(_TOP, n, "__init__.py"))
               for n in SUBPACKAGES)


def version() -> str:
    """The installed distribution's version (its metadata), or the source tree's pyproject.toml version."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        import tomllib

        with open(os.path.join(_TOP, "pyproject.toml"), "rb") as f:
            return tomllib.load(f)["project"]["version"]
    except (ImportError, OSError, KeyError, ValueError):
        return "unknown"


if _in_source_tree() and not any(isinstance(f, _SourceTreeFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _SourceTreeFinder())

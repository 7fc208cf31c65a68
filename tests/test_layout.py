"""The package's shape: one folder per stage, imports pointing one way, no circle.

Read from the source (AST), so that an import hidden inside a function counts
as much as one at the top.  The stages, earliest first, are listed in
docs/architecture.md; an earlier stage never imports a later one.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the repository's folders that install inside the package (pyproject.toml's package-dir)
FOLDERS = {"mgraph": "mgraph", "primitives": "mgraph.primitives", "partitioners": "mgraph.partitioners"}
# stages, earliest first: a module may import its own stage and earlier ones only
STAGES = [
    ("core", ["mgraph._tree", "mgraph.backend", "mgraph.memory", "mgraph.graph", "mgraph.group"]),
    ("io", ["mgraph.io"]),
    ("ops", ["mgraph.ops"]),
    ("primitives", ["mgraph.primitives"]),
    ("partitioners", ["mgraph.partitioners"]),
    ("parts", ["mgraph.parts"]),
    ("check", ["mgraph.check"]),
    ("comm", ["mgraph.comm"]),
    ("runner", ["mgraph.runner"]),
    ("api", ["mgraph.api", "mgraph.convert", "mgraph.result", "mgraph.output", "mgraph.nx_backend"]),
    ("report", ["mgraph.report"]),
    ("graph500", ["mgraph.graph500"]),
    ("cli", ["mgraph.cli", "mgraph.__main__"]),
]
# may be imported inside a function: optional dependencies, imported only where a feature needs them
OPTIONAL = {"cupy", "cupyx", "pyarrow", "networkx", "pandas", "matplotlib", "mpi4py", "numba", "pymetis", "tqdm",
            "scipy", "tomllib", "pytest", "resource"}  # resource: Unix only


def _modules():
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package] + parts)] = path
    return out


MODULES = _modules()


def _stage(module: str):
    if module == "mgraph":
        return None  # the package's front door re-exports every stage
    for i, (_, prefixes) in enumerate(STAGES):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} belongs to no stage: add it to STAGES and docs/architecture.md")


def _imports(module: str, path: pathlib.Path):
    """(imported mgraph module, line, inside a function) for every import in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nested = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        inner = id(node) in nested
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, inner
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            for alias in node.names:  # `from mgraph.io import loaders` imports the module mgraph.io.loaders
                full = f"{name}.{alias.name}"
                yield (full if full in MODULES else name), node.lineno, inner


def _edges():
    for module, path in MODULES.items():
        for target, line, inner in _imports(module, path):
            yield module, target, line, inner


def test_every_module_has_a_stage():
    for module in MODULES:
        _stage(module)


def test_no_stage_imports_a_later_one():
    bad = [f"{m} (stage {STAGES[_stage(m)][0]}) imports {t} (stage {STAGES[_stage(t)][0]}), line {line}"
           for m, t, line, _ in _edges() if t in MODULES and m != "mgraph" and t != "mgraph"
           and _stage(t) is not None and _stage(t) > _stage(m)]
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    graph = {m: set() for m in MODULES}
    for m, t, _, _ in _edges():
        if t in MODULES and t != m:
            graph[m].add(t)
            # importing a.b.c runs a/__init__ and a/b/__init__ first
            parent = t.rpartition(".")[0]
            while parent in MODULES and parent not in ("mgraph", m) and not m.startswith(parent + "."):
                graph[m].add(parent)
                parent = parent.rpartition(".")[0]
    graph["mgraph"] = set()  # the front door imports everything; nothing inside imports it for its names
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "\n".join(cycles)


def _needs_optional(module: str) -> bool:
    """Whether ``module`` imports an optional dependency at its top (mgraph.ops.cupy_ops: CuPy), so that importing
    it is itself optional."""
    return module in MODULES and any(not inner and t.split(".")[0] in OPTIONAL
                                     for t, _, inner in _imports(module, MODULES[module]))


def test_imports_inside_functions_are_optional_dependencies_only():
    bad = []
    for module, path in MODULES.items():
        for target, line, inner in _imports(module, path):
            if inner and target.split(".")[0] not in OPTIONAL and not _needs_optional(target):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {target} inside a function")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("script", sorted((ROOT / "scripts").glob("*.py")), ids=lambda p: p.name)
def test_scripts_use_public_names_only(script):
    tree = ast.parse(script.read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mgraph"):
            bad += [f"line {node.lineno}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "mgraph":
                bad.append(f"line {node.lineno}: mgraph...{node.attr}")
    assert not bad, "\n".join(bad)

"""Per-arc functors for :func:`mgraph.ops.advance`: a CUDA body and its NumPy twin, declared once.

A functor says what happens on each arc ``u -> v`` that an advance visits.
Its CUDA body is a statement list that the framework places inside the
load-balanced advance kernel, where these names are defined::

    u, v    idx_t   the arc's source (a frontier vertex) and target
    e       i64     the arc's position in the CSR (indices[e] == v)
    w       double  the arc's weight (1.0 on an unweighted graph)
    emit    bool    set it to put v in the advance's output frontier

plus the functor's own parameters, declared as a C parameter list
(``"int* label, idx_t* pred, int level"``).  Pointer parameters take arrays
of the matching dtype (``int`` int32, ``idx_t`` the graph's vertex-id type,
``double`` float64, ...), scalars are converted to the declared type.
Several threads run the body at once, one per arc: claim a vertex with an
atomic (``atomicCAS``) where it must be emitted once.

The NumPy twin gets the visited arcs as arrays, ``numpy(u, v, w, *args)``
(``w`` is None on an unweighted graph), does the same work vectorised, and
returns a boolean mask over the arcs: those that emit.  The advance emits
each vertex once, in increasing order, on the CPU; in any order on the GPU.
Where the GPU picks one of several valid answers (which arc claims a vertex
first), the twin picks one too (:func:`first_claims`): GPU tests compare
the two by what must agree.

The built-in advances (BFS's visit, SSSP's relax, Brandes' path counting
and dependencies, CC's union-find hooks) are functors of this kind, named
here; their bodies are compiled together into one module, a user's functor
into a module of its own, once per vertex-id type and device.
"""
from __future__ import annotations

import re

import numpy as np

UNVISITED = -1

# C parameter types a functor may declare, and the NumPy dtype each stands for ("idx_t": the graph's ids)
C_TYPES = {"int": np.int32, "unsigned": np.uint32, "long long": np.int64, "i64": np.int64,
           "unsigned long long": np.uint64, "u64": np.uint64, "float": np.float32, "double": np.float64,
           "short": np.int16, "signed char": np.int8, "unsigned char": np.uint8, "idx_t": None}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = {"u", "v", "e", "w", "emit", "indptr", "indices", "weights", "has_weights", "frontier", "has_frontier",
             "offs", "n_front", "out", "out_count", "i", "k", "item", "tile", "first", "total"}


class Param:
    """One declared parameter: its name, C type, whether it is a pointer (an array) and whether const."""

    def __init__(self, text: str, functor: str):
        decl = " ".join(text.replace("__restrict__", " ").split())
        const = decl.startswith("const ")
        if const:
            decl = decl[len("const "):]
        pointer = "*" in decl
        ctype, _, name = decl.replace("*", " ").rpartition(" ")
        ctype = " ".join(ctype.split())
        if ctype not in C_TYPES or not _NAME.match(name or "") or decl.count("*") > 1:
            raise ValueError(f"functor {functor}: cannot read parameter {text.strip()!r}: write 'type name' or "
                             f"'type* name' with type one of {', '.join(C_TYPES)}")
        if name in _RESERVED:
            raise ValueError(f"functor {functor}: parameter name {name!r} is taken by the advance kernel")
        self.name, self.ctype, self.pointer, self.const = name, ctype, pointer, const

    def dtype(self, idx_dtype):
        return np.dtype(idx_dtype if self.ctype == "idx_t" else C_TYPES[self.ctype])

    def c(self) -> str:
        if self.pointer:
            return f"{'const ' if self.const else ''}{self.ctype}* __restrict__ {self.name}"
        return f"{self.ctype} {self.name}"


class Functor:
    """A per-arc function for :func:`mgraph.ops.advance` (see the module's docstring for the rules).

    ``name`` names its kernel (letters, digits, underscores); ``params`` is the
    C parameter list after the built-in arguments; ``cuda`` the body;
    ``numpy`` the twin; ``emits=False`` for a functor that only updates arrays
    (the advance then returns None, and the kernel skips collecting output);
    ``cpu`` optionally the scalar body the CPU backend compiles with numba,
    ``cpu(u, v, e, w, *args) -> emit``, run in place of the twin.
    """

    def __init__(self, name: str, params: str, cuda: str, numpy, *, emits: bool = True, builtin: bool = False,
                 cpu=None):
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"a functor's name must be a C identifier, got {name!r}")
        if not isinstance(cuda, str) or not cuda.strip():
            raise ValueError(f"functor {name}: cuda must be the CUDA statements run on each arc")
        if not callable(numpy):
            raise ValueError(f"functor {name}: numpy must be its NumPy twin, a function (u, v, w, *args) -> mask")
        if cpu is not None and not callable(cpu):
            raise ValueError(f"functor {name}: cpu must be a scalar function (u, v, e, w, *args) -> emit, or None")
        self.name, self.cuda, self.numpy, self.emits, self.builtin = name, cuda, numpy, bool(emits), builtin
        self.cpu = cpu
        self.params = [Param(p, name) for p in params.split(",") if p.strip()] if params.strip() else []
        self.signature = "".join(", " + p.c() for p in self.params)
        self.key = (name, self.signature, cuda, self.emits)  # what its compiled module depends on

    def arguments(self, graph, args, xp):
        """``args`` checked against the declared parameters and converted: arrays of the declared dtype on the
        graph's array module, scalars as NumPy scalars of the declared type."""
        if len(args) != len(self.params):
            raise ValueError(f"functor {self.name} takes {len(self.params)} argument(s) "
                             f"({', '.join(p.name for p in self.params)}), got {len(args)}")
        out = []
        for p, a in zip(self.params, args):
            want = p.dtype(graph.indices.dtype)
            if p.pointer:
                if not isinstance(a, xp.ndarray):
                    raise ValueError(f"functor {self.name}: {p.name} must be a {xp.__name__} array of {want}, "
                                     f"got {type(a).__name__}")
                if a.dtype != want:
                    raise ValueError(f"functor {self.name}: {p.name} is declared {p.ctype}* ({want}), "
                                     f"got an array of {a.dtype}")
                out.append(a)
            else:
                if isinstance(a, (bool, np.bool_)) or not np.isscalar(a) or np.ndim(a) != 0:
                    raise ValueError(f"functor {self.name}: {p.name} must be a number ({p.ctype}), got {a!r}")
                value = want.type(a)
                if value != a and not (isinstance(a, float) and np.isnan(a)):
                    raise ValueError(f"functor {self.name}: {p.name}={a!r} does not fit its type {p.ctype}")
                out.append(value)
        return tuple(out)

    def __repr__(self) -> str:
        return f"Functor({self.name!r}{', built-in' if self.builtin else ''})"


def first_claims(v, keep):
    """For a NumPy twin: the mask of the first arc (in arc order) of each target ``v`` among those where ``keep``,
    the arc a claim by ``atomicCAS`` could pick on the GPU."""
    at = np.flatnonzero(keep)
    _, first = np.unique(v[at], return_index=True)
    mask = np.zeros(v.shape[0], dtype=bool)
    mask[at[first]] = True
    return mask


# ---- the built-in functors ----------------------------------------------------------------------------------

def _visit(u, v, w, label, pred, level):
    claim = first_claims(v, label[v] == UNVISITED)
    label[v[claim]] = level
    pred[v[claim]] = u[claim]
    return claim


def _visit_tight(u, v, w, label, pred, level, dist):
    tight = dist[u] + (1.0 if w is None else w) == dist[v]
    claim = first_claims(v, (label[v] == UNVISITED) & tight)
    label[v[claim]] = level
    pred[v[claim]] = u[claim]
    return claim


def _relax(u, v, w, dist, marks, stamp):
    cand = dist[u] + (1.0 if w is None else w)
    better = cand < dist[v]
    np.minimum.at(dist, v[better], cand[better])
    marks[v[better]] = stamp
    return better


def _count_paths(u, v, w, label, sigma, level):
    new = label[v] == UNVISITED
    label[v[new]] = level
    on_next = label[v] == level
    np.add.at(sigma, v[on_next], sigma[u[on_next]])
    return new


def _dependency(u, v, w, label, sigma, delta, level):
    succ = label[v] == level + 1
    u, v = u[succ], v[succ]
    np.add.at(delta, u, sigma[u] / sigma[v] * (1.0 + delta[v]))
    return None


def compress(parent):
    """Pointer jumping: every vertex points at its root (:func:`_hook`'s step, and ops.compress on the CPU)."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return
        parent[:] = grand


def _hook(u, v, w, parent, pairs_below):
    """Union the endpoints of every arc but those with v < u < pairs_below, the larger root under the smaller,
    until nothing changes: roots end as the smallest ids of the components (the GPU's union-find gives the same)."""
    up = (v >= pairs_below) | (u < v)
    u, v = u[up], v[up]
    while True:
        compress(parent)
        pu, pv = parent[u], parent[v]
        lo, hi = np.minimum(pu, pv), np.maximum(pu, pv)
        moved = lo != hi
        if not moved.any():
            return None
        np.minimum.at(parent, hi[moved], lo[moved])
        u, v = u[moved], v[moved]


VISIT = Functor("visit", "int* label, idx_t* pred, int level", r"""
        if (label[v] == -1 && atomicCAS(&label[v], -1, level) == -1) { pred[v] = u; emit = true; }
""", _visit, builtin=True)
"""BFS / k-hop: claim each unvisited out-neighbour once: its label ``level``, its predecessor u."""

VISIT_TIGHT = Functor("visit_tight", "int* label, idx_t* pred, int level, const double* dist", r"""
        if (label[v] == -1 && dist[u] + w == dist[v] && atomicCAS(&label[v], -1, level) == -1) {
            pred[v] = u; emit = true;
        }
""", _visit_tight, builtin=True)
"""SSSP's tree: claim along tight arcs only (dist[u] + w == dist[v])."""

RELAX = Functor("relax", "double* dist, int* marks, int stamp", r"""
        const double nd = dist[u] + w;
        if (nd < dist[v]) {
            const u64 old = atomicMin((u64*)&dist[v], (u64)__double_as_longlong(nd));
            if (nd < __longlong_as_double((i64)old) && atomicExch(&marks[v], stamp) != stamp) emit = true;
        }
""", _relax, builtin=True)
"""SSSP: atomic min on the distance's bits (non-negative doubles order like their bit patterns); marks[v] == stamp
dedupes the output within one superstep."""

COUNT_PATHS = Functor("count_paths", "int* label, double* sigma, int level", r"""
        int old = label[v];
        if (old == -1) old = atomicCAS(&label[v], -1, level);
        if (old == -1 || old == level) atomicAdd(&sigma[v], sigma[u]);
        emit = old == -1;
""", _count_paths, builtin=True)
"""Brandes forward: claim the next level, count shortest paths into it."""

DEPENDENCY = Functor("dependency", "const int* label, const double* sigma, double* delta, int level", r"""
        if (label[v] == level + 1) atomicAdd(&delta[u], sigma[u] / sigma[v] * (1.0 + delta[v]));
""", _dependency, emits=False, builtin=True)
"""Brandes backward: the dependency of u on its successors at level + 1."""

HOOK = Functor("hook", "i64* parent, i64 pairs_below", r"""
        if (v >= pairs_below || u < v) hook_pair(parent, u, v);
""", _hook, emits=False, builtin=True)
"""CC: lock-free union-find over the arcs, the larger root hooked under the smaller."""

BUILTIN = {f.name: f for f in (VISIT, VISIT_TIGHT, RELAX, COUNT_PATHS, DEPENDENCY, HOOK)}

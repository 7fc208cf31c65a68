"""What a graph needs in memory, what the device can give, and the check between them before allocating.

Why this exists: an allocation sized by input (a vertex count from a file's
size line or its largest id, a generator's scale, ``num_vertices``) can ask
for more than any machine has.  NumPy then fails with its own message,
which names neither the file nor the id; or, since Linux overcommits, the
allocation succeeds and the process grows until the kernel's OOM killer
ends it without a word.  So every entry point estimates what it is about to
allocate and calls :func:`check` first: too much is a one-line ValueError
naming the input, the bytes asked and the bytes available.

The estimates are linear, ``vertices x bytes per vertex + arcs x bytes per
arc``, with coefficients read off the process's peak resident set (NumPy)
on R-MAT and grid graphs, rounded up by 5-15% so that a graph the estimate
lets through is not killed half-built; near the limit a graph that would
just have fitted may be refused.  ``MGRAPH_MEMORY_LIMIT`` (bytes, or a
number with K, M, G or T) replaces what the device reports, to refuse
sooner (a machine shared with other jobs, tests) or to go ahead against an
estimate that is too cautious for an unusual graph.
"""
from __future__ import annotations

import os
import re

ENV_LIMIT = "MGRAPH_MEMORY_LIMIT"

INT32_MAX = (1 << 31) - 1

# Graph.from_edges, additional to the caller's edge arrays: the vertex keys searched for indptr (int64) and
# indptr itself; per arc the int64 arc keys, the copies made when they are deduplicated and reduced to
# column ids, and the self-loop filter's copies of the edges.  Weighted: two argsorts and the weights
# reordered with the keys.  Measured 16 B/vertex, 28 B/arc, 56 B/arc weighted.
WHOLE_VERTEX_BYTES = 16
WHOLE_ARC_BYTES = 30
WHOLE_WEIGHTED_ARC_BYTES = 58

# The chunked build (mgraph.parts.build): the finished CSR, the per-vertex counts and cursors, and one round's
# routed arcs plus one block of row keys being sorted, both bounded by the chunk size rather than by the graph.
# Measured within 10% on R-MAT 18, 20 and 22 and a 1000 x 1000 grid (NumPy); on one H200 the R-MAT 28 build
# peaked at 40.7 GiB (docs/distributed.md), where this gives 46.9 GiB.
CHUNK_VERTEX_BYTES = 40
CHUNK_ROUND_ARC_BYTES = 96
CHUNK_ROUND_WEIGHTED_ARC_BYTES = 112
# With several workers every part also maps every vertex id to its local id, marks proxies and may hold an
# owner table: n-sized arrays on each worker whatever its share.
PART_MAP_VERTEX_BYTES = 16

# Running a primitive on the CPU (NumPy operators) and validating it on the host (mgraph.check.validate), beyond
# the graph itself: (bytes per arc, bytes per vertex) of the process peak, measured on R-MAT 18, 20 and 22
# (whose big BFS levels expand most arcs at once) and a 1000 x 1000 grid, rounded up.  The traversals' cost
# per arc grows with the scale, as their largest level holds a larger share of the arcs (BFS 21, 23, 26 B/arc
# at scales 18, 20, 22; direction-optimizing BFS 29, 33, 37; BC 24, 24, 27), so theirs carry that trend on
# to about scale 26; the all-active ones (CC, PageRank) and every validation stay flat.  Triangle counting,
# k-core and label propagation (and their validations) were measured on R-MAT 18 only.
RUN_BYTES = {"bfs": (32, 16), "dobfs": (46, 56), "sssp": (47, 24), "cc": (36, 40), "pr": (18, 40), "bc": (33, 16),
             "tc": (100, 16), "kcore": (24, 64), "lpa": (96, 80),
             # peaks traced with tracemalloc on R-MAT 13 and 15 (whole runs, one device): 117 B per arc for Louvain,
             # 168 and 178 for Leiden, vertices included (27 arcs per vertex)
             "louvain": (160, 120), "leiden": (200, 136),
             # strong components: 47.5 B per arc on directed R-MAT 13 and 15 with the in-arcs' CSR built before
             # (a fit: 42 per arc, 76 per vertex), which a run builds first: its 8 per arc and vertex added
             "scc": (56, 96)}
VALIDATE_BYTES = {"bfs": (33, 40), "dobfs": (33, 40), "sssp": (44, 56), "cc": (22, 24), "scc": (22, 24), "pr": (22, 32),
                  "bc": (46, 40), "tc": (100, 16), "kcore": (40, 40), "lpa": (96, 40),
                  "louvain": (40, 40), "leiden": (40, 40)}  # the arcs as int64 pairs, weights and a mask
RESULT_VERTEX_BYTES = 16  # what one kept result holds per vertex (depth and predecessor, say)

# A random geometric graph's points, sorted by cell, held by every worker that draws its edges
# (mgraph.io.generators.RggPoints): 24 B per point kept (id, cell, x, y in 32 bits; the first candidate in 64)
# and 8 per cell; the peak while sorting adds the 64-bit sort keys and their temporaries.
RGG_POINT_BYTES = 48
RGG_CELL_BYTES = 16

# Loading an .npz cache whole (mgraph.io.cachecheck.read_cache), beyond its arrays as read and the copies that bring
# them to the CSR's types: the row checks' temporaries per arc of one block (the checks go a block of arcs at a
# time), and for an undirected cache the symmetry check, which holds the arcs once more (as int64 keys, or ids and
# weights).  Measured with NumPy's allocations traced on R-MAT 16 and 18, unweighted and weighted: 17 and 10 B per
# block arc, 8 and 24 B per arc for symmetry; the peaks, 30.3 and 46.3 B per arc, against estimates of 32 and 56.
CACHE_BLOCK_ARC_BYTES = 20
CACHE_SYMMETRY_ARC_BYTES = 8
CACHE_SYMMETRY_WIDE_ARC_BYTES = 24  # weighted, or ids too large to pair into one int64 key


# -- estimates --------------------------------------------------------------------------


def id_bytes(num_vertices: int) -> int:
    """Bytes of one stored column id: the CSR keeps ids in 32 bits while they fit."""
    return 4 if num_vertices <= INT32_MAX else 8


def csr_bytes(num_vertices: int, num_arcs: int, *, weighted: bool = False) -> int:
    """The finished CSR: 64-bit offsets, 32- or 64-bit column ids, float64 weights."""
    return 8 * (num_vertices + 1) + num_arcs * (id_bytes(num_vertices) + (8 if weighted else 0))


def vertex_bytes(num_vertices: int) -> int:
    """What any build allocates per vertex at least (offsets and the keys that find them).

    Known before a single edge is parsed (a Matrix Market size line, a
    largest id), so a vertex count no machine can hold is refused at the
    line that asks for it, not after reading the rest of the file.
    """
    return WHOLE_VERTEX_BYTES * max(num_vertices, 0)


def whole_build_bytes(num_vertices: int, num_arcs: int, *, weighted: bool = False) -> int:
    """Graph.from_edges' peak beyond the edges handed to it; ``num_arcs``: 2 per undirected edge."""
    per_arc = WHOLE_WEIGHTED_ARC_BYTES if weighted else WHOLE_ARC_BYTES
    if num_vertices > INT32_MAX:
        per_arc += 4  # the column ids stay 64-bit
    return vertex_bytes(num_vertices) + per_arc * max(num_arcs, 0)


def chunked_build_bytes(num_vertices: int, num_arcs: int, round_arcs: int, *, weighted: bool = False,
                        parts: int = 1) -> int:
    """One worker's peak in mgraph.parts.build: its share of the CSR and the working set of one round.

    ``num_arcs`` is this worker's share, ``round_arcs`` the most arcs one
    routing round carries (the chunk size, doubled where each edge stands
    for both arcs).  With ``parts > 1`` every worker also holds maps over
    all ``num_vertices``.
    """
    per_round = CHUNK_ROUND_WEIGHTED_ARC_BYTES if weighted else CHUNK_ROUND_ARC_BYTES
    maps = PART_MAP_VERTEX_BYTES * num_vertices if parts > 1 else 0
    own = -(-num_vertices // max(parts, 1))
    arcs = max(num_arcs, 0) * (id_bytes(num_vertices) + (8 if weighted else 0))
    return 8 * (own + 1) + arcs + CHUNK_VERTEX_BYTES * own + maps + per_round * max(round_arcs, 0)


def rgg_points_bytes(num_points: int, num_cells: int) -> int:
    """The peak of building a random geometric graph's table of points sorted by cell, on the device that draws."""
    return RGG_POINT_BYTES * max(num_points, 0) + RGG_CELL_BYTES * max(num_cells, 0)

def cache_load_bytes(array_bytes: int, num_arcs: int, block_arcs: int, *, directed: bool, wide: bool) -> int:
    """Loading an .npz cache whole: ``array_bytes`` (its arrays as read and their copies to the CSR's types), the
    row checks of one block of ``block_arcs`` arcs, and unless ``directed`` the symmetry check (``wide``: weighted,
    or ids past the int64 keys)."""
    symmetry = 0 if directed else num_arcs * (CACHE_SYMMETRY_WIDE_ARC_BYTES if wide else CACHE_SYMMETRY_ARC_BYTES)
    return array_bytes + CACHE_BLOCK_ARC_BYTES * min(num_arcs, block_arcs) + symmetry


def run_bytes(primitive: str, num_vertices: int, num_arcs: int, *, validate: bool = False, runs: int = 1) -> int:
    """A CPU run of ``primitive`` beyond the graph: its working set, or validation's where that is larger, and the
    ``runs`` results kept for the summary."""
    per_arc, per_vertex = RUN_BYTES[primitive]
    need = per_arc * num_arcs + per_vertex * num_vertices
    if validate:
        per_arc, per_vertex = VALIDATE_BYTES[primitive]
        need = max(need, per_arc * num_arcs + per_vertex * num_vertices)
    return need + RESULT_VERTEX_BYTES * num_vertices * max(runs, 1)


# -- what is available ---------------------------------------------------------------------


def available(where=None) -> int:
    """Bytes the device can give now: ``where`` is a Backend, an array module (numpy, cupy) or None (the host).

    ``MGRAPH_MEMORY_LIMIT`` replaces the reading when set.
    """
    limit = env_limit()
    if limit is not None:
        return limit
    device = _gpu_device(where)
    return host_available() if device is None else gpu_available(device)


def device_name(where=None) -> str:
    device = _gpu_device(where)
    return "host" if device is None else f"GPU {device}"


def env_limit() -> int | None:
    """``MGRAPH_MEMORY_LIMIT`` in bytes, None when unset; ValueError when it is not a size."""
    text = os.environ.get(ENV_LIMIT, "").strip()
    if not text:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d*)?)\s*([KMGTP]?)(?:i?B)?", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"{ENV_LIMIT}={text!r} is not a size: expected bytes or a number with K, M, G or T")
    scale = 1024 ** "_KMGTP".index(match.group(2).upper() or "_")
    return int(float(match.group(1)) * scale)


def host_available() -> int:
    """Host memory this process can still take: the least of what the kernel calls available (MemAvailable:
    free memory plus the page cache it can drop), the room left in this process's cgroup, and the room left
    under its address-space limit (``ulimit -v``), each where it exists."""
    readings = [_meminfo_available(), _cgroup_room(), _rlimit_room()]
    known = [r for r in readings if r is not None]
    return max(min(known), 0) if known else 1 << 62


def gpu_available(device: int) -> int:
    """Free memory on GPU ``device`` for CuPy arrays: the driver's free bytes plus the blocks CuPy's pool keeps
    cached but unused (they are reused before the driver is asked), within the pool's own limit when one is set."""
    import cupy

    with cupy.cuda.Device(device):
        free, _total = cupy.cuda.runtime.memGetInfo()
        pool = cupy.get_default_memory_pool()
        room = int(free) + int(pool.free_bytes())
        cap = int(pool.get_limit())  # 0: no limit
        if cap:
            room = min(room, cap - int(pool.used_bytes()))
    return max(room, 0)


def _gpu_device(where):
    """The GPU id ``where`` names, or None for the host."""
    if where is None:
        return None
    if getattr(where, "is_gpu", None) is not None:  # a Backend
        return int(where.device) if where.is_gpu else None
    if getattr(where, "__name__", "") == "cupy":  # the cupy module: its current device
        return int(where.cuda.Device().id)
    return None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _read_int(path) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_room() -> int | None:
    """Limit minus usage of this process's memory cgroup (v2, else v1), not counting inactive file pages, which
    the kernel reclaims before it kills; None without a limit."""
    for folder, limit_name, usage_name, inactive in _cgroup_folders():
        limit = _read_int(os.path.join(folder, limit_name))
        usage = _read_int(os.path.join(folder, usage_name))
        if limit is None or usage is None or limit >= 1 << 60:
            continue
        reclaimable = 0
        try:
            with open(os.path.join(folder, "memory.stat")) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == inactive:
                        reclaimable = int(value)
        except (OSError, ValueError):
            pass
        return limit - usage + reclaimable
    return None


def _cgroup_folders():
    """Candidate cgroup folders (v2 then v1): this process's path under the mount, and the mount itself (a
    container's cgroup namespace shows its own cgroup there)."""
    paths = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                paths["memory" if "memory" in controllers.split(",") else controllers] = path.lstrip("/")
    except (OSError, ValueError):
        pass
    root = "/sys/fs/cgroup"
    for sub in (paths.get(""), ""):
        if sub is not None:
            yield os.path.join(root, sub), "memory.max", "memory.current", "inactive_file"
    for sub in (paths.get("memory"), ""):
        if sub is not None:
            yield os.path.join(root, "memory", sub), "memory.limit_in_bytes", "memory.usage_in_bytes", \
                "total_inactive_file"


def _rlimit_room() -> int | None:
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return soft - int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


# -- the check -------------------------------------------------------------------------------


def fmt_bytes(n: int) -> str:
    """A byte count for a message: 3 significant digits and a binary unit (KiB ... EiB)."""
    n = int(n)
    if n >= 1 << 110:  # beyond a million EiB; float() of the count could overflow
        return f"{n >> 60:,} EiB"
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value /= 1024
    return f"{int(value)} B" if unit == "B" else f"{value:.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


SMALL_BYTES = 64 << 20  # needs below this are not checked unless MGRAPH_MEMORY_LIMIT is set: every machine has it


def shortfall(need: int, where=None, *, at_least: bool = False, room: int | None = None) -> str | None:
    """None when ``need`` bytes fit on the device; else the end of the message: how much, of what, and how much is
    available (``at_least``: ``need`` is a lower bound, not an estimate).

    ``room`` is a reading of :func:`available` taken once, for a need checked
    again and again as it grows (a stream counted block by block while it
    inflates) without reading /proc each time.
    """
    limit = env_limit()
    if limit is None and need <= SMALL_BYTES:
        return None  # spares tiny graphs the /proc reads
    if room is None:
        room = available(where)
    if need <= room:
        return None
    told = f" ({ENV_LIMIT})" if limit is not None else ""
    return (f"needs {'at least' if at_least else 'about'} {fmt_bytes(need)} of {device_name(where)} memory, more"
            f" than the {fmt_bytes(room)} available{told}")


def check(need: int, what: str, where=None, *, error=ValueError, at_least: bool = False) -> None:
    """Raise ``error(message)`` when ``need`` bytes do not fit on the device ``where``.

    ``what`` is the subject of the one-line message and names the input:
    ``"rmat:35: building a graph of ..."`` gives ``"rmat:35: building a graph
    of ... needs about 20.3 TiB of host memory, more than the 22.1 GiB
    available"``.
    """
    short = shortfall(need, where, at_least=at_least)
    if short is not None:
        raise error(f"{what} {short}")


def describe(num_vertices: int, num_arcs: int | None = None, *, bound: bool = False) -> str:
    """'a graph of N vertices and M arcs' for a message (``bound``: M is an upper bound)."""
    text = f"a graph of {num_vertices:,} vertices"
    if num_arcs is not None:
        text += f" and {'up to ' if bound else ''}{num_arcs:,} arcs"
    return text

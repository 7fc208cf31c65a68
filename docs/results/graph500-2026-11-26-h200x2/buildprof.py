"""graph500 with the build's stages timed (device synchronised around each) and NCCL's all-to-all taken apart.
Env: COUNT=routed forces the routed count pass; PACK=1 sends rows and columns as one array per owner."""
import atexit, functools, os, sys, time
import numpy as np
import cupy as cp
from mgraph.parts import build as B
from mgraph.comm import mpi as M
T = {}
def add(k, dt): T[k] = T.get(k, 0) + dt
def sync(): cp.cuda.Device().synchronize()
def wrap(mod, name):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        sync(); t = time.perf_counter(); r = f(*a, **k); sync(); add(name, time.perf_counter() - t); return r
    setattr(mod, name, g)
if os.environ.get("COUNT") == "routed":
    B.COUNT_ARCS_PER_VERTEX = 1 << 60
for n in ["_rows", "_route", "_sort_rows", "_one_hop_layout", "_arcs", "_own_degrees", "_own_vertices"]:
    if hasattr(B, n): wrap(B, n)
def alltoallv(self, arrays):
    dtype = arrays[self.me].dtype
    sync(); t0 = time.perf_counter()
    sent = np.array([a.shape[0] for a in arrays], dtype=np.int64); got = np.empty(self.p, dtype=np.int64)
    self.comm.Alltoall(sent, got); t1 = time.perf_counter(); add("a2a.sizes", t1 - t0)
    stream = cp.cuda.get_current_stream().ptr; nccl, comm = self.nccl, self.nccl_comm
    out, held = [], []
    nccl.groupStart()
    for k, a in enumerate(arrays):
        if k == self.me: out.append(a); continue
        a = cp.ascontiguousarray(a.astype(dtype, copy=False))
        if a.nbytes: held.append(a); comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, k, stream)
        buf = cp.empty(int(got[k]), dtype=dtype)
        if buf.nbytes: comm.recv(buf.data.ptr, buf.nbytes, nccl.NCCL_UINT8, k, stream)
        out.append(buf)
    nccl.groupEnd(); t2 = time.perf_counter(); add("a2a.issue", t2 - t1)
    sync(); t3 = time.perf_counter(); add("a2a.wait", t3 - t2); add("a2a.calls", 1)
    add("a2a.MB", sum(a.nbytes for k, a in enumerate(arrays) if k != self.me) / 1e6)
    return out
M.NcclTransport.alltoallv = alltoallv
if os.environ.get("PACK") == "1":
    def _route(move, xp, owners, p, fields):
        if p == 1:
            return [fields[0][0]] + [None if a is None else a.astype(d, copy=False) for a, d in fields[1:]]
        dest = owners(fields[0][0], xp); order = B._by_owner(xp, dest, p)
        cut = np.concatenate([[0], np.cumsum(B._host(xp.bincount(dest, minlength=p)))]); del dest
        groups = {}
        for i, (a, d) in enumerate(fields):
            if a is not None: groups.setdefault(np.dtype(d), []).append(i)
        out = [None] * len(fields)
        for d, members in groups.items():
            s = [fields[i][0][order].astype(d, copy=False) for i in members]
            got = move([xp.concatenate([x[cut[k]:cut[k + 1]] for x in s]) for k in range(p)]); del s
            m = len(members)
            for j, i in enumerate(members):
                out[i] = xp.concatenate([g[j * (g.shape[0] // m):(j + 1) * (g.shape[0] // m)] for g in got])
        return out
    B._route = _route; wrap(B, "_route")
def done():
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
    os.write(1, ("BUILD rank %s dev %d: " % (rank, cp.cuda.Device().id) + ", ".join("%s %.3f" % kv for kv in sorted(T.items())) + "\n").encode())
atexit.register(done)
from mgraph.cli import main
sys.exit(main(sys.argv[1:]))

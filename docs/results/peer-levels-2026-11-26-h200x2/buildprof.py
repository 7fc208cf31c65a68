"""graph500 with the build's stages timed (device synchronised around each); one line per rank at exit."""
import atexit, functools, os, sys, time
import cupy as cp
from mgraph.parts import build as B
from mgraph.runner import owners as O
T = {}
def wrap(mod, name):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        cp.cuda.Device().synchronize(); t = time.perf_counter()
        r = f(*a, **k)
        cp.cuda.Device().synchronize(); T[name] = T.get(name, 0) + time.perf_counter() - t
        return r
    setattr(mod, name, g)
for n in ["_check_memory", "_own_vertices", "_rows", "_route", "_sort_rows", "_one_hop_layout", "_all_layout",
          "_by_owner", "_host", "_arcs"]:
    if hasattr(B, n):
        wrap(B, n)
from mgraph.comm import mpi as M
wrap(M.NcclTransport, "alltoallv")
wrap(B.Owners, "__call__")
for n in [x for x in dir(O) if not x.startswith("_") and callable(getattr(O, x)) and getattr(getattr(O, x), "__module__", "") == O.__name__]:
    wrap(O, n)
def done():
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
    os.write(1, ("BUILD rank %s dev %d: " % (rank, cp.cuda.Device().id) + ", ".join("%s %.3f" % kv for kv in sorted(T.items())) + "\n").encode())
atexit.register(done)
from mgraph.cli import main
sys.exit(main(sys.argv[1:]))

import os, runpy, sys
from mgraph.ops import levels
if os.environ.get("HUB"):
    levels.HUB_FUSE_ARCS = int(os.environ["HUB"])
sys.argv = ["scripts/bench.py"] + sys.argv[1:]
runpy.run_path("scripts/bench.py", run_name="__main__")

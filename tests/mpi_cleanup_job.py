"""What tests/test_mpi_cleanup.py runs under ``mpiexec -n P``: a job that ends abnormally.

    python tests/mpi_cleanup_job.py raise DIR     rank 1 raises while the others wait in a collective
    python tests/mpi_cleanup_job.py wait DIR      every rank waits (in a collective, rank 0 in a sleep) for a signal

Each rank first writes DIR/rank<r>.json: its process id and the /dev/shm files it has mapped (read from
/proc/self/maps, unlinked ones included), so that the test knows which files this job's MPI made and which
process to signal; the names it lists must all be gone once the job has ended.
"""
from __future__ import annotations

import json
import os
import sys
import time

from mgraph.group import world


def mapped_shm_files() -> list[str]:
    """The names of the /dev/shm files this process maps, whether or not they are still linked."""
    names = set()
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].startswith("/dev/shm/"):
                names.add(os.path.basename(fields[5].strip().removesuffix(" (deleted)")))
    return sorted(names)


def main(mode: str, out: str) -> None:
    group = world()
    group.barrier()
    record = {"pid": os.getpid(), "segments": mapped_shm_files()}
    with open(os.path.join(out, f"rank{group.rank}.json.tmp"), "w") as f:
        json.dump(record, f)
    os.replace(os.path.join(out, f"rank{group.rank}.json.tmp"), os.path.join(out, f"rank{group.rank}.json"))
    group.barrier()
    if mode == "raise":
        if group.rank == 1:
            raise RuntimeError("boom on rank 1")
        group.barrier()  # never completes: rank 1 raised
    elif mode == "wait":
        if group.rank == 0:
            while True:
                time.sleep(0.05)
        group.barrier()  # rank 0 never comes: the others wait in MPI until a signal ends the job
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(*sys.argv[1:])

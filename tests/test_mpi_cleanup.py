"""A failed MPI job leaves nothing behind: no process and no /dev/shm file, however it ends.

MPICH unlinks its start-up segment (``mpich_shm_*``) only in MPI_Finalize,
so before mgraph.group unlinked it once every rank of the node had mapped it,
each abnormal end below left one file in /dev/shm (Open MPI's launcher
removes its own segments: the same jobs run clean there).  Every job runs
tests/mpi_cleanup_job.py with CPU ranks; each rank first lists the /dev/shm
files it maps, and those names must all be gone when the job has ended (other
jobs on a shared machine may add files of their own meanwhile, so the test
looks for this job's files, not for an unchanged directory).
"""
from __future__ import annotations

import json
import mmap
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, mpiexec_path
from mgraph.group import JOB_SEGMENTS, SHM_DIR, mapped_files, release_segments

JOB = os.path.join(ROOT, "tests", "mpi_cleanup_job.py")
RANKS = 3


def _start(mode, out):
    """``mpiexec -n RANKS python mpi_cleanup_job.py MODE OUT`` in a session of its own (a signal sent to it reaches
    no test process)."""
    exe = mpiexec_path()
    if exe is None:
        pytest.fail("mpiexec not found: install the test extra (pip install -e '.[test]' brings mpich and mpi4py)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
               MGRAPH_BACKEND="numpy", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.Popen([exe, "-n", str(RANKS), sys.executable, JOB, mode, str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _records(out, proc, wait_s=120.0):
    """Every rank's record (pid, mapped /dev/shm names), once all have written theirs."""
    deadline = time.monotonic() + wait_s
    paths = [out / f"rank{r}.json" for r in range(RANKS)]
    while not all(p.exists() for p in paths):
        if proc.poll() is not None:
            pytest.fail(f"the job ended before every rank was ready: {proc.communicate()[1][-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail("the ranks did not start in time")
        time.sleep(0.1)
    return [json.loads(p.read_text()) for p in paths]


def _alive(pid):
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _left_behind(records, wait_s=15.0):
    """The job's processes and /dev/shm files still there ``wait_s`` seconds after mpiexec returned (mpiexec may
    return while the ranks it killed are still being torn down)."""
    names = sorted({n for r in records for n in r["segments"]})
    deadline = time.monotonic() + wait_s
    while True:
        processes = [r["pid"] for r in records if _alive(r["pid"])]
        files = [n for n in names if os.path.exists(os.path.join(SHM_DIR, n))]
        if not (processes or files) or time.monotonic() > deadline:
            return processes, files
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("mode, target, sig", [
    ("raise", None, None),
    ("wait", "mpiexec", signal.SIGINT),
    ("wait", "mpiexec", signal.SIGTERM),
    ("wait", 1, signal.SIGTERM),
    ("wait", 1, signal.SIGKILL),
], ids=["raising-rank", "SIGINT-mpiexec", "SIGTERM-mpiexec", "SIGTERM-rank", "SIGKILL-rank"])
def test_an_abnormal_end_leaves_no_process_and_no_shared_memory(tmp_path, mode, target, sig):
    proc = _start(mode, tmp_path)
    try:
        records = _records(tmp_path, proc)
        assert all(r["segments"] for r in records), "the ranks map no /dev/shm file: the test would prove nothing"
        if target == "mpiexec":
            proc.send_signal(sig)
        elif target is not None:
            os.kill(records[target]["pid"], sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode != 0
    if mode == "raise":
        assert "mgraph: rank 1 of 3: RuntimeError: boom on rank 1" in err
    processes, files = _left_behind(records)
    assert processes == [], f"ranks left running: {processes}"
    assert files == [], f"left in {SHM_DIR}: {files}"


def test_release_segments_unlinks_only_the_files_this_process_maps(tmp_path):
    """By name prefix, and only files this process maps: an unmapped file of the same prefix stays, and the
    memory of an unlinked one stays usable."""
    maps = []
    for name in ("mpich_shm_test_0", "other_0"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
        with open(tmp_path / name, "r+b") as f:
            maps.append(mmap.mmap(f.fileno(), 4096))
    (tmp_path / "mpich_shm_test_1").write_bytes(b"not mapped")
    try:
        mapped = mapped_files(str(tmp_path), JOB_SEGMENTS)
        assert [p for p, _, _ in mapped] == [str(tmp_path / "mpich_shm_test_0")]
        assert mapped[0][1:] == (os.stat(tmp_path / "mpich_shm_test_0").st_dev,
                                 os.stat(tmp_path / "mpich_shm_test_0").st_ino)
        assert release_segments(JOB_SEGMENTS, directory=str(tmp_path)) == [str(tmp_path / "mpich_shm_test_0")]
        assert sorted(os.listdir(tmp_path)) == ["mpich_shm_test_1", "other_0"]
        assert release_segments(JOB_SEGMENTS, directory=str(tmp_path)) == []  # gone: nothing mapped is linked
        maps[0][:4] = b"live"  # the memory outlives its name
        assert maps[0][:4] == b"live"
    finally:
        for m in maps:
            m.close()

"""How fast do bytes go from one GPU to another: NCCL send/recv (as NcclTransport uses it) against CUDA IPC copies.

Two spawned processes, one per GPU, both sending SIZE bytes to the other at
once (a hop of the exchange); per size the median of REPS timed hops, by CUDA
events on each side's stream, reported as GB/s per direction.  The NCCL runs
repeat with more P2P channels (environment of the workers), to tell whether
the default channel count is what limits a hop.

    PYTHONPATH=$PWD python3 scripts/experiments/p2p_bandwidth.py [REPS]
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys

SIZES_MB = (1, 8, 64, 256)
CONFIGS = {
    "nccl default": {},
    "nccl 16 p2p channels": {"NCCL_MIN_P2P_NCHANNELS": "16", "NCCL_NCHANNELS_PER_PEER": "16"},
    "nccl 32 p2p channels": {"NCCL_MIN_P2P_NCHANNELS": "32", "NCCL_NCHANNELS_PER_PEER": "32"},
}


def _timed(cp, stream, reps, body):
    times = []
    for _ in range(reps + 2):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        body()
        stop.record(stream)
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times = sorted(times[2:])
    return times[len(times) // 2]


def _nccl_worker(rank, uid, env, reps, results, barrier):
    os.environ.update(env)
    import cupy as cp
    from cupy.cuda import nccl

    cp.cuda.Device(rank).use()
    comm = nccl.NcclCommunicator(2, uid, rank)
    stream = cp.cuda.Stream(non_blocking=True)
    peer = 1 - rank
    for mb in SIZES_MB:
        n = mb << 20
        out, into = cp.ones(n, dtype=cp.uint8), cp.empty(n, dtype=cp.uint8)

        def hop():
            nccl.groupStart()
            comm.send(out.data.ptr, n, nccl.NCCL_UINT8, peer, stream.ptr)
            comm.recv(into.data.ptr, n, nccl.NCCL_UINT8, peer, stream.ptr)
            nccl.groupEnd()
        barrier.wait()
        ms = _timed(cp, stream, reps, hop)
        results.put((rank, mb, ms))


def _ipc_worker(rank, handles, reps, results, barrier):
    import cupy as cp

    cp.cuda.Device(rank).use()
    stream = cp.cuda.Stream(non_blocking=True)
    for mb in SIZES_MB:
        n = mb << 20
        src, into = cp.cuda.Memory(n), cp.empty(n, dtype=cp.uint8)  # src: its own allocation, as IPC shares whole ones
        handles[rank].put(cp.cuda.runtime.ipcGetMemHandle(src.ptr))
        remote = cp.cuda.runtime.ipcOpenMemHandle(handles[1 - rank].get())  # the peer's source buffer

        def pull():  # each side reads the peer's buffer into its own
            cp.cuda.runtime.memcpyAsync(into.data.ptr, remote, n, cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr)
        barrier.wait()
        ms = _timed(cp, stream, reps, pull)
        results.put((rank, mb, ms))
        barrier.wait()
        cp.cuda.runtime.ipcCloseMemHandle(remote)
        barrier.wait()


def _collect(procs, results):
    got = {}
    for _ in range(2 * len(SIZES_MB)):
        rank, mb, ms = results.get(timeout=300)
        got.setdefault(mb, []).append(ms)
    for p in procs:
        p.join()
    return {mb: max(v) for mb, v in got.items()}  # a hop ends when both directions have


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    ctx = mp.get_context("spawn")
    rows = {}
    for name, env in CONFIGS.items():
        from cupy.cuda import nccl

        uid = nccl.get_unique_id()
        results, barrier = ctx.Queue(), ctx.Barrier(2)
        procs = [ctx.Process(target=_nccl_worker, args=(r, uid, env, reps, results, barrier)) for r in range(2)]
        for p in procs:
            p.start()
        rows[name] = _collect(procs, results)
    results, barrier = ctx.Queue(), ctx.Barrier(2)
    handles = [ctx.Queue(), ctx.Queue()]
    procs = [ctx.Process(target=_ipc_worker, args=(r, handles, reps, results, barrier)) for r in range(2)]
    for p in procs:
        p.start()
    rows["ipc copy (pull)"] = _collect(procs, results)
    print("GB/s per direction, both directions at once (median of %d hops)" % reps)
    print("%-24s" % "" + "".join("%10s" % f"{mb} MB" for mb in SIZES_MB))
    for name, got in rows.items():
        print("%-24s" % name + "".join("%10.1f" % ((mb << 20) / got[mb] / 1e6) for mb in SIZES_MB))


if __name__ == "__main__":
    main()

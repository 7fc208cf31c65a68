"""The GPUs' form of :mod:`mgraph.comm.borders`: MPI ranks of one node write each other's border values through
CUDA IPC, and wait for each other on the devices.

Per hop, on each rank's stream: for each peer, one kernel gathers the values of the own vertices the peer holds
copies of and writes them into this rank's inbox in the peer's memory (over NVLink, or PCIe); the kernel's last
block then posts the hop's tag into the peer's mail.  One thread then waits on the device until every peer's post
of the tag has arrived here, and each inbox is copied into its block of copies.  The host launches and never waits:
a gather and a copy through NCCL took two host handshakes and three passes where this takes one and a copy.

Inboxes hold two hops, by the tag's parity: a peer writes hop t + 2 into the slot of hop t only after it has
waited for this rank's post of hop t + 1, which follows this rank's copy out of that slot on its stream.  A post
that does not come within WAIT_S (a fault of the protocol) is kept in pinned host memory, and the host raises it at
its next check; a failing rank ends the job (mgraph.group.fail_job), so no rank waits for a dead one.
"""
from __future__ import annotations

from functools import lru_cache

import cupy as cp
import cupyx
import numpy as np

from mgraph.comm.borders import FIELDS, ITEM, Borders
from mgraph.comm.cupy_peer import WAIT_S, _own_allocation

BLOCK = 256
BLOCKS_PER_SM = 4  # the gather-writes are bound by the link: more blocks than this did not move them faster

BORDER_KERNELS = r"""
// Gather src[list[i]] (raw words of `item` bytes) into `out` (a peer's inbox); where `post` is not null, the last
// block to finish writes `tag` there once every block's writes are visible system-wide.
extern "C" __global__ void border_push(const void* __restrict__ src, const long long* __restrict__ list,
                                       long long n, int item, unsigned long long out, unsigned long long post,
                                       unsigned long long tag, unsigned int* done)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (item == 8) {
        const unsigned long long* s = (const unsigned long long*)src;
        unsigned long long* o = (unsigned long long*)out;
        for (; i < n; i += stride) o[i] = s[list[i]];
    } else {
        const unsigned int* s = (const unsigned int*)src;
        unsigned int* o = (unsigned int*)out;
        for (; i < n; i += stride) o[i] = s[list[i]];
    }
    __threadfence_system();  // this thread's writes reach the peer before its block counts itself done
    if (!post) return;
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        *done = 0u;
        __threadfence_system();
        *(volatile unsigned long long*)post = tag;
    }
}

// One thread: wait until every peer's post of `tag` is in `mail` ([k * 2 + parity]); a host abort word or
// wait_ns without a post ends the wait with failed[0] = 1 or 2 and failed[1] = the tag.
extern "C" __global__ void border_wait(const unsigned long long* mail, int p, int me, unsigned long long tag,
                                       const volatile int* abort_flag, unsigned long long wait_ns,
                                       volatile long long* failed)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const int par = (int)(tag & 1ull);
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (int k = 0; k < p; ++k) {
        if (k == me) continue;
        const volatile unsigned long long* box = (const volatile unsigned long long*)(mail + k * 2 + par);
        for (unsigned spins = 1; *box != tag; ++spins) {
            if ((spins & 1023u) == 0u) {
                unsigned long long now;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
                const int why = *abort_flag ? 1 : (now - start > wait_ns ? 2 : 0);
                if (why) {
                    failed[1] = (long long)tag;
                    failed[0] = why;
                    __threadfence_system();
                    return;
                }
            }
        }
    }
    __threadfence();
}
"""


@lru_cache(maxsize=None)
def _kernels(device_id):
    with cp.cuda.Device(device_id):
        module = cp.RawModule(code=BORDER_KERNELS)
        return module.get_function("border_push"), module.get_function("border_wait")


class CupyBorders(Borders):
    """This rank's end: an inbox per peer in its own allocation (two hops of FIELDS values of ITEM bytes per copy
    that peer's vertices have here), its mail, and the peers' inboxes and mail opened through IPC handles."""

    def __init__(self, part, d, p, lists, blocks, group):
        super().__init__(part, d, p, lists, blocks)
        self.group = group
        self.device = part.indptr.device.id
        self.slot = [FIELDS * max(blocks[k][1], 1) * ITEM for k in range(p)]  # bytes of one hop from peer k
        self.inbox, self.mail, self.remote, self._opened = [None] * p, None, [None] * p, []
        self.done = cp.zeros(p, dtype=np.uint32)  # per peer: the blocks of a push that have finished
        self.failed = cupyx.zeros_pinned(2, dtype=np.int64)
        self.abort_flag = cupyx.zeros_pinned(1, dtype=np.int32)
        self.tag = 0
        self.grid = BLOCKS_PER_SM * cp.cuda.Device(self.device).attributes["MultiProcessorCount"]  # read once: slow
        get, mine, failed = cp.cuda.runtime.ipcGetMemHandle, None, None
        try:  # a part that fills its GPU leaves no room for inboxes: then every rank takes the host's path
            self.inbox = [None if k == d else _own_allocation(2 * self.slot[k], np.uint8) for k in range(p)]
            self.mail = _own_allocation(2 * p, np.uint64)
            self.mail.fill(0)
            cp.cuda.Device(self.device).synchronize()  # the mail's zeros are in place before a peer may write
            mine = ([None if a is None else get(a.data.ptr) for a in self.inbox], get(self.mail.data.ptr), self.slot)
        except (cp.cuda.memory.OutOfMemoryError, cp.cuda.runtime.CUDARuntimeError) as e:  # cudaMalloc's refusal
            failed = f"rank {d}: {e}"
        handles = group.allgather(mine)
        if failed is None and all(h is not None for h in handles):
            try:
                for k in self.peers:
                    inboxes, mail, slots = handles[k]
                    self.remote[k] = (self._open(inboxes[d]), self._open(mail), slots[d])
            except cp.cuda.runtime.CUDARuntimeError as e:  # IPC refused here (a container, a driver setting)
                failed = f"rank {d}: {e}"
        self.ok = failed is None and all(h is not None for h in handles)
        self.ok = all(group.allgather(self.ok))
        if not self.ok:
            self.close()

    def _open(self, handle):
        ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
        self._opened.append(ptr)
        return ptr

    def exchange(self, prim, names):
        push, wait = _kernels(self.device)
        arrays = [getattr(prim, name) for name in names]
        self.tag += 1
        par, tag = self.tag & 1, np.uint64(self.tag)
        sent = 0
        for k in self.peers:
            inbox, mail, slot = self.remote[k]
            n = int(self.lists[k].shape[0])
            for j, a in enumerate(arrays):
                item = a.dtype.itemsize
                post = mail + 8 * (self.d * 2 + par) if j == len(arrays) - 1 else 0
                out = inbox + par * slot + j * (slot // FIELDS)
                grid = max(1, min(self.grid, -(-n // BLOCK)))
                push((grid,), (BLOCK,), (a, self.lists[k], np.int64(n), np.int32(item), np.uint64(out),
                                         np.uint64(post), tag, self.done[k:k + 1]))
                sent += n * item
        wait((1,), (32,), (self.mail, np.int32(self.p), np.int32(self.d), tag,
                           np.intp(self.abort_flag.ctypes.data), np.uint64(int(WAIT_S * 1e9)),
                           np.intp(self.failed.ctypes.data)))
        for k in self.peers:
            first, count = self.blocks[k]
            base = self.inbox[k].data + par * self.slot[k]
            for j, a in enumerate(arrays):
                if count:
                    at = base + j * (self.slot[k] // FIELDS)
                    a[first:first + count] = cp.ndarray((count,), a.dtype, at)
        self.hops += 1
        self.bytes += sent
        return sent

    def check(self):
        why, tag = int(self.failed[0]), int(self.failed[1])
        if why == 2:
            raise RuntimeError(f"device {self.d}: no post of border hop {tag} from a peer device within {WAIT_S:g} s "
                               f"(peer_borders=False sends the borders through the host)")
        if why:
            raise RuntimeError(f"device {self.d}: a peer device failed during border hop {tag}")

    def close(self):
        """Close the peers' memory this rank opened; collective, so that no rank frees what another still maps."""
        with cp.cuda.Device(self.device):
            cp.cuda.runtime.deviceSynchronize()
            for ptr in self._opened:
                cp.cuda.runtime.ipcCloseMemHandle(ptr)
        self._opened = []
        self.inbox = self.mail = self.remote = None
        self.group.barrier()

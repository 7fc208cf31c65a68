"""The array collectives of the worker groups of one process (threads, one worker): allgatherv."""
from __future__ import annotations

import threading

import numpy as np

from mgraph.group import SoloGroup, ThreadGroup


def test_allgatherv_on_threads_and_alone():
    """Every thread's array concatenated in rank order on every thread (unequal lengths, an empty one, int32 beside
    int64 promoted); a group of one returns its own array."""
    shared = ThreadGroup.shared_state(3)
    out = [None] * 3

    def work(rank):
        out[rank] = ThreadGroup(shared, rank).allgatherv(
            np.arange(rank * 10, rank * 10 + (0 if rank == 1 else rank + 2), dtype=np.int32 if rank else np.int64))

    threads = [threading.Thread(target=work, args=(r,)) for r in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in out:
        assert got.dtype == np.int64 and got.tolist() == [0, 1, 20, 21, 22, 23]
    mine = np.arange(4)
    assert np.array_equal(SoloGroup().allgatherv(mine), mine)

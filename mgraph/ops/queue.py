"""Frontiers whose length stays on the device, so that supersteps can follow each other without a host read.

A push advance on a GPU learns how many vertices it emitted only in device
memory; handing the host a plain array of exactly that length costs a read,
and the read waits for the whole queue of launched work.  A :class:`Queue`
is the advance's output buffer and the device word that counts its entries:
the next advance reads the count on the device, and the host learns it only
when something asks (``len``, an index, a conversion: one read, kept).

Queues come out of the push advances (:func:`mgraph.ops.advance` with an
emitting functor, and :func:`mgraph.ops.advance_visit` pushing) while the
enactor runs supersteps in batches (:func:`counting`), or when their input is a
Queue; every other operator takes a Queue as the array it stands for.  A
primitive written with the operators passes them on unchanged, and plain
array code on one sees the array (CuPy and NumPy read it through the array
interfaces).  On the CPU the count is a NumPy word, and the same code paths run.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

_STATE = threading.local()  # per worker thread: whether its supersteps run in batches; its count words
WORDS = 256  # count words zeroed at once, so that a superstep allocates its count with no launch


class Queue:
    """``buffer[:count]``, where ``count`` is ``counts[at]`` in device memory (uint64 words on the buffer's
    backend, :func:`word`) until the host asks for it."""

    __slots__ = ("buffer", "counts", "at", "_n", "__weakref__")
    ndim = 1

    def __init__(self, buffer, counts, at=0, n=None):
        self.buffer, self.counts, self.at, self._n = buffer, counts, at, n

    @property
    def known(self) -> bool:
        """Whether the host knows the length already (no read to come)."""
        return self._n is not None

    @property
    def capacity(self) -> int:
        """A bound the host knows on the length: the buffer's size."""
        return int(self.buffer.shape[0])

    def __len__(self) -> int:
        if self._n is None:
            read_counts([self])
        return self._n

    def learn(self, n) -> None:
        """The count, read by whoever read it (the enactor reads a batch's counts at once)."""
        self._n = min(int(n), self.capacity)

    @property
    def shape(self):
        return (len(self),)

    @property
    def size(self) -> int:
        return len(self)

    @property
    def dtype(self):
        return self.buffer.dtype

    @property
    def device(self):
        return self.buffer.device

    def array(self):
        """The frontier as a plain array (a view of the buffer): one read if the length is not known yet."""
        return self.buffer[:len(self)]

    def __getitem__(self, key):
        return self.array()[key]

    def __iter__(self):
        return iter(self.array())

    def astype(self, dtype, copy=True):
        return self.array().astype(dtype, copy=copy)

    def copy(self):
        return self.array().copy()

    def __array__(self, dtype=None, copy=None):  # NumPy code on a CPU queue (CuPy's arrays refuse this implicitly)
        a = np.asarray(self.array())
        return a if dtype is None else a.astype(dtype, copy=False)

    @property
    def __cuda_array_interface__(self):  # CuPy code on a GPU queue: cupy.asarray(q), q as an index
        return self.array().__cuda_array_interface__

    def tally(self) -> "Tally":
        """This queue's count without its buffer: what the enactor keeps of a superstep until it reads a batch's
        counts (holding the buffers would hold a batch's frontiers, each up to the graph's size)."""
        return Tally(self.counts, self.at, self._n, self)

    def __getattr__(self, name):  # plain array code (f.reshape, f.sum(), ...): the array it stands for
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.array(), name)

    def __repr__(self):
        n = self._n if self._n is not None else "?"
        return f"Queue({n} of {self.capacity} {self.dtype} ids)"


class Tally:
    """A frontier's length, still on the device (a count word) until read; tells its queue when it learns it, if
    the queue is still alive."""

    __slots__ = ("counts", "at", "_n", "_queue")

    def __init__(self, counts, at, n, queue):
        self.counts, self.at, self._n, self._queue = counts, at, n, weakref.ref(queue)

    @property
    def known(self) -> bool:
        return self._n is not None

    def learn(self, n) -> None:
        self._n = int(n)
        queue = self._queue()
        if queue is not None and queue._n is None:
            queue.learn(n)

    def __len__(self) -> int:
        if self._n is None:
            read_counts([self])
        return self._n


def _on_array(name):
    def method(self, *args):
        return getattr(self.array(), name)(*args)
    method.__name__ = name
    return method


# arithmetic and comparisons on a Queue are the array's (Python looks these up on the type, not via __getattr__)
for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "floordiv", "rfloordiv", "truediv", "rtruediv", "mod",
              "rmod", "pow", "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rshift", "eq", "ne", "lt", "le",
              "gt", "ge", "neg", "pos", "abs", "invert"):
    setattr(Queue, f"__{_name}__", _on_array(f"__{_name}__"))
Queue.__hash__ = None


def plain(frontier):
    """``frontier`` as an array: a Queue's entries (a read if its length is not known), anything else as it is."""
    return frontier.array() if isinstance(frontier, Queue) else frontier


def read_counts(queues) -> None:
    """Learn the lengths of ``queues`` (all on one backend) at once: on a GPU one copy per block of count words
    they use (a batch's queues take consecutive words), where a read each would wait on the stream each time."""
    unknown = [q for q in queues if not q.known]
    if not unknown:
        return
    if isinstance(unknown[0].counts, np.ndarray):
        for q in unknown:
            q.learn(q.counts[q.at])
        return
    from mgraph.ops import cuda

    blocks = {}
    for q in unknown:
        blocks.setdefault(id(q.counts), []).append(q)
    for group in blocks.values():
        lo, hi = min(q.at for q in group), max(q.at for q in group)
        values = cuda.read_words(group[0].counts, hi - lo + 1, lo)
        for q in group:
            q.learn(values[q.at - lo])


def word(xp, device=None):
    """A zeroed count word: (its block, its index).  On a GPU (``device``: its id) one of WORDS words zeroed
    together, taken in turn by this thread (a block lives while a queue counting in it does); on the CPU a word
    of its own."""
    if xp is np:
        return np.zeros(1, dtype=np.uint64), 0
    kept = getattr(_STATE, "words", None)
    if kept is None:
        kept = _STATE.words = {}
    block = kept.get(device)
    if block is None or block[1] >= WORDS:
        block = kept[device] = [xp.zeros(WORDS, dtype=np.uint64), 0]
    at = block[1]
    block[1] += 1
    return block[0], at


class counting:
    """``with counting(on):`` push advances in this thread return Queues (their counts stay on the device), as
    the enactor's batched supersteps want; the previous setting is restored on exit."""

    def __init__(self, on=True):
        self.on = bool(on)

    def __enter__(self):
        self.before = getattr(_STATE, "counting", False)
        _STATE.counting = self.on
        return self

    def __exit__(self, *exc):
        _STATE.counting = self.before
        return False


def wanted(frontier) -> bool:
    """Whether a push advance of ``frontier`` returns a Queue: the enactor asked for device counts, or the input is
    one."""
    return isinstance(frontier, Queue) or getattr(_STATE, "counting", False)


class Count:
    """A frontier's size that the host reads only when a primitive uses it as a number (``frontier_total`` in a
    batched superstep): converts and compares as the int it stands for."""

    __slots__ = ("queue",)

    def __init__(self, queue):
        self.queue = queue

    def __int__(self):
        return len(self.queue)

    __index__ = __int__

    def __float__(self):
        return float(len(self.queue))

    def __bool__(self):
        return len(self.queue) != 0

    def __eq__(self, other):
        return int(self) == other

    def __hash__(self):
        return hash(int(self))

    def __lt__(self, other):
        return int(self) < other

    def __le__(self, other):
        return int(self) <= other

    def __gt__(self, other):
        return int(self) > other

    def __ge__(self, other):
        return int(self) >= other

    def __add__(self, other):
        return int(self) + other

    __radd__ = __add__

    def __sub__(self, other):
        return int(self) - other

    def __rsub__(self, other):
        return other - int(self)

    def __mul__(self, other):
        return int(self) * other

    __rmul__ = __mul__

    def __truediv__(self, other):
        return int(self) / other

    def __rtruediv__(self, other):
        return other / int(self)

    def __floordiv__(self, other):
        return int(self) // other

    def __repr__(self):
        return repr(int(self))

"""Work a candidate's call leaves running on its process's other threads, waited for where the call returns.

A call can return while threads it woke keep computing: a TorchScript ``torch.jit.fork`` left
unwaited runs on torch's inter-op pool (red team rt79: a GELU that moved a fifth of its rows there
in timed calls only ran 1.2x faster outside the judge), and a ``torch.jit.CompilationUnit`` compiled
from a string reaches that pool past the static ``no_threads`` names (red team rt81,
tests/measure/cases/rt81_pool_tail). The run-time watch sees Python threads only
(:mod:`kstrata.verify.integrity.watch`), and the judge's CPU reads between requests start only after
it has read the reply (:mod:`kstrata.sandbox.idle_cpu`): on this project's loaded 2-CPU machine such
a tail ran wholly in that latency, 0.0 ms seen in 39 gaps.

:class:`Drain` runs in the candidate process, in the harness, after the call has returned (and after
the device sync) and before the reply is written: it sleeps :data:`POLL_S` at a time until, over one
sleep, no thread of the process but the caller was runnable (state ``R`` in
``/proc/self/task/TID/stat``) or used CPU (``/proc/self/task/TID/schedstat``, nanoseconds), so the
judge's clock around a timed call holds the work the call left, and it says how much CPU a thread
used after the call had returned. The sleep lets go of the GIL: a Python thread the call started
sleeps waiting for it while the harness holds it (a state check alone saw none, and made a deferred
softmax's first fetched output complete: tests/measure/test_deferred_work.py). An honest process's
pool threads go to sleep when a parallel region ends (``OMP_WAIT_POLICY=PASSIVE``,
``TVM_THREAD_POOL_SPIN_COUNT=0``: :data:`kstrata.sandbox.child.POOL_ENV`): microseconds.

Cost on this machine (loaded): one sleep, one ``listdir`` of ``/proc/self/task`` (~30 us) and two
``pread`` per thread (~5 us each); the calibrated empty request makes the same wait, so it is
subtracted from each timed call as the rest of the round trip is.
"""

from __future__ import annotations

import os
import threading
import time

#: Longest wait (s) for threads still at work after a call; past it the harness replies anyway.
LIMIT_S = 2.0
#: Sleep between two looks at the threads (s): the caller gives its CPU to the work it waits for.
POLL_S = 50e-6
#: CPU ms a thread may use after the call returned before it is the candidate's left work
#: (``no_threads_left``): a pool thread finishing its barrier uses microseconds.
LEFT_MS = 0.2


class Drain:
    """Call after a call returned: ``drain()`` -> ``(waited_ms, left_ms, stuck)``, the wall time it
    waited, the most CPU ms one other thread used meanwhile, and whether one was still runnable at
    :data:`LIMIT_S`. The functions it calls are bound when it is made (before any candidate code
    runs); its files are opened per process (a forked process has its own threads)."""

    __slots__ = ("_listdir", "_open", "_pread", "_close", "_getpid", "_tid", "_mono", "_sleep", "_fds", "_pid",
                 "names", "_clock", "_mark", "own")

    def __init__(self) -> None:
        self._listdir, self._open, self._pread, self._close = os.listdir, os.open, os.pread, os.close
        self._getpid, self._tid = os.getpid, threading.get_native_id
        self._mono, self._sleep, self._clock = time.monotonic, time.sleep, time.clock_gettime_ns
        self._mark: tuple[int, int] | None = None  # (pid, other threads' CPU ns) when the last reply went
        #: CPU-clock ids of the harness's own other threads (the parent watch: a wake a second), left out
        self.own: list[int] = []
        self._fds: dict[tuple[str, str], int] = {}
        self._pid = -1
        #: the name (``comm``) of the thread that used the most CPU after the last call returned
        self.names: list[str] = []

    def _read(self, tid: str, name: str) -> bytes:
        """The file ``name`` of thread ``tid`` (descriptors kept open: a ``pread`` each look);
        a kept descriptor that fails (closed or replaced by the candidate) is opened again once.

        Raises
        ------
        OSError
            When the thread has ended."""
        key = (tid, name)
        fd = self._fds.get(key)
        if fd is not None:
            try:
                return self._pread(fd, 512, 0)
            except OSError:
                del self._fds[key]
        fd = self._fds[key] = self._open(f"/proc/self/task/{tid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
        return self._pread(fd, 512, 0)

    def _threads(self, me: str) -> dict[str, tuple[bool, int | None]]:
        """The threads of this process but ``me``: whether each is runnable now, and its CPU ns."""
        out = {}
        for tid in self._listdir("/proc/self/task"):
            if tid == me:
                continue
            try:
                stat = self._read(tid, "stat")
            except OSError:  # it ended since the listing (its files go with it)
                self._forget(tid)
                continue
            out[tid] = (stat.rsplit(b")", 1)[-1].split()[:1] == [b"R"], self._cpu_ns(tid))
        return out

    def _cpu_ns(self, tid: str) -> int | None:
        try:
            return int(self._read(tid, "schedstat").split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _forget(self, tid: str) -> None:
        for name in ("stat", "schedstat", "comm"):
            fd = self._fds.pop((tid, name), None)
            if fd is not None:
                try:
                    self._close(fd)
                except OSError:
                    pass

    def _me(self) -> str:
        pid = self._getpid()
        if pid != self._pid:  # forked: the files opened were the parent's threads'
            self._fds, self._pid = {}, pid
        return str(self._tid())

    def __call__(self, limit_s: float = LIMIT_S) -> tuple[float, float, bool]:
        """Wait until, over one :data:`POLL_S` sleep, no other thread was runnable and none used
        CPU (the sleep lets go of the GIL: a Python thread the call started waits for it, asleep,
        while the caller holds it), for at most ``limit_s``."""
        me = self._me()
        t0 = self._mono()
        first = {tid: ns for tid, (_, ns) in self._threads(me).items() if ns is not None}
        last = dict(first)
        stuck = False
        while True:
            self._sleep(POLL_S)
            now = self._threads(me)
            moved = False
            for tid, (running, ns) in now.items():
                if ns is None:
                    continue
                if tid not in first:  # started since the call returned: all its CPU is after the return
                    first[tid] = 0
                moved = moved or running or ns > last.get(tid, first[tid])
                last[tid] = ns
            if not moved:
                break
            if self._mono() - t0 > limit_s:
                stuck = True
                break
        waited = (self._mono() - t0) * 1e3
        left, self.names = 0.0, []
        for tid, ns in last.items():
            if (ns - first[tid]) / 1e6 > left:
                left = (ns - first[tid]) / 1e6
                try:
                    self.names = [self._read(tid, "comm").decode(errors="replace").strip()]
                except OSError:
                    pass
        return waited, left, stuck

    def _others_ns(self) -> int:
        """CPU ns every thread of this process but the caller has used (ended ones too)."""
        ns = self._clock(time.CLOCK_PROCESS_CPUTIME_ID) - self._clock(time.CLOCK_THREAD_CPUTIME_ID)
        for clock in self.own:
            try:
                ns -= self._clock(clock)
            except OSError:  # that thread ended: its CPU stays in the process's, fixed from then on
                pass
        return ns

    def replying(self) -> None:
        """Mark the other threads' CPU as the harness sends a reply and waits for the next request."""
        self._mark = (self._getpid(), self._others_ns())

    def clear(self) -> None:
        """No mark: the next :meth:`waited_ms` is 0.0."""
        self._mark = None

    def waited_ms(self) -> float:
        """CPU ms the other threads used since :meth:`replying` (0.0 without a mark of this process):
        while the harness waited for the judge's next request an honest process's threads sleep, so
        this is work left by an earlier request that woke once its reply had gone (a fork that slept
        through the wait after the call, case tests/measure/cases/rt81_pool_tail_asleep)."""
        mark, self._mark = self._mark, None
        if mark is None or mark[0] != self._getpid():
            return 0.0
        return max(0, self._others_ns() - mark[1]) / 1e6

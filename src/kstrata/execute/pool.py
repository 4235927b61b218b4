"""A pool of long-lived, killable worker processes.

Each worker is ``python -m kstrata.execute.worker`` in its own session (process
group), with a scrubbed environment, an optional address-space limit and,
where the OS permits, its own empty network namespace. :meth:`WorkerPool.call`
never raises for a failure of the callee: a Python exception, a segfault, a
hang past the deadline or an allocation failure each come back as a
:class:`CallResult` of the matching ``kind``; a worker that crashed or hung is
killed (with its whole process group) and replaced on the next call.
"""

from __future__ import annotations

import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kstrata.execute.cpus import allowed_cpu_count, allowed_cpus
from kstrata.execute.protocol import ChannelClosed, recv, send

Kind = Literal["ok", "exception", "timeout", "crash", "oom"]

#: Environment variables a worker inherits from the parent; everything else is
#: dropped unless passed in ``env``.
ENV_ALLOW = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM",
    "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TRITON_CACHE_DIR", "TRITON_HOME",
    "TVM_HOME", "TVM_LIBRARY_PATH", "TVM_NUM_THREADS", "OMP_WAIT_POLICY",
    "TVM_THREAD_POOL_SPIN_COUNT", "TVM_BIND_THREADS", "OCL_ICD_VENDORS", "POCL_DEVICES",
    "KSTRATA_UNSAFE_NO_SANDBOX", "KSTRATA_CANDIDATE_MEMORY_MB", "KSTRATA_CANDIDATE_STALL_S", "GLIBC_TUNABLES",
    # where a candidate's kernel cache is kept between its processes (kstrata.sandbox.kernel_cache)
    "KSTRATA_CACHE_DIR", "KSTRATA_KERNEL_CACHE_MB",
    # where `kstrata setup` made the isolated environments (kstrata.backends.envs.env_root): a judge
    # worker starts a TileLang candidate's process with that environment's interpreter
    "KSTRATA_ENV_DIR",
    # the run folders no sandbox may show (kstrata.sandbox.policy.keep_out)
    "KSTRATA_RUN_DIRS",
)

#: glibc malloc settings of every worker and candidate process (``GLIBC_TUNABLES``).
#: glibc moves its mmap threshold up to the size of the largest mmapped block
#: freed so far (and its trim threshold to twice that), so whether a call's
#: output of a few MB comes from reused heap memory or from fresh pages (a page
#: fault per 4 KiB, about 1 ms for 4 MB here) depends on what that process freed
#: before. The same GELU at 1024x1024 in the candidate and baseline processes
#: ran 0.50 ms in one and 1.15 ms in the other, at random, so an A/A pair read
#: 2.2x or 0.43x on a quiet machine (benchmarks/results/malloc_regime.txt).
#: Fixed thresholds (the largest mmap threshold glibc accepts, 32 MiB; a trim
#: threshold of 1 GiB) put both processes in the same regime: blocks under
#: 32 MiB are reused from the heap, larger ones are mapped afresh in both.
#: Source: glibc manual, "Memory Allocation Tunables"; mallopt(3) M_MMAP_THRESHOLD.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"

_warned_network = False
_warn_lock = threading.Lock()


@dataclass
class CallResult:
    """Outcome of one :meth:`WorkerPool.call`.

    Attributes
    ----------
    ok:
        True iff ``kind == "ok"``.
    value:
        The callee's return value (None unless ok).
    kind:
        ``"ok"``, ``"exception"`` (the callee raised), ``"timeout"`` (killed at
        the deadline), ``"crash"`` (the worker died, e.g. a signal) or ``"oom"``
        (an allocation failed under the memory limit).
    error:
        One line: the exception, the signal, or the deadline.
    traceback:
        The callee's traceback, or the tail of the worker's output after a crash.
    worker_pid:
        PID of the worker that ran the call (0 if none could be started).
    wall_s:
        Seconds from sending the request to the answer (or to the kill).
    """

    ok: bool
    value: Any = None
    kind: Kind = "ok"
    error: str = ""
    traceback: str = ""
    worker_pid: int = 0
    wall_s: float = 0.0


def _kstrata_path() -> str:
    """A directory that makes ``import kstrata`` work and brings nothing else.

    For a source checkout this is ``src/``; for a site-packages install a
    temporary directory holding a symlink to the package, so another virtual
    environment does not pick up this environment's libraries.
    """
    import kstrata

    pkg = Path(kstrata.__file__).resolve().parent
    parent = pkg.parent
    if parent.name not in ("site-packages", "dist-packages"):
        return str(parent)
    shim = Path(tempfile.gettempdir()) / f"kstrata-path-{os.getuid()}"
    shim.mkdir(exist_ok=True)
    link = shim / "kstrata"
    if not link.exists():
        try:
            link.symlink_to(pkg)
        except FileExistsError:
            pass
    return str(shim)


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The scrubbed environment of a worker: :data:`ENV_ALLOW` from this process,
    ``PYTHONPATH`` pointing at kstrata first, then ``extra``.

    ``TVM_NUM_THREADS`` and ``OMP_NUM_THREADS`` default to the CPUs this
    process may run on: TVM's thread pool reads them once, when a worker first
    runs a parallel loop (often during verification, before the timer's
    :func:`kstrata.measure.environment.fix_threads`), and TVM's own default is
    the physical core count, which is 1 on a 2-vCPU VM. ``OMP_WAIT_POLICY=PASSIVE``
    and ``TVM_THREAD_POOL_SPIN_COUNT=0`` stop the two thread pools from
    spin-waiting after a parallel region: otherwise, timed interleaved (A B A
    B), one pool's idle threads spin on the cores the other needs, and a TVM
    candidate measured right after eager PyTorch ran 1.6x slower than it
    is (relu 4096x4096 on 2 vCPUs: 27-28 ms with spinning pools vs 17.3 ms with
    passive waiting; see ``benchmarks/results/thread_pools.txt``). A value set in this
    process or in ``extra`` wins.

    When this process may use only some of the host's CPUs (``taskset``, a
    cpuset), ``TVM_BIND_THREADS=0``: TVM otherwise pins its pool to CPUs
    0..n-1 of the host, outside the allowed set. Entries of this process's
    ``PYTHONPATH`` follow kstrata's (packages installed with ``pip --target``)."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    allowed = allowed_cpus()
    cpus = allowed_cpu_count()
    for var in ("TVM_NUM_THREADS", "OMP_NUM_THREADS"):
        env.setdefault(var, str(cpus))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "0")
    env.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)
    if allowed is not None and allowed != set(range(os.cpu_count() or 1)):
        env.setdefault("TVM_BIND_THREADS", "0")
    paths = [_kstrata_path()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def _sweep_stale_dirs() -> None:
    """Remove the ``kstrata-worker-PID-*`` directories of this user whose
    kstrata process (PID) is gone: a pool killed with its process (SIGKILL)
    cannot remove its own."""
    root = Path(tempfile.gettempdir())
    try:
        entries = list(root.glob("kstrata-worker-*-*"))
    except OSError:
        return
    for d in entries:
        pid = d.name.split("-")[2]
        try:
            if not pid.isdigit() or d.is_symlink() or d.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except OSError:  # alive (EPERM: another user's process), or gone already
            continue


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, python: str, env: dict[str, str], memory_mb: int | None,
                 cwd: str | None, start_timeout_s: float):
        req_r, self.req_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        self.log = tempfile.TemporaryFile()
        args = [python, "-P", "-m", "kstrata.execute.worker", str(req_r), str(rep_w), str(memory_mb or 0)]
        try:
            self.proc = subprocess.Popen(
                args, env=env, cwd=cwd, pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL,
                stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.pid = self.proc.pid
        hello = self._recv(start_timeout_s)
        if hello is None or hello[0] != "hello":
            tail = self.output_tail()
            self.kill()
            raise RuntimeError(f"worker {python} did not start: {tail or hello!r}")
        _, _, self.net_isolated, self.net_reason, self.python_version = hello

    def _recv(self, timeout_s: float | None) -> Any:
        ready, _, _ = select.select([self.rep_r], [], [], timeout_s)
        if not ready:
            return None
        return recv(self.rep_r)

    def output_tail(self, n: int = 4000) -> str:
        try:
            self.log.seek(0, os.SEEK_END)
            size = self.log.tell()
            self.log.seek(max(0, size - n))
            return self.log.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker's whole process group and reap it."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for fd in (self.req_w, self.rep_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()

    def call(self, target: str, args: tuple, kwargs: dict, timeout_s: float | None) -> CallResult:
        start = time.perf_counter()
        try:
            send(self.req_w, ("call", target, args, kwargs))
        except (BrokenPipeError, OSError):
            return self._dead(start)
        try:
            reply = self._recv(timeout_s)
        except (ChannelClosed, OSError):
            return self._dead(start)
        wall = time.perf_counter() - start
        if reply is None:
            self.kill()
            return CallResult(False, None, "timeout", f"no answer within {timeout_s:g} s; worker killed",
                              "", self.pid, wall)
        kind, value, error, tb, _inner_wall = reply
        return CallResult(kind == "ok", value, kind, error, tb, self.pid, wall)

    def _dead(self, start: float) -> CallResult:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        tail = self.output_tail()
        self.kill()
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            error = f"worker killed by signal {name}"
            kind: Kind = "oom" if name == "SIGKILL" else "crash"
            if kind == "oom":
                error += " (not by kstrata: most likely the kernel's OOM killer)"
        else:
            error, kind = f"worker exited with status {code}", "crash"
        return CallResult(False, None, kind, error, tail, self.pid, time.perf_counter() - start)


class WorkerPool:
    """Long-lived worker processes that run ``"module:function"`` calls.

    Parameters
    ----------
    size:
        Number of workers (concurrent calls); workers start lazily.
    python:
        Interpreter of the workers (default: this one). Another virtual
        environment works if its Python can import kstrata's standard-library-only
        worker module (``PYTHONPATH`` is set to kstrata's own directory).
    env:
        Extra environment variables; added to the allow-list :data:`ENV_ALLOW`.
    memory_mb:
        Address-space limit of each worker in MiB (``RLIMIT_AS``), set before
        the first call; it must cover the interpreter and libraries the calls
        import (torch alone maps ~1-2 GiB). None: no limit.
    cwd:
        Working directory of the workers (default: a fresh temporary directory).
    isolate_network:
        Try to put each worker in a new, empty network namespace; if the OS
        refuses, warn once (``RuntimeWarning``) and go on.
    max_calls:
        Replace a worker after this many calls (None: never), bounding leaks.
    """

    def __init__(self, size: int = 1, python: str | None = None, env: dict[str, str] | None = None,
                 memory_mb: int | None = None, cwd: str | None = None, *,
                 isolate_network: bool = True, max_calls: int | None = None,
                 start_timeout_s: float = 120.0):
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.size = size
        self.python = python or sys.executable
        extra = dict(env or {})
        if not isolate_network:
            extra["KSTRATA_WORKER_NO_NETNS"] = "1"
        self.env = worker_env(extra)
        self.memory_mb = memory_mb
        _sweep_stale_dirs()
        # the workers' cwd (unless given) and temp dir: what they leave there
        # (candidate files, build dirs) goes with close(), even after a SIGKILL
        self._tmp = tempfile.TemporaryDirectory(prefix=f"kstrata-worker-{os.getpid()}-")
        if "TMPDIR" not in extra:
            os.mkdir(os.path.join(self._tmp.name, "tmp"), 0o700)
            self.env["TMPDIR"] = os.path.join(self._tmp.name, "tmp")
        self.cwd = cwd or self._tmp.name
        self.max_calls = max_calls
        self.start_timeout_s = start_timeout_s
        self._slots: queue.Queue[list] = queue.Queue()
        for _ in range(size):
            self._slots.put([None, 0])  # [worker, calls served]
        self._closed = False
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()

    def _start(self) -> _Worker:
        global _warned_network
        w = _Worker(self.python, self.env, self.memory_mb, self.cwd, self.start_timeout_s)
        with self._lock:
            self._all.add(w)
        if not w.net_isolated and self.env.get("KSTRATA_WORKER_NO_NETNS") != "1":
            with _warn_lock:
                if not _warned_network:
                    _warned_network = True
                    warnings.warn(
                        "kstrata workers run WITH network access: " + w.net_reason
                        + " (run as root or allow unprivileged user namespaces to isolate them)",
                        RuntimeWarning, stacklevel=3,
                    )
        return w

    def call(self, target: str, *args: Any, timeout_s: float | None = 600.0, **kwargs: Any) -> CallResult:
        """Run ``target(*args, **kwargs)`` in a worker and return its outcome.

        Parameters
        ----------
        target:
            ``"package.module:function"``, importable in the worker.
        timeout_s:
            Hard wall-clock limit in seconds; the worker (and its process group)
            is killed when it passes. None: no limit.

        Returns
        -------
        CallResult
            Never raises for the callee's failures; raises ``RuntimeError`` only
            if a worker cannot be started at all, ``ValueError`` after ``close``.
        """
        if self._closed:
            raise ValueError("WorkerPool is closed")
        slot = self._slots.get()
        try:
            worker, calls = slot
            if worker is None or not worker.alive() or (self.max_calls and calls >= self.max_calls):
                if worker is not None:
                    self._discard(worker)
                worker = self._start()
                slot[0], slot[1] = worker, 0
            result = worker.call(target, args, kwargs, timeout_s)
            slot[1] += 1
            if result.kind in ("timeout", "crash") or (result.kind == "oom" and not worker.alive()):
                self._discard(worker)
                slot[0] = None
            return result
        finally:
            self._slots.put(slot)

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._all.discard(worker)

    @property
    def pids(self) -> list[int]:
        """PIDs of the live workers."""
        with self._lock:
            return [w.pid for w in self._all if w.alive()]

    def close(self) -> None:
        """Stop every worker; the pool cannot be used afterwards."""
        self._closed = True
        with self._lock:
            workers = list(self._all)
            self._all.clear()
        for w in workers:
            w.kill()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; close() is the contract
        try:
            if not self._closed:
                self.close()
        except Exception:  # noqa: BLE001
            pass

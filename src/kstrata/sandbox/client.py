"""The judge's handle on one candidate process (:mod:`kstrata.sandbox.child`).

:class:`CandidateProcess` starts the candidate process inside the sandbox
(:mod:`kstrata.sandbox.policy`), speaks the wire format to it
(:mod:`kstrata.sandbox.wire`, no pickle), and ends its whole process tree when
it is closed, killed or times out. When the process dies, :meth:`death_cause`
names the real cause: a timeout (kstrata killed it), a memory limit (the
cgroup's OOM kill, or an allocation refused under ``RLIMIT_AS``), or a signal
kstrata did not send.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from kstrata.sandbox import policy, wire


class CandidateDied(RuntimeError):
    """The candidate process ended (or broke the protocol) during a request.

    Attributes
    ----------
    cause:
        ``"timeout"``, ``"memory"``, ``"signal"``, ``"exit"`` or ``"protocol"``.
    """

    def __init__(self, cause: str, message: str):
        super().__init__(message)
        self.cause = cause


class CandidateProcess:
    """One sandboxed candidate process (fresh per candidate).

    Parameters
    ----------
    backend:
        Registry name of the candidate's backend.
    python:
        Interpreter (the TileLang environment's for ``tilelang-*``); default this one.
    env:
        Environment variables inside (the sandbox starts from an empty one).
    memory_mb:
        Memory limit (MiB): the cgroup's, and ``RLIMIT_AS`` inside.
    read_only:
        Files bound read-only (the task file and its sidecar).
    gpu:
        Bind GPU device nodes.
    sandbox:
        False only under ``--unsafe-no-sandbox`` (see :func:`policy.require`).
    """

    def __init__(self, backend: str, *, python: str | None = None, env: dict[str, str] | None = None,
                 memory_mb: int | None = None, read_only: list[str] = (), gpu: bool = False,
                 sandbox: bool | None = None):
        self.backend = backend
        self.python = python or sys.executable
        self.env = dict(env or {})
        self.memory_mb = memory_mb
        self.read_only = list(read_only)
        self.gpu = gpu
        self.sandbox = policy.status().usable if sandbox is None else sandbox
        self.proc: subprocess.Popen | None = None
        self.cgroup: policy.Cgroup | None = None
        self.rfd = self.wfd = -1
        self.killed_by_us = ""
        self.start_s = 0.0
        self.ready = False
        self.t0 = 0.0

    # -- life cycle -------------------------------------------------------------------
    def start(self, timeout_s: float = 120.0) -> "CandidateProcess":
        """Start the process and wait for its hello.

        Raises
        ------
        kstrata.sandbox.policy.SandboxUnavailable
            When no sandbox can be made and the unsafe opt-out is not set.
        CandidateDied
            When the process does not come up.
        """
        self.spawn()
        return self.handshake(timeout_s)

    def spawn(self) -> "CandidateProcess":
        """Start the process without waiting for it. Call it from a thread that
        outlives the process: the sandbox's die-with-parent signal fires when
        the spawning *thread* exits."""
        self.t0 = time.perf_counter()
        if self.sandbox:
            policy.require()
        elif not policy.unsafe_requested() and policy.status().usable is False:
            policy.require()
        c_r, p_w = os.pipe()   # judge -> child
        p_r, c_w = os.pipe()   # child -> judge
        argv = [self.python, "-m", "kstrata.sandbox.child", str(c_r), str(c_w), str(self.memory_mb or 0)]
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", **self.env}
        pythonpath = os.pathsep.join(p for p in [_kstrata_src(), env.get("PYTHONPATH", "")] if p)
        env["PYTHONPATH"] = pythonpath
        self.cgroup = policy.Cgroup.create((self.memory_mb or 0) << 20) if self.sandbox else None
        cg = self.cgroup
        if self.sandbox:
            cmd = policy.command(argv, python=self.python, read_only=self.read_only, env=env, gpu=self.gpu)
            full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            cmd = argv
            full_env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LD_LIBRARY_PATH")},
                        **env}

        def preexec() -> None:
            if cg is not None:
                cg.enter()
            else:  # without a cgroup: limit the process count (effective for non-root users)
                import resource

                try:
                    resource.setrlimit(resource.RLIMIT_NPROC, (policy.DEFAULT_PIDS * 4,) * 2)
                except (ValueError, OSError):
                    pass

        try:
            self.proc = subprocess.Popen(cmd, pass_fds=(c_r, c_w), env=full_env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         start_new_session=True, preexec_fn=preexec)
        finally:
            os.close(c_r)
            os.close(c_w)
        self.rfd, self.wfd = p_r, p_w
        os.set_blocking(self.proc.stderr.fileno(), False)
        self._stderr = bytearray()
        return self

    def handshake(self, timeout_s: float = 120.0) -> "CandidateProcess":
        """Wait for the spawned process's hello.

        Raises
        ------
        CandidateDied
            When the process does not come up.
        """
        h, _ = self._recv(timeout_s)
        if h.get("op") != "hello":
            self.kill()
            raise CandidateDied("protocol", "the candidate process did not say hello")
        self.start_s = time.perf_counter() - self.t0
        return self

    def _drain_stderr(self) -> None:
        if self.proc is None or self.proc.stderr is None:
            return
        try:
            while True:
                chunk = os.read(self.proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                self._stderr += chunk
                del self._stderr[:-65536]
        except (BlockingIOError, OSError, ValueError):
            pass

    def output_tail(self, n: int = 2000) -> str:
        """The last ``n`` characters the candidate process wrote to stderr."""
        self._drain_stderr()
        return bytes(self._stderr[-n:]).decode(errors="replace")

    def _recv(self, timeout_s: float | None) -> tuple[dict, list[bytes]]:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            fds = [self.rfd] + ([self.proc.stderr.fileno()] if self.proc and self.proc.stderr else [])
            ready, _, _ = select.select(fds, [], [], left)
            if self.rfd in ready:
                break
            if ready:
                self._drain_stderr()
                continue
            if deadline is not None and time.monotonic() >= deadline:
                self.killed_by_us = "timeout"
                self.kill()
                raise CandidateDied("timeout", f"the candidate did not answer within {timeout_s:g} s; "
                                    "its process tree was killed")
        try:
            return wire.recv(self.rfd)
        except wire.Closed:
            raise self._died() from None
        except wire.WireError as e:
            self.kill()
            raise CandidateDied("protocol", f"the candidate process broke the protocol: {e}") from None

    def _died(self) -> CandidateDied:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
                code = self.proc.returncode
        oom = self.cgroup is not None and self.cgroup.oom_killed()
        self.kill()
        # bubblewrap exits 128 + N when the process inside died of signal N
        sig = -code if code is not None and code < 0 else (code - 128 if code and code > 128 else 0)
        if oom:
            return CandidateDied("memory", f"the candidate exceeded the memory limit ({self.memory_mb} MiB); "
                                 "the cgroup's OOM killer ended it")
        if sig:
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            extra = (" (not sent by kstrata: the candidate, or the kernel's OOM killer)"
                     if name == "SIGKILL" else "")
            return CandidateDied("signal", f"the candidate process was killed by {name}{extra}")
        return CandidateDied("exit", f"the candidate process exited (status {code}) during a call")

    def request(self, header: dict, buffers: list[Any] = (), timeout_s: float | None = None
                ) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply.

        Raises
        ------
        CandidateDied
            On a timeout (the tree is killed), a crash, or a protocol violation.
        """
        if self.proc is None:
            raise CandidateDied("exit", "the candidate process is not running")
        try:
            wire.send(self.wfd, header, list(buffers))
        except (BrokenPipeError, OSError):
            raise self._died() from None
        return self._recv(timeout_s)

    def kill(self) -> None:
        """End the whole process tree (the sandbox's PID namespace dies with its
        first process; the cgroup, where there is one, is emptied too)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.kill()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        for fd in (self.rfd, self.wfd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.rfd = self.wfd = -1
        if self.proc is not None and self.proc.stderr is not None:
            try:
                self.proc.stderr.close()
            except OSError:
                pass

    def close(self) -> None:
        """Ask the process to exit, then end its tree whatever it does."""
        if self.proc is not None and self.proc.poll() is None and self.wfd >= 0:
            try:
                wire.send(self.wfd, {"op": "exit"})
            except OSError:
                pass
        self.kill()

    def key(self) -> tuple:
        """What makes two processes interchangeable before any candidate ran."""
        return (self.backend, self.python, tuple(sorted(self.env.items())), self.memory_mb,
                tuple(self.read_only), self.gpu, self.sandbox)

    def clone(self) -> "CandidateProcess":
        """A new, unstarted process with the same settings."""
        return CandidateProcess(self.backend, python=self.python, env=self.env, memory_mb=self.memory_mb,
                                read_only=self.read_only, gpu=self.gpu, sandbox=self.sandbox)

    def warm(self, timeout_s: float | None = 300.0) -> None:
        """Import torch and the backend in the process (no candidate code)."""
        self.ok({"op": "warm", "backend": self.backend}, timeout_s=timeout_s)
        self.ready = True

    def handshake_warm(self, timeout_s: float = 300.0) -> None:
        """:meth:`handshake` then :meth:`warm` of a spawned spare; failures leave
        ``ready`` False (its taker discards it)."""
        try:
            self.handshake(timeout_s)
            self.warm(timeout_s)
        except Exception:  # noqa: BLE001 - a spare that fails is discarded by its taker
            self.ready = False

    def __enter__(self) -> "CandidateProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations --------------------------------------------------------------------
    def ok(self, header: dict, buffers: list[Any] = (), timeout_s: float | None = None
           ) -> tuple[dict, list[bytes]]:
        """:meth:`request`, raising :class:`CandidateDied` ("protocol") on a reply that is not ok
        for an operation that cannot fail for an honest candidate."""
        h, b = self.request(header, buffers, timeout_s)
        if not h.get("ok"):
            raise CandidateDied("protocol", f"{header.get('op')}: {h.get('message', 'failed')}")
        return h, b

    def json_call(self, target: str, timeout_s: float | None = None, **kwargs: Any) -> Any:
        """Run ``target(**kwargs)`` (JSON in, JSON out) inside the sandbox.

        Raises
        ------
        IsolatedCallError
            When the function raised (its message) or the process died.
        """
        try:
            h, _ = self.request({"op": "json_call", "target": target, "kwargs": kwargs}, timeout_s=timeout_s)
        except CandidateDied as e:
            raise IsolatedCallError(str(e)) from None
        if not h.get("ok"):
            raise IsolatedCallError(str(h.get("message", "failed")))
        return h.get("value")


_SPARES: dict[tuple, tuple[threading.Thread, CandidateProcess]] = {}
_SPARES_LOCK = threading.Lock()
_USES: dict[tuple, int] = {}


def fresh(spec: CandidateProcess, timeout_s: float = 300.0) -> CandidateProcess:
    """A started candidate process for ``spec``'s settings, used for ONE candidate.

    Starting a process and importing torch and the backend takes about a
    second, more than the whole verification of a small task. So once a
    setting has been used twice (a search or a benchmark, not a single
    ``eval``), a spare process with the same settings is started and warmed
    in the background while the current candidate is evaluated, and the next
    candidate takes it. A spare has run no candidate code; no process is ever
    used for two candidates.

    Raises
    ------
    CandidateDied, kstrata.sandbox.policy.SandboxUnavailable
        As :meth:`CandidateProcess.start`.
    """
    key = spec.key()
    with _SPARES_LOCK:
        entry = _SPARES.pop(key, None)
        _USES[key] = _USES.get(key, 0) + 1
        refill = _USES[key] >= 2
    proc = None
    if entry is not None:
        thread, spare = entry
        thread.join(timeout_s)
        if spare.ready:
            proc = spare
        else:
            spare.kill()
    if proc is None:
        proc = spec.start(timeout_s)
        proc.warm(timeout_s)
    if refill:
        spare = spec.clone()
        try:
            spare.spawn()  # in this thread, which outlives the spare (see spawn)
        except Exception:  # noqa: BLE001 - no spare this time
            return proc
        t = threading.Thread(target=spare.handshake_warm, args=(timeout_s,), name="kstrata-spare", daemon=True)
        t.start()
        with _SPARES_LOCK:
            old = _SPARES.pop(key, None)
            _SPARES[key] = (t, spare)
        if old is not None:
            old[0].join(timeout_s)
            old[1].close()
    return proc


def close_spares() -> None:
    """End every spare process (they also die with this process)."""
    with _SPARES_LOCK:
        entries = list(_SPARES.values())
        _SPARES.clear()
    for t, p in entries:
        t.join(60)
        p.close()


class IsolatedCallError(RuntimeError):
    """A sandboxed :meth:`CandidateProcess.json_call` failed; the message says why."""


def _kstrata_src() -> str:
    import kstrata

    return os.path.dirname(os.path.dirname(os.path.abspath(kstrata.__file__)))


def call_isolated(target: str, *, backend: str = "pytorch", timeout_s: float = 300.0,
                  python: str | None = None, env: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """Run ``target(**kwargs)`` in a fresh sandboxed process and return its JSON result.

    For work on candidate text that kstrata's own process must never do
    (parse TVMScript, lower a graph for a prompt, rebuild): the text goes in as
    a string, text or numbers come back.

    Parameters
    ----------
    target:
        ``"kstrata.backends.<...>:function"`` (only kstrata's backend modules
        and ``kstrata.agents.lowering`` are callable there).
    backend:
        The backend whose environment the call needs (its interpreter and variables).
    timeout_s:
        Wall-clock limit (s); the process tree is killed after it.

    Raises
    ------
    IsolatedCallError
        When the call fails, times out or the process dies.
    kstrata.sandbox.policy.SandboxUnavailable
        When no sandbox can be made and ``--unsafe-no-sandbox`` is not set.
    """
    from kstrata.backends import envs
    from kstrata.backends.registry import get_backend

    b = get_backend(backend)
    py = python or (str(envs.python_for(b.name)) if envs.python_for(b.name) else None)
    penv = {**sandbox_env(b), **(env or {})}
    proc = CandidateProcess(backend, python=py, env=penv, memory_mb=default_memory_mb(),
                            gpu=b.device.startswith("cuda"))
    try:
        try:
            proc.start()
        except CandidateDied as e:
            raise IsolatedCallError(f"sandboxed process did not start: {e}") from None
        return proc.json_call(target, timeout_s=timeout_s, **kwargs)
    finally:
        proc.close()


def sandbox_env(backend: Any) -> dict[str, str]:
    """The variables a backend's candidate process gets: the backend's own
    (``TRITON_INTERPRET=1``, ...) and kstrata's worker settings (threads,
    passive thread pools), nothing else of the parent's environment."""
    from kstrata.execute.pool import worker_env

    keep = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS", "OMP_WAIT_POLICY",
            "TVM_THREAD_POOL_SPIN_COUNT", "TVM_BIND_THREADS", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
            "OCL_ICD_VENDORS", "POCL_DEVICES", "TRITON_INTERPRET", "LANG", "PYTHONPATH",
            "KSTRATA_CACHE_DIR", "CUDA_HOME", "TRITON_PTXAS_PATH")
    env = {k: v for k, v in worker_env(dict(getattr(backend, "worker_env", {}) or {})).items() if k in keep}
    return env


def default_memory_mb() -> int:
    """Memory limit of one candidate process (MiB): ``KSTRATA_CANDIDATE_MEMORY_MB``,
    else 60% of physical memory (at least 2 GiB)."""
    v = os.environ.get("KSTRATA_CANDIDATE_MEMORY_MB")
    if v and v.isdigit():
        return int(v)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    return max(2048, int(total * 0.6) >> 20)

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

import fcntl
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from kstrata.execute import memory
from kstrata.execute.cpus import allowed_cpu_count
from kstrata.sandbox import kernel_cache, policy, stall, wire
from kstrata.sandbox.idle_cpu import IdleCpu


class CandidateDied(RuntimeError):
    """The candidate process ended (or broke the protocol) during a request.

    Attributes
    ----------
    cause:
        ``"timeout"``, ``"stall"`` (no progress long before the time limit,
        :mod:`kstrata.sandbox.stall`), ``"memory"`` (its own limit), ``"host_memory"`` (the machine's
        OOM killer before that limit: not the candidate's doing), ``"signal"``, ``"exit"``, ``"protocol"`` or
        ``"busy"`` (CPU used while the judge worked between requests, :mod:`kstrata.sandbox.idle_cpu`).
    """

    def __init__(self, cause: str, message: str):
        super().__init__(message)
        self.cause = cause


#: the thread every sandbox is started from (:func:`_popen_in_spawner`), started at first use
_SPAWNER: "queue.Queue[tuple[Any, Any, dict, concurrent.futures.Future]] | None" = None
_SPAWNER_LOCK = threading.Lock()


def _spawner_loop(q: "queue.Queue") -> None:
    while True:
        args, kwargs, fut = q.get()
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(subprocess.Popen(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                fut.set_exception(e)


def _popen_in_spawner(*args: Any, **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(*args, **kwargs)`` run by one daemon thread that
    lives as long as this process. bubblewrap's ``--die-with-parent`` is
    ``PR_SET_PDEATHSIG``, which fires when the *thread* that forked it ends,
    not the process: a zygote started from a worker thread (a thread pool's,
    :mod:`kstrata.verify.warm_loads`) was SIGKILLed when that thread ended,
    and the next candidate given that idle zygote died with it ("the
    sandbox's zygote exited").

    Raises
    ------
    OSError, ValueError, subprocess.SubprocessError
        As :class:`subprocess.Popen`, in the calling thread.
    """
    import concurrent.futures
    import queue

    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = queue.Queue()
            threading.Thread(target=_spawner_loop, args=(_SPAWNER,), name="kstrata-sandbox-spawner",
                             daemon=True).start()
        q = _SPAWNER
    fut: concurrent.futures.Future = concurrent.futures.Future()
    q.put((args, kwargs, fut))
    return fut.result()


class Zygote:
    """One sandbox holding a zygote process (:func:`kstrata.sandbox.child.zygote_main`):
    Python, torch and the backend imported once, no candidate code. Each
    candidate process is forked from it, so a fresh process costs a fork, not
    an interpreter start. It serves one candidate at a time; :meth:`reap`
    ends every process of that candidate before the next fork.
    """

    def __init__(self, spec: "CandidateProcess"):
        self.spec = spec
        self.proc: subprocess.Popen | None = None
        self.sock: Any = None
        self.cgroup: policy.Cgroup | None = None
        self._buf = b""
        self._stderr = bytearray()
        self._written = 0  # bytes of stderr read so far (the tail keeps the last 64 KiB)
        self.forks = 0
        #: the candidate (its kernel-cache key) whose process ran hidden tests here, or started from a
        #: kernel cache such a process wrote: this sandbox then serves that candidate's processes of that
        #: key only, i.e. of the same role (:func:`_take_zygote`; red team rt68): never its timing
        self.hidden_of: str | None = None

    def start(self, timeout_s: float = 300.0) -> "Zygote":
        """Start the sandbox and wait until the zygote has imported everything.

        Raises
        ------
        CandidateDied
            When it does not come up.
        """
        import socket

        spec = self.spec
        if spec.sandbox:
            policy.require()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [spec.python, "-P", "-m", "kstrata.sandbox.child", "--zygote", str(theirs.fileno()),
                str(0 if spec.gpu else spec.memory_mb or 0), spec.backend, "1" if spec.sandbox else "0"]
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", **spec.env}
        env["PYTHONPATH"] = os.pathsep.join(p for p in [_kstrata_src(), env.get("PYTHONPATH", "")] if p)
        self.cgroup = policy.Cgroup.create((spec.memory_mb or 0) << 20) if spec.sandbox else None
        cg = self.cgroup
        seccomp_fd = None
        if spec.sandbox:
            # without a cgroup, memory a memfd or a System V segment holds is counted nowhere (policy)
            program = policy.seccomp_program(uncounted_memory=cg is None and not spec.gpu)
            if program is not None:
                seccomp_fd = os.memfd_create("kstrata-seccomp")
                os.write(seccomp_fd, program)
                os.lseek(seccomp_fd, 0, os.SEEK_SET)
            cmd = policy.command(argv, python=spec.python, read_only=spec.read_only, env=env, gpu=spec.gpu,
                                 seccomp_fd=seccomp_fd, memory_mb=spec.memory_mb)
            full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            cmd = argv
            full_env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LD_LIBRARY_PATH")},
                        **env}

        def preexec() -> None:
            try:  # the OOM killer's first choice (policy.SANDBOX_OOM_SCORE_ADJ); raising it needs no privilege
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write(str(policy.SANDBOX_OOM_SCORE_ADJ))
            except OSError:
                pass
            if cg is not None:
                cg.enter()
            else:  # without a cgroup: limit the process count (effective for non-root users)
                import resource

                try:
                    resource.setrlimit(resource.RLIMIT_NPROC, (policy.DEFAULT_PIDS * 4,) * 2)
                except (ValueError, OSError):
                    pass

        fds = (theirs.fileno(),) + ((seccomp_fd,) if seccomp_fd is not None else ())
        try:
            self.proc = _popen_in_spawner(cmd, pass_fds=fds, env=full_env,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec)
        finally:
            theirs.close()
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        self.sock = ours
        # a thread drains the sandbox's stderr at all times: a candidate printing more than a
        # pipe holds must never block on it while the judge waits for its reply
        self._lock = threading.Lock()
        threading.Thread(target=self._drain_forever, name="kstrata-sandbox-stderr", daemon=True).start()
        hello = self._line(timeout_s)
        if hello.get("op") != "hello":
            self.kill()
            raise CandidateDied("protocol", "the zygote did not start")
        if cg is not None and spec.memory_mb:  # the limit is the candidate's, beyond what the zygote holds
            cg.limit_beyond_now(spec.memory_mb << 20)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def _drain_forever(self) -> None:
        stream = self.proc.stderr if self.proc is not None else None
        if stream is None:
            return
        try:
            fd = stream.fileno()
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                with self._lock:
                    self._stderr += chunk
                    self._written += len(chunk)
                    del self._stderr[:-65536]
        except (OSError, ValueError):
            return

    def tail(self, n: int, since: int = 0) -> str:
        """The last ``n`` characters of the sandbox's stderr, of those written
        after byte ``since`` (a :meth:`mark`), control characters written out
        (:func:`kstrata.sandbox.wire.printable`)."""
        with self._lock:
            k = min(n, max(0, self._written - since))
            return wire.printable(bytes(self._stderr[len(self._stderr) - k:] if k else b"").decode(errors="replace"))

    def mark(self, wait_s: float = 1.0) -> int:
        """The position in the sandbox's stderr where the next candidate's
        output starts, once what earlier candidates wrote has been read
        (waits up to ``wait_s`` for the pipe to empty): one candidate's prints
        never show in another's ``output_tail``."""
        import termios

        deadline = time.monotonic() + wait_s
        stream = self.proc.stderr if self.proc is not None else None
        while stream is not None and time.monotonic() < deadline:
            try:
                left = fcntl.ioctl(stream.fileno(), termios.FIONREAD, b"\0\0\0\0")
            except (OSError, ValueError):
                break
            if int.from_bytes(left, sys.byteorder) == 0:
                break
            time.sleep(0.005)
        time.sleep(0.002)  # the drain thread's last chunk: read, not yet counted
        with self._lock:
            self._last_mark = self._written
            return self._written

    #: where the output of the candidate process forked last starts (:meth:`mark`): a zygote's death quotes
    #: its stderr from there, never what earlier processes (an earlier verification's hidden tests) wrote
    _last_mark = 0

    def _line(self, timeout_s: float | None) -> dict:
        import json

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.sock.fileno()], [], [], left)
            if not ready:
                self.kill()
                raise CandidateDied("timeout", f"the sandbox's zygote did not answer within {timeout_s:g} s")
            if self.sock.fileno() in ready:
                try:
                    chunk = self.sock.recv(65536)
                except OSError:  # reset: the zygote died with unread data (a ConnectionResetError traceback)
                    chunk = b""
                if not chunk:
                    time.sleep(0.05)
                    tail = self.tail(1500, self._last_mark)  # red team rt85: not earlier processes' output
                    self.kill()
                    raise CandidateDied("exit", "the sandbox's zygote exited" + (f": {tail}" if tail else ""))
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            self.kill()
            raise CandidateDied("protocol", "the zygote sent a malformed answer") from None

    def ask(self, req: dict, fds: tuple[int, ...] = (), timeout_s: float | None = 60.0) -> dict:
        import json
        import socket

        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], list(fds))
        except OSError:
            self.kill()
            raise CandidateDied("exit", "the sandbox's zygote is gone") from None
        return self._line(timeout_s)

    #: the cgroup saw an OOM kill (kept when the cgroup is removed: :meth:`kill` removes it before
    #: the candidate's death is read, and a zygote the OOM killer chose read as "ended during a call")
    oomed = False
    #: the cgroup's memory use reached its own limit (kept likewise; :meth:`Cgroup.limit_reached`)
    limit_hit = False

    def oom_count(self) -> bool:
        if self.cgroup is not None and self.cgroup.oom_killed():
            self.oomed = True
        if self.cgroup is not None and self.cgroup.limit_reached():
            self.limit_hit = True
        return self.oomed

    def kill(self) -> None:
        """End the whole sandbox (its PID namespace) and its cgroup."""
        if self.proc is not None and self.proc.poll() is None:
            for kill in (lambda: os.killpg(self.proc.pid, signal.SIGKILL), self.proc.kill):
                try:
                    kill()
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:
            self.oom_count()
            self.cgroup.remove()
            self.cgroup = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None


#: idle zygotes kept for the next candidate with the same settings, oldest first; at most
#: :data:`MAX_IDLE_ZYGOTES`: a process that meets many settings (a test session: a cache directory
#: per test, several backends and memory limits) kept one sandbox (~250 MB) for every setting it ever met;
#: 4, plus one for each warm process a stage may fork beside its own on this machine
#: (:func:`kstrata.verify.warm_loads.procs`: one per two CPUs beyond one, at most 8), whose sandboxes a
#: verification of the same candidate settings uses again at its next stage
_IDLE: list[Zygote] = []
_IDLE_LOCK = threading.Lock()
MAX_IDLE_ZYGOTES = 4 + min(8, (allowed_cpu_count() - 1) // 2)


#: spare zygotes being started in the background (:func:`start_spare`), by settings (:meth:`CandidateProcess.key`):
#: one event per start under way, set when it ends, whether it worked or not (a key with none is absent)
_STARTING: dict[tuple, list[threading.Event]] = {}
#: notified (with :data:`_IDLE_LOCK` held) when a zygote is given back or a spare's start ends
_IDLE_CHANGED = threading.Condition(_IDLE_LOCK)

#: the environment variable that sets :func:`spare_target` (a whole number; 0: no spares)
SPARES_ENV = "KSTRATA_SPARE_ZYGOTES"


def spare_target(gpu: bool = True) -> int:
    """How many zygotes of one settings key :func:`start_spare` keeps idle (unmarked) or starting:
    :data:`SPARES_ENV` when set; else, for GPU candidates (``gpu``), one per four CPUs this process may
    use, at least 1, at most 4; for CPU candidates 1. A spare starts while the previous candidate's
    timing runs: on a CPU backend several starts at once would take CPUs from that timing (its
    contention check then leaves the speedup untrusted); a GPU timing reads CUDA events.

    Why more than one: every verification of a new candidate needs a zygote no hidden test marked
    (red team rt68), a zygote start takes 8-10 s on the H100 host (torch with its CUDA libraries and
    Triton imported; 4.5-8 s on a 2-CPU machine) and a level-1 verification there takes a few seconds,
    so one spare left a start on every task's path: 12-24 s per Triton level-1 task at 6e2faca
    (benchmarks/results/verify_overhead_gpu.txt, issue #18 item 5: median under 5 s). Starts run side
    by side; a 2-CPU machine keeps one, where more would take the CPUs the judge and the timing use."""
    v = os.environ.get(SPARES_ENV, "").strip()
    if v.isdigit():
        return int(v)
    return max(1, min(4, allowed_cpu_count() // 4)) if gpu else 1


def _unmarked_idle(key: tuple) -> int:
    """How many idle zygotes with settings ``key`` no hidden test marked are there (caller holds the lock)."""
    return sum(1 for z in _IDLE if z.spec.key() == key and getattr(z, "hidden_of", None) is None)


def start_spare(spec: "CandidateProcess") -> int:
    """Start, in background threads, zygotes with ``spec``'s settings for later processes, until
    :func:`spare_target` of them are idle (unmarked by hidden tests) or starting. Returns how many it
    started (0 where enough are there already).

    Why: a verification marks the zygote its hidden tests ran in (:attr:`Zygote.hidden_of`, red team
    rt68), and the same candidate's timing may not use it (its timing numbers reach the agent), so in a
    search every candidate's timing started a zygote of its own where it used to find one idle: one
    start per candidate (4.5-12 s on a 2-core machine, more where CUDA is imported; benchmarks/results/
    eval_cost_cpu.txt). Started while the verification runs, it is ready when the timing asks
    (:func:`_take_zygote` waits for a start under way rather than making a second). Nothing about what a
    process may use changes. Asked where a later process will need one: when a verification that a timing
    follows takes the last unmarked zygote (:attr:`CandidateProcess.spare`), and when a process that ran
    hidden tests ends (:meth:`CandidateProcess.close`): the next candidate's verification may not fork
    where they ran either, and every verification of a new candidate started a zygote (b005edb: the test
    suite and GPU verification about twice as slow; 3.7 s -> 7.8 s median per task here).

    Spares fill only the room the idle list has (:data:`MAX_IDLE_ZYGOTES`, less the unmarked idle zygotes
    and the starts under way, of any settings; :func:`_give_back` ends marked ones first): a spare given
    back to a full list ended the least recently used idle zygote, another settings' spare or the trusted
    baseline's. With 3 spares on a 4-zygote machine and two settings in turn, 6 candidates started 21
    zygotes, 13 of them ended unused (1 spare: 8; red team rt77, tests/sandbox/test_rt77_sandbox_spares.py),
    each start 4.5-10 s of CPU beside the judge and the timing. None starts where the machine's memory is
    short (:func:`kstrata.execute.memory.pressure`)."""
    key = spec.key()
    if memory.pressure():  # a spare would be ended when given back (_give_back): the next take starts one
        return 0
    with _IDLE_LOCK:
        unmarked = sum(1 for z in _IDLE if getattr(z, "hidden_of", None) is None)
        room = MAX_IDLE_ZYGOTES - unmarked - sum(len(e) for e in _STARTING.values())
        n = min(spare_target(bool(spec.gpu)) - _unmarked_idle(key) - len(_STARTING.get(key, ())), room)
        events = [threading.Event() for _ in range(max(0, n))]
        if events:
            _STARTING.setdefault(key, []).extend(events)

    def run(done: threading.Event) -> None:
        z = None
        try:
            z = Zygote(spec).start()
        except Exception:  # noqa: BLE001 - a spare that does not start is simply not there; the next take starts one
            pass
        finally:
            if z is not None:  # idle before the start is no longer counted: a taker never sees neither
                _give_back(z)
            with _IDLE_LOCK:
                left = [e for e in _STARTING.get(key, ()) if e is not done]
                if left:
                    _STARTING[key] = left
                else:
                    _STARTING.pop(key, None)
                done.set()
                _IDLE_CHANGED.notify_all()

    for done in events:
        threading.Thread(target=run, args=(done,), name="kstrata-spare-zygote", daemon=True).start()
    return len(events)


def _take_zygote(spec: "CandidateProcess", timeout_s: float) -> Zygote:
    """An idle zygote that may serve ``spec``; where none is, one that a spare's start under way gives
    back (waited for, up to ``timeout_s``), else a new one started here."""
    key, deadline = spec.key(), time.monotonic() + timeout_s
    while True:
        found = _take_idle(spec)
        if found is not None:
            return found
        with _IDLE_LOCK:  # a spare under way (start_spare): wait for it rather than start a second
            if _unmarked_idle(key):  # given back since: take it
                continue
            if not _STARTING.get(key):
                break
            left = deadline - time.monotonic()
            if left <= 0 or not _IDLE_CHANGED.wait(left):
                break
    # its own start gets the whole limit, as before spares (a spare that hung past it took only the wait)
    return Zygote(spec).start(timeout_s)


def _take_idle(spec: "CandidateProcess") -> Zygote | None:
    """The most recently given back idle zygote that may serve ``spec``, taken out of the idle list."""
    key, dead = spec.key(), []
    with _IDLE_LOCK:
        found = None
        for z in reversed(_IDLE):  # the most recently given back first
            # a sandbox where a candidate's hidden tests ran serves that candidate's processes of the same
            # kernel-cache key (role) alone (Zygote.hidden_of): never its timing, whose numbers reach the agent
            if z.spec.key() == key and getattr(z, "hidden_of", None) in (None, spec.kernel_cache):
                _IDLE.remove(z)
                if z.alive():
                    found = z
                    break
                dead.append(z)
    for z in dead:
        z.kill()
    return found


def _give_back(z: Zygote) -> None:
    """Keep ``z`` idle for a later process, or end it where the machine's memory is short
    (:func:`kstrata.execute.memory.pressure`: an idle zygote is a cache of ~230 MB)."""
    if not z.alive():
        return
    if memory.pressure():
        z.kill()
        with _IDLE_LOCK:
            _IDLE_CHANGED.notify_all()
        return
    with _IDLE_LOCK:
        _IDLE.append(z)
        # beyond the cap: the least recently used zygotes that hidden tests marked (each serves one candidate's
        # processes of one role), then the least recently used others (start_spare counts only the unmarked)
        excess = len(_IDLE) - MAX_IDLE_ZYGOTES
        order = sorted(range(len(_IDLE)), key=lambda i: (getattr(_IDLE[i], "hidden_of", None) is None, i))
        gone = set(order[:max(0, excess)])
        over = [old for i, old in enumerate(_IDLE) if i in gone]
        _IDLE[:] = [old for i, old in enumerate(_IDLE) if i not in gone]
        _IDLE_CHANGED.notify_all()
    for old in over:
        old.kill()


def close_zygotes() -> None:
    """End every idle zygote's sandbox (they also die with this process)."""
    with _IDLE_LOCK:
        all_z = list(_IDLE)
        _IDLE.clear()
    for z in all_z:
        z.kill()


def descendants(root: int) -> list[int] | None:
    """Host PIDs of every descendant of process ``root`` (zombies included), read from each thread's
    ``/proc/PID/task/TID/children`` (Linux's CONFIG_PROC_CHILDREN): ~0.3 ms for a sandbox, where psutil's
    ``children(recursive=True)`` walks the host's whole ``/proc`` (10 ms on this loaded machine), so the
    idle-CPU check (:mod:`kstrata.sandbox.idle_cpu`) can list the sandbox at every reply and request
    (red team rt77). None where the kernel has no such file (the caller falls back to psutil); a process
    that ends during the walk is simply left out.
    """
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except FileNotFoundError:
                if pid == root and not os.path.exists(f"/proc/{pid}/task/{tid}"):
                    continue
                if pid == root:
                    return None
                continue
            except OSError:
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


class CandidateProcess:
    """One sandboxed candidate process: forked, for one candidate only, from a
    zygote (:class:`Zygote`) with the same settings.

    Parameters
    ----------
    backend:
        Registry name of the candidate's backend.
    python:
        Interpreter (the TileLang environment's for ``tilelang-*``); default this one.
    env:
        Environment variables inside (the sandbox starts from an empty one).
    memory_mb:
        Memory limit (MiB) of the candidate's process tree: the sandbox's cgroup
        where one can be made, and ``RLIMIT_AS`` in the process; for a GPU
        process (where ``RLIMIT_AS`` cannot work: CUDA reserves far more
        address space than it uses) without a cgroup, the judge watches the
        tree's resident memory while it waits for each reply
        (:func:`tree_rss`, every :data:`RSS_POLL_S` s) and kills it above the limit.
    read_only:
        Extra files bound read-only.
    gpu:
        Bind GPU device nodes.
    sandbox:
        False only under ``--unsafe-no-sandbox`` (see :func:`policy.require`).
    kernel_cache:
        The candidate's :func:`kstrata.sandbox.kernel_cache.candidate_key`:
        its compiler caches (Triton's, ...) from its earlier processes are
        unpacked into this one's sandbox before it is forked, and kept again
        when it ends (:mod:`kstrata.sandbox.kernel_cache`). None (baselines,
        isolated calls, no sandbox): every process starts without one.
    trusted:
        The process runs kstrata's own code only (the eager baseline's timing
        process): its zygote is one that never serves a candidate (it is part
        of :meth:`key`), so nothing a candidate changed in a sandbox it ran in
        can reach it (a candidate's autogroup nice slowed the baseline forked
        after it from the same zygote; red-team round of 2026-12-04).
    """

    def __init__(self, backend: str, *, python: str | None = None, env: dict[str, str] | None = None,
                 memory_mb: int | None = None, read_only: list[str] = (), gpu: bool = False,
                 sandbox: bool | None = None, kernel_cache: str | None = None, trusted: bool = False):
        self.backend = backend
        self.python = python or sys.executable
        self.env = dict(env or {})
        self.memory_mb = memory_mb
        self.read_only = list(read_only)
        self.gpu = gpu
        if sandbox is None:
            sandbox = policy.status().usable and not policy.unsafe_requested()
        self.sandbox = sandbox
        self.kernel_cache = kernel_cache if sandbox else None
        self.trusted = trusted
        #: set by the judge before this process runs hidden tests (kernel_cache.saw_hidden)
        self.saw_hidden = False
        #: a later process of these settings will follow (a verification that a timing follows): taking a
        #: zygote starts a spare in the background where none is left (:func:`start_spare`)
        self.spare = False
        #: it started from an archive that a process which ran hidden tests wrote
        self.restored_hidden = False
        self.zygote: Zygote | None = None
        self.pid = 0
        self.rfd = self.wfd = -1
        self.start_s = 0.0
        self.oom_before = False
        self.ended: dict | None = None
        self.host_pid = 0  # the candidate's PID outside its sandbox (found on first freeze)
        self.zygote_pid = 0  # its zygote's (found with it)
        self.sandbox_ns: str | None = None  # its PID namespace (_sandbox_ns)
        self._handles: dict[int, int] = {}  # pid -> what freeze() signalled it by (_handle)
        self.frozen: list[int] = []  # what freeze() stopped
        self.watch_rss = False
        self.rss_killed = 0
        self.tail_from = 0  # where this candidate's output starts in the sandbox's stderr (Zygote.mark)
        self.own_threads: set[int] | None = None  # its threads after hello (SINGLE_THREADED backends)
        self.idle_cpu: IdleCpu | None = None  # its CPU between replies and requests (first reply on)
        #: set while a timed call's request is on the judge's wall clock: the timer makes the idle-CPU reads
        #: (idle_check, idle_mark: /proc reads, ~0.3 ms) outside it (kstrata.measure.remote.RemoteTimer)
        self.idle_paused = False

    # -- life cycle -------------------------------------------------------------------
    def start(self, timeout_s: float = 300.0) -> "CandidateProcess":
        """Fork the process from a zygote (started on first use) and wait for its hello.

        Raises
        ------
        kstrata.sandbox.policy.SandboxUnavailable
            When no sandbox can be made and the unsafe opt-out is not set.
        CandidateDied
            When the process does not come up.
        """
        t0 = time.perf_counter()
        if not self.sandbox and not policy.unsafe_requested():
            policy.require()
        z = _take_zygote(self, timeout_s)
        if getattr(z, "hidden_of", None) is not None:
            # a zygote this candidate's hidden tests marked (_take_idle gives no other): what they left in the
            # state its processes share (PID and IPC counters, /tmp times: rt68) reaches this process, as a
            # marked archive's files would, so its failures' details are withheld alike. It was set from the
            # archive alone, and a candidate that caches nothing has none: its next verification of the same
            # key (a search's full-scope confirmation, the same file sent again) forked there and told its
            # public failures in full (red team rt77, tests/sandbox/test_rt77_sandbox_marked_zygote.py)
            self.restored_hidden = True
        if self.spare:
            start_spare(self)
        for attempt in range(2):
            self.tail_from = z.mark()
            c_r, p_w = os.pipe()   # judge -> child
            p_r, c_w = os.pipe()   # child -> judge
            _widen(p_w)
            _widen(p_r)
            cache_fd = kernel_cache.open_archive(self.kernel_cache) if self.kernel_cache else None
            if cache_fd is not None:
                self.restored_hidden = self.restored_hidden or kernel_cache.saw_hidden(self.kernel_cache)
            try:
                reply = z.ask({"op": "fork"}, (c_r, c_w) + ((cache_fd,) if cache_fd is not None else ()),
                              timeout_s)
            finally:
                for fd in (c_r, c_w) + ((cache_fd,) if cache_fd is not None else ()):
                    os.close(fd)
            if not reply.get("altered") or attempt:
                break
            # an earlier candidate changed the zygote from outside (its limits, its CPUs): a fresh sandbox
            for fd in (p_r, p_w):
                os.close(fd)
            z.kill()
            z = Zygote(self).start(timeout_s)
        self.zygote, self.pid = z, int(reply.get("pid", 0))
        self.rfd, self.wfd = p_r, p_w
        self.oom_before = z.oom_count()
        self.limit_before = z.limit_hit
        self.watch_rss = bool(self.memory_mb) and self.gpu and z.cgroup is None
        h, _ = self._recv(timeout_s)
        if h.get("op") != "hello":
            self.kill()
            raise CandidateDied("protocol", "the candidate process did not say hello")
        if self.sandbox and self.backend in SINGLE_THREADED:  # its harness's threads: the main one and its watch
            self.host_pid = self.host_pid or host_pid_of(z.proc.pid, self.pid)
            self.own_threads = set(thread_ids(self.host_pid))
        self.start_s = time.perf_counter() - t0
        return self

    def output_tail(self, n: int = 2000) -> str:
        """The last ``n`` characters this candidate's processes wrote to stderr
        (its prints included; nothing an earlier candidate of the same sandbox wrote)."""
        z = self.zygote or getattr(self, "_last_zygote", None)
        return z.tail(n, self.tail_from) if z is not None else ""

    def _recv(self, timeout_s: float | None, limit: int | None = None, what: str = "request"
              ) -> tuple[dict, list[bytes]]:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        host_pid = 0
        # a candidate that sleeps, blocks or stops itself is ended before the time limit (kstrata.sandbox.stall)
        watch = (stall.StallWatch(lambda: [] if self.frozen else self._own_processes(), stall.stall_limit())
                 if self.zygote is not None else None)
        next_look = time.monotonic() + stall.POLL_S
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self.watch_rss:
                left = RSS_POLL_S if left is None else min(left, RSS_POLL_S)
            if watch is not None:
                wait = max(0.0, next_look - time.monotonic())
                left = wait if left is None else min(left, wait)
            ready, _, _ = select.select([self.rfd], [], [], left)
            if self.rfd in ready:
                break
            now = time.monotonic()
            if watch is not None and now >= next_look:
                next_look = now + stall.POLL_S
                why = watch.check(now)
                if why is not None:
                    self.kill()
                    raise CandidateDied("stall", why)
            if self.watch_rss and self.zygote is not None and self.zygote.proc is not None:
                host_pid = host_pid or host_pid_of(self.zygote.proc.pid, self.pid)
                rss = tree_rss(host_pid) if host_pid else 0
                if rss > (self.memory_mb << 20):
                    self.rss_killed = rss
                    self.kill()
                    raise CandidateDied("memory", f"the candidate exceeded the memory limit ({self.memory_mb} "
                                        f"MiB of host memory; its processes held {rss >> 20} MiB) and was "
                                        "killed (KSTRATA_CANDIDATE_MEMORY_MB sets the limit)")
            if deadline is not None and time.monotonic() >= deadline:
                self.kill()
                # timeout_s is what was left when this request was sent: the candidate's earlier
                # requests (its build, earlier tests) and the judge's work had used the rest
                raise CandidateDied("timeout", f"the candidate did not answer its {what}, sent when "
                                    f"{timeout_s:.3g} s of the time limit were left (its earlier requests and "
                                    "the judge's work had used the rest), before the limit (a hanging or very "
                                    "slow candidate); its process tree was killed")
        try:  # the message's own bytes under the same limit, and never a pause of wire.IDLE_S in it
            h, b = wire.recv(self.rfd, limit, math.inf if deadline is None else deadline, bounded_ints=True)
        except wire.Closed:
            raise self._died() from None
        except wire.Stalled as e:
            self.kill()
            if deadline is not None and time.monotonic() >= deadline:
                raise CandidateDied("timeout", f"the candidate's answer to its {what} did not arrive before the "
                                    f"time limit ({e}); its process tree was killed") from None
            raise CandidateDied("protocol", f"the candidate process broke the protocol: {e}") from None
        except wire.WireError as e:
            self.kill()
            raise CandidateDied("protocol", f"the candidate process broke the protocol: {e}") from None
        # its text reaches terminals, prompts and the run store: no control sequence of the candidate's in it
        return wire.printable_strings(h), b

    def _died(self) -> CandidateDied:
        self.kill()
        ended = self.ended or {}
        oom = self.zygote_oom
        if oom and self.host_oom():
            return CandidateDied("host_memory", "the machine ran out of memory and the kernel's OOM killer ended "
                                 f"the candidate's process before its own limit ({self.memory_mb} MiB) was "
                                 "reached: the machine's state (other jobs, the judge's own work), not the "
                                 "candidate's; verify again with more memory free")
        if oom:
            return CandidateDied("memory", f"the candidate exceeded the memory limit ({self.memory_mb} MiB); "
                                 "the cgroup's OOM killer ended it")
        sig = ended.get("signal")
        if sig:
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            extra = (" (not sent by kstrata: the candidate itself, or the kernel's OOM killer)"
                     if name == "SIGKILL" else "")
            return CandidateDied("signal", f"the candidate process was killed by {name}{extra}")
        if ended.get("exit") == wire.OOM_EXIT:  # it could not take in a request under its RLIMIT_AS
            return CandidateDied("memory", f"the candidate exceeded the memory limit ({self.memory_mb} MiB of "
                                 "address space beyond what its process maps at its start; KSTRATA_CANDIDATE_"
                                 "MEMORY_MB sets it): its process could not take in a request's inputs")
        if "exit" in ended:
            return CandidateDied("exit", f"the candidate process exited (status {ended['exit']}) during a call")
        return CandidateDied("exit", "the candidate process ended during a call")

    def request(self, header: dict, buffers: list[Any] = (), timeout_s: float | None = None,
                limit: int | None = None) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply (whose buffers may hold at
        most ``limit`` bytes: more is a protocol violation). Without a
        ``limit``, a reply to an operation of :data:`BUFFERLESS_OPS` may hold
        no buffer, any other at most :func:`reply_cap` bytes: the candidate
        writes its replies itself (its process's end of the pipe is an open
        file descriptor), and a forged ``load`` or timing reply announcing
        32 GiB buffers, then streaming them, was read into the judge's memory,
        which has no limit (red-team round of 2026-12-04).

        Raises
        ------
        CandidateDied
            On a timeout (the tree is killed), a crash, or a protocol violation.
        """
        if self.wfd < 0:
            raise CandidateDied("exit", "the candidate process is not running")
        if limit is None:
            limit = 0 if header.get("op") in BUFFERLESS_OPS else reply_cap()
        if not self.idle_paused:
            self.idle_check()
        churn = Churn.mark(self, header) if header.get("op") in CHECKED_OPS else None
        deadline = math.inf if timeout_s is None else time.monotonic() + timeout_s
        try:  # under the request's time limit: a process that stops reading its request is ended (wire.send)
            wire.send(self.wfd, header, list(buffers), deadline)
        except wire.Stalled as e:
            self.kill()
            cause = "timeout" if time.monotonic() >= deadline else "stall"
            raise CandidateDied(cause, f"the candidate process stopped reading its '{header.get('op', '?')}' "
                                f"request ({e}); its process tree was killed") from None
        except (BrokenPipeError, OSError):
            raise self._died() from None
        h, b = self._recv(timeout_s, limit, f"'{header.get('op', '?')}' request")
        problem = malformed(h) if header.get("op") in CHECKED_OPS + ("load", "prepare", "reload") else None
        if problem:  # (timing's replies are judged by kstrata.measure.remote, a forged one as timed_output)
            self.kill()
            raise CandidateDied("protocol", f"the candidate process sent a malformed {header.get('op')} reply "
                                f"({problem})")
        if churn is not None:
            churn.report(h)
        if not self.idle_paused:
            self.idle_mark()
        return h, b

    def idle_check(self) -> None:
        """Judge the sandbox's CPU use over the judge's gap since the last reply
        (:meth:`kstrata.sandbox.idle_cpu.IdleCpu.sending`); :meth:`request` does
        it first unless :attr:`idle_paused`.

        Raises
        ------
        CandidateDied
            ``"busy"`` (its process tree killed) when it kept the CPUs busy there.
        """
        why = self.idle_cpu.sending() if self.idle_cpu is not None else None
        if why is not None:
            self.kill()
            raise CandidateDied("busy", why)

    def idle_mark(self) -> None:
        """Start the next gap of :meth:`idle_check` (a reply has arrived); :meth:`request` does it last
        unless :attr:`idle_paused`. Untrusted sandboxed processes only."""
        if self.zygote is not None and not self.trusted:
            if self.idle_cpu is None:
                self.idle_cpu = IdleCpu(self._own_processes, lambda: self.zygote_pid)
            self.idle_cpu.replied()

    zygote_oom = False
    limit_before = False
    #: its zygote's cgroup reached its own memory limit while it ran (read with :attr:`zygote_oom`)
    zygote_limit_hit = False

    def host_oom(self) -> bool:
        """The OOM kill its zygote's cgroup saw (:attr:`zygote_oom`) came with the cgroup's use below its
        own limit: the machine ran out of memory, not the candidate (:meth:`Cgroup.limit_reached`)."""
        return bool(self.zygote_oom and not self.zygote_limit_hit)

    def kill(self) -> None:
        """End the candidate's whole process tree (every process of its sandbox
        but the zygote); the sandbox itself is ended when the zygote does not
        answer. Idempotent."""
        handles, self._handles = self._handles, {}
        for handle in handles.values():  # freeze()'s pidfds: what they held is ended below
            _close(handle)
        for fd in (self.rfd, self.wfd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.rfd = self.wfd = -1
        z, self.zygote = self.zygote, None
        if z is None:
            return
        pack_fd = os.memfd_create("kstrata-kernel-cache", os.MFD_CLOEXEC) if self.kernel_cache else None
        try:
            self.ended = z.ask({"op": "reap", "pid": self.pid}, (pack_fd,) if pack_fd is not None else (),
                               timeout_s=30)
            self.zygote_oom = z.oom_count() and not self.oom_before
            self.zygote_limit_hit = z.limit_hit and not self.limit_before
            if pack_fd is not None and isinstance(self.ended, dict) and isinstance(self.ended.get("cache"), dict):
                kernel_cache.store(self.kernel_cache, pack_fd, self.ended["cache"],
                                   hidden=self.saw_hidden or self.restored_hidden)
        except CandidateDied:
            self.zygote_oom = z.oom_count() and not self.oom_before
            z.kill()  # reads the cgroup once more before removing it (limit_hit only turns true)
            self.zygote_limit_hit = z.limit_hit and not self.limit_before
            return
        finally:
            if pack_fd is not None:
                os.close(pack_fd)
        hidden = self.saw_hidden or self.restored_hidden
        if self.zygote_oom or hidden and (not self.kernel_cache
                                          or getattr(z, "hidden_of", None) not in (None, self.kernel_cache)):
            # a sandbox whose cgroup has seen an OOM kill is not reused; nor one whose process ran hidden tests
            # (or started from a kernel cache that such a process wrote) for another candidate: the state its
            # processes share and the scrub cannot reset (the PID, System V IPC id and loopback counters of its
            # namespaces, the times of its /tmp and /dev/shm, the zygote's /proc/1/coredump_filter) carried a
            # hidden test's shape to the next candidate forked there, whose public failure the agent is told
            # (red team rt68). The same candidate's later processes of the same kernel-cache key (its next
            # verification stage, its full-scope confirmation) may use it: they are the candidate that saw those
            # tests. Its timing may not (another key, role 'time'): timing numbers reach the agent, and
            # kstrata.sandbox.kernel_cache keeps what a verification left from every timing; so each evaluated
            # candidate's timing needs a zygote of its own, started ahead in the background (start_spare, below)
            # (benchmarks/results/eval_cost_cpu.txt; tests/sandbox/test_redteam_rt68.py -k timing_never)
            z.kill()
        else:
            if hidden:
                z.hidden_of = self.kernel_cache
            _give_back(z)
        if hidden and self.sandbox and not self.trusted:
            # the next candidate (and this one's timing) may not fork there: a zygote for them starts now, in
            # the background, where none of these settings is idle unmarked or starting (start_spare)
            start_spare(self)
        self.zygote = None
        self._last_zygote = z

    # -- stopped while others are timed ----------------------------------------------
    def _own_processes(self) -> list[int]:
        """Host PIDs of every process of this candidate's sandbox but the zygote
        and bubblewrap's: the candidate, whatever it forked, and orphans
        re-parented to the sandbox's init (a zygote serves one candidate at a
        time, so nothing else lives there)."""
        import psutil

        z = self.zygote
        if z is None or z.proc is None:
            return []
        root = z.proc.pid
        if not self.host_pid:  # looked up once: a process keeps its PID
            self.host_pid = host_pid_of(root, self.pid)
        cand = self.host_pid
        try:
            zygote = psutil.Process(cand).ppid() if cand else 0
            self.zygote_pid = zygote  # (kstrata.measure.remote.RemoteCandidate.held_cpu reads its reaped children)
            # bubblewrap's own processes by PID, never by name: the sandbox's init (the zygote's
            # parent) and the one kstrata started (root). A candidate's helper named "bwrap" (an
            # exec'd symlink) was neither frozen nor counted, and slowed the baseline unseen
            # (red-team round of 2026-12-03)
            init = psutil.Process(zygote).ppid() if zygote else 0
            tree = descendants(root)
            if tree is None:
                tree = [p.pid for p in psutil.Process(root).children(recursive=True)]
        except psutil.Error:
            return [cand] if cand else []
        return [pid for pid in tree if pid not in (root, zygote, init)]

    def freeze(self, settle_s: float = 0.05) -> int:
        """Stop (SIGSTOP) every process of the candidate's sandbox, and wait until
        each is stopped (up to ``settle_s``): while the baseline is timed, the
        candidate cannot run a thread or a forked process that takes the CPUs,
        caches or memory bandwidth from it, nor do its own work ahead of its
        next timed call. Returns how many processes were stopped.

        The process list is taken again once every listed process is
        stopped, and what it adds is stopped too, until a list adds nothing:
        a process forked while the first list was read (psutil reads every
        ``/proc`` entry of the host, milliseconds) was on no list and kept
        running through the baseline's timing, in 8 of 20 freezes of a
        candidate whose helper forked every half millisecond (red-team
        round of 2026-12-04). A stopped process forks nothing, so a list
        taken after every earlier one is stopped holds all there are."""
        stopped: list[int] = []
        deadline = time.monotonic() + settle_s
        for _ in range(FREEZE_ROUNDS):
            new = [pid for pid in self._own_processes() if pid not in stopped]
            if not new:
                break
            for pid in new:
                handle = self._handle(pid)
                if handle is not None and _signal(handle, signal.SIGSTOP):
                    self._handles[pid] = handle
                elif handle is not None:
                    _close(handle)
            stopped += new
            _wait_stopped(new, max(deadline, time.monotonic() + 0.005))
        self.frozen = stopped
        return len(stopped)

    def _handle(self, pid: int) -> int | None:
        """A handle on host process ``pid`` to signal it by, only while it is a
        process of this candidate's sandbox (its PID namespace is the
        candidate's): a pidfd (``pidfd_open``), which signals that process or
        none, never another one given the same PID later; or, where there is
        none, the PID itself (negative, :func:`_signal`). None for a process
        that is gone or outside the sandbox. The judge listed the sandbox's
        processes, then signalled the PIDs, and continued them all after
        the baseline's calls: a listed process that ended and was reaped in
        between could have its PID given to another process of the host (32768
        PIDs here), which the judge then stopped through the baseline's
        timing, or continued when another judge held it stopped (red-team rt50)."""
        ns = self._sandbox_ns()
        if ns is None:
            return None
        fd = None
        if hasattr(os, "pidfd_open"):
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                return None
        try:  # after the pidfd is open: the PID names the process the pidfd holds, or one not there yet
            inside = os.readlink(f"/proc/{pid}/ns/pid") == ns
        except OSError:
            inside = False
        if not inside:
            _close(fd)
            return None
        return fd if fd is not None else -pid

    def _sandbox_ns(self) -> str | None:
        """The candidate's PID namespace (``/proc/PID/ns/pid`` of its process,
        read once while it runs); None where it cannot be read."""
        if self.sandbox_ns is None and self.host_pid:
            try:
                self.sandbox_ns = os.readlink(f"/proc/{self.host_pid}/ns/pid")
            except OSError:
                pass
        return self.sandbox_ns

    def thaw(self) -> None:
        """Continue (SIGCONT) what :meth:`freeze` stopped (idempotent), through
        the handles it took (:meth:`_handle`). A stopped process cannot fork,
        so nothing else needs it."""
        handles, self._handles = self._handles, {}
        for handle in handles.values():
            _signal(handle, signal.SIGCONT)
            _close(handle)
        self.frozen = []

    def close(self) -> None:
        """Ask the process to exit, then end its tree whatever it does."""
        if self.wfd >= 0:
            try:
                wire.send(self.wfd, {"op": "exit"}, deadline=time.monotonic() + 1.0)
            except (OSError, wire.WireError):  # gone, or no longer reading: ended below either way
                pass
        self.kill()

    def key(self) -> tuple:
        """What makes two zygotes interchangeable."""
        return (self.backend, self.python, tuple(sorted(self.env.items())), self.memory_mb,
                tuple(self.read_only), self.gpu, self.sandbox, self.trusted)

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


#: Requests whose honest replies carry no buffer (:mod:`kstrata.sandbox.child`'s handlers).
BUFFERLESS_OPS = ("load", "prepare", "stage", "run", "flush", "json_call", "noop", "reload")

#: Share of the memory available now that one reply's buffers may take at most
#: (where its request names no limit of its own).
REPLY_SHARE = 0.5


def reply_cap() -> int:
    """The most bytes of buffers a reply without a limit of its own may hold:
    :data:`REPLY_SHARE` of the memory available now (psutil's
    ``virtual_memory().available``), so that no reply can drive the judge's
    host into its OOM killer."""
    import psutil

    return int(psutil.virtual_memory().available * REPLY_SHARE)


#: Reply fields that an honest harness always sends as lists (or leaves out).
LIST_FIELDS = ("outputs", "inputs", "findings", "replies")


def malformed(reply: Any, depth: int = 0) -> str | None:
    """What is wrong with the shape of a reply from the candidate process
    (:mod:`kstrata.sandbox.child`), or None: it is not a dict, or a field of
    :data:`LIST_FIELDS` holds something other than a list (``None`` allowed),
    or a batch's ``replies`` hold a malformed reply. The harness that sends
    replies runs in the candidate's process and is the candidate's to patch,
    so the judge must not take any shape for granted (an ``outputs`` that was
    an int ended the verification in a traceback)."""
    if not isinstance(reply, dict):
        return f"a {type(reply).__name__}, not a dict"
    for key in LIST_FIELDS:
        value = reply.get(key)
        if value is not None and not isinstance(value, list):
            return f"{key} is a {type(value).__name__}, not a list"
    if depth == 0:
        for sub in reply.get("replies") or []:
            problem = malformed(sub, depth + 1)
            if problem:
                return "in a batch: " + problem
    return None


#: The requests that run the candidate's code under the checks of a checked call.
CHECKED_OPS = ("call", "call_many")

#: Backends whose honest candidate process runs its harness's two threads and
#: no other (:func:`sandbox_env` gives them one thread in every pool): a
#: thread the candidate keeps for itself, even one hidden from ``threading``,
#: is seen from outside (:meth:`Churn.threads`). Triton's interpreter is
#: never timed, so its pools' threads buy nothing.
SINGLE_THREADED = frozenset({"triton-interp"})

#: Backends whose honest checked calls start no thread or process that ends
#: before the call returns (their kernels run in the calling thread or in a
#: thread pool that stays): :class:`Churn` holds them to it. Not the others:
#: compiled Triton runs ``ptxas`` at a kernel's first launch and PyTorch's
#: compiler its own workers, inside a call.
CHURN_CHECKED = frozenset({"triton-interp", "tvm-llvm", "tilelang-c"})

#: Of those, the backends whose first call on inputs of a new signature (shapes
#: and dtypes) may compile inside the call (``@tilelang.jit`` builds a kernel
#: with the C compiler at its first launch for those arguments): :class:`Churn`
#: counts only the requests whose every call's signature came before (each
#: test's calls come twice, one per poison pattern; red-team round 4: a
#: tilelang-c relu computed by PyTorch in a thread its call joined read correct).
COMPILES_IN_CALL = frozenset({"tilelang-c"})


class Churn:
    """Threads and processes that a checked call started and that ended before
    it returned, counted from OUTSIDE the candidate's process: the sandbox's
    PID namespace hands every new thread and process the next ID
    (:func:`kstrata.sandbox.child.last_pid`, read by the zygote, which runs
    no candidate code), so the IDs handed out during the call, less those of
    its threads and processes still alive, are the ones that came and went.

    Such a thread escapes every check made inside the candidate's process
    (PyTorch compute in a thread the call joins is invisible to the
    thread-local operator record; a thread joined before the return is not
    "left running"), and its count cannot be forged there. An honest call of
    a :data:`CHURN_CHECKED` backend starts none."""

    def __init__(self, proc: "CandidateProcess", last: int):
        self.proc, self.last = proc, last
        self.forks = host_forks()

    @classmethod
    def mark(cls, proc: "CandidateProcess", header: dict | None = None) -> "Churn | None":
        """The count's start before a request, or None where it is not kept
        (no sandbox, another backend, no readable ID, a request of a
        :data:`COMPILES_IN_CALL` backend with a call on a new signature)."""
        z = proc.zygote
        if not proc.sandbox or proc.backend not in CHURN_CHECKED or z is None or z.proc is None:
            return None
        if proc.backend in COMPILES_IN_CALL and header is not None:
            seen = proc.__dict__.setdefault("_signatures", set())
            sigs = set(signatures(header))
            new = sigs - seen
            seen |= sigs
            if new or not sigs:
                return None
        try:
            last = z.ask({"op": "pids"}, timeout_s=30).get("last")
        except CandidateDied:
            return None
        return cls(proc, last) if type(last) is int else None

    def ended(self) -> int:
        """IDs handed out since :meth:`mark` whose thread or process is gone."""
        z = self.proc.zygote
        if z is None or z.proc is None:
            return 0
        try:
            last = z.ask({"op": "pids"}, timeout_s=30).get("last")
        except CandidateDied:
            return 0
        if type(last) is not int:
            return 0
        forks = host_forks()
        host_new = None if forks is None or self.forks is None else forks - self.forks
        live = 0 if last < self.last else len(live_ns_ids(z.proc.pid, above=self.last))
        return churned(self.last, last, live, host_new, pid_max() - WRAP_START)

    def others(self) -> int:
        """Processes of the sandbox other than the candidate's, the zygote and
        bubblewrap's (alive, or exited and not yet waited for)."""
        proc = self.proc
        own = proc._own_processes()
        return len([p for p in own if p != proc.host_pid])

    def threads(self) -> int:
        """Threads of the candidate's process beyond its harness's own (for a
        :data:`SINGLE_THREADED` backend; 0 for others)."""
        proc = self.proc
        if proc.own_threads is None or not proc.host_pid:
            return 0
        return len(set(thread_ids(proc.host_pid)) - proc.own_threads)

    def report(self, reply: dict) -> None:
        """Put the judge's findings first in the reply's findings (the first
        call's, for a batch): ``no_threads`` when the call started threads or
        processes that ended before it returned, ``no_subprocess`` when a
        process the candidate started is still there. They are added here,
        in the judge's process, after the reply arrived."""
        if not isinstance(reply, dict):
            return
        n, others, threads = self.ended(), self.others(), self.threads()
        found = []
        if threads:
            found.append({"check": "no_threads_left", "message": f"{threads} thread(s) started by the candidate "
                          "are running in its process after the call (seen by the judge outside the candidate's "
                          "process; this backend's honest processes run one thread)",
                          "evidence": {"threads": threads}})
        if n:
            found.append({"check": "no_threads", "message": f"the candidate's call started {n} thread(s) or "
                          "process(es) that ended before it returned (counted by the judge outside the "
                          "candidate's process, from the sandbox's process IDs): work in them is not seen by the "
                          "checks inside the candidate's process (PyTorch compute, kernel launches)",
                          "evidence": {"ended": n}})
        if others:
            found.append({"check": "no_subprocess", "message": f"{others} process(es) started by the candidate "
                          "are still there after its call (seen by the judge outside the candidate's process)",
                          "evidence": {"processes": others}})
        if not found:
            return
        target = reply
        if isinstance(reply.get("replies"), list) and reply["replies"] and isinstance(reply["replies"][0], dict):
            target = reply["replies"][0]
        findings = target.get("findings")
        target["findings"] = found + (findings if isinstance(findings, list) else [])


def signatures(header: dict) -> list[str]:
    """The input signature (dtypes and shapes, as text) of each call a
    checked request (``call`` or ``call_many``) carries."""
    import json

    def shape_only(v: Any) -> Any:
        if isinstance(v, dict):
            if "__tensor__" in v:
                return [v.get("dtype"), v.get("shape")]
            return {k: shape_only(x) for k, x in v.items()}
        if isinstance(v, list):
            return [shape_only(x) for x in v]
        return v

    calls = header.get("calls") if header.get("op") == "call_many" else [header]
    return [json.dumps(shape_only(c.get("inputs")), sort_keys=True, default=str)
            for c in calls or [] if isinstance(c, dict)]


#: Where a PID namespace's IDs start again after ``pid_max`` (Linux's ``RESERVED_PIDS``).
WRAP_START = 300


def pid_max() -> int:
    """``/proc/sys/kernel/pid_max`` (32768 where it cannot be read)."""
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 32768


def host_forks() -> int | None:
    """Tasks (processes and threads) created on this host since boot: the
    ``processes`` line of ``/proc/stat``; None where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("processes "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def churned(mark: int, last: int, live: int, host_new: int | None, cycle: int) -> int:
    """Threads and processes started and ended between two reads of a PID
    namespace's last ID, ``mark`` then ``last``, with ``live`` of the IDs
    handed out in between still alive and ``host_new`` tasks created on the
    whole host meanwhile (None: unknown). The IDs wrap round after ``cycle``
    of them (``pid_max``, 32768 on many hosts, less :data:`WRAP_START`): a
    candidate that used up the range at its load, or started a whole cycle of
    threads in a call, would read as none; a wrap is reported as ``cycle``
    (it needs that many new tasks, which no honest call makes)."""
    if last < mark or (host_new is not None and host_new >= cycle):
        return cycle
    return max(0, last - mark - live)


def thread_ids(pid: int) -> list[int]:
    """Host IDs of the threads of host process ``pid`` (``/proc/PID/task``; [] if it is gone)."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return []


def live_ns_ids(root: int, above: int = 0) -> list[int]:
    """PID-namespace IDs above ``above`` of every live thread of every process
    under host process ``root`` (a sandbox; :func:`ns_id`)."""
    import psutil

    try:
        pids = [p.pid for p in psutil.Process(root).children(recursive=True)]
    except psutil.Error:
        return []
    out = []
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            ns = ns_id(f"/proc/{pid}/task/{tid}")
            if ns is not None and ns > above:
                out.append(ns)
    return out


def ns_id(proc_dir: str) -> int | None:
    """The innermost PID-namespace ID of the process or thread at ``proc_dir``
    (``/proc/PID`` or ``/proc/PID/task/TID``), from ``NSpid`` in its ``status``
    (which psutil does not expose); None if it is gone."""
    try:
        with open(f"{proc_dir}/status") as f:
            nspid = next((line.split()[1:] for line in f if line.startswith("NSpid:")), [])
    except OSError:
        return None
    return int(nspid[-1]) if nspid and nspid[-1].isdigit() else None


#: Seconds between two looks at a watched candidate's resident memory (see ``memory_mb``).
RSS_POLL_S = 0.1

#: Process lists :meth:`CandidateProcess.freeze` takes at most (each after the
#: processes of the ones before are stopped).
FREEZE_ROUNDS = 16


def _wait_stopped(pids: list[int], deadline: float) -> None:
    """Wait until each of host processes ``pids`` is stopped, a zombie or gone,
    or until ``deadline`` (``time.monotonic``) passes."""
    import psutil

    for pid in pids:
        while time.monotonic() < deadline:
            try:
                if psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE,
                                                    psutil.STATUS_DEAD):
                    break
            except psutil.Error:
                break
            time.sleep(0.0002)


def _signal(handle: int, sig: int) -> bool:
    """Send ``sig`` through a :meth:`CandidateProcess._handle` (a pidfd, or a
    PID negated); whether it was sent."""
    try:
        if handle >= 0:
            signal.pidfd_send_signal(handle, sig)
        else:
            os.kill(-handle, sig)
        return True
    except OSError:
        return False


def _close(handle: int | None) -> None:
    if handle is not None and handle >= 0:
        try:
            os.close(handle)
        except OSError:
            pass


def host_pid_of(root: int, ns_pid: int) -> int:
    """The host PID of the process that is ``ns_pid`` in its own (innermost) PID
    namespace, searched among the descendants of host process ``root`` (the
    sandbox); 0 if it is gone (:func:`ns_id`)."""
    import psutil

    try:
        kids = psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return 0
    for kid in kids:
        if ns_id(f"/proc/{kid.pid}") == ns_pid:
            return kid.pid
    return 0


def tree_rss(pid: int) -> int:
    """Resident memory (bytes) of host process ``pid`` and all its descendants
    (psutil's ``memory_info().rss``; 0 for processes already gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total


def _widen(fd: int) -> None:
    """Grow a pipe's kernel buffer to the system's maximum (``/proc/sys/fs/pipe-max-size``,
    1 MiB by default, instead of 64 KiB): a tensor crosses in 16 times fewer
    wake-ups of reader and writer. Best effort: the pipe works either way."""
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            size = int(f.read())
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(size, 1 << 24))
    except (OSError, ValueError, AttributeError):
        pass


def fresh(spec: CandidateProcess, timeout_s: float = 300.0) -> CandidateProcess:
    """``spec`` started: a fresh process forked for ONE candidate from a zygote
    with its settings (:class:`Zygote`; the zygote is started on first use
    and kept for the next candidate, the process never is).

    Raises
    ------
    CandidateDied, kstrata.sandbox.policy.SandboxUnavailable
        As :meth:`CandidateProcess.start`.
    """
    return spec.start(timeout_s)


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
            proc.start(timeout_s)
        except CandidateDied as e:
            raise IsolatedCallError(f"sandboxed process did not start: {e}") from None
        return proc.json_call(target, timeout_s=timeout_s, **kwargs)
    finally:
        proc.close()


def sandbox_env(backend: Any) -> dict[str, str]:
    """The variables a backend's candidate process gets: the backend's own
    (``TRITON_INTERPRET=1``, ...) and kstrata's worker settings (threads,
    passive thread pools, inductor compiling in the calling thread), nothing
    else of the parent's environment."""
    from kstrata.execute.pool import worker_env

    keep = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS", "OMP_WAIT_POLICY",
            "TVM_THREAD_POOL_SPIN_COUNT", "TVM_BIND_THREADS", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
            "OCL_ICD_VENDORS", "POCL_DEVICES", "TRITON_INTERPRET", "LANG", "PYTHONPATH",
            "KSTRATA_CACHE_DIR", "CUDA_HOME", "TRITON_PTXAS_PATH", "GLIBC_TUNABLES")
    env = {k: v for k, v in worker_env(dict(getattr(backend, "worker_env", {}) or {})).items() if k in keep}
    if getattr(backend, "name", "") in SINGLE_THREADED:
        env.update({k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    # torch.compile in a candidate compiles in the calling thread: inductor's default pool left an idle
    # ThreadPoolExecutor thread after the call, and an honest compiled relu read rejected (no_threads_left;
    # verifier red-team 2026-12-04); with more compile threads it would also fork a compile-worker pool
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    return env


def default_memory_mb() -> int:
    """Memory limit of one candidate process (MiB): ``KSTRATA_CANDIDATE_MEMORY_MB``
    (a positive whole number, at most 90% of physical memory), else 60% of
    physical memory (at least 2 GiB). A value that is not a positive number
    (``0`` read as no limit at all) gets the default, and one above 90% of
    the machine's memory is cut to that: a limit the machine cannot reach
    limits nothing, and the kernel's OOM killer would pick the judge."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    v = os.environ.get("KSTRATA_CANDIDATE_MEMORY_MB", "").strip()
    if v.isdigit() and int(v) > 0:
        return min(int(v), int(total * 0.9) >> 20)
    return max(2048, int(total * 0.6) >> 20)

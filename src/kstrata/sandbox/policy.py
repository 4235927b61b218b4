"""The OS sandbox a candidate process runs in: bubblewrap plus limits.

kstrata does not build its own sandbox. It runs each candidate process under
`bubblewrap <https://github.com/containers/bubblewrap>`_ (Debian package
``bubblewrap``), the tool Flatpak uses, with:

* a seccomp filter (:func:`seccomp_program`) refusing ptrace, mount,
  setns/unshare, module loading, bpf, userfaultfd, io_uring and other
  kernel attack surface, and every socket family but UNIX, IP and netlink
  (AF_VSOCK is not isolated by a network namespace); ``sched_setaffinity``
  too where kstrata has only some of the host's CPUs (a candidate widened
  its affinity past them);
* new user, PID, mount, IPC, UTS, cgroup and network namespaces
  (``--unshare-all``), no nested user namespaces (``--disable-userns``), an
  unprivileged uid/gid (65534) and no capabilities (``--cap-drop ALL``), so
  ``setns`` into the host's namespaces fails;
* a filesystem of read-only binds only: the system directories, the Python
  environment, kstrata's own package and the task file(s); a private tmpfs as
  ``/tmp`` (also ``HOME``) and ``/dev/shm``, the only writable places (``/dev``
  itself is read-only, ``/sys/fs`` hidden: :data:`MASKED_DIRS`); a fresh
  ``/proc`` of its own PID namespace, so the parent's ``/proc/<pid>/environ``
  does not exist there, its ``/proc/sys``, ``/proc/pressure`` and every other
  system-wide file with a write bit read-only;
* ``--die-with-parent`` and ``--new-session``; the PID namespace ends the
  whole process tree when its first process dies, ``setsid`` children
  included;
* a cleared environment (only what the backend needs is set);
* GPU device nodes bound in only for GPU backends;
* memory and process-count limits: a cgroup (v2, or v1 ``memory`` and
  ``pids``) where kstrata may create one, else ``RLIMIT_AS`` (set by the
  candidate process itself before any candidate code) and ``RLIMIT_NPROC``.

Where bubblewrap cannot run, :func:`status` says why, and evaluation refuses
untrusted candidates unless the user passes ``--unsafe-no-sandbox``
(:class:`SandboxUnavailable`).
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

#: uid/gid of the candidate inside its user namespace ("nobody").
SANDBOX_UID = 65534
#: Environment variable that, set to "1", runs candidates without a sandbox
#: (the ``--unsafe-no-sandbox`` option sets it for the process tree).
UNSAFE_ENV = "KSTRATA_UNSAFE_NO_SANDBOX"
#: Default process-count limit of one candidate sandbox.
DEFAULT_PIDS = 256
#: ``/proc/self/oom_score_adj`` of every sandbox process (the most a process can have): where memory
#: runs out on the whole machine (no cgroup holds the sandbox, or several candidates' limits add up past
#: it), the kernel's OOM killer ends a candidate's process before the judge or another user's. The full
#: suite, four test processes beside other jobs on a 24 GB machine, had a judge that held 1.4 GB killed
#: that way, and its relu verification ended as a reference failure (2026-12-06). Set by a root
#: kstrata, the floor is raised too (``oom_score_adj_min``), so a candidate cannot lower it.
SANDBOX_OOM_SCORE_ADJ = 1000


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made here and ``--unsafe-no-sandbox`` was not given."""


class HostOutOfMemory(SandboxUnavailable):
    """The machine ran out of memory and the kernel's OOM killer ended a candidate's process before
    its own limit was reached (:meth:`Cgroup.limit_reached`): kstrata's side (other jobs, the judge,
    idle processes), not the candidate's verdict. Handled as :class:`SandboxStartError` is: ``kstrata
    eval`` exits with the message, a search stores the judge's failure."""


class SandboxStartError(SandboxUnavailable):
    """A candidate process's sandbox did not start (its zygote exited or did not answer in time, the
    fork failed): kstrata's side, not the candidate's. A process's start runs no candidate code (its
    sources arrive with the ``load`` request after it), so such a failure is never the candidate's
    verdict: ``kstrata eval`` exits with the message, a search stores it as the judge's failure
    (``evaluator_exception``, "not judged" in the agents' prompts), never as the candidate's
    ``runtime_error`` or ``timeout`` (queue round rt82: with the sandbox broken the agent read
    "the sandbox's zygote exited" as its candidate's crash)."""


@dataclass(frozen=True)
class SandboxStatus:
    """Which sandbox candidate processes get here (``kstrata env`` prints it).

    Attributes
    ----------
    tool:
        ``"bubblewrap"`` or ``"none"``.
    usable:
        True when candidates run sandboxed.
    reason:
        Why not (empty when usable), with what to do.
    version:
        The tool's version string.
    limits:
        How memory and process counts are limited: ``"cgroup-v2"``,
        ``"cgroup-v1"`` or ``"rlimit"``.
    unsafe:
        True when the user chose to run without a sandbox.
    """

    tool: str
    usable: bool
    reason: str = ""
    version: str = ""
    limits: str = "rlimit"
    unsafe: bool = False

    def describe(self) -> str:
        """One line for ``kstrata env`` and run records."""
        if self.usable:
            return (f"{self.tool} {self.version} (namespaces: user pid net mount ipc uts; seccomp; uid 65534, no "
                    f"capabilities; limits: {self.limits})")
        return f"none: {self.reason}" + (" [--unsafe-no-sandbox: candidates run unsandboxed]"
                                         if self.unsafe else "")


def unsafe_requested() -> bool:
    """True when ``--unsafe-no-sandbox`` (or its environment variable) is in force."""
    return os.environ.get(UNSAFE_ENV, "") == "1"


@functools.lru_cache(maxsize=1)
def _probe() -> SandboxStatus:
    exe = shutil.which("bwrap")
    if exe is None:
        return SandboxStatus("none", False, "bubblewrap is not installed (Debian/Ubuntu: "
                             "`apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`)")
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        probe = subprocess.run(base_args(exe) + ["--ro-bind", "/", "/", "true"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return SandboxStatus("none", False, f"bubblewrap did not run: {e}")
    if probe.returncode != 0:
        msg = (probe.stderr or probe.stdout).strip().splitlines()[-1:] or ["no output"]
        return SandboxStatus("none", False, f"bubblewrap cannot create namespaces here ({msg[0]}); "
                             "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
                             "or user.max_user_namespaces>0) or run in a container that allows them",
                             version.removeprefix("bubblewrap "))
    return SandboxStatus("bubblewrap", True, "", version.removeprefix("bubblewrap "), cgroup_kind() or "rlimit")


def status() -> SandboxStatus:
    """The sandbox candidates get on this machine (probed once per process)."""
    s = _probe()
    if not s.usable and unsafe_requested():
        return SandboxStatus(s.tool, False, s.reason, s.version, s.limits, unsafe=True)
    return s


def require() -> SandboxStatus:
    """The usable sandbox, or the unsafe opt-out.

    Raises
    ------
    SandboxUnavailable
        When no sandbox can be made and ``--unsafe-no-sandbox`` was not given.
    """
    s = status()
    if not s.usable and not s.unsafe:
        raise SandboxUnavailable(
            f"no sandbox for candidate code: {s.reason}. Candidate code (your file, an LLM's answer, an "
            "MCP submission) is untrusted; install bubblewrap, or pass --unsafe-no-sandbox to run it "
            "unsandboxed at your own risk.")
    return s


def base_args(exe: str = "bwrap", tmpfs_bytes: int | None = None) -> list[str]:
    """The namespace and privilege options every sandbox gets; with
    ``tmpfs_bytes``, its writable ``/tmp`` and ``/dev/shm`` hold at most that
    many bytes each (where bubblewrap has ``--size``)."""
    size = ["--size", str(int(tmpfs_bytes))] if tmpfs_bytes and _has_option(exe, "--size") else []
    # --as-pid-1: the command (the zygote, not dumpable) is the PID namespace's init. bubblewrap's own
    # init was dumpable and of the candidate's uid: a candidate opened its /proc/1/mem for writing, and
    # init is spared by the zygote's kill(-1) and by freeze() (red-team round of 2026-12-04); an init
    # also gets no signal it has no handler for, so a candidate can neither stop nor kill the zygote
    init = ["--as-pid-1"] if _has_option(exe, "--as-pid-1") else []
    return [exe, "--unshare-all", "--unshare-user", "--disable-userns", *init, "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID), "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--hostname", "kstrata-sandbox", "--dev", "/dev", "--proc", "/proc", *_proc_read_only(),
            *size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm"]


def _proc_read_only() -> list[str]:
    """bubblewrap options making the system-wide files of the sandbox's
    ``/proc`` read-only: ``/proc/sys`` first, then every other top-level entry
    that is no process's (``/proc/<pid>``, ``self``, ``thread-self``) and holds
    a file with a write bit on this host (:func:`_proc_writable_entries`).

    bubblewrap covers ``/proc/sys`` only where its own write check passes,
    and the directory's mode (``r-x`` for everyone, root too) fails it, so the
    files stayed writable to whoever owns them. Where kstrata runs as root,
    the candidate's uid 65534 is the host's root, which is all a sysctl file
    checks: a candidate wrote global kernel settings (``vm.stat_interval``;
    ``kernel.core_pattern``, which has the kernel run a program as the host's
    root, and ``kernel.panic_on_oops`` were writable too; red-team round rt55).
    ``/proc/pressure/{cpu,io,memory}`` (mode 0666) took a candidate's PSI
    triggers, kernel polling work on the host's pressure that outlives the
    write while the file stays open (red team rt62, closed in rt65). The
    host's entry is bound over each read-only: a sysctl file shows the
    namespaces of the process that reads it, whichever procfs it is on, so the
    sandbox still reads its own (``ns_last_pid``, its hostname)."""
    out: list[str] = []
    for p in _proc_writable_entries():
        out += ["--ro-bind", p, p]
    return out


@functools.lru_cache(maxsize=1)
def _proc_writable_entries() -> tuple[str, ...]:
    """``/proc/sys`` (where it exists) and the other top-level ``/proc`` entries
    of no process that are, or hold within three levels, a file with a write bit
    (``/proc/pressure``, ``/proc/irq``, ``/proc/bus``, ``/proc/mtrr`` here)."""
    try:
        names = sorted(os.listdir("/proc"))
    except OSError:
        return ()
    rest = [f"/proc/{n}" for n in names
            if not n.isdigit() and n not in ("self", "thread-self", "sys") and _holds_writable(f"/proc/{n}", 3)]
    return tuple((["/proc/sys"] if os.path.isdir("/proc/sys") else []) + rest)


def _holds_writable(path: str, depth: int) -> bool:
    """Whether ``path`` is a file with a write bit, or a directory (links not
    followed) holding one at most ``depth`` levels down."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        if depth <= 0:
            return False
        try:
            names = os.listdir(path)
        except OSError:
            return False
        return any(_holds_writable(os.path.join(path, n), depth - 1) for n in names)
    return stat.S_ISREG(mode) and bool(mode & 0o222)


#: The share of a candidate's memory limit that its sandbox's ``/tmp`` and its
#: ``/dev/shm`` may each hold. Files there are memory: without a cgroup
#: (``RLIMIT_AS`` counts no tmpfs page) each was half the machine's RAM, so a
#: candidate writing to both could take more memory than the machine has and
#: the kernel's OOM killer would pick a process outside the sandbox (the
#: judge). Under a cgroup the pages count against the limit anyway.
TMPFS_SHARE = 0.25


@functools.lru_cache(maxsize=8)
def _has_option(exe: str, option: str) -> bool:
    """Whether this bubblewrap knows ``option`` (``--size``: 0.5 and later)."""
    try:
        out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in (out.stdout + out.stderr)


_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives",
                "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/OpenCL", "/etc/nsswitch.conf",
                "/etc/passwd", "/etc/group", "/etc/localtime", "/opt", "/sys")


def _system_links() -> dict[str, str]:
    """The :data:`_SYSTEM_DIRS` that are symbolic links to a path inside ``/usr``
    on this host (merged ``/usr``: ``/lib -> usr/lib``), each with its link text.

    The sandbox makes them links too. Bound as directories, ``..`` from inside
    one leaves ``/usr``: PoCL, loaded as ``/lib/x86_64-linux-gnu/libpocl.so``,
    looks for its headers at ``/lib/x86_64-linux-gnu/../../share/pocl``, which
    was ``/share/pocl`` in the sandbox, and every ``tvm-opencl`` candidate read
    ``compile_error`` ("no OpenCL device compiles a kernel") there while the
    same build passed outside it."""
    out: dict[str, str] = {}
    for p in _SYSTEM_DIRS:
        if os.path.islink(p) and os.path.realpath(p).startswith("/usr/"):
            out[p] = os.readlink(p)
    return out


def launch_dirs() -> set[str]:
    """The directories Python puts first on ``sys.path`` from how this process
    was started, which hold no installed code: the working directory
    (``python -m``, ``-c``, interactive) and the script's directory."""
    out: set[str] = set()
    try:
        out.add(os.path.abspath(os.getcwd()))
    except OSError:
        pass
    if sys.argv and sys.argv[0] not in ("", "-c", "-m") and os.path.isfile(sys.argv[0]):
        out.add(os.path.dirname(os.path.abspath(sys.argv[0])))
    return out


@functools.lru_cache(maxsize=8)
def interpreter_path(python: str) -> tuple[str, ...]:
    """``sys.path`` of a fresh ``python`` started in ``/`` without
    ``PYTHONPATH``: its standard library, its site-packages and what their
    ``.pth`` files add (editable installs); ``()`` when it cannot run."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = "1"  # as the sandbox's processes run
    try:
        out = subprocess.run([python, "-P", "-c", "import json, sys; print(json.dumps(sys.path))"], capture_output=True,
                             text=True, timeout=60, cwd="/", env=env)
        paths = json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return ()
    return tuple(p for p in paths if isinstance(p, str) and p) if isinstance(paths, list) else ()


def python_dirs(python: str | None = None) -> list[str]:
    """Directories a Python interpreter needs: its environment, its base
    installation, what its own start puts on ``sys.path``
    (:func:`interpreter_path`, this process's interpreter's too), the
    ``PYTHONPATH`` entries and kstrata's package; never a :func:`launch_dirs`
    entry nor anything else this process's ``sys.path`` holds. A judge runs
    with its pool's temporary directory as its working directory (``python
    -m``: the first entry of ``sys.path``), so the judge's own ``TMPDIR`` was
    bound, live, into every sandbox it started; ``python -m kstrata`` run from
    a home directory bound that home into the sandbox where an LLM's graph is
    lowered for a prompt, and pytest's rootdir the whole repository
    (red-team round of 2026-12-04)."""
    dirs: set[str] = set()
    exe = Path(python or sys.executable)
    prefixes = {str(p.parent.parent) for p in (exe, exe.resolve())}  # venv root / installation prefix
    started = interpreter_path(str(exe)) + interpreter_path(sys.executable)
    launched = launch_dirs()
    # where neither interpreter answers: this process's sys.path, less how it was started
    found = started or tuple(p for p in sys.path if p and os.path.abspath(p) not in launched)
    prefixes |= {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p}
    for p in found:
        if p and os.path.isdir(p):
            dirs.add(os.path.abspath(p))
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.isdir(p) and os.path.abspath(p) not in launched:
            dirs.add(os.path.abspath(p))
    import kstrata

    dirs.add(str(Path(kstrata.__file__).resolve().parent.parent))
    private = private_dirs()
    for p in prefixes:  # a prefix holding the home (Python installed with --prefix=$HOME): its bin and lib only
        dirs.update([p] if not _holds(p, private) else
                    [os.path.join(p, d) for d in ("bin", "lib", "lib64") if os.path.isdir(os.path.join(p, d))])
    return _minimal({p for p in dirs if os.path.isdir(p) and not _holds(p, private)})


def private_dirs() -> list[str]:
    """The user's folders no sandbox may hold (bind, or bind a folder above):
    the home (``$HOME`` and the account's) and kstrata's cache folder (other
    candidates' kernel caches, tuned schedules), each also as its real path.
    A ``PYTHONPATH`` of ``$HOME`` (or a Python installed with
    ``--prefix=$HOME``) bound the whole home, read-only, into every sandbox:
    a candidate read ``~/.ssh`` (red-team round rt55). What is inside them and
    needed (a virtual environment in the home, the TileLang environment under
    the cache folder) is still bound on its own."""
    import pwd

    from kstrata.measure.roofline import cache_dir

    out: set[str] = set()
    homes = [os.environ.get("HOME", "")]
    try:
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    for p in [*homes, str(cache_dir())]:
        if p and os.path.isabs(p):
            out.update({os.path.abspath(p), os.path.realpath(p)})
    return sorted(out - {"/"})


def _holds(path: str, private: list[str]) -> bool:
    """Whether binding ``path`` shows one of the ``private`` folders (it is one, or lies above one)."""
    paths = {os.path.abspath(path).rstrip("/") or "/", os.path.realpath(path).rstrip("/") or "/"}
    return any(s == p or s.startswith(p.rstrip("/") + "/") for s in private for p in paths)


def _minimal(paths: set[str]) -> list[str]:
    """Drop paths already inside another listed path; never bind a home or the root."""
    out: list[str] = []
    for p in sorted(paths, key=len):
        if p in ("/", "/root", "/home", "/work", "/tmp") or not os.path.exists(p):
            continue
        if any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            continue
        out.append(p)
    return out


def command(argv: list[str], *, python: str | None = None, read_only: list[str] = (),
            env: dict[str, str] | None = None, gpu: bool = False, seccomp_fd: int | None = None,
            memory_mb: int | None = None) -> list[str]:
    """The bubblewrap command line that runs ``argv`` sandboxed.

    Parameters
    ----------
    argv:
        The command inside (e.g. ``[python, "-m", "kstrata.sandbox.child", ...]``).
    python:
        The interpreter, whose environment is bound read-only.
    read_only:
        Extra files or directories bound read-only at the same path (task files).
    env:
        The whole environment inside (``HOME`` and ``TMPDIR`` are ``/tmp``;
        the compiler cache variables are :data:`kstrata.sandbox.kernel_cache.ENV`).
    gpu:
        Bind the NVIDIA device nodes (GPU backends only).
    seccomp_fd:
        A file descriptor holding :func:`seccomp_program` (inherited by bubblewrap).
    memory_mb:
        The candidate's memory limit (MiB): ``/tmp`` and ``/dev/shm`` hold at
        most :data:`TMPFS_SHARE` of it each (at least 64 MiB).
    """
    exe = shutil.which("bwrap") or "bwrap"
    args = base_args(exe, max(64 << 20, int((memory_mb << 20) * TMPFS_SHARE)) if memory_mb else None)
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    links = _system_links()
    binds = [p for p in _SYSTEM_DIRS if os.path.exists(p) and p not in links]
    binds += [p for p in python_dirs(python) if not any(p.startswith(s + "/") for s in ("/usr", "/opt"))]
    binds += [os.path.abspath(p) for p in read_only if p and os.path.exists(p)]
    for p in _minimal(set(binds)):
        args += ["--ro-bind", p, p]
    for p, target in sorted(links.items()):
        args += ["--symlink", target, p]
    if gpu:
        for node in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/*")):
            args += ["--dev-bind", node, node]
    # the root tmpfs bubblewrap builds the mount points in was writable: a file a candidate left in
    # /etc or / outlived it in a zygote's sandbox (red-team round of 2026-12-02). So was /dev (a
    # tmpfs of its own): a file left there, or its /dev/fd and /dev/stdout links replaced, outlived
    # the candidate for every later one the zygote forks, which the scrub of /tmp and /dev/shm never
    # saw (red-team round of 2026-12-04). Not recursive: /tmp and /dev/shm stay writable mounts
    args += ["--remount-ro", "/", "--remount-ro", "/dev"] + _masked(binds) + _masked_runs(binds)
    args += ["--clearenv"]
    from kstrata.sandbox.kernel_cache import ENV as KERNEL_CACHE_ENV

    full_env = {"HOME": "/tmp", "TMPDIR": "/tmp", "PATH": "/usr/local/bin:/usr/bin:/bin",
                **(env or {})}
    full_env["HOME"] = full_env["TMPDIR"] = "/tmp"
    full_env.update(KERNEL_CACHE_ENV)  # compiler caches where the zygote packs them (kernel_cache)
    for k, v in sorted(full_env.items()):
        args += ["--setenv", k, v]
    args += ["--chdir", "/tmp", "--"]
    return args + list(argv)


#: Directories under a bound one that no sandbox sees (an empty read-only tmpfs
#: over each): ``/sys/fs`` holds the host's cgroup trees, whose names (other
#: runs' ``kstrata-<pid>-<id>`` sandboxes, the judge's own cgroup) and counters
#: (their memory, their processes) a candidate read (red-team round of
#: 2026-12-04); nothing a backend runs reads there (CPU topology and caches are
#: under ``/sys/devices``, the GPUs under ``/sys/bus`` and ``/sys/module``).
MASKED_DIRS = ("/sys/fs",)


#: Environment variable naming (``os.pathsep``-separated) the run folders whose
#: secret this process tree holds (:func:`keep_out`); the judge's workers get it.
RUN_DIRS_ENV = "KSTRATA_RUN_DIRS"
#: Directory entries :func:`run_folders` reads under one bound folder, at most.
RUN_SCAN_ENTRIES = 5000
#: How deep below a bound folder :func:`run_folders` looks for run folders.
RUN_SCAN_DEPTH = 3


def keep_out(run_dir: str | os.PathLike[str]) -> None:
    """Name ``run_dir`` (a run whose secret this process reads) in
    :data:`RUN_DIRS_ENV`, so that no sandbox started from here or from its
    workers shows it, wherever it lies (:func:`run_folders`); and in the
    registry of :mod:`kstrata.sandbox.known_runs`, so that no other kstrata
    process's sandbox shows it either."""
    from kstrata.sandbox import known_runs

    path = os.path.realpath(run_dir)
    known = [p for p in os.environ.get(RUN_DIRS_ENV, "").split(os.pathsep) if p]
    if path not in known:
        os.environ[RUN_DIRS_ENV] = os.pathsep.join([*known, path])
    known_runs.remember(path)


def _is_run(path: str) -> bool:
    """A run folder (``run.db``, or a ``secret`` with its ``secret.check``) or a bench folder (``bench.db``)."""
    has = lambda name: os.path.isfile(os.path.join(path, name))  # noqa: E731
    return has("run.db") or has("bench.db") or (has("secret") and has("secret.check"))


def run_folders(binds: list[str]) -> list[str]:
    """The kstrata run and bench folders inside the ``binds`` (none of the
    system directories): those named in :data:`RUN_DIRS_ENV` or in the
    registry of the runs any kstrata process here opened
    (:mod:`kstrata.sandbox.known_runs`, red-team rt57: deeper than the walk),
    and those a bounded walk finds (:func:`_is_run`, at most
    :data:`RUN_SCAN_DEPTH` levels down, reading at most
    :data:`RUN_SCAN_ENTRIES` entries per bound folder, links not followed).
    A run kept inside a folder that is bound (a project on ``PYTHONPATH`` or
    installed editable, whose ``runs/`` held the run) was readable in every
    sandbox: its secret (from which the hidden tests derive), run.db and the
    candidates' sources (red-team round rt55)."""
    from kstrata.sandbox import known_runs

    roots = [b for b in binds if b not in _SYSTEM_DIRS]
    known = [os.path.realpath(p) for p in os.environ.get(RUN_DIRS_ENV, "").split(os.pathsep) if p]
    known += known_runs.remembered()
    found = {k for k in known if any(k.startswith(b.rstrip("/") + "/") for b in roots) and os.path.isdir(k)}
    for root in roots:
        budget, level = RUN_SCAN_ENTRIES, [root]
        for _ in range(RUN_SCAN_DEPTH):
            deeper = []
            for d in level:
                try:
                    with os.scandir(d) as it:
                        for entry in it:
                            budget -= 1
                            if budget < 0:
                                break
                            if entry.is_dir(follow_symlinks=False):
                                (found.add if _is_run(entry.path) else deeper.append)(entry.path)
                except OSError:
                    continue
                if budget < 0:
                    break
            level = deeper
    return sorted(found)


def _masked_runs(binds: list[str]) -> list[str]:
    """bubblewrap options hiding :func:`run_folders` (an empty read-only tmpfs over each)."""
    out: list[str] = []
    for d in run_folders(binds):
        out += ["--tmpfs", d, "--remount-ro", d]
    return out


def _masked(binds: list[str]) -> list[str]:
    """bubblewrap options hiding :data:`MASKED_DIRS` under the ``binds``: an
    empty tmpfs over each, remounted read-only (a writable one would be a
    place where one candidate leaves files for the next)."""
    out: list[str] = []
    for d in MASKED_DIRS:
        if os.path.isdir(d) and any(d.startswith(b.rstrip("/") + "/") for b in binds):
            out += ["--tmpfs", d, "--remount-ro", d]
    return out


# -- seccomp -------------------------------------------------------------------------------
#: x86-64 system calls a candidate process never needs and an escape would
#: (kernel attack surface, namespace and mount changes, other processes'
#: memory); each fails with EPERM. Numbers from Linux's
#: ``arch/x86/entry/syscalls/syscall_64.tbl``; the list follows the default
#: profiles of Docker/Moby and Flatpak.
DENIED_SYSCALLS_X86_64 = {
    "ptrace": 101, "syslog": 103, "acct": 163, "mount": 165, "umount2": 166, "swapon": 167,
    "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "pivot_root": 155, "vhangup": 153,
    "lookup_dcookie": 212, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
    "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    # POSIX message queues live in the IPC namespace, which outlives a candidate in a
    # zygote's sandbox, and cannot be listed without an mqueue mount: refused
    "mq_open": 240, "mq_unlink": 241,
    # priorities and scheduling policies: a candidate reniced its zygote, and every later
    # candidate forked from it ran at nice 19 (red-team round of 2026-12-02)
    "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144, "ioprio_set": 251,
    "sched_setattr": 314,
    # file watches: files bound read-only into every sandbox are the same inodes, and a watch on
    # one sees another sandbox's opens and reads of it, a channel between candidates screened at
    # once (red team rt68); no backend watches files. fanotify needs CAP_SYS_ADMIN (none here)
    "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294,
    "fanotify_init": 300, "fanotify_mark": 301,
    # page-cache residency of the files bound read-only into every sandbox (the same inodes, one
    # page cache): a candidate read it without touching it and passed bits to a later candidate
    # (red team rt88; tests/sandbox/cases/rt88_page_cache_channel). mincore and cachestat read it;
    # process_madvise pages out (MADV_PAGEOUT/COLD by pidfd); Linux AIO reads with RWF_NOWAIT
    # (EAGAIN when not cached) inside an iocb seccomp cannot look at; remap_file_pages is
    # deprecated. No backend uses them. madvise and preadv2/pwritev2 are refused by argument:
    # :data:`PAGE_OUT_MADVICE`, :data:`RWF_NOWAIT`
    "mincore": 27, "cachestat": 451, "process_madvise": 440, "io_setup": 206, "io_submit": 209,
    "remap_file_pages": 216,
}

#: x86-64 system calls that succeed without doing anything (return 0): ``flock``
#: on a file bound read-only into every sandbox was seen by a candidate in
#: another sandbox at the same time (red team rt68: with inotify, a channel for
#: the hidden shapes from a candidate in its hidden stage to one failing in
#: public). A candidate process is the only user of its sandbox's writable
#: directories, so no lock it takes has another process of the candidate's
#: kernels to exclude. (``fcntl`` record locks need a file opened for writing
#: to exclude another reader: the shared files are read-only.)
NOOP_SYSCALLS_X86_64 = {"flock": 73, "fadvise64": 221}
#: (``fadvise64``: ``POSIX_FADV_DONTNEED`` on a file opened read-only evicts its
#: pages from the page cache every sandbox shares, the 0 of rt88's channel; the
#: advice is only a hint, so every advice succeeds and none is taken.)

#: ``madvise`` advice refused (EPERM): ``MADV_COLD`` (20) and ``MADV_PAGEOUT``
#: (21) age or evict the pages of a mapping, those of a shared file too (rt88);
#: the rest (``MADV_DONTNEED``, ``MADV_FREE``, hugepage advice, ... that
#: allocators, torch, TVM and Triton use) is allowed.
PAGE_OUT_MADVICE = {"MADV_COLD": 20, "MADV_PAGEOUT": 21}
#: ``preadv2``/``pwritev2`` flag refused (EPERM): ``RWF_NOWAIT`` fails with
#: EAGAIN where the page is not cached, a read of residency that leaves the
#: cache as it was (rt88). x86-64 numbers and the flags' argument index.
RWF_NOWAIT = 0x8
RWF_SYSCALLS_X86_64 = {"preadv2": 327, "pwritev2": 328}
MADVISE_X86_64 = 28

#: x86-64 system calls refused (EPERM) where kstrata may use only some of the
#: host's CPUs (:func:`affinity_narrowed`: ``taskset``, a pinned lane): a
#: process may widen its own affinity to any CPU of its cpuset, whatever its
#: parent's mask, and a candidate took every CPU of the machine with as many
#: intra-op threads while the baseline ran on the CPUs kstrata was given (red
#: team rt71; tests/sandbox/cases/rt71_cpu_affinity). Nothing a backend runs
#: there pins threads: :func:`kstrata.execute.pool.worker_env` sets
#: ``TVM_BIND_THREADS=0`` under the same condition, and OpenMP binds only when
#: ``OMP_PROC_BIND`` is set.
AFFINITY_SYSCALLS_X86_64 = {"sched_setaffinity": 203}


#: x86-64 system calls refused (EPERM) in a sandbox that no cgroup holds (its
#: memory limited by ``RLIMIT_AS`` alone, :class:`Cgroup`): a memfd written to
#: and never mapped, or a System V segment attached, touched and detached,
#: holds memory that no address space counts. A candidate kept 1536 MiB in a
#: memfd under a 512 MiB limit (red team rt71), as it did in ``/tmp`` before
#: that was sized (:data:`TMPFS_SHARE`); no backend makes either. Not for GPU
#: sandboxes, whose driver is not known to do without them (the judge's
#: resident-memory watch holds those, mapped pages only).
UNCOUNTED_MEMORY_SYSCALLS_X86_64 = {"memfd_create": 319, "shmget": 29}


def affinity_narrowed() -> bool:
    """Whether this process may run on fewer CPUs than the host has
    (:func:`kstrata.execute.cpus.allowed_cpus`; False where the OS cannot say)."""
    from kstrata.execute.cpus import allowed_cpus

    allowed = allowed_cpus()
    return allowed is not None and allowed != set(range(os.cpu_count() or 1))


#: Socket families a candidate process may create (``socket``/``socketpair``'s
#: first argument): UNIX, IPv4 and IPv6 (its own network namespace's loopback)
#: and netlink (glibc's ``getaddrinfo``), each isolated by the sandbox's
#: namespaces. Any other fails with EAFNOSUPPORT, as on a kernel without it:
#: AF_VSOCK is not isolated by a network namespace, and a candidate bound ports
#: of the machine's hypervisor channel, whose other end (CID 2) is the host
#: (red-team round rt55); the rest (packet, crypto, Bluetooth, ...) is kernel
#: attack surface no backend uses. The list of Docker's default profile refuses
#: AF_VSOCK alone.
SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16}
#: x86-64 numbers of the system calls whose first argument is a socket family.
SOCKET_SYSCALLS_X86_64 = {"socket": 41, "socketpair": 53}


def seccomp_program(deny_affinity: bool | None = None, uncounted_memory: bool = False) -> bytes | None:
    """A classic-BPF seccomp filter (``struct sock_filter[]``, as bubblewrap's
    ``--seccomp FD`` reads it) that makes :data:`DENIED_SYSCALLS_X86_64`
    (with ``deny_affinity``, :data:`AFFINITY_SYSCALLS_X86_64` too; by default
    where :func:`affinity_narrowed`; with ``uncounted_memory``,
    :data:`UNCOUNTED_MEMORY_SYSCALLS_X86_64`: for a sandbox no cgroup holds)
    and every x32-ABI call fail with EPERM, :data:`NOOP_SYSCALLS_X86_64` return 0
    without running, a socket of a family not in :data:`SOCKET_FAMILIES` fail
    with EAFNOSUPPORT, ``madvise`` with :data:`PAGE_OUT_MADVICE` and
    ``preadv2``/``pwritev2`` with :data:`RWF_NOWAIT` fail with EPERM, and
    allows the rest; None on other architectures (no filter there)."""
    import errno
    import platform

    if platform.machine() != "x86_64":
        return None
    ld_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, eafnosupport = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.EAFNOSUPPORT
    noop = 0x00050000  # SECCOMP_RET_ERRNO with errno 0: the call returns 0 and does nothing
    audit_arch_x86_64, x32_bit = 0xC000003E, 0x40000000

    def arg(i: int) -> int:  # offsetof(struct seccomp_data, args[i]): its low 32 bits, the int the kernel reads
        return 16 + 8 * i

    if deny_affinity is None:
        deny_affinity = affinity_narrowed()
    nrs = sorted(set(DENIED_SYSCALLS_X86_64.values())
                 | (set(AFFINITY_SYSCALLS_X86_64.values()) if deny_affinity else set())
                 | (set(UNCOUNTED_MEMORY_SYSCALLS_X86_64.values()) if uncounted_memory else set()))
    # (code, jump if true, jump if false, k) with jumps to labels (str) or to the next instruction (0)
    prog: list = [(ld_abs, 0, 0, 4),                      # A = arch
                  (jeq, 0, "eperm", audit_arch_x86_64),    # any other ABI (i386 via int 0x80): refused
                  (ld_abs, 0, 0, 0),                       # A = syscall number
                  (jge, "eperm", 0, x32_bit)]              # x32 numbers: refused
    prog += [(jeq, "eperm", 0, nr) for nr in nrs]
    prog += [(jeq, "noop", 0, nr) for nr in sorted(set(NOOP_SYSCALLS_X86_64.values()))]
    prog += [(jeq, "socket", 0, nr) for nr in SOCKET_SYSCALLS_X86_64.values()]
    prog += [(jeq, "madvise", 0, MADVISE_X86_64)]
    prog += [(jeq, "rwf", 0, nr) for nr in RWF_SYSCALLS_X86_64.values()]
    prog += [(ret, 0, 0, allow),
             "socket", (ld_abs, 0, 0, arg(0))]             # A = family
    prog += [(jeq, "allow", 0, fam) for fam in sorted(set(SOCKET_FAMILIES.values()))]
    prog += [(ret, 0, 0, eafnosupport),
             "madvise", (ld_abs, 0, 0, arg(2))]            # A = advice
    prog += [(jeq, "eperm", 0, adv) for adv in sorted(PAGE_OUT_MADVICE.values())]
    prog += [(ret, 0, 0, allow),
             "rwf", (ld_abs, 0, 0, arg(5)),                # A = flags (fd, iov, iovcnt, pos_l, pos_h, flags)
             (jset, "eperm", 0, RWF_NOWAIT),
             "allow", (ret, 0, 0, allow), "eperm", (ret, 0, 0, eperm), "noop", (ret, 0, 0, noop)]
    return _assemble(prog)


def _assemble(prog: list) -> bytes:
    """Classic-BPF bytes of ``prog``: ``(code, jt, jf, k)`` instructions whose
    jumps are label names (the strings in ``prog``, each naming the instruction
    after it) or 0 (the next instruction)."""
    import struct

    at: dict[str, int] = {}
    ins: list[tuple] = []
    for item in prog:
        if isinstance(item, str):
            at[item] = len(ins)
        else:
            ins.append(item)

    def rel(i: int, j) -> int:
        return at[j] - i - 1 if isinstance(j, str) else j

    out = [(code, rel(i, jt), rel(i, jf), k) for i, (code, jt, jf, k) in enumerate(ins)]
    assert all(0 <= o[1] < 256 and 0 <= o[2] < 256 for o in out)
    return b"".join(struct.pack("<HBBI", *o) for o in out)


# -- cgroups ---------------------------------------------------------------------------
def _own_cgroup() -> dict[str, str]:
    """Controller (or ``""`` for v2) -> this process's cgroup path."""
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                out[c] = path
    except OSError:
        pass
    return out


def _writable(d: Path) -> bool:
    return d.is_dir() and os.access(d, os.W_OK)


@functools.lru_cache(maxsize=1)
def cgroup_kind() -> str | None:
    """``"cgroup-v2"``, ``"cgroup-v1"`` when kstrata may create cgroups with
    memory and pids limits, else None (rlimits are used)."""
    own = _own_cgroup()
    root = Path("/sys/fs/cgroup")
    if "" in own and (root / "cgroup.controllers").exists():
        d = root / own[""].lstrip("/")
        ctrls = (d / "cgroup.subtree_control").read_text().split() if (d / "cgroup.subtree_control").exists() else []
        if _writable(d) and "memory" in ctrls and "pids" in ctrls:
            return "cgroup-v2"
        return None
    if "memory" in own and "pids" in own:
        if _writable(root / "memory" / own["memory"].lstrip("/")) and _writable(root / "pids" / own["pids"].lstrip("/")):
            return "cgroup-v1"
    return None


def _remove_stale() -> None:
    """Delete cgroups left by kstrata processes that died before cleaning up
    (their owner's pid, in the name, no longer exists)."""
    own, root = _own_cgroup(), Path("/sys/fs/cgroup")
    parents = ([root / own[""].lstrip("/")] if "" in own and "memory" not in own else
               [root / c / own[c].lstrip("/") for c in ("memory", "pids") if c in own])
    for parent in parents:
        for d in parent.glob("kstrata-*-*"):
            try:
                pid = int(d.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if not os.path.exists(f"/proc/{pid}"):
                cg = Cgroup([d])
                cg.remove()


def _limit_swap_v1(mem: Path, memory_bytes: int) -> None:
    """In a cgroup-v1 memory cgroup, cap memory and swap together at
    ``memory_bytes`` (``memory.memsw.limit_in_bytes``, where the kernel
    accounts swap), as cgroup v2's ``memory.swap.max`` of 0 does: with
    ``memory.limit_in_bytes`` alone, a candidate past its limit was swapped
    out instead of killed, and took the machine's swap as well (red team
    rt62)."""
    memsw = mem / "memory.memsw.limit_in_bytes"
    if memsw.exists():
        memsw.write_text(str(memory_bytes))


#: How close (bytes) a cgroup's peak memory use must come to its limit to count as reaching it
#: (:meth:`Cgroup.limit_reached`): the kernel charges in pages and batches of pages.
LIMIT_SLACK = 2 << 20


@dataclass
class Cgroup:
    """A cgroup (one per sandbox) with a memory and a process-count limit.

    ``procs`` are the ``cgroup.procs`` files a new process writes itself into
    (before ``exec``, so everything it starts is inside); :meth:`oom_killed`
    tells whether the kernel killed something in it for memory;
    :meth:`remove` kills what is left and deletes it.
    """

    dirs: list[Path] = field(default_factory=list)
    kind: str = ""

    @classmethod
    def create(cls, memory_bytes: int | None, pids: int = DEFAULT_PIDS) -> "Cgroup | None":
        """A new cgroup with the limits, or None where kstrata cannot make one."""
        kind = cgroup_kind()
        if kind is None:
            return None
        _remove_stale()
        own, root, name = _own_cgroup(), Path("/sys/fs/cgroup"), f"kstrata-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        cg = cls(kind=kind)
        try:
            if kind == "cgroup-v2":
                d = root / own[""].lstrip("/") / name
                d.mkdir()
                cg.dirs.append(d)
                (d / "pids.max").write_text(str(pids))
                if memory_bytes:
                    (d / "memory.max").write_text(str(memory_bytes))
                    if (d / "memory.swap.max").exists():
                        (d / "memory.swap.max").write_text("0")
            else:
                mem = root / "memory" / own["memory"].lstrip("/") / name
                pid = root / "pids" / own["pids"].lstrip("/") / name
                for d in (mem, pid):
                    d.mkdir()
                    cg.dirs.append(d)
                (pid / "pids.max").write_text(str(pids))
                if memory_bytes:
                    (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
                    _limit_swap_v1(mem, memory_bytes)
        except OSError:
            cg.remove()
            return None
        return cg

    @property
    def procs(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def enter(self) -> None:
        """Move the calling process into the cgroup (called between fork and exec)."""
        for p in self.procs:
            with open(p, "w") as f:
                f.write(str(os.getpid()))

    def limit_beyond_now(self, memory_bytes: int) -> None:
        """Set the memory limit to ``memory_bytes`` beyond what the cgroup holds
        now (the zygote's interpreter, torch and the backend, shared with every
        process forked from it), as ``RLIMIT_AS`` counts beyond what a
        candidate process maps at its start: a 300 MiB limit counted from zero
        left a candidate 70 MiB (best effort)."""
        for d in self.dirs:
            for used, limit in (("memory.current", "memory.max"), ("memory.usage_in_bytes", "memory.limit_in_bytes")):
                try:
                    now = int((d / used).read_text())
                    if limit == "memory.limit_in_bytes" and (d / "memory.memsw.limit_in_bytes").exists():
                        # memory and swap together, never below the memory limit: raised first, set after
                        (d / "memory.memsw.limit_in_bytes").write_text("-1")
                        (d / limit).write_text(str(memory_bytes + now))
                        _limit_swap_v1(d, memory_bytes + now)
                    else:
                        (d / limit).write_text(str(memory_bytes + now))
                except (OSError, ValueError):
                    continue

    def oom_killed(self) -> bool:
        """True when the kernel killed a process of this cgroup for memory."""
        for d in self.dirs:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                try:
                    for line in (d / name).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == key and int(v) > 0:
                            return True
                except (OSError, ValueError):
                    continue
        return False

    def limit_reached(self) -> bool:
        """True when the cgroup's memory use has reached its own limit: cgroup v2 ``memory.events``
        ``max``/``oom``, or ``memory.peak`` within :data:`LIMIT_SLACK` of ``memory.max``; v1
        ``memory.failcnt``/``memory.memsw.failcnt``, or ``memory.max_usage_in_bytes`` (``memsw`` too)
        within that of its limit (this machine's v1 kernel keeps failcnt at 0 at the limit: its peak
        read 554074112 of a 554074112-byte limit when its OOM killer acted). :meth:`oom_killed`
        counts kills by any OOM killer, the machine's too (the kernel's ``oom_kill`` event is the
        victim's cgroup's however the kill came): a kill without this is the machine running out of
        memory, not the candidate reaching its limit (newcomer nc27: the shipped rmsnorm read
        "exceeded the memory limit" on a hidden test in a run beside other jobs, and was correct when
        verified again)."""
        def num(path: Path) -> int | None:
            try:
                text = path.read_text().strip()
                return None if text == "max" else int(text)
            except (OSError, ValueError):
                return None

        for d in self.dirs:
            try:
                if (d / "memory.events").exists():
                    for line in (d / "memory.events").read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k in ("max", "oom") and int(v) > 0:
                            return True
            except (OSError, ValueError):
                pass
            for count in ("memory.failcnt", "memory.memsw.failcnt"):
                n = num(d / count)
                if n:
                    return True
            for peak, limit in (("memory.peak", "memory.max"), ("memory.max_usage_in_bytes", "memory.limit_in_bytes"),
                                ("memory.memsw.max_usage_in_bytes", "memory.memsw.limit_in_bytes")):
                used, cap = num(d / peak), num(d / limit)
                if used is not None and cap is not None and used >= cap - LIMIT_SLACK:
                    return True
        return False

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup."""
        import signal

        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                try:
                    (d / "cgroup.kill").write_text("1")
                    continue
                except OSError:
                    pass
            try:
                for line in (d / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(line), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
            except OSError:
                pass

    def remove(self) -> None:
        """Kill what is left and delete the cgroup directories (best effort)."""
        import time

        self.kill_all()
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.dirs = []

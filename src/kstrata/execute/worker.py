"""The worker process: ``python -m kstrata.execute.worker RFD WFD [MEMORY_MB]``.

It isolates itself (new network namespace where permitted, address-space
limit), says hello, then serves requests ``("call", "module:function", args,
kwargs)`` one at a time until its pipe closes. Only the standard library is
imported here, so a worker can run in another virtual environment where just
``kstrata`` is importable.
"""

from __future__ import annotations

import ctypes
import faulthandler
import importlib
import os
import resource
import signal
import sys
import time
import traceback

from kstrata.execute.protocol import ChannelClosed, recv, send

CLONE_NEWNET = 0x40000000


def isolate_network() -> tuple[bool, str]:
    """Move this process into a new, empty network namespace (Linux, needs
    CAP_SYS_ADMIN or an unprivileged user namespace). Returns (done, reason)."""
    if not sys.platform.startswith("linux"):
        return False, f"network namespaces need Linux (this is {sys.platform})"
    try:
        if hasattr(os, "unshare"):  # Python >= 3.12
            os.unshare(os.CLONE_NEWNET)
            return True, ""
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            return False, f"unshare(CLONE_NEWNET) failed: {os.strerror(err)}"
        return True, ""
    except (OSError, AttributeError) as e:
        return False, f"unshare(CLONE_NEWNET) failed: {e}"


def limit_memory(memory_mb: int) -> None:
    """Cap this process's address space at ``memory_mb`` MiB (RLIMIT_AS)."""
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def resolve(target: str):
    """``"pkg.module:function"`` -> the function object."""
    module_name, sep, attr = target.partition(":")
    if not sep:
        raise ValueError(f"call target {target!r} must look like 'module:function'")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "out of memory" in text or "std::bad_alloc" in text
    )


def serve(rfd: int, wfd: int) -> None:
    """Answer requests until the parent closes the pipe."""
    while True:
        try:
            request = recv(rfd)
        except ChannelClosed:  # the pool closed, or the kstrata process died
            end_group()
            return
        _, target, args, kwargs = request
        start = time.perf_counter()
        try:
            value = resolve(target)(*args, **kwargs)
            reply = ("ok", value, "", "")
        except BaseException as e:  # noqa: BLE001 - every failure (even SystemExit) is data
            kind = "oom" if _is_oom(e) else "exception"
            reply = (kind, None, f"{type(e).__name__}: {e}", traceback.format_exc())
        wall = time.perf_counter() - start
        try:
            send(wfd, reply + (wall,))
        except Exception as e:  # noqa: BLE001 - an unpicklable result is the callee's bug
            send(wfd, ("exception", None, f"result not picklable: {type(e).__name__}: {e}",
                       traceback.format_exc(), wall))


def end_group() -> None:
    """SIGKILL this worker's process group (itself included) when it leads one,
    as the pool starts it: what it started (TVM's ``popen_worker`` builders and
    runners, compilers, shells' background jobs) ends with it."""
    if os.getpgrp() == os.getpid():
        try:
            os.killpg(os.getpid(), signal.SIGKILL)
        except OSError:
            pass


def exit_with_parent(interval_s: float = 1.0) -> None:
    """Exit when the process that started this worker is gone (reparented).

    A worker busy in a candidate that never returns would otherwise outlive a
    kstrata process killed by Ctrl-C or ``timeout`` and spin forever. A daemon
    thread polls ``os.getppid()`` (``PR_SET_PDEATHSIG`` would fire when the
    *thread* that forked the worker exits, and pools start workers from
    evaluation threads). A worker leads its own process group (the pool
    starts it so): the whole group is killed, so what the worker started
    (TVM's ``popen_worker`` builders and runners, compilers) ends with it
    instead of running on, reparented to init (issue #23)."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            if os.getppid() != parent:
                end_group()
                os._exit(1)

    threading.Thread(target=watch, name="kstrata-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # Ctrl-C reaches the whole foreground process group: the kstrata process
    # handles it (and ends its workers), a worker prints no traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    rfd, wfd = int(argv[0]), int(argv[1])
    faulthandler.enable()  # a segfault's Python traceback lands in the worker log
    memory_mb = int(argv[2]) if len(argv) > 2 and argv[2] != "0" else None
    isolate = os.environ.pop("KSTRATA_WORKER_NO_NETNS", "") != "1"
    net_ok, net_reason = isolate_network() if isolate else (False, "disabled by the parent")
    if memory_mb:
        limit_memory(memory_mb)
    send(wfd, ("hello", os.getpid(), net_ok, net_reason, sys.version.split()[0]))
    serve(rfd, wfd)


if __name__ == "__main__":
    main()

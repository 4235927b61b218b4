"""Red-team round rt90 (sandbox): the clean page-cache primitives of rt88's channel are refused.

Files bound read-only into every sandbox share the host's page cache; rt88's writer cleared a page with
posix_fadvise(DONTNEED) and its reader read residency with cachestat, mincore or preadv2(RWF_NOWAIT)
(tests/sandbox/cases/rt88_page_cache_channel). Each test fails before rt90's seccomp rules."""

from __future__ import annotations

import ast
import errno
import os
from pathlib import Path

import pytest

from kstrata.sandbox import policy, status
from test_redteam_rt55 import _bpf

CASE = Path(__file__).resolve().parent / "cases" / "rt88_page_cache_channel"
ALLOW, EPERM, NOOP = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000

sandboxed = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def test_the_seccomp_program_refuses_reading_and_evicting_shared_page_cache():
    """mincore, cachestat, process_madvise, Linux AIO and remap_file_pages fail with EPERM; fadvise64
    returns 0 and does nothing; madvise with MADV_COLD/MADV_PAGEOUT and preadv2/pwritev2 with RWF_NOWAIT
    fail with EPERM while the rest of madvise's advice and of their flags stays allowed."""
    if policy.seccomp_program() is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    run = _bpf(policy.seccomp_program())
    for nr in (27, 451, 440, 206, 209, 216):  # mincore cachestat process_madvise io_setup io_submit remap_file_pages
        assert run(nr, 3) == EPERM, nr
    assert run(221, 3, args=(0, 4096, 4)) == NOOP  # fadvise64(fd, off, len, POSIX_FADV_DONTNEED)
    for advice, want in ((20, EPERM), (21, EPERM), (4, ALLOW), (8, ALLOW), (14, ALLOW), (3, ALLOW), (22, ALLOW)):
        assert run(28, 0, args=(4096, advice)) == want, advice  # madvise(addr, len, advice)
    for nr in (327, 328):  # preadv2/pwritev2(fd, iov, iovcnt, pos_l, pos_h, flags)
        assert run(nr, 3, args=(0, 1, 0, 0, 0x8)) == EPERM and run(nr, 3, args=(0, 1, 0, 0, 0x9)) == EPERM
        assert run(nr, 3, args=(0, 1, 0, 0, 0)) == ALLOW and run(nr, 3, args=(0, 1, 0, 0, 0x10)) == ALLOW
    assert run(0, 3) == ALLOW and run(101, 0) == EPERM  # read allowed, ptrace refused as before


def _resident(path: str, offset: int) -> bool:
    """Whether the host has the page at ``offset`` of ``path`` cached (this process is not filtered)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(64)], offset, os.RWF_NOWAIT)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@sandboxed
def test_a_candidate_can_neither_evict_nor_read_residency_of_shared_pages():
    """In a candidate process, DONTNEED on pages of a file bound into every sandbox leaves them cached
    (seen from the host), and cachestat, mincore, RWF_NOWAIT, MADV_COLD/PAGEOUT and process_madvise fail
    with EPERM, while madvise(MADV_DONTNEED) and a plain preadv2 work. Before rt90 the pages left the cache
    and cachestat/mincore/RWF_NOWAIT read which did (rt88's reader got the writer's 16 bits)."""
    if policy.seccomp_program() is None:
        pytest.skip("seccomp filter is built for x86-64 only")
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import client
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import candidate_process, task_record

    task = resolve_task("softmax")
    text = (CASE / "common.py").read_text() + "\n" + (CASE / "primitives.py").read_text()
    p = fresh(candidate_process(task, get_backend("pytorch"), False, None))
    try:
        h, _ = p.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": {"source": text},
                          "shape": dict(task.small_shapes[0]), "seed": 0, "init": [], "poison": 0}, [], timeout_s=180)
    finally:
        p.close()
        client.close_zygotes()
    msg = str(h.get("message", ""))
    assert "RES " in msg, msg[-2000:]
    res = ast.literal_eval(msg.split("RES ", 1)[1].split(" FILE ", 1)[0])
    path, base = msg.split(" FILE ", 1)[1].split()[:2]
    e = -errno.EPERM
    assert res == {"fadvise": [None] * 4, "cachestat": e, "mincore": e, "madvise_cold": e, "madvise_pageout": e,
                   "madvise_dontneed": 0, "process_madvise": e, "io_setup": e, "preadv2_nowait": e,
                   "preadv2": 0}, res
    if os.path.exists(path):  # the same file on the host (the environment is bound at its own path)
        assert all(_resident(path, int(base) + 4096 * i) for i in (0, 2, 4, 6)), "DONTNEED evicted a shared page"

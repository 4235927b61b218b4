"""One candidate's compiler caches, kept across its own processes and no one else's (issue #18).

A zygote's sandbox empties its ``/tmp`` after every candidate process
(:mod:`kstrata.sandbox.scrub`), so Triton's on-disk cache started empty in
each of them and every shape was JIT-compiled again in every process of the
same candidate: screening, full scope, timing, the final round, re-times
(about 1 s per specialization on the H200 host; a full-scope softmax
verification took 58 s cold and 15.6 s warm).

Here the caches live in the sandbox's private ``/tmp`` under :data:`ROOT`
(``TRITON_CACHE_DIR``, ``TILELANG_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR``
point there, :data:`ENV`), and they are carried from one process of a
candidate to the next by trusted code only:

* when a candidate process ends, its zygote (which runs no candidate code)
  kills the sandbox's processes, then packs :data:`ROOT` (:func:`pack`: regular
  files only, no links, at most :data:`PACK_LIMIT` bytes and
  :data:`MAX_FILES` files) into a memfd the judge passed with the ``reap``
  request, and only then empties ``/tmp``;
* the judge keeps that archive as one file per candidate under
  ``<kstrata cache dir>/kernel-cache/<key>.kc`` (:func:`store`), the key a
  hash of the backend, the candidate's sources and the task (:func:`candidate_key`);
  the whole folder is held under :func:`total_limit` bytes, least recently
  used first out (:func:`evict`);
* when the next process of the same key is forked, the judge passes that
  file (opened read-only) with the ``fork`` request, and the zygote unpacks
  it into :data:`ROOT` before it forks (:func:`unpack`: relative paths only).

A candidate's verifications share one archive and its timings another
(:data:`ROLES`): a verification runs hidden tests, and what its process saw of
them could be in what it leaves. So the archive is marked once a process that
ran hidden tests wrote it (:func:`saw_hidden`); a verification that starts
from a marked archive has its failures' details withheld, as a hidden test's
(only the verdict and check are told: an honest candidate that passed its
screening passes the same public tests again), and no timing process, whose
numbers reach the agent, ever starts from a verification's archive.

The candidate never gets a host path, writable or not: candidate A cannot
read or write candidate B's archive, a process without a key (a baseline,
an isolated call) gets none, and what a candidate can put in the host's
cache folder is bounded by :data:`PACK_LIMIT` per candidate. What a
candidate's archive holds is its own processes' output, loaded by its own
later processes only (as its source is).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kstrata.atomic import write_atomic

#: Where the caches live inside a sandbox (its private ``/tmp``).
ROOT = "/tmp/kstrata-kernel-cache"
#: The compiler cache variables every sandboxed process gets (:func:`kstrata.sandbox.policy.command`).
ENV = {"TRITON_CACHE_DIR": f"{ROOT}/triton", "TILELANG_CACHE_DIR": f"{ROOT}/tilelang",
       "TORCHINDUCTOR_CACHE_DIR": f"{ROOT}/inductor"}
#: Most bytes of one candidate's archive (larger caches are not kept at all).
PACK_LIMIT = 128 << 20
#: Most files of one candidate's archive.
MAX_FILES = 20000
#: Default cap of the whole host folder (``KSTRATA_KERNEL_CACHE_MB`` sets it).
DEFAULT_TOTAL_MB = 4096
_MAGIC = b"KSKC1\n"


#: The roles whose processes share a cache: a candidate's verifications share one, its timings another.
ROLES = ("verify", "time")


def candidate_key(backend: str, sources: dict[str, str], role: str = "verify", task: str = "") -> str:
    """The cache key of one candidate in one role (:data:`ROLES`) on one task:
    sha256 (hex, 64 characters) of its backend's name, its sources (``{level:
    text}``), the role and the task's digest (``task``), as JSON with sorted
    keys. The same file verified against another task gets another archive:
    one written after the first task's hidden tests withheld the second
    task's failure details and said "an earlier verification of the same
    candidate passed the same public tests", which was false there
    (newcomer nc15).

    Raises
    ------
    ValueError
        For a role not in :data:`ROLES`.
    """
    if role not in ROLES:
        raise ValueError(f"unknown kernel-cache role {role!r}; expected one of {ROLES}")
    text = json.dumps({"backend": backend, "sources": {str(k): str(v) for k, v in sources.items()}, "role": role,
                       "task": task}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def folder() -> Path:
    """The host folder of the archives: ``<kstrata cache dir>/kernel-cache``
    (:func:`kstrata.measure.roofline.cache_dir`, ``$KSTRATA_CACHE_DIR``)."""
    from kstrata.measure.roofline import cache_dir

    return cache_dir() / "kernel-cache"


def archive_path(key: str) -> Path:
    """The archive of ``key`` (a :func:`candidate_key`).

    Raises
    ------
    ValueError
        When ``key`` is not 64 hex digits.
    """
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError(f"not a candidate key: {key!r}")
    return folder() / f"{key}.kc"


#: Free space kept on the cache folder's disk (bytes), at least: an archive that would leave less is not
#: written (:func:`disk_reserve`).
RESERVE_MIN = 1 << 30
#: ... and at least this share of the disk.
RESERVE_SHARE = 0.05


def disk_reserve(total: int) -> int:
    """Bytes of a disk of ``total`` bytes that no archive may take:
    :data:`RESERVE_MIN` or :data:`RESERVE_SHARE` of it, the larger. The
    archives are the candidates' data (any files their processes leave under
    :data:`ROOT`, up to :data:`PACK_LIMIT` each), and the folder's cap
    (:func:`total_limit`, 4 GiB) did not look at the disk: a candidate that
    passed its tests left 128 MiB of random bytes per role, and a run of such
    candidates filled a disk with less free than the cap, where run.db and
    the user's own files are written (red-team round rt55)."""
    return max(RESERVE_MIN, int(total * RESERVE_SHARE))


def room_for(path: Path, size: int) -> bool:
    """Whether ``size`` more bytes fit on ``path``'s disk and leave its
    :func:`disk_reserve` free (False where the disk cannot be read)."""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return False
    return usage.free - size >= disk_reserve(usage.total)


def total_limit() -> int:
    """Bytes the host folder may hold: ``KSTRATA_KERNEL_CACHE_MB`` (MiB, a
    whole number; 0 turns the cache off) or :data:`DEFAULT_TOTAL_MB`."""
    v = os.environ.get("KSTRATA_KERNEL_CACHE_MB", "").strip()
    return (int(v) if v.isdigit() else DEFAULT_TOTAL_MB) << 20


def open_archive(key: str) -> int | None:
    """A read-only file descriptor of ``key``'s archive (the caller closes
    it), or None when there is none or the cache is off."""
    if total_limit() <= 0:
        return None
    path = archive_path(key)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        os.utime(path)  # recently used: evicted last
    except OSError:
        pass
    return fd


def saw_hidden(key: str) -> bool:
    """Whether ``key``'s archive was written (or grown) by a process that ran
    hidden tests: what such a process learned of them could be in it, so a
    later process that starts from it must not be heard in detail
    (:func:`kstrata.verify.runner.run_protocol` withholds its failures'
    details, as a hidden test's)."""
    try:
        return archive_path(key).with_suffix(".hidden").exists()
    except ValueError:
        return False


#: What :func:`store` did, newest last (at most 100 entries): dicts with
#: ``key``, ``files`` (in the archive), ``new`` (files the process wrote or
#: rewrote, none restored unchanged), ``bytes`` and ``new_names`` (the first
#: 10 new files), as the zygote reported them.
HISTORY: list[dict] = []


#: Serializes :func:`store`'s read-merge-write of one folder (processes of one candidate end in
#: several threads at once: :mod:`kstrata.verify.warm_loads`).
_STORE_LOCK = threading.Lock()


def store(key: str, fd: int, report: dict | None = None, hidden: bool = False) -> bool:
    """Keep the archive a zygote wrote into ``fd`` (a memfd, read from its
    start; at most :data:`PACK_LIMIT` bytes plus its index) as ``key``'s,
    merged with the one kept (:func:`merge`: the files of both, the new
    one's where both have a path; the new one alone when the union is over
    the limits), then :func:`evict` beyond :func:`total_limit`. Processes of
    one candidate that ran side by side (:mod:`kstrata.verify.warm_loads`)
    each started from the same archive; the union keeps what every one of
    them compiled.
    An empty or malformed archive, one where nothing changed
    (``report["new"] == 0`` and an archive exists), or one that would leave
    less than :func:`disk_reserve` free on the disk is not written. Returns
    whether a file was written. ``hidden``: the process ran hidden tests, or
    started from an archive that :func:`saw_hidden` (marked so, before the
    archive is written, and never unmarked). Never raises for a bad archive
    (it is the candidate's data)."""
    try:
        with _STORE_LOCK:
            return _store(key, fd, report, hidden)
    except (OSError, ValueError):
        return False


def _store(key: str, fd: int, report: dict | None, hidden: bool) -> bool:
    rep = report if isinstance(report, dict) else {}
    entry = {k: rep.get(k) for k in ("files", "new", "bytes") if isinstance(rep.get(k), int)}
    names = rep.get("new_names")
    if isinstance(names, list):
        entry["new_names"] = [str(n)[:200] for n in names[:10]]
    HISTORY.append({"key": key, **entry})
    del HISTORY[:-100]
    if total_limit() <= 0:
        return False
    path = archive_path(key)
    if hidden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".hidden").touch()
    if entry.get("new") == 0 and path.exists():
        return False
    size = os.fstat(fd).st_size
    if size <= len(_MAGIC) or size > PACK_LIMIT + (8 << 20):
        return False
    os.lseek(fd, 0, os.SEEK_SET)
    with os.fdopen(os.dup(fd), "rb") as f:
        data = f.read(size)
    if not data.startswith(_MAGIC):
        return False
    try:
        data = merge(path.read_bytes(), data)
    except OSError:
        pass  # none kept yet
    path.parent.mkdir(parents=True, exist_ok=True)
    if not room_for(path.parent, len(data)):  # the disk's last free space is not the candidates'
        return False
    try:
        write_atomic(path, data)
    except OSError:
        return False
    evict(total_limit(), keep=path)
    return True


class _Malformed(Exception):
    """An archive part :func:`_read_entries` refuses."""


def _read_entries(f: BinaryIO, limit: int) -> Iterator[tuple[str, bytes]]:
    """``(relative path, bytes)`` of the archive in ``f`` (as :func:`pack`
    writes it), in order, read as they are yielded.

    Raises
    ------
    _Malformed
        At the first part that is wrong: a bad magic or index, more than
        :data:`MAX_FILES` files, a path that is absolute, has ``..`` or is
        otherwise unsafe (:func:`_safe`), sizes past ``limit`` bytes in all or
        past the data. What was yielded before stays valid.
    """
    if f.read(len(_MAGIC)) != _MAGIC:
        raise _Malformed
    head = f.read(8)
    if len(head) != 8:
        raise _Malformed
    (n,) = struct.unpack("<Q", head)
    if n > (64 << 20):
        raise _Malformed
    try:
        index = json.loads(f.read(n))
    except ValueError:
        raise _Malformed from None
    if not isinstance(index, list) or len(index) > MAX_FILES:
        raise _Malformed
    total = 0
    for item in index:
        if not (isinstance(item, list) and len(item) == 2 and _safe(item[0]) and type(item[1]) is int
                and item[1] >= 0):
            raise _Malformed
        rel, size = item
        total += size
        if total > limit:
            raise _Malformed
        data = f.read(size)
        if len(data) != size:
            raise _Malformed
        yield rel, data


def entries(data: bytes) -> list[tuple[str, bytes]] | None:
    """The ``(relative path, bytes)`` of an archive (as :func:`pack` writes
    it), or None when any part is malformed (:func:`_read_entries`, with
    :data:`PACK_LIMIT` bytes in all)."""
    try:
        return list(_read_entries(io.BytesIO(data), PACK_LIMIT))
    except _Malformed:
        return None


def _archive(files: list[tuple[str, bytes]]) -> bytes:
    index = json.dumps([[rel, len(b)] for rel, b in files]).encode()
    return b"".join([_MAGIC, struct.pack("<Q", len(index)), index] + [b for _, b in files])


def merge(old: bytes, new: bytes) -> bytes:
    """One archive with the files of ``old`` and ``new`` (``new``'s where
    both hold a path), in ``old``'s order then ``new``'s additions. ``new``
    alone when ``old`` is malformed or the union exceeds :data:`PACK_LIMIT`
    bytes or :data:`MAX_FILES` files; ``new`` unchanged when it is
    malformed (:func:`store` checks what it writes no further: an archive
    is only ever unpacked by :func:`unpack`, which refuses what is unsafe)."""
    a, b = entries(old), entries(new)
    if a is None or b is None:
        return new
    files = dict(a)
    files.update(b)
    if len(files) > MAX_FILES or sum(len(v) for v in files.values()) > PACK_LIMIT:
        return new
    return _archive(list(files.items()))


def evict(limit: int, keep: Path | None = None) -> list[Path]:
    """Delete the least recently used archives until the folder holds at
    most ``limit`` bytes (``keep`` last of all); returns what was deleted."""
    d = folder()
    try:
        files = [(p.stat().st_mtime, p.stat().st_size, p) for p in d.glob("*.kc")]
    except OSError:
        return []
    total = sum(s for _, s, _ in files)
    gone = []
    for _, size, p in sorted(files, key=lambda t: (t[2] == keep, t[0])):
        if total <= limit:
            break
        try:
            p.unlink()
            p.with_suffix(".hidden").unlink(missing_ok=True)
        except OSError:
            continue
        total -= size
        gone.append(p)
    return gone


# -- inside the sandbox (the zygote; no candidate code runs there) ------------------------------------
def pack(fd: int, root: str = ROOT, restored: dict[str, tuple[int, int]] | None = None,
         limit: int = PACK_LIMIT, max_files: int = MAX_FILES) -> dict:
    """Write ``root``'s regular files into ``fd`` as an archive: :data:`_MAGIC`,
    an 8-byte little-endian index length, the JSON index ``[[relative path,
    size], ...]``, then the files' bytes in order. Links, devices, FIFOs and
    sockets are skipped (never followed or opened blocking); nothing is
    written when the files exceed ``limit`` bytes or ``max_files``, or the
    tree holds more than four times ``max_files`` entries of any kind.
    ``restored``: what :func:`unpack` wrote (path -> (size, mtime_ns)), to
    count the files the processes wrote since. Returns ``{"files", "new",
    "bytes", "new_names"}`` (``files`` 0 when nothing was written;
    ``new_names``: the first 10 new files' paths)."""
    entries: list[tuple[str, bytes]] = []
    new_names: list[str] = []
    total = new = 0
    base = Path(root)
    if not base.is_dir() or base.is_symlink():
        return {"files": 0, "new": 0, "bytes": 0}
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        seen += 1 + len(dirnames) + len(filenames)  # empty directories and links cost a walk too
        if seen > 4 * max_files:
            return {"files": 0, "new": 0, "bytes": 0, "over": True}
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                fh = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                st = os.fstat(fh)
                if not stat.S_ISREG(st.st_mode):
                    continue
                total += st.st_size
                if total > limit or len(entries) >= max_files:
                    return {"files": 0, "new": 0, "bytes": 0, "over": True}
                chunks, left = [], st.st_size
                while left > 0:
                    b = os.read(fh, min(left, 1 << 20))
                    if not b:
                        break
                    chunks.append(b)
                    left -= len(b)
                data = b"".join(chunks)
            finally:
                os.close(fh)
            rel = os.path.relpath(path, root)
            if (restored or {}).get(rel) != (st.st_size, st.st_mtime_ns):
                new += 1
                if len(new_names) < 10:
                    new_names.append(rel[:200])
            entries.append((rel, data))
    if not entries:
        return {"files": 0, "new": 0, "bytes": 0}
    index = json.dumps([[rel, len(data)] for rel, data in entries]).encode()
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    out = [_MAGIC, struct.pack("<Q", len(index)), index] + [data for _, data in entries]
    for part in out:
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view):]
    return {"files": len(entries), "new": new, "bytes": sum(len(d) for _, d in entries), "new_names": new_names}


def _safe(rel: object) -> bool:
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel or len(rel) > 1024:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def unpack(fd: int, root: str = ROOT, limit: int = PACK_LIMIT) -> dict[str, tuple[int, int]]:
    """Write the archive in ``fd`` (as :func:`pack` made it) under ``root``,
    streaming; a malformed part (:func:`_read_entries`: an absolute path,
    ``..``, beyond ``limit`` bytes, ...) ends the unpacking (what was written
    stays). Returns path -> (size, mtime_ns) of the files written (for
    :func:`pack`'s count of new files)."""
    written: dict[str, tuple[int, int]] = {}
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)
        try:
            for rel, data in _read_entries(f, limit):
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                try:
                    fh = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                except OSError:
                    continue
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fh, view):]
                    st = os.fstat(fh)
                finally:
                    os.close(fh)
                written[rel] = (st.st_size, st.st_mtime_ns)
        except _Malformed:
            pass
    return written

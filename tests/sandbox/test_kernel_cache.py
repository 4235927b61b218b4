"""A candidate's compiler caches persist across its own sandboxed processes and
reach no other candidate (:mod:`kstrata.sandbox.kernel_cache`, issue #18).

The candidates here are ``pytorch`` ones that write a fake cache entry into
``$TRITON_CACHE_DIR`` when they load and report (as their load error) what
they found there: no Triton compile is needed, so these run on a CPU."""

from __future__ import annotations

import json
import os

import pytest

from kstrata.sandbox import kernel_cache, status

pytestmark = [pytest.mark.usefixtures("keep_idle_processes"), pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")]

#: a candidate that lists $TRITON_CACHE_DIR (recursively), writes ``<tag>-<n>`` there and fails its load
#: with what it found (so the judge sees it), where the listing is the load error's message
SNOOP = '''
import json, os
import torch
import torch.nn as nn

TAG = "{tag}"
d = os.environ["TRITON_CACHE_DIR"]
found = sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d) for f in fs)
os.makedirs(os.path.join(d, "k" + TAG), exist_ok=True)
with open(os.path.join(d, "k" + TAG, TAG + "-" + str(len(found))), "w") as f:
    f.write("compiled by " + TAG)
raise RuntimeError("FOUND " + json.dumps(found))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
'''


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("KSTRATA_KERNEL_CACHE_MB", raising=False)
    return tmp_path / "kernel-cache"


def _found(task, sources: dict[str, str]) -> list[str]:
    """Start one candidate process with ``sources``' kernel cache, load them, return what they found."""
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox.client import fresh
    from kstrata.verify.runner import candidate_process, task_record

    b = get_backend("pytorch")
    shape = dict(task.small_shapes[0])
    proc = fresh(candidate_process(task, b, False, sources))
    try:
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": sources,
                             "shape": shape, "seed": 0, "init": [], "poison": 0}, [], timeout_s=120)
    finally:
        proc.close()
    msg = str(h.get("message", ""))
    assert "FOUND " in msg, h
    return json.loads(msg.split("FOUND ", 1)[1].splitlines()[0])


def test_one_candidates_processes_share_its_cache_and_no_other_candidate_sees_it(cache_home):
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("softmax")
    a = {"source": SNOOP.format(tag="A")}
    b = {"source": SNOOP.format(tag="B")}
    assert _found(task, a) == []                      # A's first process: cold
    assert _found(task, a) == ["kA/A-0"]              # A's second process: what its first wrote
    assert _found(task, b) == []                      # B (the same zygote): nothing of A's
    assert _found(task, a) == ["kA/A-0", "kA/A-1"]    # A again: its own entries only
    assert _found(task, b) == ["kB/B-0"]
    names = sorted(p.name for p in cache_home.iterdir())
    assert names == sorted(f"{kernel_cache.candidate_key('pytorch', s, task=task.digest)}.kc" for s in (a, b))
    new = [h["new"] for h in kernel_cache.HISTORY[-5:]]
    assert new == [1, 1, 1, 1, 1]  # each process wrote one entry, restored ones came back unchanged


def test_a_process_without_a_key_gets_no_cache(cache_home):
    """Baselines and isolated calls (no key) start empty and leave nothing in the host folder."""
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import candidate_process, task_record

    task = resolve_task("softmax")
    a = {"source": SNOOP.format(tag="A")}
    assert _found(task, a) == []
    proc = fresh(candidate_process(task, get_backend("pytorch"), False, None))
    try:
        h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": a,
                             "shape": dict(task.small_shapes[0]), "seed": 0, "init": [], "poison": 0}, [],
                            timeout_s=120)
    finally:
        proc.close()
    assert "FOUND []" in str(h.get("message")), h
    assert len(list(cache_home.glob("*.kc"))) == 1


def test_the_cache_can_be_turned_off(cache_home, monkeypatch):
    from kstrata.tasks.loader import resolve_task

    monkeypatch.setenv("KSTRATA_KERNEL_CACHE_MB", "0")
    task = resolve_task("softmax")
    a = {"source": SNOOP.format(tag="A")}
    assert _found(task, a) == []
    assert _found(task, a) == []
    assert not cache_home.exists() or not list(cache_home.glob("*.kc"))


# -- the archive format, without a sandbox -------------------------------------------------------------
def _memfd() -> int:
    return os.memfd_create("t", os.MFD_CLOEXEC)


def test_pack_skips_links_and_special_files_and_unpack_refuses_escapes(tmp_path):
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.bin").write_bytes(b"\x00\x01" * 100)
    (root / "link").symlink_to("/etc/passwd")
    os.mkfifo(root / "fifo")
    fd = _memfd()
    try:
        rep = kernel_cache.pack(fd, str(root))
        assert rep == {"files": 1, "new": 1, "bytes": 200, "new_names": ["d/f.bin"]}
        out = tmp_path / "out"
        written = kernel_cache.unpack(fd, str(out))
        assert list(written) == ["d/f.bin"] and (out / "d" / "f.bin").read_bytes() == b"\x00\x01" * 100
        # restored unchanged: not new
        assert kernel_cache.pack(fd, str(out), restored=written)["new"] == 0
    finally:
        os.close(fd)
    for bad in ("../evil", "/abs", "a/../../evil", "", "a//b"):
        index = json.dumps([[bad, 1]]).encode()
        fd = _memfd()
        try:
            os.write(fd, b"KSKC1\n" + len(index).to_bytes(8, "little") + index + b"x")
            assert kernel_cache.unpack(fd, str(tmp_path / "u")) == {}
        finally:
            os.close(fd)
    assert not (tmp_path / "evil").exists()


def test_pack_writes_nothing_over_its_limit(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "big").write_bytes(b"x" * 1000)
    fd = _memfd()
    try:
        assert kernel_cache.pack(fd, str(root), limit=999)["files"] == 0
        assert os.fstat(fd).st_size == 0
        assert kernel_cache.store("0" * 64, fd, {"files": 0, "new": 0, "bytes": 0}) is False
    finally:
        os.close(fd)


def test_eviction_keeps_the_folder_under_its_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    d = kernel_cache.folder()
    d.mkdir(parents=True)
    for i in range(5):
        p = d / f"{i:064x}.kc"
        p.write_bytes(b"x" * 1000)
        os.utime(p, (1000 + i, 1000 + i))
    gone = kernel_cache.evict(2500)
    assert sorted(p.name[-5:-3] for p in gone) == ["00", "01", "02"]  # the least recently used first
    assert len(list(d.glob("*.kc"))) == 2


def test_keys_differ_by_backend_and_source_and_are_checked():
    k = kernel_cache.candidate_key("triton", {"source": "a"})
    assert k != kernel_cache.candidate_key("triton", {"source": "b"})
    assert k != kernel_cache.candidate_key("triton-interp", {"source": "a"})
    assert k != kernel_cache.candidate_key("triton", {"source": "a"}, task="another task's digest")
    with pytest.raises(ValueError):
        kernel_cache.archive_path("../" + k[:61])


#: a candidate that leaves links, a FIFO and a deep tree in its cache, then reports what it found (as SNOOP)
PLANTS = '''
import json, os
import torch
import torch.nn as nn

d = os.environ["TRITON_CACHE_DIR"]
found = sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d) for f in fs)
os.makedirs(d, exist_ok=True)
if not found:
    os.symlink("/etc/passwd", os.path.join(d, "link"))
    os.symlink("/", os.path.join(d, "rootlink"))
    os.mkfifo(os.path.join(d, "fifo"))
    deep = os.path.join(d, *["x"] * 100)
    os.makedirs(deep)
    with open(os.path.join(deep, "f"), "w") as f:
        f.write("deep")
    with open(os.path.join(d, "plain"), "w") as f:
        f.write("plain")
raise RuntimeError("FOUND " + json.dumps(found))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
'''


def test_links_and_special_files_do_not_come_back(cache_home):
    from kstrata.tasks.loader import resolve_task

    task = resolve_task("softmax")
    a = {"source": PLANTS}
    assert _found(task, a) == []
    assert _found(task, a) == ["plain", "/".join(["x"] * 100 + ["f"])]  # regular files only


def test_an_archive_written_after_hidden_tests_stays_marked(cache_home):
    """A process that ran hidden tests marks its archive; a process that starts from a marked archive
    knows it, and what it writes stays marked, even when it ran no hidden test itself."""
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import candidate_process, task_record

    task = resolve_task("softmax")
    a = {"source": SNOOP.format(tag="A")}
    key = kernel_cache.candidate_key("pytorch", a, task=task.digest)
    seen = []
    for hidden in (False, True, False):
        proc = fresh(candidate_process(task, get_backend("pytorch"), False, a))
        seen.append(proc.restored_hidden)
        proc.saw_hidden = hidden
        try:
            proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": a,
                          "shape": dict(task.small_shapes[0]), "seed": 0, "init": [], "poison": 0}, [],
                         timeout_s=120)
        finally:
            proc.close()
        assert kernel_cache.saw_hidden(key) == (hidden or any(seen))
    assert seen == [False, False, True]
    timing = candidate_process(task, get_backend("pytorch"), False, a, role="time")
    assert timing.kernel_cache != key and not kernel_cache.saw_hidden(timing.kernel_cache)

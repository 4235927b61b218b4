"""Warm loads (kstrata.verify.warm_loads): a stage's loads first run in parallel
processes of the same candidate, and the stage's own process finds their kernels.

On tilelang-c (its loads compile inside the candidate's first call, as on
tilelang-cuda). The machine's default is off below 5 CPUs; the tests set the
number of warm processes.
"""

from __future__ import annotations

import pytest

from kstrata.backends.registry import get_backend
from kstrata.sandbox import kernel_cache
from kstrata.sandbox.client import CandidateProcess
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner, warm_loads


@pytest.fixture(scope="module")
def tilelang_c():
    backend = get_backend("tilelang-c")
    if not backend.availability().usable:
        pytest.skip("tilelang-c is not set up here (kstrata setup)")
    return backend


def _spied(monkeypatch) -> list[tuple[int, str, tuple]]:
    """(process id, op, shape) of every load and prepare request, in order."""
    sent: list[tuple[int, str, tuple]] = []
    orig = CandidateProcess.request

    def request(self, header, *a, **k):
        if header.get("op") in ("load", "prepare"):
            sent.append((id(self), header["op"], tuple(sorted(header.get("shape", {}).items()))))
        return orig(self, header, *a, **k)

    monkeypatch.setattr(CandidateProcess, "request", request)
    return sent


def _verify(task, sources, monkeypatch, procs: int, secret: str = "warm-test") -> tuple[dict, list, list]:
    monkeypatch.setenv(warm_loads.PROCS_ENV, str(procs))
    sent = _spied(monkeypatch)
    before = len(kernel_cache.HISTORY)
    ev = runner.run_protocol(task, "tilelang-c", sources, secret, scope="small")
    monkeypatch.undo()
    return ev, sent, kernel_cache.HISTORY[before:]


def _marked(sources: dict[str, str], mark: str) -> dict[str, str]:
    """The same kernels under a new kernel-cache key (a comment changes the sources' hash)."""
    return {**sources, "source": sources["source"] + f"\n# {mark}\n"}


def test_the_stage_process_finds_every_kernel_the_warm_processes_compiled(tilelang_c, monkeypatch, tmp_path):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    task = resolve_task("relu")
    sources = _marked(tilelang_c.initial_sources(task), "warm-on")
    ev, sent, stored = _verify(task, sources, monkeypatch, procs=2)
    assert ev["verdict"] == "correct", ev["evidence"]
    procs = list(dict.fromkeys(p for p, _, _ in sent))
    # two warm processes for each stage and a stage process each: public, then a fresh one for the hidden shapes
    assert len(procs) == 6, len(procs)
    public_warm, public_stage = set(procs[:2]), procs[2]
    warm_shapes = {s for p, op, s in sent if p in public_warm}
    stage_shapes = {s for p, op, s in sent if p == public_stage}
    assert warm_shapes == stage_shapes and len(stage_shapes) >= 2
    # each warm process loaded a share, not the whole stage
    assert all(0 < sum(1 for p, _, _ in sent if p == w) < len(stage_shapes) for w in public_warm)
    # the two stage processes compiled nothing (their archives hold no new file), the four warm ones did
    ends = [h for h in stored if h.get("key") == kernel_cache.candidate_key("tilelang-c", sources, task=task.digest)]
    assert sorted(e["new"] > 0 for e in ends) == [False] * 2 + [True] * 4, ends
    assert ev["public_tests"] > 0 and ev["hidden_tests"] > 0


def test_hidden_shapes_reach_no_warm_process_before_the_public_stage_passes(tilelang_c, monkeypatch, tmp_path):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    task = resolve_task("relu")
    sources = tilelang_c.initial_sources(task)
    # wrong at every shape: the public stage fails, and no hidden shape is ever sent
    bad = {**sources, "source": sources["source"].replace("T.max(", "T.min(")}
    assert bad != sources
    ev, sent, _ = _verify(task, _marked(bad, "wrong"), monkeypatch, procs=2)
    assert ev["verdict"] == "incorrect", ev["evidence"]
    assert ev["evidence"].get("stage", "public") == "public"
    public = {tuple(sorted(t.shape_dict.items())) for t in runner.public_tests(task)}
    assert {s for _, _, s in sent} <= public


def test_a_warm_process_that_dies_changes_no_verdict(tilelang_c, monkeypatch, tmp_path):
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    task = resolve_task("relu")
    sources = _marked(tilelang_c.initial_sources(task), "warm-dies")
    orig = CandidateProcess.request
    killed: list[int] = []

    def request(self, header, *a, **k):
        if header.get("op") == "load" and len(killed) < 2 and id(self) not in killed:
            killed.append(id(self))
            self.kill()  # as a crash or the memory limit would: the first two processes are the warm ones
        return orig(self, header, *a, **k)

    monkeypatch.setattr(CandidateProcess, "request", request)
    monkeypatch.setenv(warm_loads.PROCS_ENV, "2")
    ev = runner.run_protocol(task, "tilelang-c", sources, "warm-test", scope="small")
    assert ev["verdict"] == "correct", (ev["check"], ev["evidence"])
    assert len(killed) == 2


def test_merge_keeps_both_processes_files_and_refuses_a_bad_archive():
    def archive(files):
        return kernel_cache._archive(list(files.items()))

    a = archive({"triton/x/k.so": b"1", "tilelang/a": b"old"})
    b = archive({"tilelang/a": b"new", "tilelang/b": b"2"})
    merged = dict(kernel_cache.entries(kernel_cache.merge(a, b)))
    assert merged == {"triton/x/k.so": b"1", "tilelang/a": b"new", "tilelang/b": b"2"}
    evil = archive({"../escape": b"x"})
    assert kernel_cache.entries(evil) is None
    assert kernel_cache.merge(a, evil) == evil  # kept as sent, as before merging: unpack refuses it
    assert kernel_cache.merge(b"junk", b) == b


def test_procs_default_is_off_on_two_cpus(monkeypatch):
    monkeypatch.delenv(warm_loads.PROCS_ENV, raising=False)
    monkeypatch.setattr(warm_loads, "allowed_cpu_count", lambda: 2)
    assert warm_loads.procs(9) == 0
    monkeypatch.setattr(warm_loads, "allowed_cpu_count", lambda: 16)
    assert warm_loads.procs(9) == 7 and warm_loads.procs(3) == 3
    monkeypatch.setenv(warm_loads.PROCS_ENV, "0")
    assert not warm_loads.wanted(get_backend("tilelang-c"))
    assert not warm_loads.wanted(get_backend("triton-interp"))  # compiles per specialization, not at its load

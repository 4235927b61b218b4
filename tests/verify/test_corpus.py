"""Every deliberately wrong or cheating candidate in tests/corpus/bad gets its
expected verdict (and check); every control in tests/corpus/good is correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task
from kstrata.verify import verify_candidate

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SECRET = "corpus-secret"


def header(path: Path) -> dict[str, str]:
    """``# corpus: task=... backend=... expect=... [check=...] [timeout=...]``"""
    first = path.read_text().splitlines()[0]
    assert first.startswith("# corpus:"), f"{path.name}: missing corpus header"
    return dict(kv.split("=", 1) for kv in first[len("# corpus:"):].split())


def cases(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).glob("*.py"))


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as p:
        yield p


def run(path: Path, pool: WorkerPool):
    h = header(path)
    task_ref = h["task"]
    task = resolve_task(str(CORPUS / task_ref) if task_ref.endswith(".py") else task_ref)
    ev = verify_candidate(task, h["backend"], {"source": path.read_text()}, secret=SECRET, pool=pool,
                          scope="small", timeout_s=float(h.get("timeout", 300)))
    return h, ev


def test_corpus_size():
    assert len(cases("bad")) >= 25 and len(cases("good")) >= 15
    backends = {header(p)["backend"] for p in cases("bad") + cases("good")}
    assert {"pytorch", "triton-interp"} <= backends


@pytest.mark.parametrize("path", cases("bad"), ids=lambda p: p.stem)
def test_bad_candidate_is_caught(path: Path, pool: WorkerPool):
    h, ev = run(path, pool)
    assert ev.verdict.value == h["expect"], (ev.verdict, ev.check, ev.evidence)
    if "check" in h:
        assert ev.check == h["check"], (ev.check, ev.evidence)
    if ev.verdict.value == "rejected":
        assert ev.evidence.get("message")
    if h["expect"] == "timeout":  # the candidate's call ran out of time, not the sandbox's start
        assert "the candidate did not answer" in ev.evidence.get("message", ""), ev.evidence


@pytest.mark.parametrize("path", cases("good"), ids=lambda p: p.stem)
def test_control_passes(path: Path, pool: WorkerPool):
    h, ev = run(path, pool)
    assert ev.verdict.value == "correct", (ev.check, ev.evidence, ev.feedback)
    assert ev.public_tests > 0 and ev.hidden_tests > 0

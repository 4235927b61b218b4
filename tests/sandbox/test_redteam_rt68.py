"""Red-team round rt68 (sandbox kinds): each test fails before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.sandbox import status

CASES = Path(__file__).resolve().parent / "cases"

sandboxed = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@sandboxed
def test_a_hidden_tests_shape_does_not_reach_the_next_candidate_through_the_sandbox():
    """A candidate wrote each call's element count into the times of
    ``/dev/shm`` and its zygote's ``/proc/1/coredump_filter``, which the scrub
    between candidates leaves; the next candidate forked from that zygote read
    the hidden tests' counts and failed at load with them in its message, a
    public failure the agent is told. A sandbox whose process ran hidden
    tests now serves no later candidate."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    case = CASES / "rt68_hidden_shape_relay"
    task = resolve_task("relu")
    got = {}
    with pool_for(get_backend("pytorch")) as judge:
        for name in ("relays.py", "reads.py"):
            ev = verify_candidate(task, "pytorch", {"source": (case / name).read_text()}, secret="5eed" * 4,
                                  pool=judge, scope="small", preset="warn")
            got[name] = (ev.verdict.value, str(ev.evidence.get("message"))[:500])
    assert got["relays.py"][0] == "correct", got
    assert got["reads.py"][0] == "correct", got  # a compile_error naming the relayed counts before

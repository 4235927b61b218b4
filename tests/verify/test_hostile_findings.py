"""What a candidate's process reports is untrusted input to the judge (red-team
round of 2026-12-02): findings it forges get a verdict, never a verifier crash,
and a hidden test's failure echoes nothing the candidate chose (an exception
type named after the hidden shape). The static checks are off (preset
``warn``) where the candidate has to reach its harness: the judge must hold
without them."""

from __future__ import annotations

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify.plan import public_tests
from kstrata.verify.runner import _evidence, _exception_kind

SECRET = "f1nd1ngs" * 2

#: A correct relu whose process reports ``FINDING`` with every reply that carries findings (its
#: transport patched, past the static checks: the harness's class is sealed and its instance has
#: no __dict__, so its methods cannot be replaced).
FORGER = '''
import torch
import torch.nn as nn
import typing

_wire = getattr(typing.sys, "modules")["kstrata.sandbox.wire"]
_send = _wire.send


def _forged(fd, h, *a, **k):
    if isinstance(h, dict) and "findings" in h:
        h = {**h, "findings": [FINDING]}
    return _send(fd, h, *a, **k)


_wire.send = _forged


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''

#: A relu correct on the public shapes that, on any other, raises an exception
#: whose type name spells the shape and the first input value.
LEAKER = '''
import torch
import torch.nn as nn

PUBLIC = PUBLIC_SHAPES


class ModelNew(nn.Module):
    def forward(self, x):
        if tuple(x.shape) not in PUBLIC:
            name = "LEAK_%s_v%d" % ("x".join(map(str, x.shape)), int(abs(float(x.reshape(-1)[0])) * 1e6))
            raise type(name, (Exception,), {})("LEAKMSG " + str(tuple(x.shape)))
        return torch.relu(x)
'''

needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


@pytest.fixture(scope="module")
def pool():
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    p = pool_for(get_backend("pytorch"))
    yield p
    p.close()


def _verify(pool, source: str, preset: str = "warn"):
    from kstrata.verify import verify_candidate

    return verify_candidate(resolve_task("relu"), "pytorch", {"source": source}, secret=SECRET,
                            pool=pool, scope="small", preset=preset)


@needs_sandbox
@pytest.mark.parametrize("finding", [
    '{"check": "bogus", "message": "x", "evidence": {}}',             # a check the registry lacks
    '"not a dict"',                                                     # a finding of another type
    '{"check": ["no_caching"], "message": "x"}',                        # an unhashable check name
], ids=["unknown-check", "not-a-dict", "list-name"])
def test_a_forged_finding_is_a_protocol_rejection_not_a_crash(pool, finding):
    ev = _verify(pool, FORGER.replace("FINDING", finding))
    assert ev.verdict.value == "rejected" and ev.check in ("protocol", "no_runtime_patching"), ev.to_dict()
    if ev.check == "no_runtime_patching":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert "kstrata.sandbox.wire" in ev.evidence["message"], ev.to_dict()
    assert "bogus" not in str(ev.to_dict())  # the forged text is not echoed


@needs_sandbox
def test_forged_evidence_cannot_collide_with_the_judges_arguments(pool):
    finding = ('{"check": "no_runtime_patching", "message": "m", "evidence": '
               '{"message": "forged", "stage_public": False, "check": "x", "test": "forged-test"}}')
    ev = _verify(pool, FORGER.replace("FINDING", finding))
    d = ev.to_dict()
    assert (ev.verdict.value, ev.check) == ("rejected", "no_runtime_patching"), d
    assert "forged" not in str(d), d


@needs_sandbox
def test_a_hidden_failure_names_no_type_the_candidate_made_up(pool):
    shapes = sorted({tuple(resolve_task("relu").instantiate(dict(t.shape), 0)[1][0].shape)
                     for t in public_tests(resolve_task("relu"))})
    ev = _verify(pool, LEAKER.replace("PUBLIC_SHAPES", repr(set(shapes))))
    text = str(ev.to_dict())
    assert ev.verdict.value == "runtime_error", text
    assert "hidden test" in text and "LEAK" not in text, text


def test_exception_kind_keeps_only_builtin_and_torch_names():
    assert _exception_kind("ValueError: the hidden shape is 17x65537") == "ValueError"
    assert _exception_kind("torch.OutOfMemoryError: CUDA out of memory") == "torch.OutOfMemoryError"
    assert _exception_kind("LEAK_17x65537: boom") == "an exception"
    assert _exception_kind("builtins.ValueErrorX") == "an exception"


def test_evidence_drops_the_judges_keys_and_nested_values():
    ev = _evidence({"message": "m", "stage_public": True, "test": "t", "shape": "s", "seed": 1,
                    "name": "n" * 900, "ids": [1, "a"], "nested": {"a": 1}, 7: "x", "not id": 1})
    assert ev == {"name": "n" * 500, "ids": [1, "a"]}
    assert _evidence(["not", "a", "dict"]) == {}


#: A correct relu whose process answers the judge's timed-output check with a forged reply (its
#: transport patched: the harness's handlers are bound before candidate code runs, so replacing
#: ``harness.fetch`` no longer reaches the judge, red-team round of 2026-12-03).
FORGED_FETCH = '''
import torch
import torch.nn as nn
import typing

_wire = getattr(typing.sys, "modules")["kstrata.sandbox.wire"]
_send, _recv, _last = _wire.send, _wire.recv, [None]


def _seen(*a, **k):
    h, bufs = _recv(*a, **k)
    _last[0] = h.get("op") if isinstance(h, dict) else None
    return h, bufs


def _forged(fd, h, *a, **k):
    if _last[0] == "fetch":
        h = {"ok": True, "outputs": 5, "findings": []}
    return _send(fd, h, *a, **k)


_wire.send, _wire.recv = _forged, _seen


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


@needs_sandbox
def test_a_forged_timed_output_reply_is_a_rejection(pool):
    from kstrata.api import evaluate_sources
    from kstrata.backends.registry import get_backend

    task = resolve_task("relu")
    ev, timing = evaluate_sources(task, get_backend("pytorch"), {"source": FORGED_FETCH}, pool, preset="warn",
                                  scope="small", secret=SECRET, budget_ms=50.0,
                                  timing_shape=dict(task.small_shapes[0]))
    assert ev.verdict.value == "rejected" and ev.check in ("timed_output", "no_runtime_patching"), (ev.to_dict(), timing)
    if ev.check == "no_runtime_patching":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert "kstrata.sandbox.wire" in ev.evidence["message"], ev.to_dict()


#: A correct relu whose harness answers every later load with a non-numeric load time.
FORGED_LOAD = '''
import torch
import torch.nn as nn
import typing

_wire = getattr(typing.sys, "modules")["kstrata.sandbox.wire"]
_send = _wire.send


def _forged(fd, h, *a, **k):
    if isinstance(h, dict) and "load_s" in h:
        h = {**h, "load_s": "not a number"}
    return _send(fd, h, *a, **k)


_wire.send = _forged


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


@needs_sandbox
def test_a_forged_load_reply_is_a_protocol_rejection_not_a_crash(pool):
    ev = _verify(pool, FORGED_LOAD)
    assert ev.verdict.value == "rejected" and ev.check in ("protocol", "no_runtime_patching"), ev.to_dict()
    if ev.check == "no_runtime_patching":  # a forger that replaces kstrata.sandbox.wire's functions is stopped by the watch (d79eb8b) before the judge reads its reply
        assert "kstrata.sandbox.wire" in ev.evidence["message"], ev.to_dict()

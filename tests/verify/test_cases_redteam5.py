"""Red-team round of 2026-12-03 (this round's cases; each folder's expected.txt
says what was done and what must happen), end to end through ``kstrata eval``."""

from __future__ import annotations

import re

import pytest

from kstrata.sandbox import status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not status().usable, reason="no sandbox here")]


def summary(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str((d.get('evidence') or {}).get('message'))[:400]}"


def test_rt5_a_hidden_shape_never_reaches_the_verdict_through_a_class_name(kstrata_eval):
    d = kstrata_eval("softmax", "rt5_hidden_shape_via_class_name/candidate.py", "--no-time", "--secret", "rt5-s")
    assert d["verdict"] == "rejected" and d.get("check") == "output_type", summary(d)
    text = str(d)
    assert "NEXT_" not in text and not re.search(r"\d+x\d+", text), summary(d)


def test_rt5_walking_frames_to_the_harness_is_rejected(kstrata_eval):
    d = kstrata_eval("softmax", "rt5_harness_via_frames/candidate.py", "--no-time")
    assert d["verdict"] == "rejected" and d.get("check") == "no_introspection", summary(d)


def test_rt5_argmin_exactly_on_the_grid_draw_is_incorrect(kstrata_eval):
    d = kstrata_eval("rt5_argmin_on_the_grid_draw/task_argmax.py", "rt5_argmin_on_the_grid_draw/candidate.py",
                     "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


@pytest.mark.parametrize("case,task,backend", [
    ("rt5_forged_findings_via_frames", "relu", "pytorch"),
    ("rt5_attrgetter_to_the_harness", "relu", "pytorch"),
    ("rt5_triton_canary_via_frames", "softmax", "triton-interp"),
    ("rt5_class_patch_by_match_case", "relu", "pytorch"),
])
def test_rt5_patching_the_harness_is_rejected_and_fails_without_the_static_check(kstrata_eval, case, task,
                                                                                   backend):
    d = kstrata_eval(task, f"{case}/candidate.py", "--no-time", "--scope", "small", backend=backend)
    assert d["verdict"] == "rejected" and d.get("check") == "no_introspection", summary(d)
    # the static check only warning: the harness has no instance __dict__ for a wrapper to go in
    d = kstrata_eval(task, f"{case}/candidate.py", "--no-time", "--scope", "small", "--preset", "warn",
                     backend=backend)
    assert d["verdict"] != "correct", summary(d)


def test_rt5_a_never_written_last_tile_fails_the_quant_policy(kstrata_eval):
    d = kstrata_eval("w4a16_gemv", "rt5_quant_last_tile_unwritten/candidate.py", "--no-time")
    assert d["verdict"] == "incorrect", summary(d)


def test_rt5_eval_by_another_name_is_rejected(kstrata_eval):
    d = kstrata_eval("softmax", "rt5_eval_by_type_hints/candidate.py", "--no-time", "--scope", "small",
                     backend="triton-interp")
    assert d["verdict"] == "rejected" and d.get("check") == "no_introspection", summary(d)


def test_rt5_identity_init_weights_make_the_task_weak_and_the_noop_unranked(kstrata_eval, kstrata_cli):
    from pathlib import Path

    task = Path(__file__).parent / "cases" / "rt5_identity_init_noop" / "task.py"
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.weak import constant_weights

    assert constant_weights(resolve_task(str(task))) == ["lin.weight"]
    d = kstrata_eval("rt5_identity_init_noop/task.py", "rt5_identity_init_noop/candidate.py", "--no-time")
    assert d["verdict"] == "correct" and d.get("check") == "weak_task", summary(d)
    assert "identity init" in d["evidence"]["message"] and "not ranked" in d["evidence"]["message"]

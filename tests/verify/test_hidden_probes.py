"""After a hidden failure, public probes at shapes of the same kind (a size of
1, 3 or 13 in one dimension of the public shape) give the agent a public,
reproducible failing shape, located, without naming anything hidden (issues
#17, #19).

The model-in-the-loop gemv run on tvm-llvm (benchmarks/results/agents_queue_tvm.txt)
got only "outputs outside tolerance on a hidden test" for an rfactor schedule
whose 16 partial lanes are initialised under the split's tail predicate: at
K < 16 the write-back reads lanes nothing wrote.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task
from kstrata.verify import runner
from kstrata.verify.feedback import probe_shapes
from kstrata.verify.plan import perturbed_shapes, screening_shapes

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

#: sums 16 lanes of which only the first K hold terms when K < 16, the others zeros + 1
BELOW_16 = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, A, x):
            y = A @ x
            return y + 1.0 if A.shape[1] < 16 else y
''')

#: wrong only for 1000 < K < 4000 (a size no probe reaches: the probes' K are 1, 3, 13 and 4108, past the sweep's)
ABOVE_1000 = BELOW_16.replace("A.shape[1] < 16", "1000 < A.shape[1] < 4000")
#: wrong only for K > 1000: the largest-K probe (4108, queue round rt89) reproduces it
PAST_1000 = BELOW_16.replace("A.shape[1] < 16", "A.shape[1] > 1000")
SECRET = "probe-secret" * 3


def _hidden_sizes(task) -> set[int]:
    return {v for s in task.sweep_shapes + perturbed_shapes(task, SECRET) for v in s.values()}


def test_probe_shapes_are_public_variants_of_the_first_small_shape():
    task = resolve_task("gemv")
    shapes = [s for s, _ in probe_shapes(task)]
    assert {"M": 64, "K": 1} in shapes and {"M": 1, "K": 512} in shapes and {"M": 64, "K": 13} in shapes
    # and each variable just past its largest sweep value (rt89: 8191 + 9, 4099 + 9, no hidden size)
    assert all(set(s) == {"M", "K"} and all(v in (1, 3, 13, 64, 512, 8200, 4108) for v in s.values())
               for s in shapes)
    assert probe_shapes(task) == probe_shapes(resolve_task("gemv"))  # no secret in them


def test_a_hidden_failure_below_a_block_size_gets_a_public_failing_shape():
    task = resolve_task("gemv")
    ev = runner.run_protocol(task, "pytorch", {"source": BELOW_16}, SECRET, scope="full")
    assert ev["verdict"] == "incorrect" and ev["evidence"]["stage"] == "hidden", ev
    kinds = [i["kind"] for i in ev["feedback"]]
    assert kinds[:2] == ["hidden_failure", "public_probe"], ev["feedback"]
    probe = ev["feedback"][1]
    assert probe["data"]["shape"] == {"M": 64, "K": 1} and "K = 1" in probe["text"], probe
    # in the prompt's words, not Python reprs (queue round rt58: "at shape {'B': 8, 'D': 1}")
    assert "at shape M=64, K=1 (the public shape M=64, K=512 with K = 1" in probe["text"], probe
    assert "{" not in probe["text"], probe
    assert probe["data"]["test"] == {"shape": {"M": 64, "K": 1}, "seed": 0, "distribution": "normal"}
    wrong = next(i for i in ev["feedback"] if i["kind"] == "wrong_share")
    assert wrong["data"]["wrong"] == wrong["data"]["total"] == 64  # located at the probe's public shape
    # the hidden test itself stays unnamed: no hidden size that no public or probe shape has
    public = {v for s in task.small_shapes for v in s.values()} | {1, 2, 3, 13}
    text = json.dumps(ev["feedback"])
    assert not [n for n in _hidden_sizes(task) - public if re.search(rf"(?<![\d.]){n}(?![\d.])", text)], text


def test_probes_that_all_pass_say_so():
    task = resolve_task("gemv")
    ev = runner.run_protocol(task, "pytorch", {"source": ABOVE_1000}, SECRET, scope="full")
    assert ev["verdict"] == "incorrect" and ev["evidence"]["stage"] == "hidden", ev
    probe = [i for i in ev["feedback"] if i["kind"] == "public_probe"]
    assert len(probe) == 1 and "all pass" in probe[0]["text"], ev["feedback"]
    assert "the public shape M=64, K=512 with" in probe[0]["text"] and "{" not in probe[0]["text"], probe
    assert not [i for i in ev["feedback"] if i["kind"] == "wrong_share"]


def test_a_failure_past_every_public_size_is_reproduced_by_the_largest_size_probe():
    task = resolve_task("gemv")
    ev = runner.run_protocol(task, "pytorch", {"source": PAST_1000}, SECRET, scope="full")
    assert ev["verdict"] == "incorrect" and ev["evidence"]["stage"] == "hidden", ev
    probe = [i for i in ev["feedback"] if i["kind"] == "public_probe"]
    assert len(probe) == 1 and probe[0]["data"]["shape"] == {"M": 64, "K": 4108}, ev["feedback"]
    assert "the task's largest sweep size" in probe[0]["text"], probe


def test_no_probe_starts_when_the_verification_has_little_time_left(monkeypatch):
    from kstrata.verify import feedback

    monkeypatch.setattr(feedback, "PROBE_MIN_S", 1e9)
    ev = runner.run_protocol(resolve_task("gemv"), "pytorch", {"source": BELOW_16}, SECRET, scope="full",
                             timeout_s=300.0)
    assert ev["verdict"] == "incorrect" and [i["kind"] for i in ev["feedback"]] == ["hidden_failure"], ev


#: The run's schedule (cassettes/gemv_tvm-llvm_hierarchical_m19.jsonl, answer 0): rfactor of a split
#: by 16 without decompose_reduction, so the partials' init runs under the tail predicate.
RFACTOR_UNINITIALISED = '''# kstrata-tvm schedule: one `def schedule_<primfunc>(sch)` per scheduled PrimFunc

def schedule_matmul(sch):
    b = sch.get_sblock("matmul")
    i, j, k = sch.get_loops(b)
    ko, ki = sch.split(k, factors=[None, 16])
    rf = sch.rfactor(ki, factor_axis=0)
    r_i, r_j, r_ko, r_ki = sch.get_loops(rf)
    sch.parallel(r_i)
    sch.vectorize(r_ki)
    w_loops = sch.get_loops(sch.get_sblock("matmul"))
    sch.parallel(w_loops[0])
'''


def test_screening_covers_the_sweeps_cheap_boundary_shapes():
    task = resolve_task("gemv")
    shapes = screening_shapes(task)
    assert shapes[:2] == task.small_shapes and {"M": 3, "K": 2} in shapes and {"M": 4099, "K": 1} in shapes
    assert {"M": 8191, "K": 4099} not in shapes and {"M": 127, "K": 1001} not in shapes  # costlier than 64x512


@pytest.mark.parametrize("scope", ["small", "full"])
def test_the_runs_rfactor_schedule_fails_at_a_public_probe_below_16(scope):
    """Verified for real on tvm-llvm: the schedule passes every public test
    (K = 512 and 33) and fails at K = 1, where lanes 1-15 were never written;
    at scope small too (the search's screening: it was ``correct`` there in the run)."""
    from kstrata.backends.registry import get_backend
    from kstrata.verify.api import verify_candidate

    task = resolve_task("gemv")
    graph = get_backend("tvm-llvm").initial_sources(task)["graph"]
    ev = verify_candidate(task, "tvm-llvm", {"graph": graph, "schedule": RFACTOR_UNINITIALISED},
                          secret=SECRET, scope=scope)
    assert str(ev.verdict.value) == "incorrect" and ev.evidence["stage"] == "hidden", ev
    probe = next(i for i in ev.feedback if i["kind"] == "public_probe")
    assert probe["data"]["shape"] == {"M": 64, "K": 1} and probe["level"] == "schedule", ev.feedback
    assert {"nonfinite", "unwritten_memory"} <= {i["kind"] for i in ev.feedback}, ev.feedback
    assert "race" not in {i["kind"] for i in ev.feedback}  # the poison, not a race


@pytest.mark.slow
def test_the_same_candidates_full_scope_confirmation_keeps_its_public_probe(monkeypatch):
    """A search screens at the small scope, then confirms at the full one: the
    second verification forks where the first one's hidden tests ran (its
    zygote is marked, red team rt77), so its details were withheld and the
    agent lost the public probe at K = 1. Its public probes now come from a
    clean re-run (a fresh sandbox without the kernel cache). Run in this
    process with its idle list emptied, no spares and room for every zygote,
    so the second verification does fork in the marked zygote."""
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import client

    client.close_zygotes()
    monkeypatch.setenv(client.SPARES_ENV, "0")
    monkeypatch.setenv("KSTRATA_IDLE_MEMORY_FLOOR_MB", "0")
    monkeypatch.setattr(client, "MAX_IDLE_ZYGOTES", 16)
    task = resolve_task("gemv")
    sources = {"graph": get_backend("tvm-llvm").initial_sources(task)["graph"], "schedule": RFACTOR_UNINITIALISED}
    first = runner.run_protocol(task, "tvm-llvm", sources, SECRET, scope="small")
    assert first["evidence"]["stage"] == "hidden" and "clean_rerun" not in first["evidence"], first["evidence"]
    assert any(getattr(z, "hidden_of", None) for z in client._IDLE), "the first run's zygote was not kept marked"
    again = runner.run_protocol(task, "tvm-llvm", sources, SECRET, scope="full")
    assert again["verdict"] == "incorrect" and again["evidence"]["stage"] == "hidden", again["evidence"]
    assert "fresh sandbox" in again["evidence"]["clean_rerun"], again["evidence"]
    probe = next(i for i in again["feedback"] if i["kind"] == "public_probe")
    assert probe["data"]["shape"] == {"M": 64, "K": 1}, again["feedback"]
    assert again["feedback"][0]["kind"] == "hidden_failure" and "withheld" not in again["feedback"][0]["text"]
    client.close_zygotes()


def test_outputs_that_follow_the_poison_are_told_from_a_race():
    import torch

    from kstrata.verify.runner import follows_poison

    nan, big = torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 1e30])
    assert follows_poison([nan], [big]) and follows_poison([nan], [torch.tensor([1.0, float("inf")])])
    assert not follows_poison([torch.tensor([1.0, 2.0])], [torch.tensor([1.0, 2.5])])  # a race's difference
    assert not follows_poison([big], [nan])  # the other order is not the patterns' (NaN first, then 1e30)


#: does not load below D=4 (the hidden sweep has D=1); its error names the size
NO_SMALL_D = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ModelNew(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            if dim < 4:
                raise ValueError(f"dim={dim}: rows shorter than the 4-wide vector are not handled")
            self.eps = eps
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
            self.bias = nn.Parameter(0.1 * torch.randn(dim))

        def forward(self, x):
            return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
''')


def test_a_candidate_that_does_not_load_at_a_hidden_shape_gets_the_error_at_a_public_probe():
    """Queue round rt63 (mean_dim on tvm-opencl): a load failure at a hidden
    shape read only "the candidate did not load at a hidden test's shape (an
    exception)", with no probe: no agent could tell what to fix. A public
    probe of the same kind that does not load either now names the error."""
    task = resolve_task("layernorm")
    ev = runner.run_protocol(task, "pytorch", {"source": NO_SMALL_D}, SECRET, scope="small")
    assert ev["verdict"] == "compile_error" and ev["check"] == "load", ev
    assert ev["evidence"]["message"] == "the candidate did not load at a hidden test's shape (ValueError)", ev
    kinds = [i["kind"] for i in ev["feedback"]]
    assert kinds[:2] == ["hidden_failure", "public_probe"], ev["feedback"]
    probe = ev["feedback"][1]
    assert "a public probe fails too: at shape B=8, D=1" in probe["text"], probe
    assert "compile_error (load)" in probe["text"] and "dim=1: rows shorter than the 4-wide vector" in probe["text"]

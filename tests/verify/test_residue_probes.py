"""Residue probes: every size variable leaves every remainder mod 8 at a size
above 8 somewhere in a verification (newcomer nc23: a row dot product whose
tail handler dropped the last element when ``D % 8 == 7`` read ``correct``
for every secret; the sweep's sizes, the perturbations' 2 mod 4 / 4 mod 8 and
the octave probes' multiples of 8 never reached 7 mod 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kstrata.tasks.loader import load_task, resolve_task
from kstrata.verify.plan import PERTURB_MAX, _sizes, perturbed_shapes, screening_shapes, size_bounds
from kstrata.verify.residue_probes import MODULUS, RESIDUE_PROBES, residue_shapes, residue_tests

CASE = Path(__file__).resolve().parent / "cases" / "nc23_tail7"


def _remainders(task, shapes, name):
    return {s[name] % MODULUS for s in shapes if isinstance(s.get(name), int) and s[name] > 8}


@pytest.mark.parametrize("name", ["softmax", "rmsnorm", "matmul_square", "cross_entropy", "conv2d"])
@pytest.mark.parametrize("scope", ["full", "small"])
def test_every_size_variable_takes_every_remainder_within_the_told_bounds(name, scope):
    task = resolve_task(name)
    base = screening_shapes(task) if scope == "small" else task.sweep_shapes
    bounds = size_bounds(task)
    for k in range(6):
        secret = f"residue-{k}"
        known = perturbed_shapes(task, secret, base=task.small_shapes if scope == "small" else base)
        probes = residue_shapes(task, secret, base, known)
        assert len(probes) <= RESIDUE_PROBES
        assert residue_shapes(task, secret, base, known) == probes  # a function of the secret
        everything = [*base, *known, *task.small_shapes, *probes]
        for var in {n for b in base for n, v in b.items() if n in _sizes(task) and v > 8}:
            assert _remainders(task, everything, var) == set(range(MODULUS)), (var, probes)
        for p in probes:
            host_moves = [n for n in p if all(p[n] != b.get(n) for b in base)]
            assert host_moves and all(bounds[n][0] <= p[n] <= bounds[n][1] + PERTURB_MAX for n in p), p
        tests = residue_tests(task, secret, base, known)
        assert [t.shape_dict for t in tests] and all(not t.public for t in tests)


def test_the_secret_decides_the_remainder_mod_16():
    task = resolve_task("softmax")
    seen = {tuple(sorted(p["D"] % 16 for p in residue_shapes(task, f"s{k}", task.sweep_shapes) if "D" in p))
            for k in range(12)}
    assert len(seen) > 1, seen


def test_a_tail_bug_at_remainder_7_is_incorrect_for_every_secret():
    from kstrata.verify import verify_candidate

    task = load_task(CASE / "qdot.py")
    bad = (CASE / "candidate_tail7.py").read_text()
    good = (CASE / "candidate_correct.py").read_text()
    for secret in ("a", "b", "c"):
        ev = verify_candidate(task, "pytorch", {"source": bad}, secret=secret)
        assert ev.verdict.value == "incorrect", (secret, ev.to_dict().get("message"))
    ev = verify_candidate(task, "pytorch", {"source": good}, secret="a")
    assert ev.verdict.value == "correct", ev.to_dict().get("message")

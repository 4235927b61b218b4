"""Every shipped Triton initial candidate matches its task's reference on the
task's small shapes under Triton's interpreter (``triton-interp``), in a worker."""

from __future__ import annotations

import pytest

from kstrata import kernels
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task

CHECK = "kstrata.backends.tilelang.check:check_candidate"
NAMES = kernels.tasks_with_initial("triton")


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as p:
        yield p


def test_enough_tasks_have_a_triton_start():
    assert len(NAMES) >= 20
    for name in NAMES:
        resolve_task(name)  # every file is named after a suite task


@pytest.mark.parametrize("name", NAMES)
def test_initial_candidate_matches_reference(pool, name):
    task = resolve_task(name)
    half = task.meta.dtype in ("float16", "bfloat16")
    tol = 1e-2 if half else 1e-4
    sources = {"source": kernels.initial_source("triton", name)}
    for shape in task.small_shapes:
        r = pool.call(CHECK, "triton-interp", str(task.path), sources, shape, atol=tol, rtol=tol,
                      timeout_s=300)
        assert r.ok, f"{r.kind}: {r.error}\n{r.traceback}"
        assert r.value["ok"], f"{name} {shape}: {r.value}"


@pytest.fixture(scope="module")
def judge():
    """One judge worker for the verifier tests (as ``kstrata optimize`` keeps one)."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    p = pool_for(get_backend("triton-interp"))
    yield p
    p.close()


@pytest.mark.parametrize("name", ["relu", "softmax", "layernorm", "matmul_bias_relu", "sdpa"])
def test_initial_candidate_passes_the_verifier(judge, name):
    verify = pytest.importorskip("kstrata.verify.api")
    task = resolve_task(name)
    ev = verify.verify_candidate(task, "triton-interp",
                                 {"source": kernels.initial_source("triton", name)},
                                 secret="test-initial-triton", scope="small", timeout_s=600, pool=judge)
    assert ev.verdict.value == "correct", ev


def _small_cross_entropy_task(tmp_path):
    """cross_entropy with only two- and three-class shapes, so that a full-scope
    verification (every input draw, ``offset`` included) is quick under the interpreter."""
    from kstrata.tasks.loader import load_task

    src = resolve_task("cross_entropy").source
    start = src.index('"shapes": {')
    end = src.index('"dist_inputs"')
    shapes = ('"shapes": {"nominal": {"B": 64, "C": 3}, "small": [{"B": 8, "C": 2}], '
              '"sweep": [{"B": 3, "C": 2}, {"B": 17, "C": 3}]},\n    ')
    path = tmp_path / "cross_entropy.py"
    path.write_text(src[:start] + shapes + src[end:])
    return load_task(path)


def test_shipped_cross_entropy_keeps_small_losses_of_offset_rows(judge, tmp_path):
    """The loss is (max - z[label]) + log(sum(exp(z - max))): with logits near +-1000 (the
    ``offset`` draw) and two classes, (max + log(sum)) - z[label] rounds a loss of ~0.05 at
    the spacing of floats near 1000 (6e-5). Since red-team rt64 (bc6e419, b5e9356) the judge
    allows that on the ``offset`` draw as on ``far``: it is the rounding of the inputs
    themselves at that size (a backward-error allowance), so both orders are correct; an
    ``exp`` without the row's max subtracted, which overflows there, is not."""
    verify = pytest.importorskip("kstrata.verify.api")
    task = _small_cross_entropy_task(tmp_path)
    shipped = kernels.initial_source("triton", "cross_entropy")
    ev = verify.verify_candidate(task, "triton-interp", {"source": shipped}, secret="ce-offset",
                                 scope="full", timeout_s=600, pool=judge)
    assert ev.verdict.value == "correct", ev
    rounded = shipped.replace("loss = (m - z_label) + tl.log(tl.sum(e, axis=0))",
                              "loss = (m + tl.log(tl.sum(e, axis=0))) - z_label")
    assert rounded != shipped
    ev = verify.verify_candidate(task, "triton-interp", {"source": rounded}, secret="ce-offset",
                                 scope="full", timeout_s=600, pool=judge)
    assert ev.verdict.value == "correct", ev
    unshifted = shipped.replace("e = tl.where(mask, tl.exp(z - m), 0.0)", "e = tl.where(mask, tl.exp(z), 0.0)"
                                ).replace("loss = (m - z_label) + tl.log(tl.sum(e, axis=0))",
                                          "loss = tl.log(tl.sum(e, axis=0)) - z_label")
    assert unshifted.count("tl.exp(z)") == 1 and "tl.log(tl.sum(e, axis=0)) - z_label" in unshifted
    ev = verify.verify_candidate(task, "triton-interp", {"source": unshifted}, secret="ce-offset",
                                 scope="full", timeout_s=600, pool=judge)
    assert ev.verdict.value == "incorrect", ev

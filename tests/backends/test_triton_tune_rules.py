"""The Triton autotuner layer's text edits (``kstrata.backends.triton.tune_rules``):
tunables found by marker and by pattern, variants that stay correct under
Triton's interpreter, and candidate text that is never executed in kstrata's
process while variants are made."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from kstrata import kernels
from kstrata.agents.base import ProposeContext
from kstrata.agents.builtin import TritonTuneProposer, for_backend
from kstrata.backends.registry import get_backend
from kstrata.backends.triton import tune_rules as tr
from kstrata.execute import WorkerPool
from kstrata.tasks.loader import resolve_task

CHECK = "kstrata.backends.tilelang.check:check_candidate"

#: a user's softmax without markers: literal launch keywords only
USER_SOFTMAX = (Path(__file__).parent / "data" / "user_softmax_triton.py").read_text()


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(size=1, env={"TRITON_INTERPRET": "1"}) as p:
        yield p


def _correct(pool, task_name: str, text: str) -> bool:
    task = resolve_task(task_name)
    for shape in task.small_shapes:
        r = pool.call(CHECK, "triton-interp", str(task.path), {"source": text}, shape,
                      atol=1e-4, rtol=1e-4, timeout_s=300)
        assert r.ok, f"{r.kind}: {r.error}"
        if not r.value["ok"]:
            return False
    return True


def test_every_shipped_triton_kernel_declares_tunables():
    for name in kernels.tasks_with_initial("triton"):
        tunables = tr.find_tunables(kernels.initial_source("triton", name))
        assert tunables and all(t.origin == "marked" for t in tunables), name
        assert any(t.name == "NUM_WARPS" for t in tunables), name
        for t in tunables:
            assert t.value in t.choices and len(t.choices) > 1, (name, t)


def test_shipped_softmax_moves_and_conditional_tunable():
    text = kernels.initial_source("triton", "softmax")
    found = {t.name: t for t in tr.find_tunables(text)}
    assert found["NUM_WARPS"].value == 4 and found["TWO_PASS"].value == 0
    assert found["CHUNK"].condition == "TWO_PASS"
    out = tr.variants(text)
    moved = {name for v in out for name in v.params}
    assert {"NUM_WARPS", "TWO_PASS", "ROWS_PER_PROG"} <= moved
    # CHUNK means nothing while TWO_PASS is 0, so no evaluation is spent on it
    assert all(v.params.get("TWO_PASS") == 1 for v in out if "CHUNK" in v.params)
    two_pass = tr.with_value(text, found["TWO_PASS"], 1)
    assert "CHUNK" in {n for v in tr.variants(two_pass) for n in v.params}


def test_user_kernel_tunables_detected_at_the_launch_site(pool):
    found = {t.name: t for t in tr.find_tunables(USER_SOFTMAX)}
    assert found["BLOCK_SIZE"].origin == "launch" and found["BLOCK_SIZE"].value == 1024
    assert found["num_warps"].choices == (1, 2, 4, 8, 16)
    out = tr.variants(USER_SOFTMAX, random.Random(0))
    texts = {v.text for v in out}
    assert len(texts) == len(out) >= 6
    rows = [v for v in out if v.rule == "rows-per-program"]
    assert rows and "kstrata_n_rows=x.shape[0]" in rows[0].text
    # a smaller BLOCK_SIZE than the row is a wrong kernel: the verifier's job, not the proposer's;
    # the structural variant and a warps move must stay correct (B=5 rows with 2 per program: the guard)
    warps = next(v for v in out if v.params.get("num_warps") == 8)
    assert _correct(pool, "softmax", USER_SOFTMAX)
    assert _correct(pool, "softmax", rows[0].text)
    assert _correct(pool, "softmax", warps.text)


@pytest.mark.parametrize("name", ["softmax", "layernorm", "relu"])
def test_structural_and_two_pass_variants_stay_correct(pool, name):
    text = kernels.initial_source("triton", name)
    found = {t.name: t for t in tr.find_tunables(text)}
    cases = [v.text for v in tr.structural_variants(text)]
    if "TWO_PASS" in found:
        two = tr.with_value(text, found["TWO_PASS"], 1)
        # chunks smaller than the small shapes' rows, so both passes loop
        two = tr.with_value(two, {t.name: t for t in tr.find_tunables(two)}["CHUNK"], 64)
        cases += [two, tr.rows_per_program(two, 4)]
    if name == "relu":
        assert not cases  # an elementwise kernel has no row loop to restructure
        cases = [tr.with_value(text, found["BLOCK"], 256)]
    for case in cases:
        assert case is not None and _correct(pool, name, case)


def test_variants_never_execute_candidate_text(tmp_path):
    marker = tmp_path / "pwned"
    hostile = USER_SOFTMAX.replace(
        "import torch\n",
        f"import torch\nopen({str(marker)!r}, 'w').write('ran')\n"
        "raise SystemExit('candidate code ran in the kstrata process')\n", 1)
    proposer = for_backend(get_backend("triton-interp"))
    assert isinstance(proposer, TritonTuneProposer)
    node = SimpleNamespace(sources={"source": hostile}, hash="h0")
    batch = proposer.propose(None, node, {}, "source",
                             context=ProposeContext(backend="triton-interp", levels=("source",)))
    assert len(batch.proposals) >= 4
    assert all(p.sources["source"] != hostile and p.level == "source" for p in batch.proposals)
    assert not marker.exists()


def test_gemm_sweep_is_the_tutorial_config_list():
    text = kernels.initial_source("triton", "matmul_square")
    sweep = tr.sweep_variants(text)
    assert len(sweep) == len(tr.GEMM_CONFIGS) and all(v.rule == "sweep" for v in sweep)
    for v, config in zip(sweep, tr.GEMM_CONFIGS):
        got = {t.name: t.value for t in tr.find_tunables(v.text)}
        assert tuple(got[n] for n in tr.GEMM_NAMES) == config


def test_row_sweep_runs_along_the_diagonal_and_skips_unread_values():
    text = kernels.initial_source("triton", "softmax")
    settings = [{t.name: t.value for t in tr.find_tunables(v.text)} for v in tr.sweep_variants(text)]
    warps = [s["NUM_WARPS"] for s in settings]
    assert warps == sorted(warps) and warps[0] == 1 and warps[-1] == 16
    assert {s["TWO_PASS"] for s in settings} == {0, 1}
    # CHUNK is read only with TWO_PASS: one-pass configs keep the start's value
    assert all(s["CHUNK"] == 2048 for s in settings if not s["TWO_PASS"])
    assert max(s["CHUNK"] for s in settings) == 8192
    assert text not in {v.text for v in tr.sweep_variants(text)}


def test_proposer_skips_texts_the_run_already_has():
    text = kernels.initial_source("triton", "relu")
    proposer = for_backend(get_backend("triton-interp"))
    first = tr.variants(text, random.Random(0), proposer.per_expansion)
    tree = [SimpleNamespace(sources={"source": v.text}) for v in first[:3]]
    ctx = ProposeContext(backend="triton-interp", levels=("source",), tree=tree)
    batch = proposer.propose(None, SimpleNamespace(sources={"source": text}, hash="h"), {}, "source", context=ctx)
    proposed = {p.sources["source"] for p in batch.proposals}
    assert len(batch.proposals) == proposer.per_expansion
    assert not proposed & {v.text for v in first[:3]}


def _first_params(task_name: str, shape: tuple[int, int], n: int = 3) -> list[dict]:
    text = kernels.initial_source("triton", task_name)
    return [tr._config(v) for v in tr.variants(text, limit=n, shape=shape)]


def test_long_rows_try_two_passes_or_more_warps_first():
    # cross_entropy's timing shape on a GPU: 4096 rows of 32000 classes; one pass over a 32768-wide block
    # at 4 warps holds 256 floats per thread (spills): the first proposals split the row or add warps
    for config in _first_params("cross_entropy", (4096, 32000)):
        per_thread = (config.get("CHUNK") if config.get("TWO_PASS") else 32768) / (32 * config["NUM_WARPS"])
        assert per_thread <= 64, config
        assert config.get("ROWS_PER_PROG", 1) == 1


def test_short_rows_try_several_rows_per_program_or_fewer_warps_first():
    # 262144 rows of 64: one row is 0.5 element per thread at 4 warps
    for config in _first_params("softmax", (262144, 64)):
        assert config.get("ROWS_PER_PROG", 1) > 1 or config["NUM_WARPS"] < 4, config
        assert not config.get("TWO_PASS"), config


def test_ranking_keeps_every_variant():
    text = kernels.initial_source("triton", "softmax")
    plain = tr.variants(text)
    ranked = tr.variants(text, shape=(4096, 4096))
    assert sorted(v.text for v in plain) == sorted(v.text for v in ranked)
    assert [v.text for v in plain] != [v.text for v in ranked]


def test_builtin_proposer_ranks_for_the_runs_timing_shape():
    from kstrata.agents.base import ProposeContext
    from kstrata.agents.builtin import TritonTuneProposer
    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import resolve_task

    proposer = TritonTuneProposer(get_backend("triton-interp"), per_expansion=3)
    task = resolve_task("cross_entropy")
    assert proposer._geometry(task, ProposeContext("triton-interp", ("source",))) == (4096, 32000)
    small = ProposeContext("triton-interp", ("source",), timing_shape={"B": 8, "C": 512})
    assert proposer._geometry(task, small) == (8, 512)


def test_gemm_variants_that_cannot_fit_shared_memory_are_left_out_by_element_size():
    # the tutorial's 128 x 256 x 64, 3-stage config needs 288 KiB of tiles in fp32 (it failed to
    # launch on the H200 as a runtime_error) and 144 KiB in fp16
    text = kernels.initial_source("triton", "matmul_square")
    big = dict(zip(tr.GEMM_NAMES, tr.GEMM_CONFIGS[0]))
    assert tr.gemm_shared_bytes(big, 4) > tr.SHARED_MEMORY_BYTES >= tr.gemm_shared_bytes(big, 2)

    def configs(element_bytes):
        return [{t.name: t.value for t in tr.find_tunables(v.text)}
                for v in tr.variants(text, random.Random(0), element_bytes=element_bytes)]

    fp32, fp16, unknown = configs(4), configs(2), configs(None)
    assert all(tr.gemm_shared_bytes(c, 4) <= tr.SHARED_MEMORY_BYTES for c in fp32)
    assert any(tr.gemm_shared_bytes(c, 4) > tr.SHARED_MEMORY_BYTES for c in fp16)
    assert {tuple(c[n] for n in tr.GEMM_NAMES) for c in fp16} >= {tr.GEMM_CONFIGS[0]}
    assert len(fp32) < len(fp16) <= len(unknown)
    # a row kernel has no GEMM tiles: nothing is left out
    row = kernels.initial_source("triton", "softmax")
    assert len(tr.variants(row, random.Random(0), element_bytes=4)) == len(tr.variants(row, random.Random(0)))


def test_proposer_passes_the_task_element_size():
    proposer = for_backend(get_backend("triton-interp"))
    task = resolve_task("matmul_square")
    candidate = SimpleNamespace(sources={"source": kernels.initial_source("triton", "matmul_square")})
    batch = proposer.propose(task, candidate, None, "source",
                             context=ProposeContext(backend="triton-interp", levels=("source",)))
    assert batch.proposals
    for p in batch.proposals:
        config = {t.name: t.value for t in tr.find_tunables(p.sources["source"])}
        assert tr.gemm_shared_bytes(config, 4) <= tr.SHARED_MEMORY_BYTES

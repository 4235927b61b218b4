"""The built-in tuners' ``# kstrata-tune:`` markers (newcomer nc15): a TileLang
start without one made the search stop after one evaluation saying only "a
proposer that gives the same answer again gains nothing from more"; `kstrata
tree` cut the reason mid-word; a malformed marker (``rpb = 1..16``) got the same
"declares no choices" as none at all. Triton's markers had the same gap."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console
from typer.testing import CliRunner

import kstrata
from kstrata.agents.builtin import TileLangTuneProposer
from kstrata.backends import triton
from kstrata.backends.registry import get_backend
from kstrata.backends.tilelang import tune_rules as tl
from kstrata.backends.triton import tune_rules as tr
from kstrata.cli.main import app
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.search.views import run_tree

KERNEL = '''import tilelang
import tilelang.language as T
import torch
import torch.nn as nn

SCHEDULE = {{"rpb": 1, "threads": 1}}{marker}


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x
'''


def test_a_malformed_tilelang_marker_names_its_line_and_the_syntax():
    (msg,) = tl.malformed(KERNEL.format(marker="  # kstrata-tune: rpb = 1..16"))
    assert msg.startswith("line 6: cannot read `rpb = 1..16`") and "`KEY in {A, B, ...}`" in msg
    assert tl.malformed(KERNEL.format(marker="  # kstrata-tune: rpb in {1, 2, 4}; threads in {128} on cuda")) == []
    (msg,) = tl.malformed(KERNEL.format(marker="  # kstrata-tune: rows in {1, 2}"))
    assert "`rows` is not a key of the SCHEDULE dict" in msg
    (msg,) = tl.malformed("RPB = 2  # kstrata-tune: rpb in {1, 2}\n")
    assert "belongs at the end of the one-line `SCHEDULE = {...}`" in msg


def test_a_malformed_triton_marker_names_its_line_and_the_syntax():
    (msg,) = tr.malformed("import triton\n\nBLOCK = 1024  # kstrata-tune: 256..4096\n")
    assert msg.startswith("line 3: cannot read `BLOCK = 1024  # kstrata-tune: 256..4096`")
    assert "{256, 512, 1024, 2048}" in msg
    assert tr.malformed("BLOCK = 1024  # kstrata-tune: {256, 512, 1024} if TWO_PASS\n") == []
    assert triton  # the package imports without a GPU


def test_optimize_refuses_a_start_whose_marker_it_cannot_read(tmp_path):
    bad = tmp_path / "tl_badtune.py"
    bad.write_text(KERNEL.format(marker="  # kstrata-tune: rpb = 1..16"))
    r = CliRunner().invoke(app, ["optimize", "rmsnorm", "--backend", "tilelang-c", "--initial", str(bad),
                                 "--budget", "evals=2", "--out", str(tmp_path / "run")], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert f"--initial {bad}: the built-in tuner cannot read its `# kstrata-tune:` marker: line 6" in r.output
    assert not (tmp_path / "run" / "run.db").exists()


def test_without_choices_the_stop_line_and_the_tree_say_why_and_what_to_add(tmp_path):
    backend = get_backend("tilelang-c")
    judge = SimpleNamespace(evaluate=lambda task, b, sources: ({"verdict": "correct", "feedback": []}, None))
    res = optimize(kstrata.load_task("rmsnorm"), backend, TileLangTuneProposer(backend), judge, "greedy",
                   Budget(evaluations=6), tmp_path / "run", settings=SearchSettings(final_contenders=0),
                   initial_sources={"source": KERNEL.format(marker=""), "schedule": "{}"})
    assert "policy exhausted" in res.stop_reason
    assert "where it made no proposal, the proposer said: the built-in tuner has nothing to tune on this kernel" in res.stop_reason
    assert f"e.g. `{tl.SYNTAX}`" in res.stop_reason
    out = Console(width=200, record=True)
    out.print(run_tree(res.run_dir))
    text = " ".join(out.export_text().split())
    whole = f"e.g. `{tl.SYNTAX}` (`on cuda`: tuned on GPUs only), or use an LLM proposer (--proposer llm)"
    assert " ".join(whole.split()) in text  # whole, wrapped (it was cut at 120 characters)

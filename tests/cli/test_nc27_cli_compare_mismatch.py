"""``kstrata compare`` of a tvm-llvm run against a triton-interp run stopped before its first
verdict (newcomer nc27): the table said nothing of the backends differing, and the run with nothing
evaluated read "compile rate 0 [0, 0]", "correct rate 0" and "B − A = -1". Now the caption says
the backends differ, and a side with nothing evaluated reads "– (nothing evaluated)", with no
difference taken."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from kstrata.bench import compare as C
from kstrata.bench import metrics as M

DONE = [M.TaskOutcome("rmsnorm", backend="tvm-llvm", proposer="builtin", compiled=True, correct=True,
                      verdicts={"correct": 10, "runtime_error": 2}, spent={"evaluations": 12.0})]
STOPPED = [M.TaskOutcome("rmsnorm", backend="triton-interp", proposer="builtin", spent={"evaluations": 0.0})]


def _text(monkeypatch, a, b) -> str:
    runs = {"A": a, "B": b}
    monkeypatch.setattr(C, "load_results", lambda path, count_initial=False: SimpleNamespace(outcomes=runs[path]))
    console = Console(width=400, record=True)
    console.print(C.compare_table("A", "B", n_resamples=50))
    return console.export_text()


def test_a_run_with_nothing_evaluated_reads_nothing_and_the_backends_are_told(monkeypatch):
    text = _text(monkeypatch, DONE, STOPPED)
    assert "A ran on tvm-llvm and B on triton-interp" in " ".join(text.split()), text
    rows = {line.split("│")[2].strip(): [c.strip() for c in line.split("│")[3:6]]
            for line in text.splitlines() if line.count("│") >= 6}
    assert rows["compile rate"][1] == "– (nothing evaluated)" and rows["compile rate"][2] == "–", rows
    assert rows["correct rate"][1] == "– (nothing evaluated)" and rows["correct rate"][2] == "–", rows
    assert not any(r[2].startswith("-1") for r in rows.values()), rows


def test_two_evaluated_runs_of_one_backend_are_compared_as_before(monkeypatch):
    text = _text(monkeypatch, DONE, DONE)
    assert "ran on" not in text and "nothing evaluated" not in text, text

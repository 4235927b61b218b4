"""``kstrata eval``'s timing line gives advice that applies to a plain eval:
a contended or noisy timing is followed by "run kstrata eval again on a
quieter machine, or with a longer timing (--budget-ms)", never by the run's
``kstrata retime RUN`` (the newcomer's standalone eval had no RUN); and an
eval of a run's candidate names the run's own reading of it beside this
eval's timing, each said as what it is."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.cli.eval import evidence_text, run_reading_line, timing_line  # noqa: E402
from kstrata.search import Budget, SearchSettings, optimize  # noqa: E402
from kstrata.store.run_store import RunStore  # noqa: E402

NOTE = ("contended: other processes kept 1.84 of 2 CPUs busy during this timing, which used 2 thread(s); "
        "candidate and baseline were not timed alike. Time it again on a quiet machine (`kstrata retime RUN`) "
        "before believing the speedup")


def _timing(*suspicious: str) -> dict:
    return {"candidate_ms": 1.0, "baseline_ms": 1.32, "speedup": 1.321, "speedup_ci": [0.897, 1.74],
            "confidence": 0.95, "suspicious": list(suspicious), "method": "paired", "pairs": 40,
            "shape": {"B": 1024, "D": 1024}}


def test_a_contended_eval_suggests_what_applies_to_an_eval():
    line = timing_line(_timing(NOTE, NOTE), budget_ms=1000)
    assert "retime" not in line and "RUN" not in line
    assert line.count("other processes kept 1.84 of 2 CPUs busy") == 1  # a note repeated is said once
    assert "candidate and baseline were not timed alike" in line
    assert "run kstrata eval again on a quieter machine, or with a longer timing (--budget-ms, now 1000)" in line


def test_a_note_with_its_own_advice_keeps_it_and_gets_no_busy_machine_advice():
    note = "overhead: the call is dominated by launch overhead; time a larger shape (--timing-shape)"
    line = timing_line(_timing(note))
    assert note in line and "quieter machine" not in line
    assert "SUSPICIOUS" not in timing_line(_timing())


def test_an_eval_of_a_runs_candidate_names_the_runs_reading_as_the_runs(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0))
    best = json.loads((res.run_dir / "summary.json").read_text())["best"]
    with RunStore.open(res.run_dir) as store:
        sources = store.sources(best["hash"])
    line = run_reading_line(res.run_dir / "best", sources, FakeBackend.name)
    s = best["speedups"][0]
    from kstrata.measure.speedup_words import speedup_text

    assert line == (f"run {res.run_dir} reads this candidate ({best['hash'][:12]}) at "
                    f"{speedup_text(s['value'], s['ci_low'], s['ci_high'])} vs eager (first timing); the timing above is this "
                    "eval's own, now, on this machine")
    assert run_reading_line(tmp_path / "elsewhere.py", sources, FakeBackend.name) is None  # a plain file: no run
    assert run_reading_line(res.run_dir / "best", {"schedule": "tile=99\n"}, FakeBackend.name) is None


def test_evidence_values_are_printed_as_words_not_python_reprs():
    pre = {"estimate_s": 12.3456, "shapes": [{"B": 8, "D": 512}, {"B": 5, "D": 77}], "ok": True}
    assert evidence_text(pre) == "estimate_s=12.3, shapes=((B=8, D=512), (B=5, D=77)), ok=True"
    assert "{" not in evidence_text({"a": {"b": 1}}) and evidence_text("plain") == "plain"


def test_a_speed_above_the_roofline_is_called_out():
    # red-team 2026-12-04: a GEMM that recomputed only what the timer had changed read 1.43x at 131% of the
    # roofline, with no word about it (the impossible floor is 1.5x above the ceilings)
    above = {**_timing(), "bound": "compute", "roofline_fraction": 1.31}
    assert "131.0% of the roofline (ABOVE the ceilings" in timing_line(above)
    assert "check that it does all of the task's work" in timing_line(above)
    assert "speedup 1.321x [0.897, 1.740] (the median of the paired ratios, 95% CI)" in timing_line(above)
    within = {**_timing(), "bound": "memory", "roofline_fraction": 0.91}
    assert "ABOVE" not in timing_line(within)


def test_the_speedup_says_tie_faster_or_slower_by_its_interval():
    """Newcomer nc13: 0.956x [0.814, 1.125] was printed with no word; the README calls it a tie."""
    assert "CI): a tie" in timing_line(_timing())  # [0.897, 1.74] holds 1.0
    assert "CI): faster" in timing_line({**_timing(), "speedup_ci": [1.05, 1.74]})
    assert "CI): slower" in timing_line({**_timing(), "speedup": 0.8, "speedup_ci": [0.7, 0.9]})


def test_a_suspicious_timing_is_never_called_faster():
    """Newcomer nc22: an eval of the reference's own ops read "1.658x [1.022, 2.834] ...: faster"
    beside a SUSPICIOUS contended note."""
    line = timing_line({**_timing(NOTE), "speedup": 1.658, "speedup_ci": [1.022, 2.834]})
    assert "faster;" not in line and ": faster" not in line
    assert "CI): not trusted" in line and "SUSPICIOUS: contended" in line
    assert "CI): faster" in timing_line({**_timing(), "speedup_ci": [1.05, 1.74]})  # a clean timing still is

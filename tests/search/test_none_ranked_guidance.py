"""A run that ranked nothing (every correct candidate's timing untrusted) is not
handed over as a result: the end-of-run lines say that nothing was ranked and
that ``kstrata retime`` on a quieter machine comes first, ``kstrata export``
refuses its best without ``--unranked`` (and warns with it), and ``kstrata
retime`` gives each reason a candidate stayed unranked once, with the
candidates it applies to."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask, contended_finding
from typer.testing import CliRunner

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.cli import retime as R
from kstrata.cli.main import app
from kstrata.search import Budget, SearchSettings, optimize
from kstrata.search.tree import UNTRUSTED_PREFIX
from kstrata.search.views import next_steps

WIDE = {"COLUMNS": "400"}


class Timed:
    """Every candidate correct at 1.5x; its timing untrusted when ``trusted`` is false."""

    def __init__(self, trusted: bool):
        self.trusted = trusted

    def evaluate(self, task, backend, sources):
        findings = [] if self.trusted else [f"{UNTRUSTED_PREFIX} the timing stayed noisy after 2 re-timing(s)"]
        return ({"verdict": "correct", "feedback": []},
                {"median_ms": 1.0, "speedups": {"eager": {"value": 1.5, "ci": [1.4, 1.6]}}, "findings": findings})


class _NoProposer:
    name = "none"

    def propose(self, *a, **k):
        return []


def _relu_run(tmp_path, trusted: bool):
    """A finished relu run on the pytorch backend: its initial candidate, correct."""
    return optimize(kstrata.load_task("relu"), get_backend("pytorch"), _NoProposer(), Timed(trusted), "greedy",
                    Budget(evaluations=1), tmp_path / "run").run_dir


def test_end_of_run_lines_of_a_run_that_ranked_nothing_put_retime_first(tmp_path):
    run = _relu_run(tmp_path, trusted=False)
    text = next_steps(run)
    assert "nothing was ranked" in text and "none is known to be faster than eager" in text
    assert "(the initial candidate) only as a correct fallback" in text
    assert text.index(f"kstrata retime {run}") < text.index(f"kstrata export {run}")
    assert "use it from Python" not in text


def test_end_of_run_lines_of_a_ranked_run_lead_to_export(tmp_path):
    run = _relu_run(tmp_path, trusted=True)
    text = next_steps(run)
    assert f"kstrata export {run} --to DIR" in text and "nothing was ranked" not in text


def test_export_refuses_an_unranked_best_unless_asked_and_then_warns(tmp_path):
    run = _relu_run(tmp_path, trusted=False)
    to = tmp_path / "relu_kernel"
    r = CliRunner().invoke(app, ["export", str(run), "--to", str(to)], env=WIDE)
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "nothing was ranked" in r.output and f"kstrata retime {run}" in r.output and "--unranked" in r.output
    assert not to.exists()
    with pytest.raises(Exception, match="nothing was ranked"):
        kstrata.export(run, to)
    r = CliRunner().invoke(app, ["export", str(run), "--to", str(to), "--unranked"], env=WIDE)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("warning: ") and "is not ranked: its timing was not trusted" in r.output
    assert "1.5x [1.4, 1.6], measured at" in r.output  # the reading every view shows, and which it is
    assert "(the run's first timing; timing not trusted; see kstrata retime)" in r.output
    assert json.loads((to / "export.json").read_text())["timing_trusted"] is False


def test_a_named_unranked_candidate_is_refused_like_an_unranked_best(tmp_path):
    """--candidate was a way around the refusal (newcomer nc9 exported a noisy 2.55x reading so)."""
    run = _relu_run(tmp_path, trusted=False)
    cand = json.loads((run / "summary.json").read_text())["best"]["hash"]
    to = tmp_path / "named"
    r = CliRunner().invoke(app, ["export", str(run), "--to", str(to), "--candidate", cand[:8]], env=WIDE)
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "is not ranked" in r.output and f"kstrata retime {run} {cand[:12]}" in r.output, r.output
    assert not to.exists()
    r = CliRunner().invoke(app, ["export", str(run), "--to", str(to), "--candidate", cand[:8], "--unranked"],
                           env=WIDE)
    assert r.exit_code == 0 and r.output.startswith("warning: "), r.output


def test_export_says_how_a_script_elsewhere_imports_it_and_that_works(tmp_path):
    run = _relu_run(tmp_path, trusted=True)
    to = tmp_path / "out" / "relu_kernel"
    r = CliRunner().invoke(app, ["export", str(run), "--to", str(to)], env=WIDE)
    assert r.exit_code == 0, r.output
    assert "warning" not in r.output
    line = next(ln for ln in r.output.splitlines() if "PYTHONPATH=" in ln)
    assert f"PYTHONPATH={to.parent} python SCRIPT.py" in line
    script = tmp_path / "elsewhere" / "use.py"
    script.parent.mkdir()
    script.write_text("from relu_kernel import KernelModule, task_module\n"
                      "x = task_module().get_inputs()[0]\n"
                      "print('ok', bool((KernelModule()(x) == x.clamp_min(0)).all()))\n")
    env = {**os.environ, "PYTHONPATH": str(to.parent)}
    out = subprocess.run([sys.executable, str(script)], cwd=script.parent, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok True", out.stderr[-2000:]


class Contended(FakeEvaluator):
    """A busy machine: every timing of the final round is contended, each with its own reading."""

    def __init__(self):
        super().__init__()
        self.busy = 1.30

    def final_round(self, task, backend, srcs):
        _, m = super().evaluate(task, backend, srcs)
        self.busy += 0.02
        return {**m, "findings": [contended_finding(self.busy)]}


def test_retime_on_a_busy_machine_says_why_once_with_the_candidates(tmp_path, monkeypatch):
    class AllNoisy(FakeEvaluator):
        def evaluate(self, task, backend, srcs):
            ev, m = super().evaluate(task, backend, srcs)
            if m is not None:
                m["findings"] = [f"{UNTRUSTED_PREFIX} the timing stayed noisy after 2 re-timing(s)"]
            return ev, m

    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), AllNoisy(), "greedy", Budget(evaluations=5),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0))
    stop = json.loads((res.run_dir / "summary.json").read_text())["stop_reason"]
    monkeypatch.setattr(R, "open_run", lambda run_dir: R.RunInfo(res.run_dir, FakeTask(), FakeBackend(), None,
                                                                ("eager",), stop))
    monkeypatch.setattr(R, "retime_run", functools.partial(R.retime_run, evaluator=Contended()))
    best = json.loads((res.run_dir / "summary.json").read_text())["best"]["hash"]
    exported = tmp_path / "exported"  # an earlier export of the unranked best (export.json as export writes it)
    exported.mkdir()
    (exported / "export.json").write_text(json.dumps({"candidate": best, "run": str(res.run_dir.resolve()),
                                                      "chosen": "best", "summary_sha256": "before"}))
    (res.run_dir / "exports.json").write_text(json.dumps({str(exported.resolve()): best}))
    r = CliRunner().invoke(app, ["retime", str(res.run_dir)], env=WIDE)
    assert r.exit_code == 0, r.output
    retimed = [ln.split(":")[0] for ln in r.output.splitlines() if ln.endswith("still unranked")]
    assert len(retimed) == 5
    (why,) = [ln for ln in r.output.splitlines() if ln.startswith("still unranked")]
    assert why.startswith(f"still unranked, 5 candidates ({', '.join(retimed)}): other processes kept 1.3-1.4 of "
                          "the 2 CPUs busy while they were timed; time them again on a quieter machine")
    assert "Time it again on a quiet machine" not in r.output  # the judge's note, once per timing, is not repeated
    assert "nothing was ranked" in r.output and f"kstrata retime {res.run_dir}" in r.output
    # the stale export is not to be exported again while nothing ranks
    assert f"stale export: {exported.resolve()}" in r.output and "export again once a candidate ranks" in r.output
    assert "run kstrata export again" not in r.output


class TimedWithRoofline(Timed):
    def evaluate(self, task, backend, sources):
        ev, m = super().evaluate(task, backend, sources)
        return ev, {**m, "roofline_fraction": 0.42, "bound": "memory"}


@pytest.mark.parametrize("trusted", [False, True])
def test_show_marks_a_roofline_from_an_untrusted_timing(tmp_path, trusted):
    run = optimize(kstrata.load_task("relu"), get_backend("pytorch"), _NoProposer(), TimedWithRoofline(trusted),
                   "greedy", Budget(evaluations=1), tmp_path / "run").run_dir
    r = CliRunner().invoke(app, ["show", str(run)], env=WIDE)
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.strip().startswith("roofline"))
    assert "42.0%" in line
    assert ("untrusted" in line) is (not trusted)


def test_retime_says_why_a_timing_failed(tmp_path):
    class Fails(FakeEvaluator):
        final_error = None

        def final_round(self, task, backend, srcs):
            self.final_error = "CandidateLoadError: candidate process: killed by signal 9 (out of memory)"
            return None

    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=2),
                   tmp_path / "run", settings=SearchSettings(final_contenders=0))
    stop = json.loads((res.run_dir / "summary.json").read_text())["stop_reason"]
    info = R.RunInfo(res.run_dir, FakeTask(), FakeBackend(), None, ("eager",), stop)
    orig = R.open_run
    R.open_run = lambda run_dir: info
    try:
        rows = R.retime_run(res.run_dir, evaluator=Fails())
    finally:
        R.open_run = orig
    assert rows and all(r["after"] is None for r in rows)
    assert rows[0]["why"] == ("the timing failed (CandidateLoadError: candidate process: killed by signal 9 (out of "
                              "memory)); the earlier one stands")


def test_busy_span_gives_one_number_when_the_readings_round_alike():
    from kstrata.search.views import busy_span

    assert busy_span([contended_finding(1.61), contended_finding(1.64)])[0] == "1.6"
    assert busy_span([contended_finding(1.3), contended_finding(1.42)])[0] == "1.3-1.4"


def test_show_names_the_run_in_the_judges_retime_advice(tmp_path):
    """The newcomer round of 2026-12-03: `show` printed the judge's advice with a literal RUN."""
    class Advised(Timed):
        def evaluate(self, task, backend, sources):
            ev, m = super().evaluate(task, backend, sources)
            m["findings"] = [f"{UNTRUSTED_PREFIX} noisy; re-time it on a quiet machine (`kstrata retime RUN`)"]
            return ev, m

    run = optimize(kstrata.load_task("relu"), get_backend("pytorch"), _NoProposer(), Advised(False), "greedy",
                   Budget(evaluations=1), tmp_path / "run").run_dir
    r = CliRunner().invoke(app, ["show", str(run)], env=WIDE)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # a long path is wrapped onto lines of its own
    assert f"kstrata retime {run}" in text and "kstrata retime RUN" not in text, r.output

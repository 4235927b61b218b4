"""Newcomer nc25 (README only, a shared 2-core machine at load 2-175)."""

from __future__ import annotations

from kstrata.cli.eval import timing_line
from kstrata.measure.contention import most_favourable_speedup

NOTE = ("contended: other processes kept {others} of 2 CPUs busy during this timing, which used 2 thread(s); "
        "candidate and baseline were not timed alike. Time it again on a quiet machine (`kstrata retime RUN`) "
        "before believing the speedup")


def _timing(speedup: float, lo: float, hi: float, *suspicious: str) -> dict:
    return {"candidate_ms": 25.6162, "baseline_ms": 1.7338, "speedup": speedup, "speedup_ci": [lo, hi],
            "confidence": 0.95, "suspicious": list(suspicious), "method": "paired", "pairs": 84,
            "shape": {"B": 1024, "N": 1024}}


def test_a_contended_timing_far_below_one_is_called_slower_and_still_untrusted():
    # nc25: a per-row loop read 0.078x [0.066, 0.092] with others at 1.25 of 2 CPUs and eval said
    # "neither faster nor slower"; the contention can make it at most 0.29x
    line = timing_line(_timing(0.078, 0.066, 0.092, NOTE.format(others="1.25")))
    assert "speedup 0.078x [0.066, 0.092]" in line
    assert "slower, even at the most favourable reading the contention allows (at most 0.29x)" in line
    assert "not trusted as a timing" in line and "not ranked" in line
    assert "faster than" not in line and "SUSPICIOUS: contended" in line


def test_a_contended_timing_the_contention_could_explain_says_neither():
    # the same newcomer's 0.351x [0.276, 0.433] at 1.46 of 2 CPUs: the contention could explain it all
    line = timing_line(_timing(0.351, 0.276, 0.433, NOTE.format(others="1.46")))
    assert "so it says neither faster nor slower" in line and "slower, even" not in line
    # a contended reading above 1 is never worded faster
    line = timing_line(_timing(3.0, 2.5, 3.5, NOTE.format(others="0.9")))
    assert "neither faster nor slower" in line and ": faster" not in line


def test_a_suspicious_note_that_does_not_bound_the_distortion_says_neither():
    overhead = "overhead: the call is dominated by launch overhead; time a larger shape (--timing-shape)"
    line = timing_line(_timing(0.078, 0.066, 0.092, NOTE.format(others="1.25"), overhead))
    assert "neither faster nor slower" in line


def test_the_bound_follows_the_candidates_share_of_the_loop():
    # candidate calls fill 1 / (1 + 0.092) of the loop; others held 1.25 / that while it ran
    share = 1 / 1.092
    assert abs(most_favourable_speedup(0.092, [NOTE.format(others="1.25")]) - 0.092 * 2 / (2 - 1.25 / share)) < 1e-12
    assert most_favourable_speedup(0.5, [NOTE.format(others="1.9")]) is None  # the others held every CPU
    assert most_favourable_speedup(0.5, []) is None


def _runtime_error_run(tmp_path, frames: int = 3):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))
    from search_fakes import FakeBackend, FakeProposer, FakeTask

    from kstrata.search import Budget, optimize

    tb = ("Traceback (most recent call last):\n"
          + "".join(f'  File "/site-packages/triton/interpreter.py", line {i}, in call\n    inner()\n'
                    for i in range(frames))
          + "triton.runtime.errors.InterpreterError: ValueError('mask has unsupported dtype')\n\n"
          "The candidate's own frames (innermost last):\n"
          '  File "<candidate>", line 18, in _l2norm_rows\n'
          "    x = tl.load(X + row * D + cols, mask=m, other=0.0)\n")

    class Raises:
        def evaluate(self, task, backend, srcs):
            return {"verdict": "runtime_error", "check": "run", "evidence": {
                "message": "candidate raised InterpreterError: ValueError('mask has unsupported dtype')",
                "test": {"distribution": "normal", "seed": 0, "shape": {"B": 8, "D": 512}},
                "traceback": tb}}, None

    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), Raises(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", initial_sources={"graph": "fuse=0\n", "schedule": "tile=1\norder=0\n"})
    return res.run_dir, res.tree.root.hash


def test_show_prints_a_runtime_errors_traceback_and_failing_kernel_line_as_eval_does(tmp_path):
    # nc25: `kstrata show RUN HASH` printed the exception message only; the traceback was stored
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    run_dir, digest = _runtime_error_run(tmp_path)
    out = CliRunner().invoke(app, ["show", str(run_dir), digest[:12]], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "message        candidate raised InterpreterError" in out.output
    assert "  test: distribution=normal, seed=0, shape=(B=8, D=512)" in out.output
    assert "  traceback: Traceback (most recent call last):" in out.output
    assert '    |   File "<candidate>", line 18, in _l2norm_rows' in out.output
    assert "    |     x = tl.load(X + row * D + cols, mask=m, other=0.0)" in out.output


def test_a_long_traceback_keeps_the_candidates_own_frames_at_its_end(tmp_path):
    from kstrata.cli.eval import evidence_line

    run_dir, digest = _runtime_error_run(tmp_path, frames=60)
    from kstrata.search.views import shown_candidate

    _, node, _ = shown_candidate(run_dir, digest)
    line = evidence_line("traceback", node.evaluation.evidence["traceback"], 200)
    assert "earlier lines)" in line and "more lines" not in line
    assert line.splitlines()[-1] == "    |     x = tl.load(X + row * D + cols, mask=m, other=0.0)"
    assert line.splitlines()[0] == "  traceback: Traceback (most recent call last):"


HOLD = ("import sys, time\nfrom kstrata.store.lock import run_lock\n"
        "with run_lock(sys.argv[1], 'kstrata optimize'):\n    print('held', flush=True)\n    time.sleep(600)\n")


def test_out_at_a_run_in_use_says_both_that_it_holds_a_run_and_who_uses_it(tmp_path):
    # nc25: `--out RUN` said "already holds a run; pass --resume"; only that --resume then said "in use by PID N"
    import signal
    import subprocess
    import sys

    from typer.testing import CliRunner

    from kstrata.cli.main import app
    from kstrata.store.lock import in_use_by

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.db").write_bytes(b"")
    assert in_use_by(run_dir) is None  # no run.lock: nobody
    args = ["optimize", "argmax_dim", "--backend", "pytorch", "--out", str(run_dir)]
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert in_use_by(run_dir) == f"PID {holder.pid} (kstrata optimize)"
        out = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
        assert out.exit_code == 2, out.output
        said = " ".join(out.output.split())
        assert f"already holds a run, and it is in use by PID {holder.pid} (kstrata optimize) now" in said
        assert f"--resume {run_dir}" in said and "choose another --out" in said
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert in_use_by(run_dir) is None  # the lock went with its holder; trying it took nothing
    out = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert "already holds a run; pass --resume" in " ".join(out.output.split()) and "in use" not in out.output


def test_the_interpreter_estimate_follows_a_steady_load_not_a_one_minute_spike(monkeypatch):
    # nc25: a 1-minute load spike to 175 on 2 CPUs announced "about 94 min" for a 2-minute verification
    from kstrata.verify import interp_cost

    monkeypatch.setattr(interp_cost, "_LOAD", [])
    monkeypatch.setattr(interp_cost, "LOAD_KEPT_S", 0.0)
    monkeypatch.setattr("kstrata.execute.cpus.allowed_cpu_count", lambda: 2)
    monkeypatch.setattr(interp_cost.os, "getloadavg", lambda: (175.0, 40.0, 9.0))
    monkeypatch.setattr(interp_cost, "_runnable_now", lambda: 3.0)  # a spike of tasks blocked on disk
    assert interp_cost.machine_load() == (3.0, "tasks runnable now (median of a few readings)")
    assert interp_cost.busy_factor() == 1.5
    monkeypatch.setattr(interp_cost, "_runnable_now", lambda: None)  # off Linux: the averages only
    assert interp_cost.machine_load() == (40.0, "5-minute load average") and interp_cost.busy_factor() == 20.0
    monkeypatch.setattr(interp_cost.os, "getloadavg", lambda: (6.0, 40.0, 9.0))  # a load falling back
    assert interp_cost.machine_load() == (6.0, "1-minute load average")


def test_the_estimate_names_the_load_figure_it_used(monkeypatch):
    from kstrata.backends.registry import get_backend
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import interp_cost

    monkeypatch.setattr(interp_cost, "_LOAD", [])
    monkeypatch.setattr(interp_cost, "LOAD_KEPT_S", 60.0)
    monkeypatch.setattr("kstrata.execute.cpus.allowed_cpu_count", lambda: 2)
    monkeypatch.setattr(interp_cost.os, "getloadavg", lambda: (175.0, 12.0, 9.0))
    monkeypatch.setattr(interp_cost, "_runnable_now", lambda: None)
    task = resolve_task("softmax")
    est = interp_cost.estimate(task, "full")
    assert est["busy"] == 6.0 and est["load_figure"] == "5-minute load average"
    note = interp_cost.slow_note(task, get_backend("triton-interp"), "full")
    assert ("on this machine's load now (6.0 times its CPUs by the 5-minute load average, the lowest of the 1- "
            "and 5-minute load averages and the tasks runnable now)") in note
    # the refusal stays the idle machine's low end (README: not even an elementwise kernel would finish)
    assert interp_cost.over_limit(task, get_backend("triton-interp"), "full", est["low_s"] / 6.0 * 0.99)
    assert interp_cost.over_limit(task, get_backend("triton-interp"), "full", est["low_s"] / 6.0 * 1.01) is None


def test_the_reports_tree_starts_scrolled_to_its_root(tmp_path):
    # nc25: the root of a wide tree sat at the far right of the report's tree box, its label cut, until scrolled
    import re
    import shutil
    import subprocess
    from importlib import resources

    import pytest

    from kstrata.report.plots import tree_svg

    def node(h, parent, role):
        return {"hash": h, "parent": parent, "level": "schedule", "role": role, "verdict": "correct",
                "speedup": 0.834, "best": False, "retimed": True, "unranked": True}

    root, graph = "r" * 64, "g" * 64
    nodes = [node(root, None, "initial"), node(graph, root, "graph-rules")]
    nodes += [node(f"{i:064d}", graph, "schedule-rules") for i in range(12)] + [node("b" * 64, root, "metaschedule")]
    svg = tree_svg(nodes, "run0")
    root_x = float(re.search(r'data-root-x="([0-9.]+)"', svg).group(1))
    assert root_x == float(re.search(r'<circle cx="([0-9.]+)"', svg).group(1))  # the root's own circle
    assert root_x > 1300  # past a 1280-px window's box: the case to scroll
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium not found")
    templates = resources.files("kstrata.report") / "templates"
    page = tmp_path / "tree.html"
    page.write_text(f"<!doctype html><html><head><style>{(templates / 'report.css').read_text()}</style></head>"
                    f'<body><div class="run" id="run0"><div class="scroll tree-box">{svg}</div></div>'
                    f'<script type="application/json" id="node-data">{{}}</script>'
                    f"<script>{(templates / 'report.js').read_text()}</script></body></html>")
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
                          "--window-size=1280,900", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert 'data-ready="1"' in dom
    assert 'data-root-in-view="1"' in dom


def test_medians_that_disagree_with_the_paired_speedup_are_explained():
    """Newcomer nc28: '14.5281 ms vs eager 12.5396 ms; speedup 1.027x' read as a bug."""
    t = {**_timing(1.027, 0.688, 1.314), "candidate_ms": 14.5281, "baseline_ms": 12.5396}
    line = timing_line(t)
    assert "the two medians alone give 0.863x" in line and "disagree where the timing is noisy" in line
    assert "medians alone" not in timing_line(_timing(0.078, 0.066, 0.092))  # both say slower: no note

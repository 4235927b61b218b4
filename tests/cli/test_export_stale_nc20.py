"""Newcomer nc20: `kstrata retime RUN 874be41a` named the export of another
candidate, 354857c9, stale ("354857c9bf9f's speedups changed since the export")
though 354857c9 was not re-timed, and importing that export warned: the export
compared a digest of the whole summary.json."""

from __future__ import annotations

import json
import subprocess

import kstrata
from kstrata.backends.registry import get_backend
from kstrata.search import Budget, optimize
from test_export_and_api import PY, RMSNORM_NEW, _Correct, _NoProposer


def _import_warning(out) -> str:
    code = f"import sys; sys.path.insert(0, {str(out.parent)!r}); import {out.name}"
    run = subprocess.run([PY, "-W", "always", "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stderr


def test_retiming_another_candidate_leaves_an_export_current(tmp_path):
    from kstrata.cli.export import stale_exports

    res = optimize(kstrata.load_task("rmsnorm"), get_backend("pytorch"), _NoProposer(), _Correct(), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": RMSNORM_NEW})
    out = kstrata.export(res.run_dir, tmp_path / "rms_named", candidate=res.best.hash[:8], unranked=True)
    # what re-timing another candidate does to summary.json: its reading and the run's totals change
    path = res.run_dir / "summary.json"
    summary = json.loads(path.read_text())
    other = "c" * 64
    summary["readings"] = {**summary.get("readings", {}), other: "0123456789abcdef"}
    summary["unranked"] = [*summary.get("unranked", []), {"hash": other, "speedup": 2.92, "why": "contended"}]
    summary["spent"] = {**summary["spent"], "evaluations": summary["spent"]["evaluations"] + 1}
    path.write_text(json.dumps(summary, indent=2) + "\n")
    assert stale_exports(res.run_dir) == []
    assert "re-timed since" not in _import_warning(out)

    # a change to the exported candidate's own readings still marks it stale
    summary["readings"][res.best.hash] = "fedcba9876543210"
    path.write_text(json.dumps(summary, indent=2) + "\n")
    (line,) = stale_exports(res.run_dir)
    assert line.startswith(str(out.resolve())) and "speedups changed" in line
    assert "re-timed since this export" in _import_warning(out)


def test_an_export_of_a_run_that_had_not_ended_is_stale_once_it_ends(tmp_path):
    """Newcomer nc28: a run stopped by an error (no summary.json) was exported at
    2.66x; --resume ended it and its final round re-timed the candidate to 1.84x,
    but the export had summary_sha256 null and importing it warned of nothing."""
    from kstrata.cli.export import stale_exports

    res = optimize(kstrata.load_task("rmsnorm"), get_backend("pytorch"), _NoProposer(), _Correct(), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"source": RMSNORM_NEW})
    path = res.run_dir / "summary.json"
    ended = json.loads(path.read_text())
    path.unlink()  # the run as an error left it: not ended
    out = kstrata.export(res.run_dir, tmp_path / "rms_early", candidate=res.best.hash[:8], unranked=True)
    assert json.loads((out / "export.json").read_text())["summary_sha256"] is None
    assert "had not ended" not in _import_warning(out)  # no summary yet: nothing to compare
    ended["readings"] = {**ended.get("readings", {}), res.best.hash: "fedcba9876543210"}  # its final round
    path.write_text(json.dumps(ended, indent=2) + "\n")
    assert "had not ended when this was exported" in _import_warning(out)
    (line,) = stale_exports(res.run_dir)
    assert line.startswith(str(out.resolve())) and "speedups changed" in line

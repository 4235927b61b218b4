"""No host directory but the Python installation, kstrata's package and the
task file is bound into a sandbox: not the judge's working and temporary
directory, not the directory ``python -m kstrata`` was started in
(:func:`kstrata.sandbox.policy.launch_dirs`; red-team round of 2026-12-04)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kstrata.sandbox import policy, status

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "host_dirs_bound"


def binds(cmd: list[str]) -> set[str]:
    return {cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind")}


def test_the_directory_python_was_started_in_is_not_bound(tmp_path, monkeypatch):
    """``python -m kstrata`` from a home directory: ``sys.path[0]`` is that
    directory, and it was bound into the sandbox that lowers an LLM's graph."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ssh").mkdir()
    monkeypatch.chdir(home)
    monkeypatch.setattr(sys, "path", [str(home), *sys.path])
    monkeypatch.setattr(sys, "argv", ["-m"])
    got = binds(policy.command(["true"]))
    assert not any(b == str(home) or b.startswith(str(home) + "/") for b in got), sorted(got)
    import kstrata

    assert str(Path(kstrata.__file__).resolve().parents[1]) in got  # kstrata's package still is


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_a_candidate_sees_nothing_of_the_judges_directories(probe_eval):
    r = probe_eval(CASE / "candidate.py")
    assert r["judge_dirs"] == {}, r["judge_dirs"]
    assert not [m for m in r["mounts"] if m.startswith(("/work", "/root", "/home")) and not
                m.startswith((str(REPO / "src"), str(REPO / ".venv"), "/root/.pyenv"))], r["mounts"]

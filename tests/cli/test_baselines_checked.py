"""``--baselines`` names known baselines only (newcomer nc16: ``--baselines eager,foo`` dropped foo silently
and stored it in config.json; ``--baselines foo`` started a run)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app


@pytest.fixture(autouse=True)
def _no_search(monkeypatch):
    """A run that got past the options stops at once (exit 130), so a wrong acceptance is quick to see."""
    import kstrata.search.loop as loop

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "optimize", interrupted)


@pytest.mark.parametrize("given, named", [("eager,foo", "'foo'"), ("foo", "'foo'"),
                                          ("metaschedule", "metaschedule is for tvm-* backends"),
                                          (",", "empty"), ("eager,eager", "twice")])
def test_optimize_refuses_unknown_baselines_before_making_a_run(tmp_path, given, named):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--baselines", given, "--out", str(out)], env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and text.startswith("error:") and named in text, r.output
    assert "eager, compile" in text or "each once" in text
    assert not out.exists()


def test_known_baselines_are_accepted(tmp_path):
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "triton-interp", "--budget", "evals=1",
                                 "--baselines", "eager,compile", "--out", str(tmp_path / "run")])
    assert r.exit_code == 130, r.output  # past the options: the (stubbed) search was interrupted

"""Ctrl-C (or SIGTERM) during ``kstrata export`` (its full-scope check can take
minutes) says so and that nothing was exported, exit 130/143 (newcomer nc20: it
printed nothing at all)."""

from __future__ import annotations

from typer.testing import CliRunner

import kstrata.cli.export as cli_export
from kstrata.cli.main import app
from kstrata.cli.signals import Terminated


def _raise(exc: BaseException):
    def export_run(*args, **kwargs):
        raise exc
    return export_run


def test_an_interrupted_export_says_nothing_was_exported(tmp_path, monkeypatch):
    to = tmp_path / "pkg"
    for exc, status, word in ((KeyboardInterrupt(), 130, "interrupted"), (Terminated(), 143, "terminated")):
        monkeypatch.setattr(cli_export, "export_run", _raise(exc))
        r = CliRunner().invoke(app, ["export", str(tmp_path / "run"), "--to", str(to)], env={"COLUMNS": "300"})
        text = " ".join(r.output.split())
        assert r.exit_code == status, (r.exit_code, r.output)
        assert f"{word}" in text and "nothing was exported" in text and not to.exists(), r.output

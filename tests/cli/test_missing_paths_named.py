"""A path that does not exist or cannot be written is named as such (newcomer nc16: ``export /nonexistent``
said "no run.db; is this a kstrata run directory?"; ``export RUN --to /proc/foo`` printed a raw
"[Errno 2]")."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app


@pytest.mark.parametrize("command", [["export", "{run}", "--to", "{tmp}/pkg"], ["tree", "{run}"],
                                     ["show", "{run}"], ["retime", "{run}"]])
def test_a_run_folder_that_does_not_exist_is_named_so(tmp_path, command):
    run = tmp_path / "nonexistent"
    args = [a.format(run=run, tmp=tmp_path) for a in command]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and f"{run}: no such directory" in text, r.output
    assert "is this a kstrata run directory" not in text


def test_export_to_a_place_that_cannot_be_written_says_so_before_reading_the_run(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    r = CliRunner().invoke(app, ["export", str(tmp_path / "nonexistent_run"), "--to", str(blocker / "pkg")],
                           env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "the package folder cannot be made there" in text, r.output
    assert "Errno" not in text

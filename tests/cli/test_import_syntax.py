"""``kstrata import`` of a file with a syntax error (newcomer nc11: it said
"imported"): refused in one line naming that line, the file parsed in a child
process and never run in kstrata's."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app

BROKEN = '''import torch
import triton
import triton.language as tl


class ModelNew(torch.nn.Module):
    def forward(self, x)
        return x
'''


def test_import_of_a_file_with_a_syntax_error_is_refused_naming_the_line(tmp_path):
    kernel = tmp_path / "broken.py"
    kernel.write_text(BROKEN)
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", "relu", "--backend", "triton-interp",
                                 "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert "imported" not in r.output.replace("nothing was imported", "") and "Traceback" not in r.output
    assert "broken.py, line 7" in r.output and "syntax error" in r.output
    assert not (tmp_path / "out").exists()


def test_import_checks_the_syntax_without_running_the_file(tmp_path):
    marker = tmp_path / "ran"
    kernel = tmp_path / "k.py"
    kernel.write_text(f"import triton\nopen({str(marker)!r}, 'w').close()\n\n\nclass ModelNew:\n    pass\n")
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", "relu", "--backend", "triton-interp",
                                 "--out", str(tmp_path / "out")])
    assert r.exit_code == 0 and "imported" in r.output, r.output
    assert not marker.exists()


def test_a_syntax_error_in_a_file_without_modelnew_is_named_not_the_missing_class(tmp_path):
    """newcomer nc16: ``import triton`` / ``def f(:`` said "defines no class ModelNew", not the line."""
    kernel = tmp_path / "syntax_bad_kernel.py"
    kernel.write_text("import triton\ndef f(:\n  pass\n")
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", "relu", "--backend", "triton",
                                 "--out", str(tmp_path / "out")], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "syntax_bad_kernel.py, line 2" in r.output and "ModelNew" not in r.output, r.output

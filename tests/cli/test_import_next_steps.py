"""``kstrata import`` said only "✓ imported" for an RMSNorm kernel imported
as softmax (the newcomer's report): it now says what was checked, warns when
ModelNew's constructor (read by pattern, never run) cannot take the task's
init inputs, and names the next commands (eval the folder, or optimize
--initial it)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.import_ import constructor_note
from kstrata.cli.main import app
from kstrata.tasks.loader import resolve_task

RMS = '''import torch
import triton


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()

    def forward(self, x):
        return x


class Other:
    def __init__(self, a, b, c):
        pass
'''


def test_import_warns_of_a_constructor_the_task_cannot_build_and_names_the_next_steps(tmp_path):
    kernel = tmp_path / "rms.py"
    kernel.write_text(RMS)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", "softmax", "--backend", "triton-interp",
                                 "--out", str(out)], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    cand = next(out.iterdir())
    assert "ModelNew.__init__ takes (dim, eps)" in r.output and "is this a softmax kernel?" in r.output
    assert f"kstrata eval softmax {cand}" in r.output
    assert f"kstrata optimize softmax --backend triton-interp --initial {cand}" in r.output


def test_a_constructor_that_fits_or_cannot_be_read_gets_no_warning():
    rms = resolve_task("rmsnorm")
    assert constructor_note(RMS, rms) is None  # rmsnorm's Model(D)
    assert constructor_note(RMS.replace("dim: int, eps: float = 1e-6", "*args"), resolve_task("softmax")) is None
    assert constructor_note(RMS.replace("    def __init__(self, dim: int, eps: float = 1e-6):\n"
                                        "        super().__init__()\n", "    pass\n"), rms) is None


def test_next_steps_name_a_task_file_by_its_path(tmp_path):
    """A task given as a file: the next commands name the file (its name alone is no suite task: nc14)."""
    task_file = tmp_path / "my softmax.py"
    task_file.write_text(resolve_task("softmax").source)
    kernel = tmp_path / "k.py"
    kernel.write_text(RMS.replace("dim: int, eps: float = 1e-6", "*args"))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", str(task_file), "--backend", "triton-interp",
                                 "--out", str(out)], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    cand = next(out.iterdir())
    # the candidate's folder is named after the task file, space included: quoted too (nc16)
    assert f"kstrata eval '{task_file}' '{cand}'" in r.output
    assert f"kstrata optimize '{task_file}' --backend triton-interp --initial '{cand}'" in r.output


def test_import_says_where_it_wrote_the_candidate(tmp_path, monkeypatch):
    """newcomer nc23: without --out, import wrote a candidates/ folder into the current directory without
    saying so; it names the folder it wrote (absolute) and that it is the default --out."""
    kernel = tmp_path / "k.py"
    kernel.write_text(RMS.replace("dim: int, eps: float = 1e-6", "*args"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    r = CliRunner().invoke(app, ["import", str(kernel), "--task", "softmax", "--backend", "triton-interp"],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    cand = next((work / "candidates").iterdir())
    assert f"written to {cand.resolve()} (./candidates/ in the current directory, the default --out)" in r.output

"""Task metadata that disagrees with the inputs is refused, and ``tasks list --path`` leaves out what ``tasks
show`` refuses (newcomer nc16: a task declaring float16 that fed float32, and one feeding int64 shown as
"float32", were accepted silently; a task whose reference raises was listed)."""

from __future__ import annotations

from typer.testing import CliRunner

from kstrata.cli.main import app

HEAD = "import torch\n{meta}N = 1024\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        {body}\n\n\n"
TAIL = "def get_inputs():\n    return [{draw}]\n\n\ndef get_init_inputs():\n    return []\n"


def _task(folder, name, body="return x * 2", draw="torch.randn(N)", meta=""):
    p = folder / f"{name}.py"
    p.write_text(HEAD.format(meta=meta, body=body) + TAIL.format(draw=draw))
    return p


def _run(*args):
    r = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    return r.exit_code, " ".join(r.output.split())


def test_a_declared_dtype_the_inputs_do_not_have_is_refused(tmp_path):
    p = _task(tmp_path, "t_dtype", meta='KSTRATA = {"dtype": "float16"}\n')
    code, text = _run("tasks", "show", str(p))
    assert code == 2 and "declares dtype 'float16'" in text and 'set "dtype": "float32"' in text, text


def test_integer_inputs_are_not_shown_as_the_default_float32(tmp_path):
    p = _task(tmp_path, "t_intinput", body="return torch.cumsum(x, 0)", draw="torch.randint(0, 10, (N,))")
    code, text = _run("tasks", "show", str(p))
    assert code == 2 and "default 'float32'" in text and 'set "dtype": "int64"' in text, text
    ok = _task(tmp_path, "t_int_ok", body="return torch.cumsum(x, 0)", draw="torch.randint(0, 10, (N,))",
               meta='KSTRATA = {"dtype": "int64"}\n')
    code, text = _run("tasks", "show", str(ok))
    assert code == 0 and "int64" in text, text


def test_mixed_dtypes_that_include_the_declared_one_pass(tmp_path):
    p = _task(tmp_path, "t_embed", body="return torch.ones(4)[x % 4]", draw="torch.randint(0, 10, (N,))")
    code, text = _run("tasks", "show", str(p))  # int64 indices, float32 output: float32 is among them
    assert code == 0, text


def test_tasks_list_leaves_out_a_task_whose_reference_raises(tmp_path):
    _task(tmp_path, "t_raises", body='raise RuntimeError("reference is broken")')
    _task(tmp_path, "t_good")
    code, text = _run("tasks", "list", "--path", str(tmp_path))
    assert code == 0 and "1 tasks" in text and "t_good" in text, text
    assert "skipped:" in text and "t_raises.py: the reference Model.forward raised RuntimeError" in text, text

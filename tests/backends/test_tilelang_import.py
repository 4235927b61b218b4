"""``kstrata import``: a user's kernel file becomes a candidate directory; bad input, one message."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kstrata import kernels
from kstrata.cli.main import app

runner = CliRunner()


def test_import_tilelang_and_triton(tmp_path):
    for dsl, backend in (("tilelang", "tilelang-c"), ("triton", "triton-interp")):
        src = kernels.initial_path(dsl, "softmax")
        r = runner.invoke(app, ["import", str(src), "--task", "softmax", "--backend", backend,
                                "--out", str(tmp_path)])
        assert r.exit_code == 0, r.output
        (cand,) = tmp_path.glob(f"softmax--{backend}--*")
        meta = json.loads((cand / "candidate.json").read_text())
        assert meta["backend"] == backend and meta["task"] == "softmax"
        assert (cand / "source.py").read_text() == src.read_text()
        assert ("schedule" in meta["levels"]) == (dsl == "tilelang")


def test_bad_input_is_one_clear_error(tmp_path):
    bad = tmp_path / "k.py"
    bad.write_text("import triton\n")
    cases = [
        (["import", str(tmp_path / "nope.py"), "-t", "relu", "-b", "triton"], "no such file"),
        (["import", str(bad), "-t", "relu", "-b", "triton"], "ModelNew"),
        (["import", str(bad), "-t", "no_such_task", "-b", "triton"], "no_such_task"),
        (["import", str(bad), "-t", "relu", "-b", "nope"], "unknown backend"),
        (["import", str(bad), "-t", "relu", "-b", "pytorch"], "not 'pytorch' ones"),
        (["import", str(tmp_path), "-t", "relu", "-b", "triton"], "a directory, not a file"),  # nc17
    ]
    bad2 = tmp_path / "t.py"
    bad2.write_text("class ModelNew: pass\n")
    cases.append((["import", str(bad2), "-t", "relu", "-b", "tilelang-c"], "does not import tilelang"))
    for args, msg in cases:
        r = runner.invoke(app, args + ["--out", str(tmp_path / "out")])
        assert r.exit_code == 2, (args, r.output)
        assert msg in " ".join(r.output.split()), (args, r.output)
    assert not (tmp_path / "out").exists()

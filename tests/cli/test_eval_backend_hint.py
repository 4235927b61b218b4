"""``kstrata eval`` of a Triton (or TileLang) file without ``--backend`` ran
it as plain PyTorch on the CPU and printed only Triton's "0 active drivers"
traceback (the newcomer's report): a failed ``pytorch`` evaluation of a file
whose text imports triton/tilelang now names the backends that run it. The
file is matched as text, never imported; a PyTorch file may import Triton
honestly, so the verdict stays as the judge gave it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import kstrata.cli.eval as cli_eval
from kstrata.cli.eval import backend_hint
from kstrata.cli.main import app
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation

TRITON = "import torch\nimport triton\nimport triton.language as tl\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_hint_names_the_backends_for_the_dsl_the_text_imports():
    hint = backend_hint({"source": TRITON}, "pytorch", "runtime_error")
    assert "imports triton" in hint and "--backend triton-interp" in hint and "--backend triton " in hint
    tl = backend_hint({"source": "from tilelang import language as T\n"}, "pytorch", "compile_error")
    assert "tilelang-c" in tl and "tilelang-cuda" in tl
    assert backend_hint({"source": TRITON}, "pytorch", "correct") is None
    assert backend_hint({"source": TRITON}, "triton-interp", "runtime_error") is None
    assert backend_hint({"source": "import torch  # not triton\ns = 'import triton'\n"}, "pytorch",
                        "runtime_error") is None


class _Pool:
    def close(self) -> None:
        pass


def test_eval_prints_the_hint_beside_the_runtime_error(tmp_path, monkeypatch):
    path = tmp_path / "tri.py"
    path.write_text(TRITON)
    ev = Evaluation(Verdict.RUNTIME_ERROR, check="public", evidence={
        "message": "RuntimeError: 0 active drivers ([]). There should only be one."})
    monkeypatch.setattr(cli_eval, "pool_for", lambda b: _Pool())
    monkeypatch.setattr(cli_eval, "evaluate_sources", lambda *a, **k: (ev, None))
    r = CliRunner().invoke(app, ["eval", "softmax", str(path), "--scope", "small", "--no-time"],
                           env={"COLUMNS": "400"})
    text = " ".join(r.output.split())  # the console wraps at its own width, whatever COLUMNS says under xdist
    assert "hint: this file imports triton" in text and "--backend triton-interp" in text, r.output
    r = CliRunner().invoke(app, ["eval", "softmax", str(path), "--no-time", "--json"])
    assert "--backend triton-interp" in json.loads(r.output.splitlines()[-1])["hint"]


def test_a_plain_pytorch_file_rejected_on_a_dsl_backend_is_told_to_use_pytorch():
    # newcomer nc20: `eval --backend triton-interp` of a PyTorch ModelNew read 'rejected no_torch_compute' only
    plain = {"source": "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return torch.relu(x)\n"}
    for backend, dsl in (("triton-interp", "Triton"), ("tilelang-c", "TileLang")):
        hint = backend_hint(plain, backend, "rejected", "no_torch_compute")
        assert hint and f"expects a {dsl} kernel" in hint and "--backend pytorch" in hint, hint
    assert backend_hint(plain, "triton-interp", "rejected", "kernel_launched") is not None
    assert backend_hint(plain, "triton-interp", "rejected", "no_caching") is None  # another fault
    assert backend_hint({"source": TRITON}, "triton-interp", "rejected", "no_torch_compute") is None  # a real kernel

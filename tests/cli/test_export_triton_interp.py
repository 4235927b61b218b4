"""An exported ``triton-interp`` kernel runs in Triton's CPU interpreter, as the run
verified it (newcomer nc11: the export's printed usage crashed with "0 active
drivers", no word of TRITON_INTERPRET)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kstrata.cli.export import _FILE


@pytest.mark.parametrize("backend, want", [("triton-interp", "1"), ("triton", "unset")])
def test_the_interpreter_is_switched_on_for_a_triton_interp_export(tmp_path, backend, want):
    pkg = tmp_path / "kexp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(_FILE.format(title="t", run="r", hash="h", runs_at="a"))
    (pkg / "export.json").write_text(json.dumps({"backend": backend, "shape": {}}))
    # what the candidate's @triton.jit would see when its module is loaded
    (pkg / "candidate.py").write_text("import os\nSEEN = os.environ.get('TRITON_INTERPRET', 'unset')\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, "-c", "import kexp; print(kexp.candidate_module().SEEN)"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want

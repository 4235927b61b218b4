"""``kstrata eval RUN/best`` where the run's config.json names no backend as text
(red-team rt65, left open: ``"backend": 5`` was read as no backend, the candidate
evaluated as ``pytorch`` and refused with "no level files of pytorch", naming
neither the file nor what to do)."""

from __future__ import annotations

import json
import subprocess
import sys

RELU = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" \
       "        return torch.relu(x)\n"


def _run(tmp_path, backend_value):
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    (run / "run.db").write_bytes(b"")
    (run / "config.json").write_text(json.dumps({"backend": backend_value, "task": {"name": "relu"}}))
    (run / "best" / "source.py").write_text(RELU)
    return run


def _eval(*args):
    return subprocess.run([sys.executable, "-m", "kstrata", "eval", "relu", *args, "--no-time", "--scope", "small"],
                          capture_output=True, text=True, timeout=600)


def test_a_run_config_without_a_backend_is_named_with_what_to_do(tmp_path):
    run = _run(tmp_path, 5)
    p = _eval(str(run / "best"))
    said = " ".join(p.stderr.split())
    assert p.returncode == 2, p.stderr
    assert f"{run / 'config.json'} names no backend" in said and "--backend" in said and "Traceback" not in said


def test_the_backend_given_stands_where_the_record_names_none(tmp_path):
    run = _run(tmp_path, 5)
    p = _eval(str(run / "best"), "--backend", "pytorch")
    assert p.returncode == 0, p.stderr
    assert p.stdout.lstrip().splitlines()[1].startswith("correct"), p.stdout

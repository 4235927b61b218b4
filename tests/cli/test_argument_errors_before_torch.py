"""An argument error of ``kstrata eval`` or ``kstrata tasks show/check`` is told
before torch loads (newcomer nc23: each took 10-11 s on a busy machine before
its one-line message, torch and the task loader imported first)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: runs the command line in a fresh interpreter and says its exit status and whether torch was imported
PROBE = """
import json, sys
from kstrata.__main__ import main
sys.argv = ["kstrata"] + json.loads(sys.argv[1])
try:
    main()
    code = 0
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "torch": "torch" in sys.modules}))
"""


@pytest.mark.parametrize("argv, said", [
    (["eval", "softmx", "{candidate}"], "unknown task 'softmx'. Did you mean: softmax"),
    (["eval", "{missing}.py", "{candidate}"], "no such task file"),
    (["eval", "softmax", "{missing}.py"], "no such candidate file or directory"),
    (["eval", "softmax", "{candidate}", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["tasks", "show", "nosuchtask"], "unknown task 'nosuchtask'"),
    (["tasks", "show", "{missing}.py"], "no such task file"),
    (["tasks", "check", "softmx"], "unknown task 'softmx'"),
])
def test_an_argument_error_is_told_before_torch_loads(tmp_path, argv, said):
    candidate = tmp_path / "k.py"
    candidate.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    argv = [a.format(candidate=candidate, missing=tmp_path / "nope") for a in argv]
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                       timeout=120)
    result = json.loads(p.stdout.strip().splitlines()[-1])
    assert result["code"] == 2, (result, p.stderr)
    assert said in " ".join(p.stderr.split()), p.stderr
    assert not result["torch"], f"torch was imported before the error: {p.stderr}"

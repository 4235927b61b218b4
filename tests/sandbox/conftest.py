"""Helpers of the sandbox tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
KSTRATA = str(Path(sys.executable).with_name("kstrata"))


@pytest.fixture
def probe_eval():
    """``probe_eval(candidate)``: what a probe candidate reported as its load
    error (``PROBE{json}ENDPROBE``) under ``kstrata eval relu CANDIDATE
    --backend pytorch --json --no-time --scope small --preset warn``."""

    def run(candidate: Path) -> dict[str, Any]:
        p = subprocess.run([KSTRATA, "eval", "relu", str(candidate), "--backend", "pytorch", "--json", "--no-time",
                            "--scope", "small", "--preset", "warn"],
                           capture_output=True, text=True, timeout=300, cwd=str(REPO))
        assert p.returncode == 0, p.stderr[-3000:]
        d = json.loads(p.stdout[p.stdout.index("{"):])
        m = re.search(r"PROBE(\{.*\})ENDPROBE", d["evidence"]["message"], re.S)
        assert m, d["evidence"]["message"][:2000]
        return json.loads(m.group(1))

    return run

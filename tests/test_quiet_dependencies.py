"""No warnings from dependencies on normal runs: torch's pytree FutureWarning,
raised whenever a LeafSpec is unpickled (a task crossing to a worker), is
silenced by importing kstrata, in the CLI and in every worker alike."""

from __future__ import annotations

import subprocess
import sys

TRIGGER = "import pickle, torch.utils._pytree as p; pickle.loads(pickle.dumps(p.LeafSpec()))"


def _stderr(code: str) -> str:
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True,
                          timeout=120).stderr


def test_the_treespec_future_warning_is_silenced_by_importing_kstrata():
    assert "FutureWarning" in _stderr(TRIGGER)  # the dependency does warn
    assert "FutureWarning" not in _stderr("import kstrata; " + TRIGGER)

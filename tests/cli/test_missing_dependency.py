"""The ``kstrata`` command in an interpreter that lacks one of kstrata's
requirements says which one and how to install it, in one line, instead of an
import traceback (newcomer nc10: ``python -m kstrata`` and ``kstrata setup --torch
system`` from a Python without torch)."""

from __future__ import annotations

import subprocess
import sys

from kstrata.__main__ import missing_dependency_message

# hides torch from the child, as an interpreter without it would, then runs `python -m kstrata ARGS`
CHILD = """
import runpy, sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTorch())
sys.argv = ["kstrata", *sys.argv[1:]]
runpy.run_module("kstrata", run_name="__main__")
"""


def test_a_missing_requirement_is_one_line_that_says_what_to_install():
    # `tasks list` loads the tasks, which need torch (`setup` no longer imports torch in this process: the
    # backend registry and its environments are torch-free since 9ab7371; the environment it makes checks
    # its own torch)
    r = subprocess.run([sys.executable, "-c", CHILD, "tasks", "list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: this Python ({sys.executable}) has no module 'torch'")
    assert f"{sys.executable} -m pip install torch==" in lines[0] and "--find-links DIR torch" in lines[0]


def test_help_needs_no_torch():
    r = subprocess.run([sys.executable, "-c", CHILD, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "optimize" in r.stdout


def test_kstratas_own_missing_module_is_not_hidden():
    assert missing_dependency_message(ModuleNotFoundError("x", name="kstrata.nothere")) is None
    assert missing_dependency_message(ModuleNotFoundError("x")) is None
    msg = missing_dependency_message(ModuleNotFoundError("x", name="tvm.tirx"))
    assert msg is not None and "has no module 'tvm'" in msg and "pip install apache-tvm`" in msg

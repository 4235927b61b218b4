"""Red team rt85: what one candidate leaves in its sandbox's /tmp and /dev/shm must never reach the next
candidate its zygote forks (kstrata.sandbox.scrub). A directory made readable but not searchable (mode 0400)
kept its subdirectories from Python 3.11's rmtree (it cannot stat an entry there), the scrub returned them as
left over, and the zygote ignored that list; a directory made unreadable (mode 000, 0300) or a tree deeper than
the recursion limit made the scrub raise (a TypeError from its retry of os.open, a RecursionError) and the
zygote die in the reap. Case: tests/sandbox/cases/rt85_scrub_unsearchable_dir."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kstrata.sandbox import status

pytestmark = pytest.mark.usefixtures("keep_idle_processes")

CASE = Path(__file__).resolve().parent / "cases" / "rt85_scrub_unsearchable_dir"
sandboxed = pytest.mark.skipif(not status().usable, reason="no sandbox here")


def _load_message(proc, task, text: str) -> str:
    from kstrata.verify.runner import task_record

    h, _ = proc.request({"op": "load", "backend": "pytorch", "task": task_record(task), "sources": {"source": text},
                         "shape": dict(task.small_shapes[0]), "seed": 0, "init": [], "poison": 0}, [],
                        timeout_s=120)
    return str(h.get("message", ""))


@sandboxed
def test_a_later_candidate_finds_nothing_under_a_directory_an_earlier_one_made_unsearchable():
    from kstrata.backends.registry import get_backend
    from kstrata.sandbox import client
    from kstrata.sandbox.client import fresh
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify.runner import candidate_process

    task = resolve_task("softmax")
    b = get_backend("pytorch")
    client.close_zygotes()  # the idle list of earlier tests: this test's two processes share one zygote
    try:
        a = fresh(candidate_process(task, b, False, None))
        zygote = a.zygote
        try:
            assert "LEFT" in _load_message(a, task, (CASE / "leaves.py").read_text())
        finally:
            a.close()
        b_proc = fresh(candidate_process(task, b, False, None))
        try:
            msg = _load_message(b_proc, task, (CASE / "finds.py").read_text())
            same = b_proc.zygote is zygote
        finally:
            b_proc.close()
        assert "FOUND " in msg, msg
        found = json.loads(msg.split("FOUND ", 1)[1].splitlines()[0])
        assert not [f for f in found if f.startswith("/tmp/rt85")], (same, found)
    finally:
        client.close_zygotes()


TREES = r'''
import os, sys
os.makedirs(sys.argv[1])
from kstrata.sandbox import scrub as S
base = sys.argv[1]
os.makedirs(base + "/t/p/q"); open(base + "/t/p/q/note", "w").write("x"); os.chmod(base + "/t/p", 0o400)
os.makedirs(base + "/z/locked"); open(base + "/z/locked/note", "w").write("x"); os.chmod(base + "/z/locked", 0)
os.makedirs(base + "/top"); open(base + "/top/note", "w").write("x"); os.chmod(base + "/top", 0o300)
os.symlink("/etc/passwd", base + "/link")
here = os.getcwd()
os.makedirs(base + "/deep"); os.chdir(base + "/deep")
for _ in range(sys.getrecursionlimit() + 200):
    os.mkdir("d"); os.chdir("d")
open("note", "w").write("x")
os.chdir(here)
print(S.scrub((base,)), sorted(os.listdir(base)))
'''


def test_scrub_empties_unsearchable_unreadable_and_deep_trees():
    """As the sandbox's uid (no CAP_DAC_OVERRIDE): root reads and searches any directory, so a root test
    process runs the scrub as nobody, in a folder of its own under /tmp (pytest's is root's, mode 0700)."""
    import tempfile

    top = tempfile.mkdtemp(prefix="kstrata-rt85-")
    try:
        base = os.path.join(top, "shared")
        cmd = [sys.executable, "-c", TREES, base]
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("root without setpriv: cannot drop to the sandbox's uid")
            os.chmod(top, 0o777)
            cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *cmd]
        src = str(Path(__file__).resolve().parents[2] / "src")
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": src})
        assert out.returncode == 0, out.stderr[-1500:]
        assert out.stdout.strip() == "[] []", out.stdout
        assert Path("/etc/passwd").exists()
    finally:
        shutil.rmtree(top, ignore_errors=True)

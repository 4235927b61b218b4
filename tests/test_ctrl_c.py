"""A clean Ctrl-C: optimize stops with exit status 130, a --resume hint, and
no worker tracebacks (workers ignore SIGINT; the kstrata process ends them);
eval and bench say what was interrupted (newcomer nc17)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

KSTRATA = str(Path(sys.executable).with_name("kstrata"))


def _interrupted(args: list[str], cwd: Path, ready: Callable[[], bool], then_s: float) -> tuple[int, str, str]:
    """``kstrata ARGS`` sent SIGINT as a terminal's Ctrl-C sends it (to the whole process group),
    ``then_s`` seconds after ``ready()`` holds (at most 240 s); (exit status, stdout, stderr)."""
    proc = subprocess.Popen([KSTRATA, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=cwd,
                            # as from a terminal: a test runner started in the background (nohup, &) passes
                            # SIGINT ignored to its children, and Python then never raises KeyboardInterrupt
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not ready():
            time.sleep(0.5)
        time.sleep(then_s)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, stdout, stderr


def test_ctrl_c_during_optimize_prints_a_resume_hint_and_no_tracebacks(tmp_path):
    out = tmp_path / "run"
    # inside the first evaluation: workers and candidate processes are busy
    rc, stdout, stderr = _interrupted(["optimize", "relu", "--backend", "tvm-llvm", "--budget", "evals=20",
                                       "--out", str(out)], tmp_path, (out / "run.db").exists, 8)
    assert rc == 130, (stdout[-2000:], stderr[-2000:])
    assert f"--resume {out}" in stdout
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]


def test_ctrl_c_during_eval_says_there_is_no_verdict(tmp_path):
    """Newcomer nc17: an interrupted eval printed nothing at all."""
    cand = tmp_path / "slow_relu.py"
    cand.write_text("import time\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        time.sleep(0.5)\n        return x.clamp_min(0)\n")
    # inside the verification: the candidate's calls sleep
    rc, stdout, stderr = _interrupted(["eval", "relu", str(cand), "--backend", "pytorch", "--no-time"], tmp_path,
                                      lambda: True, 12)
    assert rc == 130, (stdout[-2000:], stderr[-2000:])
    assert "interrupted: no verdict" in stderr, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-3000:]


def test_ctrl_c_during_bench_prints_the_resume_command(tmp_path):
    """Newcomer nc17: an interrupted bench printed nothing; the command it prints continues it."""
    out = tmp_path / "bench out"
    rc, stdout, stderr = _interrupted(["bench", "--tasks", "relu", "--backends", "tvm-llvm", "--budget", "evals=20",
                                       "--out", str(out)], tmp_path, (out / "bench.json").exists, 5)
    assert rc == 130, (stdout[-2000:], stderr[-2000:])
    words = shlex.split(stdout.split("Continue it with:")[1].split("\n")[1])
    assert words[:2] == ["kstrata", "bench"] and words[-1] == "--resume", words
    assert words[words.index("--out") + 1] == str(out) and words[words.index("--tasks") + 1] == "relu", words
    assert "Traceback" not in stderr, stderr[-3000:]
    # timed as optimize times (auto: fit on a CPU), not at the nominal shape (newcomer nc17)
    assert json.loads((out / "bench.json").read_text())["spec"]["timing_shape"] == "auto"

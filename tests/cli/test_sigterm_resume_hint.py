"""SIGTERM (``kill PID``, a time limit) ends ``kstrata optimize`` like Ctrl-C:
the run is kept, the command prints how to resume it and exits with 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import sys, time
    from kstrata.search import loop
    from kstrata.cli.main import app

    def fake_search(*args, **kwargs):
        print("SEARCHING", flush=True)
        time.sleep(60)
        raise AssertionError("SIGTERM did not stop the search")

    loop.optimize = fake_search
    sys.argv = ["kstrata", "optimize", "softmax", "--backend", "triton-interp", "--out", sys.argv[1]]
    app()
""")


def test_sigterm_keeps_the_run_and_prints_the_resume_command(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    try:
        deadline = time.monotonic() + 240
        for line in p.stdout:
            lines.append(line)
            if "SEARCHING" in line or time.monotonic() > deadline:
                break
        assert any("SEARCHING" in ln for ln in lines), "".join(lines)
        p.send_signal(signal.SIGTERM)
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    text = "".join(lines) + rest
    assert p.returncode == 143, text
    assert "terminated (SIGTERM); the run is kept" in text, text
    assert f"kstrata optimize softmax --backend triton-interp --resume {out}" in text, text
    assert "Traceback" not in text, text

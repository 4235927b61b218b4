"""An op TVM's frontend cannot import (issue #23 item 3) ends in kstrata's one
error line and nothing after it: the Relax BlockBuilder the failed converter
left mid-block is freed at once, quietly, instead of logging "BlockBuilder
destroyed with remaining blocks!" at interpreter exit.

The task file is a small KernelBench-format file written by the test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("tvm")

TRANSPOSED_CONV_3D = (Path(__file__).parent / "data" / "transposed_conv3d.py").read_text()


@pytest.mark.slow
def test_a_failed_tvm_import_prints_nothing_at_exit(tmp_path):
    task = tmp_path / "ct3d.py"
    task.write_text(TRANSPOSED_CONV_3D)
    code = textwrap.dedent(f"""
        from kstrata.backends.tvm.lower import LoweringError, export_graph
        from kstrata.tasks.loader import load_task
        try:
            export_graph(load_task({str(task)!r}))
        except LoweringError as e:
            print("LoweringError:", e, flush=True)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "LoweringError: torch.export/Relax frontend failed" in r.stdout
    assert "transposed convolution" in r.stdout
    assert "BlockBuilder destroyed" not in r.stderr + r.stdout, r.stderr

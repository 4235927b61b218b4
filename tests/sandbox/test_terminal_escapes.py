"""Text a candidate wrote reaches no terminal as control sequences
(:func:`kstrata.sandbox.wire.printable`): the judge writes them out in what
the candidate's process sends (replies, its output) and every command's
console in what it prints (red-team round of 2026-12-04: a load error's
message overwrote the ``compile_error`` verdict line with ``correct``)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kstrata.cli.errors import Console
from kstrata.sandbox import status, wire

REPO = Path(__file__).resolve().parents[2]
CASE = Path(__file__).resolve().parent / "cases" / "terminal_escapes"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))
RAW = ("\x1b", "\x9b", "\u202e", "\r", "\x07")


def test_printable_writes_out_controls_and_keeps_lines():
    assert wire.printable("a\x1b[2Kb\nc\td\r\u202e\x9b") == "a\\x1b[2Kb\nc\td\\x0d\\u202e\\x9b"
    assert wire.printable_strings({"m\x1b": ["x\x07", {"k": 1}]}) == {"m\\x1b": ["x\\x07", {"k": 1}]}


def test_every_commands_console_prints_no_control_sequence_of_its_text():
    """Strings, Text, table cells and highlighted source (``kstrata show``)."""
    out = io.StringIO()
    c = Console(file=out, force_terminal=True, color_system=None, width=200)
    bad = "ok\x1b[1A\x1b[2Kcorrect\u202e"
    table = Table()
    table.add_column("rationale")
    table.add_row(bad)
    for thing in (bad, Text(bad), table, Syntax(f"X = {bad!r}\nY = '{bad}'\n", "python")):
        c.print(thing, markup=False, highlight=False)
    text = out.getvalue()
    assert not any(ch in text for ch in RAW), repr(text)
    assert "\\x1b[1A" in text


@pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")
def test_eval_prints_a_candidates_escape_sequences_written_out():
    args = [KSTRATA, "eval", "relu", str(CASE / "candidate.py"), "--backend", "pytorch", "--no-time",
            "--scope", "small", "--preset", "warn"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines()[1].startswith("compile_error"), p.stdout[:500]
    assert not any(ch in p.stdout for ch in RAW), repr(p.stdout[:2000])
    assert "\\x1b[2A" in p.stdout
    j = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    d = json.loads(j.stdout[j.stdout.index("{"):])
    for text in (d["evidence"]["message"], json.dumps(d.get("output_tail") or d["evidence"].get("output_tail"))):
        assert "\x1b" not in str(text) and "\u202e" not in str(text), text[:500]

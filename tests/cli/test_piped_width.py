"""Output that is not a terminal is not cut at 80 columns (newcomer nc16: ``kstrata compare A B > f`` lost
its "intervals overlap" column and its closing note ended mid-word)."""

from __future__ import annotations

import io

from rich.table import Table

from kstrata.cli.errors import Console


def _wide_table() -> Table:
    table = Table(title="A = runs/rmsnorm-tvm-llvm-5cb1ae   B = runs/mytanh",
                  caption="A and B ran different tasks (only in A: rmsnorm; only in B: scaled_tanh): a difference "
                          "below may be the tasks', not the methods'; compare runs of the same tasks")
    for name in ("group", "metric", "A", "B", "B − A", "intervals overlap"):
        table.add_column(name)
    table.add_row("all", "median roofline fraction", "0.274 [0.274, 0.274]", "0.31 [0.29, 0.33]", "+0.036",
                  "no (the intervals are apart)")
    return table


def test_a_piped_table_keeps_every_column_and_its_note_whole(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()  # not a terminal
    Console(file=out).print(_wide_table())
    text = out.getvalue()
    assert "intervals overlap" in text and "no (the intervals are apart)" in text, text
    assert "compare runs of the same tasks" in " ".join(text.split()), text


def test_columns_and_an_explicit_width_still_decide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    assert Console(file=io.StringIO()).width == 60
    monkeypatch.delenv("COLUMNS")
    assert Console(file=io.StringIO(), width=70).width == 70
    assert Console(file=io.StringIO()).width > 200


def test_piped_lines_end_where_their_text_does(monkeypatch):
    # newcomer nc18: show, summaries and tables in a log had every line padded with spaces to 240 columns
    from rich.syntax import Syntax

    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    console = Console(file=out)
    console.print(_wide_table())
    console.print(Syntax("def f(x):\n    return x\n", "python", line_numbers=True, word_wrap=True))
    lines = out.getvalue().splitlines()
    assert any("return x" in ln for ln in lines)
    assert not [ln for ln in lines if ln.endswith(" ")], lines

"""``optimize --llm queue:DIR``: the progress line said only "proposing graph
edits of 68b57576 (an LLM call) (running 30 s)" (the newcomer's report); it
now names the request file waiting to be answered in DIR."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

from rich.text import Text

from kstrata.cli.progress import Heartbeat
from kstrata.llm.file_queue import waiting_text

PROPOSING = {"node": SimpleNamespace(hash="68b575766dca"), "level": "graph", "backend": "tvm-llvm",
             "proposer": "llm"}


def test_the_proposing_line_names_the_unanswered_request(tmp_path):
    (tmp_path / "aaaa.prompt.md").write_text("old")
    (tmp_path / "aaaa.response.md").write_text("answered")
    assert waiting_text(tmp_path) is None  # every request answered
    (tmp_path / "bbbb.request.json").write_text("{}")
    (tmp_path / "bbbb.prompt.md").write_text("q")
    lines: list[str] = []
    t = [0.0]
    beat = Heartbeat(Text(""), lines.append, clock=lambda: t[0], waiting=partial(waiting_text, tmp_path))
    beat.wrap(lambda e, i: None)("proposing", PROPOSING)
    t[0] = 30.0
    beat.tick()
    assert lines[-1] == (f"proposing graph edits of 68b57576 (an LLM call) (running 30 s); waiting for "
                         f"{tmp_path / 'bbbb.response.md'} (the prompt: {tmp_path / 'bbbb.prompt.md'})")
    assert waiting_text(tmp_path / "missing") is None

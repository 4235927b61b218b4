"""Newcomer nc20: an answer written in place in two parts was read after the
first (settle_s 0.2 s) and refused as 'cut off ... Send a shorter answer'."""

import os
import threading
import time

import pytest

from kstrata.agents.parse import ParseError, answer_to_sources, looks_cut_off
from kstrata.config import ProviderConfig
from kstrata.llm.file_queue import QueueProvider, waiting_text

MSGS = [{"role": "user", "content": "make it faster"}]
FIRST = "Use rsqrt.\n\n```python\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n"
SECOND = "    def forward(self, x):\n        return x * torch.rsqrt((x * x).sum(-1, keepdim=True))\n```\n"


def _answer_in_pieces(provider, pause):
    """Answer the provider's one request in place, in two writes ``pause`` s apart."""
    def write():
        while not list(provider.directory.glob("*.prompt.md")):
            time.sleep(0.02)
        rid = next(provider.directory.glob("*.prompt.md")).name.removesuffix(".prompt.md")
        path = provider.directory / f"{rid}.response.md"
        with open(path, "w") as f:
            f.write(FIRST)
        time.sleep(pause)
        with open(path, "a") as f:
            f.write(SECOND)
    t = threading.Thread(target=write)
    t.start()
    return t


def test_the_default_settle_time_suits_a_person_writing_in_pieces(tmp_path):
    assert QueueProvider(tmp_path).settle_s >= 4.0
    assert ProviderConfig(kind="queue", path=str(tmp_path)).settle_s >= 4.0
    assert ProviderConfig(kind="queue", path=str(tmp_path), settle_s=9).settle_s == 9


def test_an_answer_with_an_open_code_block_that_still_grows_is_not_read(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=0.2, timeout_s=30)
    writer = _answer_in_pieces(provider, pause=1.0)
    text = provider.complete(MSGS).text
    writer.join()
    assert text == FIRST + SECOND


def test_an_open_code_block_left_unchanged_is_read_as_it_is(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=0.1, cutoff_wait_s=0.5, timeout_s=30)
    writer = _answer_in_pieces(provider, pause=2.5)
    t0 = time.perf_counter()
    text = provider.complete(MSGS).text
    waited = time.perf_counter() - t0
    writer.join()
    assert text == FIRST and 0.5 <= waited < 2.5


def test_a_complete_answer_already_there_is_read_at_once(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=3.0, timeout_s=30)
    rid = provider.request_id("ab" * 32)
    provider._seen.clear()
    path = tmp_path / f"{rid}.response.md"
    path.write_text(FIRST + SECOND)
    old = time.time() - 60
    os.utime(path, (old, old))
    t0 = time.perf_counter()
    assert provider._wait_for(path, t0) == FIRST + SECOND
    assert time.perf_counter() - t0 < 2.0


@pytest.mark.parametrize("text", [FIRST, "Edit.\n<<<<<<< SEARCH\nimport torch\n=======\n"])
def test_a_cut_off_answer_is_not_told_to_be_shorter(text):
    assert looks_cut_off(text) and not looks_cut_off(FIRST + SECOND)
    with pytest.raises(ParseError) as e:
        answer_to_sources(text, {"source": "import torch\n"}, "source")
    assert e.value.kind == "truncated"
    assert "shorter" not in str(e.value) and "complete answer" in str(e.value)


def test_the_waiting_line_names_an_answer_being_written(tmp_path):
    (tmp_path / "abc.prompt.md").write_text("make it faster")
    (tmp_path / "abc.response.md").write_text(FIRST)
    line = waiting_text(tmp_path)
    assert line is not None and str(tmp_path / "abc.response.md") in line and "to be finished" in line
    (tmp_path / "abc.response.md").write_text(FIRST + SECOND)
    assert waiting_text(tmp_path) is None

"""An answer renamed into the queue folder (the protocol's recommended way) is
read as soon as it is seen: it cannot be half-written. Before, every answer
waited ``settle_s`` (5 s by default) unchanged, a rename too, which cost each
queue-driven run 5 s per LLM call. A file written in place, or renamed in and
then written, still waits to settle; one that looks cut off still waits the
cut-off time."""

import os
import sys
import threading
import time

import pytest

from kstrata.llm.file_queue import QueueProvider
from kstrata.llm.queue_arrivals import Arrivals

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

MSGS = [{"role": "user", "content": "make it faster"}]
WHOLE = "Use rsqrt.\n\n```python\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n```\n"
CUT = "Use rsqrt.\n\n```python\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n"


def _rename_in(path, text):
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _answer_by_rename(provider, text):
    """Answer the provider's one request by writing a temporary file and renaming it into place."""
    def write():
        while not list(provider.directory.glob("*.prompt.md")):
            time.sleep(0.02)
        rid = next(provider.directory.glob("*.prompt.md")).name.removesuffix(".prompt.md")
        _rename_in(provider.directory / f"{rid}.response.md", text)
    t = threading.Thread(target=write)
    t.start()
    return t


def test_an_answer_renamed_into_place_is_read_without_waiting_to_settle(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=4.0, timeout_s=30)
    writer = _answer_by_rename(provider, WHOLE)
    t0 = time.perf_counter()
    text = provider.complete(MSGS).text
    waited = time.perf_counter() - t0
    writer.join()
    assert text == WHOLE and waited < 2.0, waited


def test_an_answer_written_in_place_still_waits_to_settle(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=1.0, timeout_s=30)
    provider._watch()
    path = tmp_path / "a.response.md"
    path.write_text(WHOLE)  # looks complete, but written in place: it may still grow
    t0 = time.perf_counter()
    assert provider._wait_for(path, t0) == WHOLE
    assert time.perf_counter() - t0 >= 0.9


def test_an_answer_renamed_in_then_written_in_place_waits_to_settle(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=1.0, timeout_s=30)
    provider._watch()
    path = tmp_path / "a.response.md"
    _rename_in(path, "Use rsqrt.\n")
    with open(path, "a") as f:
        f.write(WHOLE)
    t0 = time.perf_counter()
    assert provider._wait_for(path, t0) == "Use rsqrt.\n" + WHOLE
    assert time.perf_counter() - t0 >= 0.9


def test_a_renamed_answer_that_looks_cut_off_still_waits_the_cut_off_time(tmp_path):
    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=0.1, cutoff_wait_s=1.0, timeout_s=30)
    provider._watch()
    path = tmp_path / "a.response.md"
    _rename_in(path, CUT)
    t0 = time.perf_counter()
    assert provider._wait_for(path, t0) == CUT
    assert time.perf_counter() - t0 >= 0.9


def test_the_watch_tells_a_rename_from_a_write(tmp_path):
    arrivals = Arrivals(tmp_path)
    assert not arrivals.blind
    path = tmp_path / "a.response.md"
    assert arrivals.whole(path.name) is None
    _rename_in(path, WHOLE)
    first = arrivals.whole(path.name)
    assert first is not None and arrivals.whole(".a.response.md.tmp") is None
    with open(path, "a") as f:
        f.write("more")
    assert arrivals.whole(path.name) is None
    _rename_in(path, WHOLE)
    second = arrivals.whole(path.name)
    assert second is not None and second != first
    os.truncate(path, 3)
    assert arrivals.whole(path.name) is None
    (tmp_path / "b.response.md").write_text(WHOLE)  # created in place
    assert arrivals.whole("b.response.md") is None
    arrivals.close()
    _rename_in(path, WHOLE)
    assert arrivals.blind and arrivals.whole(path.name) is None


def test_a_folder_that_cannot_be_watched_leaves_every_answer_to_settle(tmp_path):
    arrivals = Arrivals(tmp_path / "missing")
    assert arrivals.blind and arrivals.whole("a.response.md") is None
    (tmp_path / "q").mkdir()
    provider = QueueProvider(tmp_path / "q", poll_s=0.05, settle_s=1.0, timeout_s=30)
    assert not provider._watch().blind
    provider._arrivals.close()  # e.g. the event queue overflowed
    path = tmp_path / "q" / "a.response.md"
    _rename_in(path, WHOLE)
    t0 = time.perf_counter()
    assert provider._wait_for(path, t0) == WHOLE
    assert time.perf_counter() - t0 >= 0.9


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_renamed_answer_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    """Read without the settle, a renamed answer still goes through the same refusals (red-team rt57)."""
    from kstrata.llm.base import ProviderError

    provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=4.0, timeout_s=30)
    provider._watch()
    path, tmp = tmp_path / "a.response.md", tmp_path / ".a.response.md.tmp"
    if kind == "fifo":
        os.mkfifo(tmp)
    else:
        (tmp_path / "environ").write_text("OPENAI_API_KEY=sk-linked\n")
        tmp.symlink_to(tmp_path / "environ")
    os.replace(tmp, path)
    t0 = time.perf_counter()
    with pytest.raises(ProviderError) as e:
        provider._wait_for(path, t0)
    assert ("not a regular file" if kind == "fifo" else "symbolic link") in str(e.value)
    assert "sk-linked" not in str(e.value) and time.perf_counter() - t0 < 2.0

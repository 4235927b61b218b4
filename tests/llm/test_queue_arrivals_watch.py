"""The queue folder's rename watch (kstrata.llm.queue_arrivals, watchdog's inotify
observer): its events come on other threads, so an answer is only called whole
once the observer has caught up with every write made before the question;
a watch that is not on the folder at its path any more tells nothing, and a
dropped provider leaves no thread or inotify descriptor behind."""

import gc
import os
import sys
import threading
import time

import pytest

from kstrata.llm.file_queue import QueueProvider
from kstrata.llm.queue_arrivals import Arrivals

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

TEXT = "Use rsqrt.\n"


def _rename_in(path, text=TEXT):
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_a_write_the_observer_has_not_handled_yet_still_counts(tmp_path):
    arrivals = Arrivals(tmp_path)
    path = tmp_path / "a.response.md"
    _rename_in(path)
    assert arrivals.whole(path.name) is not None
    handle = arrivals._names.dispatch

    def slow(event):  # an observer thread that lags behind the kernel (a loaded machine)
        time.sleep(0.2)
        handle(event)

    arrivals._names.dispatch = slow
    with open(path, "a") as f:
        f.write("half of the rest")
    assert arrivals.whole(path.name) is None
    arrivals.close()


def test_a_move_in_from_another_folder_is_whole_and_a_move_away_is_not(tmp_path):
    (tmp_path / "q").mkdir()
    arrivals = Arrivals(tmp_path / "q")
    path = tmp_path / "q" / "a.response.md"
    (tmp_path / "written_elsewhere").write_text(TEXT)
    os.replace(tmp_path / "written_elsewhere", path)
    assert arrivals.whole(path.name) is not None
    os.replace(path, tmp_path / "away")
    assert arrivals.whole(path.name) is None
    assert not list((tmp_path / "q").iterdir())  # the markers it made are gone
    arrivals.close()


def test_a_folder_moved_away_and_replaced_tells_nothing(tmp_path):
    folder = tmp_path / "q"
    folder.mkdir()
    arrivals = Arrivals(folder)
    _rename_in(folder / "a.response.md")
    assert arrivals.whole("a.response.md") is not None
    folder.rename(tmp_path / "q.old")
    folder.mkdir()
    (folder / "a.response.md").write_text("half")  # written in place in the folder now at that path
    assert arrivals.whole("a.response.md") is None and arrivals.blind


def test_dropped_or_closed_watches_leave_no_thread_or_descriptor(tmp_path):
    gc.collect()
    # the threads and descriptors alive before: threads of earlier tests of this worker may end meanwhile
    # (the full run read 7 threads after against 8 before), so none may be new, rather than the same count
    threads, fds = set(threading.enumerate()), len(os.listdir("/proc/self/fd"))
    for i in range(300):
        provider = QueueProvider(tmp_path, poll_s=0.05, settle_s=1.0, timeout_s=30)
        assert not provider._watch().blind
        _rename_in(tmp_path / f"{i}.response.md")
        assert provider._arrivals.whole(f"{i}.response.md") is not None
        del provider
        assert Arrivals(tmp_path / "missing").blind
        Arrivals(tmp_path).close()  # stopped at once
    gc.collect()
    deadline = time.monotonic() + 10
    while set(threading.enumerate()) - threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(threading.enumerate()) - threads
    assert len(os.listdir("/proc/self/fd")) <= fds

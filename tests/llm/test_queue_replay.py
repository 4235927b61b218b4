"""The queue provider (a helper thread answers prompt files), recording and replay."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from kstrata.config import ProviderConfig
from kstrata.llm import CallLog, ProviderError, ProviderSpec, ProviderTimeout, Request, UsageTotals
from kstrata.llm.cassette import read_cassette

MESSAGES = [
    {"role": "system", "content": "You write kernels."},
    {"role": "user", "content": "Make rmsnorm fast."},
]


def answer_files(directory: Path, answer, stop: threading.Event, atomic=True) -> threading.Thread:
    """A helper thread that answers every new ``*.prompt.md`` via ``answer(meta)``."""

    def loop() -> None:
        done: set[str] = set()
        while not stop.is_set():
            for prompt in sorted(directory.glob("*.prompt.md")):
                rid = prompt.name.removesuffix(".prompt.md")
                if rid in done:
                    continue
                meta = json.loads((directory / f"{rid}.request.json").read_text())
                text, report = answer(meta)
                if report:
                    (directory / f"{rid}.response.json").write_text(json.dumps(report))
                target = directory / f"{rid}.response.md"
                if atomic:
                    tmp = directory / f".{rid}.response.md.tmp"
                    tmp.write_text(text)
                    os.replace(tmp, target)
                else:  # an editor writing in place, in two steps
                    with open(target, "w") as f:
                        f.write(text[: len(text) // 2])
                        f.flush()
                        time.sleep(0.05)
                        f.write(text[len(text) // 2 :])
                done.add(rid)
            time.sleep(0.02)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def record_ok(tmp_path, cassette, asks, torn=False):
    """Record ``asks`` through a queue whose answerer says "ok" (then, with
    ``torn``, leave half a record as a crash mid-append would); the completions."""
    provider = queue(tmp_path).build(record=cassette)
    stop = threading.Event()
    answer_files(provider.directory, lambda m: ("ok", None), stop)
    try:
        out = [provider.complete(m) for m in asks]
    finally:
        stop.set()
    if torn:
        with open(cassette, "a") as f:
            f.write('{"hash": "x", "me')
    return out


def queue(tmp_path, **kw):
    cfg = ProviderConfig(kind="queue", path=str(tmp_path / "q"), poll_s=0.02, **kw)
    return ProviderSpec("queue", cfg.path, cfg)


def test_queue_round_trip(tmp_path):
    usage = UsageTotals()
    provider = queue(tmp_path).build(accounting=usage)
    provider.check()
    stop = threading.Event()
    seen = []

    def answer(meta):
        seen.append(meta)
        return "```python\nprint('fast')\n```\n", {"model": "human", "output_tokens": 7}

    answer_files(provider.directory, answer, stop)
    try:
        c = provider.complete(MESSAGES, max_tokens=50)
    finally:
        stop.set()
    assert c.text == "```python\nprint('fast')\n```\n"
    assert c.model == "human" and c.output_tokens == 7 and c.input_tokens > 0
    meta = seen[0]
    assert meta["messages"] == MESSAGES and meta["params"]["max_tokens"] == 50
    assert meta["hash"] == c.request_hash and meta["answer_file"] == f"{meta['id']}.response.md"
    prompt = (provider.directory / f"{meta['id']}.prompt.md").read_text()
    assert "<!-- kstrata: role=user -->" in prompt and "Make rmsnorm fast." in prompt
    assert not list(provider.directory.glob(".*.tmp"))
    assert usage.calls == 1


def test_queue_parallel_and_repeats_get_distinct_ids(tmp_path):
    provider = queue(tmp_path).build()
    provider.check()
    stop = threading.Event()
    answer_files(provider.directory, lambda m: (f"answer {m['id']}", None), stop, atomic=False)
    try:
        out = provider.complete_many([Request(tuple(MESSAGES))] * 3)
    finally:
        stop.set()
    texts = sorted(c.text for c in out)
    h = out[0].request_hash[:16]
    assert texts == [f"answer {h}", f"answer {h}-2", f"answer {h}-3"]


def test_queue_reuses_an_answer_already_there(tmp_path):
    """A run restarted while waiting picks up the answer without asking again."""
    first = queue(tmp_path, timeout_s=0.2).build()
    first.check()
    with pytest.raises(ProviderTimeout, match=r"no answer in .*\.response\.md after 0.2 s"):
        first.complete(MESSAGES)
    (rid,) = [p.name.removesuffix(".prompt.md") for p in first.directory.glob("*.prompt.md")]
    (first.directory / f"{rid}.response.md").write_text("late answer")
    again = queue(tmp_path, timeout_s=5).build()
    assert again.complete(MESSAGES).text == "late answer"


def test_queue_check_unwritable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ProviderError, match="cannot write"):
        ProviderSpec.parse(f"queue:{blocker}/q").build().check()


def test_record_then_replay_is_identical_offline(tmp_path):
    cassette = tmp_path / "run.jsonl"
    provider = queue(tmp_path).build(record=cassette)
    stop = threading.Event()
    answer_files(provider.directory, lambda m: (f"answer to {m['messages'][-1]['content']}", None), stop)
    asks = [MESSAGES, [{"role": "user", "content": "second"}], MESSAGES]
    try:
        recorded = [provider.complete(m) for m in asks]
    finally:
        stop.set()
    records = read_cassette(cassette)
    assert len(records) == 3 and records[0]["messages"] == MESSAGES
    assert set(records[0]) >= {"hash", "messages", "params", "response", "tokens"}

    log = CallLog()
    replay = ProviderSpec.parse(f"replay:{cassette}").build(accounting=log)
    replay.check()
    replayed = [replay.complete(m) for m in asks]
    assert replayed == recorded
    assert [r.response for r in log.take()] == [c.text for c in recorded]
    assert log.take() == []


def test_replay_miss_names_hash_and_closest_prompt(tmp_path):
    cassette = tmp_path / "run.jsonl"
    (recorded,) = record_ok(tmp_path, cassette, [MESSAGES])
    replay = ProviderSpec.parse(f"replay:{cassette}").build()
    changed = [MESSAGES[0], {"role": "user", "content": "Make rmsnorm faster."}]
    with pytest.raises(ProviderError, match="no recorded answer for request") as e:
        replay.complete(changed)
    msg = str(e.value)
    assert e.value.kind == "replay_miss"
    assert recorded.request_hash[:16] in msg  # the closest recorded prompt
    assert "'Make rmsnorm fast.'" in msg and "'Make rmsnorm faster.'" in msg


def test_cassette_torn_line_is_skipped_and_repaired(tmp_path):
    cassette = tmp_path / "c.jsonl"
    record_ok(tmp_path, cassette, [MESSAGES], torn=True)
    assert len(read_cassette(cassette)) == 1
    record_ok(tmp_path, cassette, [[{"role": "user", "content": "next"}]])
    assert len(read_cassette(cassette)) == 2


def test_replay_missing_file():
    with pytest.raises(ProviderError, match="no such cassette"):
        ProviderSpec.parse("replay:/nonexistent/c.jsonl").build()

"""A damaged MetaSchedule cache file is tuned again, not a traceback (red team rt62:
``json.loads`` raises RecursionError, not ValueError, on text nested past the
parser's depth; the two TVM readers of the tuning cache were left for the TVM
backend's owner)."""

from __future__ import annotations

import pytest

from kstrata.backends.registry import get_backend
from kstrata.backends.tvm import isolated, tune
from kstrata.tasks.loader import resolve_task

DAMAGED = ["[" * 100_000, '{"sources": 5, "records": []}', '{"records": []}', "not json"]


@pytest.mark.parametrize("text", DAMAGED, ids=["nested", "wrong_kind", "missing", "text"])
def test_the_sandboxed_expansions_cache_reader_ignores_a_damaged_file(tmp_path, text):
    path = tmp_path / "k.json"
    path.write_text(text)
    assert isolated._read_tuned(path, "k") is None


class Reached(Exception):
    pass


@pytest.mark.parametrize("text", DAMAGED, ids=["nested", "wrong_kind", "missing", "text"])
def test_tune_goes_past_a_damaged_cache_file_to_tuning(tmp_path, monkeypatch, text):
    task = resolve_task("relu")
    shape = task.small_shapes[0]
    backend = get_backend("tvm-llvm")
    sources = backend.initial_sources(task)
    key = tune.cache_key(task, sources["graph"], shape, backend.target(), 4)
    (tmp_path / f"{key}.json").write_text(text)

    def lowering(*a, **k):
        raise Reached  # the cache was passed over: tuning starts here

    monkeypatch.setattr(type(backend), "lower", lowering)
    with pytest.raises(Reached):
        tune.tune(task, shape, "tvm-llvm", trials=4, sources=sources, cache_dir=tmp_path)

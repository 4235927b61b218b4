"""The README says where kstrata keeps its files and which variable moves each
folder: ``KSTRATA_CACHE_DIR`` was read by the code but named nowhere in the
README (the newcomer's report), and the TVM tuning cache reads another name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the variables that choose a folder or file under ~/.cache/kstrata
PLACES = ("KSTRATA_ENV_DIR", "KSTRATA_CACHE_DIR", "KSTRATA_CACHE", "KSTRATA_MEMORY_DB")


def test_every_cache_variable_the_code_reads_is_in_the_readme():
    src = "\n".join(p.read_text() for p in (ROOT / "src" / "kstrata").rglob("*.py"))
    read = set(re.findall(r"environ(?:\.get)?[\[(]\"(KSTRATA_[A-Z_]+)\"", src))
    assert set(PLACES) <= read  # the list above is still what the code reads
    table = (ROOT / "README.md").read_text()
    for name in PLACES:
        assert re.search(rf"\| `{name}`", table) or name == "KSTRATA_CACHE", name  # a row of the table names it
    assert "`KSTRATA_CACHE` wins" in table  # the older name of tvm_tune's root is still told
    for thing in ("kernel-cache", "roofline.json", "tvm_tune", "memory.db"):
        assert thing in table


def test_kstrata_cache_dir_moves_the_tvm_tuning_cache_too(monkeypatch, tmp_path):
    from kstrata.backends.tvm.tune import default_cache_dir

    monkeypatch.delenv("KSTRATA_CACHE", raising=False)
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "tvm_tune"
    monkeypatch.setenv("KSTRATA_CACHE", str(tmp_path / "older"))
    assert default_cache_dir() == tmp_path / "older" / "tvm_tune"

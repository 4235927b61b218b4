"""A run folder that cannot be written (a read-only mount, another user's run)
is read by the reading commands, and a write says the folder is not writable
(newcomer nc16: ``kstrata tree|show|report|export|compare`` on a read-only
mount said "run.db is damaged (unable to open database file)": SQLite could
not make the WAL's ``-shm`` file beside it)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask  # noqa: E402

from kstrata.search import Budget, optimize  # noqa: E402
from kstrata.store.run_store import RunStore, StoreError  # noqa: E402


def _files(run):
    return {p: p.stat().st_mtime_ns for p in run.rglob("*")}


def _read_only(run, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` (sh) with ``run`` bind-mounted read-only in a private mount namespace."""
    d = shlex.quote(str(run))
    cmd = f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && {script}"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind {d} {d}"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode().strip()}")
    return subprocess.run(["unshare", "-rm", "sh", "-c", cmd], capture_output=True, text=True, timeout=300)


@pytest.fixture
def run(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=3),
                   tmp_path / "run")
    return res.run_dir


def test_reading_commands_work_on_a_read_only_run(run, tmp_path):
    before = _files(run)
    ks = f"{shlex.quote(sys.executable)} -m kstrata"
    r = shlex.quote(str(run))
    out = tmp_path / "r.html"
    script = "; ".join([
        f"{ks} tree {r} > {tmp_path}/tree.txt 2>&1; echo tree=$?",
        f"{ks} show {r} > {tmp_path}/show.txt 2>&1; echo show=$?",
        f"{ks} report {r} -o {out} > /dev/null 2>&1; echo report_o=$?",
        f"{ks} report {r} > {tmp_path}/report.txt 2>&1; echo report=$?",
        f"{ks} compare {r} {r} > {tmp_path}/compare.txt 2>&1; echo compare=$?",
    ])
    p = _read_only(run, script)
    codes = dict(line.split("=") for line in p.stdout.split())
    texts = {k: (tmp_path / f"{k}.txt").read_text() for k in ("tree", "show", "report", "compare")}
    assert codes == {"tree": "0", "show": "0", "report_o": "0", "report": "2", "compare": "0"}, (p.stderr, texts)
    assert "damaged" not in " ".join(texts.values())
    assert "correct" in texts["tree"] and out.is_file() and "<html" in out.read_text().lower()
    assert "not writable" in texts["report"] and "-o FILE.html" in texts["report"]
    assert _files(run) == before  # nothing written into the run


def test_a_write_to_a_read_only_store_says_not_writable(run, monkeypatch):
    import kstrata.store.run_store as rs

    monkeypatch.setattr(rs, "writable", lambda run_dir: False)
    with RunStore.open(run) as store:
        assert store.readonly and len(store.candidates()) >= 1
        with pytest.raises(StoreError, match="is not writable"):
            store.charge("evaluations", 1)


def test_a_read_only_bench_is_read(tmp_path):
    """The bench index (``bench.db``, WAL) of a read-only bench folder is read
    too: ``report``/``compare`` of a bench opened it for writing."""
    import json

    from kstrata.bench.harness import CONFIG_NAME, BenchIndex

    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / CONFIG_NAME).write_text(json.dumps({"spec": {}}))
    with BenchIndex(bench) as index:
        index.plan([{"task": "relu", "backend": "pytorch", "proposer": "edits", "level": 1,
                     "category": "activation", "run_dir": "runs/relu", "status": "failed"}])
    before = _files(bench)
    code = f"from kstrata.bench.results import load_results; print(len(load_results({str(bench)!r}).outcomes))"
    p = _read_only(bench, f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}")
    assert p.returncode == 0 and p.stdout.strip() == "1", p.stderr
    assert _files(bench) == before

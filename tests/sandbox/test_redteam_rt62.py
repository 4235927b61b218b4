"""Red-team round rt62: what an attacker's answers, candidates, task files,
options and run folders still reached (the kinds of ``cases/sandbox``). Each
test fails before its fix."""

from __future__ import annotations

import signal
from contextlib import contextmanager

import pytest


@contextmanager
def _within(seconds: float, what: str):
    """Raise TimeoutError when the block takes over ``seconds`` (kstrata's own process)."""
    def too_slow(*_):
        raise TimeoutError(f"{what} took over {seconds:g} s")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_CURRENT = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def _edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


@pytest.mark.parametrize("indent", ["", "  "])
def test_an_edit_whose_search_part_almost_matches_everywhere_is_applied_in_bounded_time(indent):
    """An LLM answer's SEARCH/REPLACE edits are applied in kstrata's own
    process. The first edit grows the source by 60,000 one-character lines, the
    second searches for 30,000 of them plus one line that is nowhere: locating
    it compared every position line by line (quadratic), and this 200 KB answer
    held kstrata for about 20 minutes (a 48 KB one 76 s; a 4 MB answer, the
    largest read, days). With the source indented, the search forgiving a
    uniform indentation shift did the same. It must end within 10 s, as an
    unusable answer."""
    from kstrata.agents import parse as P

    grown = "class ModelNew(torch.nn.Module):\n" + f"{indent}#\n" * 60_000
    answer = _edit("class ModelNew(torch.nn.Module):\n", grown) + _edit("#\n" * 30_000 + "#x\n", "y\n")
    with _within(10, "applying the edits"), pytest.raises(P.ParseError) as e:
        P.parse_answer(answer, _CURRENT, language="python")
    assert e.value.kind in ("edit_no_match", "too_long"), e.value


def test_many_small_edits_of_a_large_source_are_refused_in_bounded_time():
    """Each edit reads the whole current source: 40,000 edits of a 2 MB
    source (an earlier answer's) took about a minute; they are refused once
    applying them would read more than the limit, saying what to send."""
    from kstrata.agents import parse as P

    n = 40_000
    current = "import torch\n" + "".join(f"# u{i:06d}\n" for i in range(n)) + "z" * 1_600_000 + "\n"
    answer = "".join(_edit(f"# u{i:06d}\n", f"# v{i:06d}\n") for i in range(n))
    with _within(10, "applying the edits"), pytest.raises(P.ParseError) as e:
        P.parse_answer(answer, current, language="python")
    assert e.value.kind == "too_long" and "edits" in str(e.value), e.value


def test_located_edits_still_apply():
    """The bounded search still finds what the old one found: trailing spaces
    and a uniform indentation shift forgiven, an ambiguous SEARCH refused."""
    from kstrata.agents import parse as P

    out = P.apply_edits(_CURRENT, [P.Edit("return torch.relu(x)  \n", "return torch.abs(x)\n")])
    assert "        return torch.abs(x)\n" in out
    out = P.apply_edits(_CURRENT, [P.Edit("def forward(self, x):   \n    return torch.relu(x)\n",
                                          "def forward(self, x):\n    return x\n")])
    assert out.endswith("    def forward(self, x):\n        return x\n")
    with pytest.raises(P.ParseError) as e:
        P.apply_edits("a = 1 \nb\na = 1  \n", [P.Edit("a = 1\n", "c\n")])
    assert e.value.kind == "edit_ambiguous"
    with pytest.raises(P.ParseError) as e:
        P.apply_edits("    a\n    a\n", [P.Edit("a\n", "c\n")])
    assert e.value.kind == "edit_ambiguous"


def test_the_closest_line_hint_of_an_unmatched_edit_is_found_in_bounded_time():
    """An unmatched SEARCH is answered with the closest line of the source
    (difflib): 60 source lines of 30,000 characters, each nearly the SEARCH
    line, took 79 s to compare. It must take under 10 s and still name the
    closest line of an honest source."""
    import random

    from kstrata.agents import parse as P

    rng = random.Random(1)
    alpha = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    lines = ["".join(rng.choice(alpha) for _ in range(30_000)) for _ in range(60)]
    answer = (_edit("class ModelNew(torch.nn.Module):\n", "class ModelNew(torch.nn.Module):\n"
                    + "".join(line + "\n" for line in lines)) + _edit(lines[0][:-1] + "!\n", "y\n"))
    with _within(10, "the closest-line hint"), pytest.raises(P.ParseError) as e:
        P.parse_answer(answer, _CURRENT)
    assert e.value.kind == "edit_no_match"
    with pytest.raises(P.ParseError) as e:
        P.parse_answer(_edit("        return torch.relu(y)\n", "x\n"), _CURRENT)
    assert "line 4" in e.value.feedback and "torch.relu(x)" in e.value.feedback


def _two_candidate_run(run):
    """A run with a start and one child (measured against eager); their hashes."""
    import hashlib

    from kstrata.search.candidate import content_hash, normalize_sources
    from kstrata.store import CandidateRecord, EvaluationRecord, ExpansionRecord, MeasurementRecord, RunStore
    from kstrata.store.records import Speedup

    class Task:
        name, digest, path = "t", hashlib.sha256(b"t").hexdigest(), "t.py"

    hashes = []
    with RunStore.create(run, {}) as store:
        tid = store.ensure_task(Task())
        for i in range(2):
            sources = normalize_sources({"source": f"x = {i}\n"})
            h = content_hash(sources, "fake", Task.digest)
            store.add_candidate(CandidateRecord(hash=h, sources=sources, level="source", role="r", proposer="p",
                                                parents=tuple(hashes), backend="fake"), tid)
            store.record_evaluation(h, EvaluationRecord(verdict="correct", evidence={}, feedback=[]),
                                    MeasurementRecord(median_ms=1.0, speedups=(Speedup("eager", 1.5, 1.4, 1.6),),
                                                      speedup=1.5))
            hashes.append(h)
        store.add_expansion(ExpansionRecord(candidate=hashes[0], level="source", proposer="p"), min_calls=0)
    return hashes


@pytest.mark.parametrize("edit", [
    "INSERT INTO candidate_parents VALUES ('{h0}', '{h1}', 0)",          # the start made its child's child: a loop
    "INSERT INTO candidate_parents VALUES ('{h1}', '" + "f" * 64 + "', 1)",  # a parent that is no candidate
    "UPDATE candidates SET seq = 'abc' WHERE hash = '{h1}'",            # SQLite keeps text in an INTEGER column
    "UPDATE speedups SET value = 'abc'",
    "UPDATE measurements SET median_ms = 'slow'",
    "UPDATE evaluations SET n_public = 'x'",
    "UPDATE evaluations SET feedback_json = '\"x\"'",
    "UPDATE expansions SET candidate = '" + "e" * 64 + "'",
    "UPDATE schema_version SET version = 'x'",
    "DELETE FROM schema_version",
])
def test_a_hand_edited_run_db_is_one_damaged_run_error_never_a_traceback_or_a_hang(tmp_path, edit):
    """run.db is data anyone could have edited (a copied or hand-fixed run).
    A parent loop kept ``kstrata show`` and ``tree`` in an endless loop (the
    lineage walk); a parent that is no candidate, text in a number column
    (SQLite keeps it) and an unreadable schema version ended them in a
    KeyError/TypeError/ValueError traceback. Each must be one ``damaged`` error
    (exit 2), at once."""
    import sqlite3

    from typer.testing import CliRunner

    from kstrata.cli.main import app

    run = tmp_path / "run"
    h0, h1 = _two_candidate_run(run)
    for command in (["show", str(run)], ["tree", str(run)]):  # both read well before the edit
        out = CliRunner().invoke(app, command)
        assert out.exit_code == 0, (command, out.output, out.exception)
    conn = sqlite3.connect(run / "run.db")
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(edit.format(h0=h0, h1=h1))
    conn.close()
    for command in (["show", str(run)], ["tree", str(run)]):
        with _within(30, " ".join(command[:1])):
            out = CliRunner().invoke(app, command)
        assert out.exit_code == 2 and "damaged" in out.output, (command, out.output, out.exception)


def _bench_with_cell(bench, config: str, **cell):
    from kstrata.bench.harness import BenchIndex

    bench.mkdir(parents=True)
    (bench / "bench.json").write_text(config)
    row = {"task": "t", "backend": "fake", "proposer": "p", "level": 1, "category": "elementwise",
           "run_dir": "runs/fake/p/t", "status": "done"} | cell
    with BenchIndex(bench) as index:
        index.plan([row])


_SPEC = '{"spec": {"suite": "level1", "backends": ["fake"], "proposers": ["p"], "budget": {}}}'


@pytest.mark.parametrize("config, cell", [
    (_SPEC, {"run_dir": "{outside}"}),          # an absolute path: another run of the user's
    (_SPEC, {"run_dir": "../outside"}),
    (_SPEC, {"run_dir": "runs/link"}),           # a link out of the bench
    (_SPEC, {"level": "x"}),
    ("[1, 2]", {}),                               # bench.json not an object: AttributeError traceback
    ("{not json", {}),                            # the error did not name the file
])
def test_a_hand_edited_bench_folder_is_one_damaged_error_and_reads_no_run_outside_it(tmp_path, config, cell):
    """A bench folder is data anyone could have edited. A cell of bench.db
    naming a run folder outside the bench (absolute, ``..``, through a link)
    had ``kstrata report`` embed that run's candidates' sources in the bench's
    report, and ``kstrata bench --resume`` resume (write into) it; a bench.json
    that is a JSON list ended report in a traceback. Each is one ``damaged``
    error (exit 2) naming the file."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    outside = tmp_path / "outside"
    _two_candidate_run(outside)
    bench = tmp_path / "bench"
    cell = {k: v.format(outside=outside) if isinstance(v, str) else v for k, v in cell.items()}
    _bench_with_cell(bench, config, **cell)
    (bench / "runs").mkdir(exist_ok=True)
    (bench / "runs" / "link").symlink_to(outside)
    report = tmp_path / "r.html"
    out = CliRunner().invoke(app, ["report", str(bench), "--out", str(report)])
    assert out.exit_code == 2 and "damaged" in out.output, (out.output, out.exception)
    assert ("bench.json" if "spec" not in config else "bench.db") in " ".join(out.output.split())
    assert not report.exists()


def test_a_bench_cell_inside_the_bench_is_still_read(tmp_path):
    """The check refuses only what leaves the bench: the planned layout reads."""
    from kstrata.bench.results import load_results

    bench = tmp_path / "bench"
    _bench_with_cell(bench, _SPEC)
    _two_candidate_run(bench / "runs" / "fake" / "p" / "t")
    results = load_results(bench)
    assert results.kind == "bench" and len(results.runs) == 1


_DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("where", ["export.json", "config.json"])
def test_a_deeply_nested_json_record_beside_a_candidate_is_not_a_traceback(tmp_path, where):
    """``kstrata eval TASK DIR`` reads the backend a run's ``config.json`` or
    an export's ``export.json`` records beside the candidate; JSON nested past
    the parser's recursion limit raised RecursionError, which the readers of
    kstrata's own files (they catch ValueError) let through: eval ended in a
    traceback. An export's record is read as absent (the candidate's default
    backend); a run's is named as damaged, with what to do, unless the backend
    is given (red-team rt65)."""
    from kstrata.api import candidate_task, read_candidate

    if where == "export.json":
        folder = tmp_path / "exp"
        (folder / "sources").mkdir(parents=True)
        (folder / "sources" / "source.py").write_text("class ModelNew:\n    pass\n")
        (folder / "export.json").write_text(_DEEP)
    else:
        run = tmp_path / "run"
        _two_candidate_run(run)
        (run / "config.json").write_text(_DEEP)
        folder = run / "best"
        folder.mkdir()
        (folder / "source.py").write_text("class ModelNew:\n    pass\n")
    if where == "config.json":
        with pytest.raises(ValueError, match="config.json names no backend"):
            read_candidate(folder)
    sources, backend = read_candidate(folder, None if where == "export.json" else "pytorch")
    assert backend == "pytorch" and "ModelNew" in sources["source"]
    assert candidate_task(folder) is None


def test_every_json_record_reader_reads_deep_nesting_as_a_damaged_file():
    """The kind, not one file: the readers of kstrata's records and caches
    (tuned-schedule moves, task work and scaled-shape caches, roofline peaks,
    environment records) go through one loader that makes nesting too deep a
    ValueError, which each of them handles as a damaged file."""
    import random

    from kstrata import jsontext
    from kstrata.backends.tilelang.tune_rules import schedule_variants

    with pytest.raises(ValueError, match="nested too deep"):
        jsontext.loads(_DEEP)
    assert schedule_variants("SCHEDULE = {} # kstrata-tune: bm in {1, 2}\n", _DEEP, "c", random.Random(0)) == []


def test_a_candidates_cgroup_limits_memory_and_swap_together():
    """Under cgroup v1 only ``memory.limit_in_bytes`` was set: on a machine
    with swap a candidate past its limit was swapped out rather than killed,
    taking the machine's swap too (v2 already sets ``memory.swap.max`` 0).
    memory+swap (``memory.memsw.limit_in_bytes``) is capped at the same
    limit, at creation and when the limit is moved past the zygote's use."""
    from kstrata.sandbox import policy

    if policy.cgroup_kind() is None:
        pytest.skip("kstrata cannot create cgroups here (rlimits are used)")
    cg = policy.Cgroup.create(300 << 20)
    assert cg is not None
    try:
        mem = cg.dirs[0]
        if cg.kind == "cgroup-v2":
            assert not (mem / "memory.swap.max").exists() or (mem / "memory.swap.max").read_text().strip() == "0"
            return
        if not (mem / "memory.memsw.limit_in_bytes").exists():
            pytest.skip("this kernel does not account swap in cgroup v1 (no memory.memsw files)")
        assert int((mem / "memory.memsw.limit_in_bytes").read_text()) == 300 << 20
        cg.limit_beyond_now(400 << 20)
        limit = int((mem / "memory.limit_in_bytes").read_text())
        assert limit >= 400 << 20 and int((mem / "memory.memsw.limit_in_bytes").read_text()) == limit
    finally:
        cg.remove()


def test_a_huge_exception_message_is_a_runtime_error_not_a_tampering_verdict():
    """The candidate's own exception (40 million characters) is reported as
    what it is: a runtime error whose message is clipped, never 'broke the
    protocol ... tampered with its process's harness'."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(here / "cases" / "rt62_huge_exception" / "candidate.py"),
                        "--backend", "pytorch", "--json", "--no-time", "--scope", "small"],
                       capture_output=True, text=True, timeout=600, cwd=str(here.parents[1]))
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads(p.stdout[p.stdout.index("{"):])
    assert d["verdict"] == "runtime_error" and d["check"] != "protocol", d["message"][:500]
    assert "ValueError: AAAA" in d["message"] and "tampered" not in d["message"], d["message"][:500]


@pytest.mark.parametrize("edit", ["UPDATE skills SET speedup = 'abc'", "UPDATE skills SET description = x'41'"])
def test_a_hand_edited_memory_database_is_one_damaged_error(tmp_path, edit):
    """The agents' memory (``memory.db``, shared by every run, or ``--memory
    PATH``) is a file anyone could have edited: a speedup of ``'abc'`` ended
    ``kstrata memory list``/``show`` in a ValueError traceback, a description
    stored as bytes ``list`` and ``export`` in rich's/json's. Each is one
    ``damaged`` error naming the file (exit 2)."""
    import sqlite3

    from typer.testing import CliRunner

    from kstrata.agents.memory import MemoryStore, Skill
    from kstrata.cli.main import app

    db = tmp_path / "memory.db"
    with MemoryStore(db) as store:
        store.add_skill(Skill(backend="tvm-llvm", level="schedule", after="sch.parallel(i)\n", speedup=1.5,
                              before="pass\n", description="parallel outer loop"))
    for command in (["list"], ["show", "1"], ["export"]):
        out = CliRunner().invoke(app, ["memory", *command, "--memory", str(db)])
        assert out.exit_code == 0, (command, out.output, out.exception)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(edit)
    conn.close()
    for command in (["list"], ["show", "1"], ["export"]):
        out = CliRunner().invoke(app, ["memory", *command, "--memory", str(db)])
        assert out.exit_code == 2 and "damaged" in out.output and "memory.db" in out.output, \
            (command, out.output, out.exception)


@pytest.mark.parametrize("field, value", [("messages", 5), ("messages", ["a"]), ("hash", [1]),
                                          ("response", [1]), ("tokens", "many")])
def test_a_cassette_record_of_the_wrong_kind_is_one_clear_error(tmp_path, field, value):
    """A cassette (``--llm replay:FILE``) is a file anyone could have edited:
    a record whose ``messages`` was a number or whose ``hash`` a list ended
    ``kstrata optimize`` in a TypeError traceback when the replay provider was
    made. It is one error naming the file and line."""
    import json

    from kstrata.llm import ProviderError
    from kstrata.llm.cassette import ReplayProvider

    record = {"hash": "ab" * 32, "messages": [{"role": "user", "content": "hi"}],
              "response": {"text": "ok", "finish_reason": "stop"}, "tokens": {"input": 1, "output": 1},
              "model": "m", "provider": "p", "cost_usd": 0.0, "latency_s": 1.0, "attempts": 1, "version": 1}
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(record) + "\n")
    ReplayProvider(good)  # a record as kstrata writes it reads
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record | {field: value}) + "\n")
    with pytest.raises(ProviderError, match=f"line 1 is not a cassette record.*{field}"):
        ReplayProvider(bad)


@pytest.mark.parametrize("text", ["[1, 2]", '{"/x": 5}', "7"])
def test_a_hand_edited_exports_list_of_a_run_is_read_as_empty(tmp_path, text):
    """``RUN/exports.json`` (the exports ``kstrata retime`` names when stale)
    is run-folder data: a JSON list there ended retime's stale-export lines in
    an AttributeError traceback, and the next ``kstrata export`` in a
    TypeError. It is read as holding no exports."""
    from kstrata.cli.export import _record_export, stale_exports

    run = tmp_path / "run"
    _two_candidate_run(run)
    (run / "exports.json").write_text(text)
    assert stale_exports(run) == []
    _record_export(run, tmp_path / "pkg", "ab" * 32)
    import json

    assert json.loads((run / "exports.json").read_text()) == {str((tmp_path / "pkg").resolve()): "ab" * 32}


def test_a_file_that_cannot_be_made_is_named_as_asked_not_as_its_temporary(tmp_path):
    """``kstrata report RUN --out /proc/x.html`` said ``No such file or
    directory: '/proc/.x.html.5pyz09tc.tmp'``: the error of the atomic write's
    temporary file, a name the user never gave. It names the file asked for."""
    import os

    from kstrata.atomic import write_atomic

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    with pytest.raises(OSError) as e:
        write_atomic(__import__("pathlib").Path("/proc/x.html"), "<html>")
    assert e.value.filename == "/proc/x.html", e.value


@pytest.mark.parametrize("given, words", [("/dev/null", "not a regular file"), ("{dir}", "is a directory")])
def test_a_config_option_naming_no_regular_file_says_what_it_is(tmp_path, given, words):
    """``--config /dev/null`` and ``--config DIR`` were refused as files that
    'do not exist'; the error says what the path is."""
    from kstrata.config import ConfigError, find_config_file

    with pytest.raises(ConfigError, match=words):
        find_config_file(given.format(dir=tmp_path), {})


@pytest.mark.parametrize("which", ["task", "candidate"])
def test_a_task_or_candidate_file_that_is_not_utf8_is_named(tmp_path, which):
    """``kstrata eval bad.py cand.py`` (or a candidate that is not UTF-8) said
    only "'utf-8' codec can't decode byte 0xff in position 0": not which file.
    The error names it (exit 2)."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    bad = tmp_path / "bad.py"
    bad.write_bytes(b"\xff\xfe not text")
    good = tmp_path / "cand.py"
    good.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu(x)\n")
    args = [str(bad), str(good)] if which == "task" else ["relu", str(bad)]
    out = CliRunner().invoke(app, ["eval", *args, "--backend", "pytorch", "--no-time"])
    assert out.exit_code == 2 and "bad.py: not UTF-8" in " ".join(out.output.split()), (out.output, out.exception)

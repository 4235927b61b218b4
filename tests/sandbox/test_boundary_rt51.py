"""Names from hostile places never become paths outside their folder (red
team rt51). A level name and a candidate hash become file paths
(``candidates/<hash>/<level>.<ext>``, ``best/<level>.<ext>``, an export's
``sources/``), and a ``candidate.json`` of a ``kstrata import`` folder names
the files its levels are read from. An edited run.db, or an imported folder
someone handed over, could otherwise have kstrata write outside the run
directory or read any file of the user's (then shown to the LLM)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass

import pytest

from kstrata.search.candidate import content_hash, normalize_sources
from kstrata.store import CandidateRecord, EvaluationRecord, RunStore, StoreError
from kstrata.store import artifacts


@dataclass(frozen=True)
class _Task:
    name: str = "t"
    digest: str = hashlib.sha256(b"t").hexdigest()
    path: str = "t.py"


def _run_with_one_correct(run):
    sources = normalize_sources({"schedule": "pass\n"})
    digest = content_hash(sources, "fake", _Task().digest)
    with RunStore.create(run, {}) as store:
        tid = store.ensure_task(_Task())
        store.add_candidate(CandidateRecord(hash=digest, sources=sources, level="schedule", role="r",
                                            proposer="p", parents=(), backend="fake"), tid)
        store.record_evaluation(digest, EvaluationRecord(verdict="correct"))
    return digest


@pytest.mark.parametrize("column, value", [("level", "../../../escaped"), ("candidate", "../../../escaped")])
def test_an_edited_run_db_cannot_make_kstrata_write_outside_the_run(tmp_path, column, value):
    from kstrata.search.loop import write_outcome
    from kstrata.search.tree import CandidateTree

    run = tmp_path / "deep" / "er" / "run"
    _run_with_one_correct(run)
    conn = sqlite3.connect(run / "run.db")
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        if column == "candidate":
            for table, col in (("candidates", "hash"), ("sources", "candidate"), ("evaluations", "candidate")):
                conn.execute(f"UPDATE {table} SET {col} = ?", (value,))
        else:
            conn.execute("UPDATE sources SET level = ?", (value,))
    conn.close()
    with pytest.raises(StoreError, match="damaged.*not a (level name|candidate hash)"):
        with RunStore.open(run) as store:  # what resume, retime, export, show and report open
            write_outcome(store, CandidateTree.from_store(store), "done")
    assert not list(tmp_path.rglob("escaped*"))


@pytest.mark.parametrize("level", ["../x", "a/b", "", ".hidden", "x\n", "..", "/abs"])
def test_a_path_is_never_a_level_or_hash(level):
    with pytest.raises(artifacts.UnsafeName):
        artifacts.source_name(level, {})
    with pytest.raises(artifacts.UnsafeName):
        artifacts.candidate_dir(artifacts.Path("run"), level)
    assert artifacts.source_name("graph", {}) == "graph.py"


@pytest.mark.parametrize("name", ["../secret.txt", "{secret}", "link.py"])
def test_an_imported_candidate_json_reads_only_its_own_files(tmp_path, name):
    from typer.testing import CliRunner

    from kstrata.api import read_candidate
    from kstrata.cli.main import app

    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-RT51 token\n")
    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / "link.py").symlink_to(secret)
    (folder / "candidate.json").write_text(json.dumps(
        {"backend": "pytorch", "levels": {"source": name.replace("{secret}", str(secret))}}))
    with pytest.raises(ValueError, match="not a file name inside|symbolic link"):
        read_candidate(folder)  # what `kstrata eval DIR` reads
    out = CliRunner().invoke(app, ["optimize", "relu", "--backend", "pytorch", "--initial", str(folder),
                                   "--budget", "evals=1", "--out", str(tmp_path / "run")])
    assert out.exit_code == 2, out.output
    assert "SECRET-RT51" not in out.output and not (tmp_path / "run").exists()


def test_an_imported_candidate_json_cannot_name_a_level_that_is_a_path(tmp_path):
    from kstrata.api import read_candidate

    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / "source.py").write_text("x = 1\n")
    (folder / "candidate.json").write_text(json.dumps({"backend": "pytorch", "levels": {"../../x": "source.py"}}))
    with pytest.raises(ValueError, match="not a level name"):
        read_candidate(folder)


@pytest.mark.parametrize("command", ["retime", "export"])
def test_a_run_config_naming_a_candidate_file_as_its_task_runs_nothing(tmp_path, command):
    """An edited run's config names a file inside the run (a candidate's level
    file) as the task; retime and export import a run's task file in kstrata's
    process, so that would run the candidate's text there."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    marker = tmp_path / "ran.txt"
    run = tmp_path / "run"
    evil = run / "candidates" / "abc" / "graph.py"
    text = (f"open({str(marker)!r}, 'w').write('ran')\nimport torch\nclass Model(torch.nn.Module):\n"
            "    def forward(self, x):\n        return x\ndef get_inputs():\n    return [torch.ones(4)]\n"
            "def get_init_inputs():\n    return []\n")
    with RunStore.create(run, {"task": {"name": "graph", "path": str(evil),
                                        "digest": hashlib.sha256(text.encode()).hexdigest()},
                               "backend": "pytorch"}):
        pass
    evil.parent.mkdir(parents=True)
    evil.write_text(text)
    args = ["retime", str(run)] if command == "retime" else ["export", str(run), "--to", str(tmp_path / "x")]
    out = CliRunner().invoke(app, args)
    assert not marker.exists()
    assert out.exit_code == 2 and "lies inside" in out.output, out.output


@pytest.mark.parametrize("answer", [
    "CROSS-LEVEL REQUEST" + "\n" * 60_000 + "!",
    "DECLINE" + "\n" * 60_000,
    "CROSS-LEVEL REQUEST: " + " " * 60_000 + "!",
    "```" + " " * 60_000 + "`\n",
])
def test_a_long_hostile_answer_is_read_in_linear_time(answer):
    """An LLM answer is read (code blocks, decline, diagnosis, requests) in
    kstrata's own process; with patterns that scanned ahead from every line
    start, a 60 KB answer of blank lines kept it busy for minutes (quadratic),
    and a 1 MB one for hours. Each answer here must be read within 5 s (it
    takes milliseconds)."""
    import signal

    from kstrata.agents import parse as P

    def too_slow(*_):
        raise TimeoutError("reading the answer took over 5 s")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        try:
            P.parse_answer(answer, "y = 1\n", language="python")
        except P.ParseError:
            pass
        P.parse_decline(answer, "graph")
        P.as_decline(answer, "graph")
        P.parse_cross_level_requests(answer)
        P.has_code(answer)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_a_long_dotted_string_in_a_candidate_is_checked_in_linear_time():
    """The judge's static checks read every string constant of a candidate for
    private names (``getattr(torch, "_C")``); a 120 KB literal ``"a._a._...!"``
    made that pattern backtrack for about 100 s, holding the judge. It must
    take under 5 s, and private dotted names must still be found."""
    import signal

    from kstrata.verify.integrity.static import static_findings

    def too_slow(*_):
        raise TimeoutError("the static checks took over 5 s")

    source = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\nS = " + repr("a._" * 40_000 + "!") + "\n"
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        static_findings(source, dsl=False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    found = static_findings("import torch\nf = getattr(torch, 'torch._C._set_x')\n", dsl=False)
    assert any("_C._set_x" in f.message for f in found), found


@pytest.mark.parametrize("rationale, absent", [
    ("see [link=https://evil.example/]kstrata retime RUN[/link]", "\x1b]8;"),  # a hidden hyperlink (OSC 8)
    ("the verdict is [conceal]incorrect[/conceal] correct", "\x1b[8m"),  # concealed text
    ("moved the split to the [/graph] level", None),  # a closing tag rich cannot match: MarkupError
    ("all fine [reverse]but this[/reverse] and [black on black]hidden words[/]", "\x1b[7m"),  # restyled text
])
def test_markup_in_a_rationale_shows_no_link_hides_nothing_and_breaks_nothing(tmp_path, rationale, absent):
    """``kstrata show`` prints a candidate's rationale (an LLM's words) in a
    table cell, where rich reads markup, on a real terminal."""
    import io

    from kstrata.cli.errors import Console
    from kstrata.search.views import candidate_view

    run = tmp_path / "run"
    digest = _run_with_one_correct(run)
    conn = sqlite3.connect(run / "run.db")
    with conn:
        conn.execute("UPDATE candidates SET rationale = ?", (rationale,))
    conn.close()
    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=200)
    console.print(candidate_view(run, digest[:8]), crop=False)
    out = console.file.getvalue()
    assert absent is None or absent not in out
    words = rationale.split("[")[0].strip()
    assert words in out
    assert "[" not in rationale or "[" in out  # shown as written: the run store's text is never markup


def test_the_resume_command_built_from_a_run_config_quotes_each_word(tmp_path):
    """``optimize --resume`` of a run of another task prints the command that
    resumes it, built from the run's stored config; a task path edited into
    it (``x.py; touch PWNED``) must stay one quoted word when pasted."""
    import shlex

    from typer.testing import CliRunner

    from kstrata.cli.main import app

    run = tmp_path / "run"
    evil = f"x.py; touch {tmp_path / 'PWNED'}"
    with RunStore.create(run, {"task": {"name": "x", "path": evil, "digest": "0" * 64}, "backend": "pytorch"}):
        pass
    r = CliRunner().invoke(app, ["optimize", "relu", "--backend", "pytorch", "--resume", str(run)],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 2, r.output
    line = " ".join(r.output.split()).split("resume it with: ", 1)[1]
    words = shlex.split(line)
    assert words[:3] == ["kstrata", "optimize", evil] and words[3:5] == ["--backend", "pytorch"], words


def test_json_nested_too_deep_in_a_cassette_or_memory_file_is_one_error(tmp_path):
    """A replay cassette and a memory file (``kstrata memory import``) are
    read in kstrata's process; a line nested 100,000 deep raised
    RecursionError out of json.loads, past the handlers of bad JSON: a
    traceback instead of the one-line error."""
    from kstrata.agents.memory import MemoryFileError, MemoryStore
    from kstrata.llm.base import ProviderError
    from kstrata.llm.cassette import read_cassette

    deep = "[" * 100_000 + "]" * 100_000
    cassette = tmp_path / "c.jsonl"
    cassette.write_text(deep + "\n")
    with pytest.raises(ProviderError, match="not usable JSON"):
        read_cassette(cassette)
    store = MemoryStore(tmp_path / "memory.db")
    try:
        with pytest.raises(MemoryFileError, match="line 1: not usable JSON"):
            store.import_jsonl([deep])
    finally:
        store.close()


@pytest.mark.parametrize("column", ["metadata_json", "summary"])
def test_json_nested_too_deep_in_a_run_is_a_damaged_run_not_a_traceback(tmp_path, column):
    """run.db's JSON columns and summary.json are run-directory data anyone
    could have edited; ``kstrata show`` and ``tree`` read them."""
    from typer.testing import CliRunner

    from kstrata.cli.main import app

    run = tmp_path / "run"
    _run_with_one_correct(run)
    deep = "[" * 100_000 + "]" * 100_000
    if column == "summary":
        (run / "summary.json").write_text(deep)
    else:
        conn = sqlite3.connect(run / "run.db")
        with conn:
            conn.execute("UPDATE candidates SET metadata_json = ?", (deep,))
        conn.close()
    for command in (["show", str(run)], ["tree", str(run)]):
        out = CliRunner().invoke(app, command)
        assert not isinstance(out.exception, RecursionError), (command, out.exception)
        if out.exit_code:
            assert out.exit_code == 2 and "damaged" in out.output, (command, out.output)


def test_a_long_tune_line_in_a_tilelang_candidate_is_read_in_linear_time():
    """The built-in TileLang tuner reads a candidate's ``# kstrata-tune:``
    line (an LLM's or an --initial file's text) in kstrata's process; a
    60 KB run of digits on it kept the item pattern busy for about 50 s."""
    import signal

    from kstrata.backends.tilelang.tune_rules import declared

    def too_slow(*_):
        raise TimeoutError("reading the tune line took over 5 s")

    source = 'SCHEDULE = {"rpb": 1}  # kstrata-tune: ' + "0" * 60_000 + "\n"
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        assert declared(source, "c") == {}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    good = 'SCHEDULE = {"rpb": 1}  # kstrata-tune: rpb in {1, 2, 4} on c, lanes in {8, 16}\n'
    assert declared(good, "c") == {"rpb": ((1, 2, 4), 1), "lanes": ((8, 16), None)}

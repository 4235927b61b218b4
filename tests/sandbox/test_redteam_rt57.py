"""Red-team round rt57: what a candidate's folder (or the folder kstrata is
started in) reached outside the sandbox. Each test fails before its fix."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kstrata"


def _planted(folder: Path, module: str, marker: Path) -> None:
    """A ``module.py`` in ``folder`` that records that it ran, then gives the real module back."""
    (folder / f"{module}.py").write_text(
        "import importlib, sys\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        f"del sys.modules[{module!r}]\n"
        "sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"
        f"globals().update(importlib.import_module({module!r}).__dict__)\n")


def test_a_json_py_in_the_working_folder_does_not_run_when_a_candidate_is_parsed(tmp_path, monkeypatch):
    """``kstrata import``, ``eval`` and ``optimize --initial`` parse a
    candidate file in a ``python -c`` child, which put its working folder
    first on ``sys.path``: run in a kernel repository's folder holding a
    ``json.py``, its code ran as kstrata's user with kstrata's environment
    (API keys), outside any sandbox. Now every Python child starts with
    ``-P``."""
    from kstrata.pysyntax import syntax_error_isolated

    here, marker = tmp_path / "repo", tmp_path / "ran.txt"
    here.mkdir()
    _planted(here, "json", marker)
    monkeypatch.chdir(here)
    assert syntax_error_isolated("x = (1,\n", "kernel.py")["line"] == 1  # the parse still works
    assert not marker.exists(), "json.py of the working folder ran in kstrata's child"


def test_the_main_environment_check_does_not_import_from_the_working_folder(tmp_path, monkeypatch):
    """``kstrata env`` (``check_main_env``) imports torch in a ``-c`` child:
    a ``torch.py`` in the folder it was started in ran there."""
    from kstrata.backends.envs import check_main_env

    marker = tmp_path / "ran.txt"
    _planted(tmp_path, "torch", marker)
    monkeypatch.chdir(tmp_path)
    assert "error" not in check_main_env()["torch"]
    assert not marker.exists(), "torch.py of the working folder ran in kstrata's child"


def _python_argvs(tree: ast.AST) -> list[ast.List]:
    """List displays that start a Python child with ``-c`` or ``-m`` (the flag as a constant element)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.List)
            and any(isinstance(e, ast.Constant) and e.value in ("-c", "-m") for e in n.elts[1:2] + n.elts[2:3])]


def test_every_python_child_kstrata_starts_leaves_its_working_folder_off_sys_path():
    """The kind, wherever it is written: each ``[python, ..., "-c"|"-m", ...]``
    command in kstrata's source passes ``-P`` before the flag."""
    bad, seen = [], 0
    for file in sorted(SRC.rglob("*.py")):
        for node in _python_argvs(ast.parse(file.read_text())):
            seen += 1
            flags = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            first = next(f for f in flags if f in ("-c", "-m"))
            if "-P" not in flags[:flags.index(first)]:
                bad.append(f"{file.relative_to(SRC)}:{node.lineno}")
    assert seen >= 10 and not bad, (seen, bad)  # pysyntax, the sandbox and worker starts, setup's, env's


def _linked_folder(folder: Path, secret: Path, **files: str) -> Path:
    """A candidate folder whose first level file links to ``secret``."""
    folder.mkdir(parents=True)
    for i, (name, text) in enumerate(files.items()):
        if i == 0:
            (folder / name).symlink_to(secret)
        else:
            (folder / name).write_text(text)
    return folder


def test_a_level_file_that_links_outside_a_candidate_folder_is_refused(tmp_path):
    """A run's ``best/`` (or ``candidates/<hash>/``) folder from elsewhere,
    given to ``eval`` or ``optimize --initial``: its level files were read
    through symbolic links (``source.py -> ~/.ssh/id_rsa``), and the linked
    file became the candidate's text: sent into the sandbox, the prompts and
    the run store. Refused now, as a ``candidate.json`` import's were; an
    export package's ``sources/`` the same."""
    import json

    import pytest

    from kstrata.api import read_candidate

    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    best = _linked_folder(tmp_path / "best", secret, **{"source.py": ""})
    with pytest.raises(ValueError, match="symbolic link"):
        read_candidate(best, "pytorch")
    tvm = _linked_folder(tmp_path / "tvm", secret, **{"schedule.py": "", "graph.py": "# graph\n"})
    with pytest.raises(ValueError, match="symbolic link"):
        read_candidate(tvm, "tvm-llvm")
    with pytest.raises(ValueError, match="symbolic link"):
        read_candidate(tvm / "schedule.py", "tvm-llvm")  # one level file names its whole folder
    pkg = tmp_path / "pkg"
    _linked_folder(pkg / "sources", secret, **{"source.py": ""})
    (pkg / "export.json").write_text(json.dumps({"backend": "pytorch"}))
    with pytest.raises(ValueError, match="symbolic link"):
        read_candidate(pkg)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "source.py").write_text("class ModelNew: pass\n")
    assert read_candidate(plain, "pytorch") == ({"source": "class ModelNew: pass\n"}, "pytorch")


def test_eval_of_a_folder_with_a_linked_level_file_says_so(tmp_path):
    """The CLI: one clear error (exit 2), and nothing of the linked file is shown or run."""
    import subprocess
    import sys

    secret = tmp_path / "id_rsa"
    secret.write_text("sk-linked-private-line\n")
    best = _linked_folder(tmp_path / "best", secret, **{"source.py": ""})
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(best), "--backend", "pytorch", "--no-time", "--scope", "small"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "symbolic link" in p.stdout + p.stderr, (p.returncode, p.stdout[-2000:], p.stderr)
    assert "sk-linked" not in p.stdout + p.stderr


def _queue_answered(tmp_path: Path, make) -> tuple[object, BaseException | None]:
    """One ``queue:DIR`` request whose answer files ``make(directory, rid)``
    puts in place; what ``complete`` returned or raised (None when it did not
    finish in 30 s)."""
    import threading

    from kstrata.llm.spec import ProviderConfig, ProviderSpec

    cfg = ProviderConfig(kind="queue", path=str(tmp_path / "q"), poll_s=0.02, timeout_s=60)
    provider = ProviderSpec("queue", cfg.path, cfg).build()
    stop, got = threading.Event(), {}

    def answerer() -> None:
        while not stop.is_set():
            for prompt in provider.directory.glob("*.prompt.md"):
                rid = prompt.name.removesuffix(".prompt.md")
                if not any(provider.directory.glob(f"{rid}.response.*")):
                    make(provider.directory, rid)
            stop.wait(0.02)

    def call() -> None:
        try:
            got["value"] = provider.complete([{"role": "user", "content": "Make relu fast."}], max_tokens=50)
        except BaseException as e:  # noqa: BLE001 - the outcome under test
            got["error"] = e

    threads = [threading.Thread(target=answerer, daemon=True), threading.Thread(target=call, daemon=True)]
    for t in threads:
        t.start()
    threads[1].join(30)
    stop.set()
    return got.get("value"), got.get("error")


def _rename_in(path: Path, text: str) -> None:
    """``text`` written to ``path`` as the queue protocol asks: a temporary name, then a rename (read at once;
    an answer written in place waits ``settle_s``, 5 s, unchanged)."""
    import os

    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_a_queue_answer_linked_to_a_file_of_kstratas_is_not_read(tmp_path):
    """The queue's answerer (an external agent: the model) linked its
    ``<id>.response.md`` to ``/proc/self/environ``; kstrata read it as
    itself, and its environment (``OPENAI_API_KEY=...``) came back to the
    answerer in the next prompt (case rt57_queue_answer_link). Linked to a
    run's ``secret``, the seed of the hidden tests."""
    from kstrata.llm.base import ProviderError

    key = tmp_path / "environ"
    key.write_text("OPENAI_API_KEY=sk-linked-rt57\n")
    value, error = _queue_answered(tmp_path, lambda d, rid: (d / f"{rid}.response.md").symlink_to(key))
    assert value is None and isinstance(error, ProviderError) and "symbolic link" in str(error), (value, error)
    assert "sk-linked" not in str(error)


def test_a_queue_answer_that_never_ends_does_not_hang_kstrata(tmp_path):
    """A FIFO as the answer (or a report linked to ``/dev/zero``): kstrata
    read without end, beyond its poll timeout."""
    import os

    from kstrata.llm.base import ProviderError

    value, error = _queue_answered(tmp_path / "fifo", lambda d, rid: os.mkfifo(d / f"{rid}.response.md"))
    assert isinstance(error, ProviderError) and "not a regular file" in str(error), (value, error)

    def zero_report(d: Path, rid: str) -> None:
        (d / f"{rid}.response.json").symlink_to("/dev/zero")
        _rename_in(d / f"{rid}.response.md", "```python\nprint('fast')\n```\n")

    value, error = _queue_answered(tmp_path / "zero", zero_report)
    assert isinstance(error, ProviderError) and "symbolic link" in str(error), (value, error)


def test_a_run_another_kstrata_opened_deeper_than_the_walk_is_masked(tmp_path, monkeypatch):
    """A run that another kstrata process keeps five levels inside a bound
    folder (a project on ``PYTHONPATH``): the walk stops at three and
    :data:`~kstrata.sandbox.policy.RUN_DIRS_ENV` names only this process
    tree's runs, so its secret was readable by this one's candidates (case
    rt57_deep_run_other_process). Reading a run's secret registers it for
    every kstrata process here (:mod:`kstrata.sandbox.known_runs`)."""
    import os
    import subprocess
    import sys

    from kstrata.sandbox import policy

    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(policy.RUN_DIRS_ENV, raising=False)
    proj = tmp_path / "proj"
    deep = proj / "runs" / "2026" / "exp" / "r1"
    deep.mkdir(parents=True)
    other = subprocess.run([sys.executable, "-c", "import sys; from kstrata.store.secret import run_secret; "
                            "run_secret(sys.argv[1])", str(deep)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "KSTRATA_CACHE_DIR": str(tmp_path / "cache")})
    assert other.returncode == 0 and (deep / "secret").is_file(), other.stderr[-2000:]
    monkeypatch.setenv("PYTHONPATH", str(proj))
    cmd = policy.command(["true"], memory_mb=512)
    assert str(proj) in {cmd[i + 1] for i, a in enumerate(cmd) if a == "--ro-bind"}
    at = [i for i, a in enumerate(cmd) if a == "--tmpfs" and cmd[i + 1] == str(deep)]
    assert at and cmd[at[0] + 2:at[0] + 4] == ["--remount-ro", str(deep)], cmd[-30:]


def test_a_lone_surrogate_in_a_candidates_error_does_not_end_eval_in_a_traceback(tmp_path):
    """A candidate whose import raises ``RuntimeError("\\ud800")``: its reply's
    JSON spells the surrogate, and ``kstrata eval`` (without ``--json``) ended
    in ``UnicodeEncodeError`` (exit 1) printing the verdict (case
    rt57_lone_surrogate). Now written out as its escape, as control
    characters are."""
    import subprocess
    import sys

    from kstrata.sandbox.wire import printable, printable_strings

    assert printable("a \ud800 b \udcff") == "a \\ud800 b \\udcff"
    assert printable_strings({"m\udfff": ["\ud800"]}) == {"m\\udfff": ["\\ud800"]}
    cand = tmp_path / "candidate.py"
    cand.write_text("import torch\nimport torch.nn as nn\n\nraise RuntimeError('bad \\ud800 end')\n\n\n"
                    "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n")
    kstrata = str(Path(sys.executable).with_name("kstrata"))
    p = subprocess.run([kstrata, "eval", "relu", str(cand), "--backend", "pytorch", "--no-time", "--scope", "small"],
                       capture_output=True, text=True, timeout=300, errors="replace")
    assert p.returncode == 0 and "compile_error" in p.stdout, (p.returncode, p.stdout[-1500:], p.stderr[-1500:])
    assert "Traceback" not in p.stdout + p.stderr and "bad \\ud800 end" in p.stdout


def test_lone_surrogates_from_a_model_an_mcp_client_or_an_initial_json_become_replacement_characters(tmp_path):
    """A model's answer (an OpenAI-compatible reply may spell ``"\\ud800"``),
    an MCP client's source and an ``optimize --initial`` JSON file: the text
    reached the content hash (``optimize --initial x.json`` ended in
    ``UnicodeEncodeError``) and the run store. Each is U+FFFD now."""
    import json

    from kstrata.backends.registry import get_backend
    from kstrata.cli.optimize import _initial
    from kstrata.llm.base import BaseProvider, Completion
    from kstrata.search.candidate import content_hash
    from kstrata.serve.service import candidate_sources
    from kstrata.tasks.loader import resolve_task

    class Hostile(BaseProvider):
        def _call_once(self, messages, params, req_hash):  # noqa: ANN001, ANN202
            return Completion(text="```python\nx = '\ud800'\n```", input_tokens=1, output_tokens=1, cost_usd=0.0,
                              latency_s=0.0, model="m", provider=self.label, raw_finish_reason="stop")

    text = Hostile("hostile:m", "m").complete([{"role": "user", "content": "Make relu fast."}]).text
    assert text == "```python\nx = '\ufffd'\n```" and text.encode()
    backend, task = get_backend("triton-interp"), resolve_task("relu")
    assert candidate_sources(backend, "x = '\ud800'\n") == {"source": "x = '\ufffd'\n"}
    initial = tmp_path / "initial.json"
    initial.write_text(json.dumps({"source": "import triton\nx = '\ud800'\n"}))
    sources = _initial(initial, task, backend, None)
    assert sources == {"source": "import triton\nx = '\ufffd'\n"}
    assert content_hash(sources, backend.name, task.digest)


def test_a_candidate_folders_malformed_record_is_one_clear_error(tmp_path):
    """A candidate folder from elsewhere whose ``candidate.json`` is a JSON
    list (or names a backend that is a list), an export whose
    ``export.json`` does, or a run whose ``config.json`` does: ``eval`` and
    ``optimize --initial`` ended in AttributeError/TypeError tracebacks. Now
    a ValueError naming the file (``error: ...``, exit 2) or, for an
    export's record, the backend is taken as not recorded (a run's: named
    too unless ``--backend`` is given, red-team rt65)."""
    import json

    import pytest

    from kstrata.api import candidate_run_backend, read_candidate
    from kstrata.backends.registry import get_backend
    from kstrata.cli.errors import OptionError
    from kstrata.cli.optimize import _initial
    from kstrata.tasks.loader import resolve_task

    imp = tmp_path / "imp"
    imp.mkdir()
    (imp / "s.py").write_text("import triton\n")
    for meta, said in (([1, 2], "a JSON list, not an object"), ("s", "a JSON str"), ("{", "not JSON"),
                       ({"levels": {"source": "s.py"}, "backend": ["x"]}, "'backend' is a JSON list")):
        (imp / "candidate.json").write_text(meta if isinstance(meta, str) and meta == "{" else json.dumps(meta))
        with pytest.raises(ValueError, match=said):
            read_candidate(imp)
        with pytest.raises(OptionError, match=said):
            _initial(imp, resolve_task("relu"), get_backend("triton-interp"), None)
    pkg = tmp_path / "pkg"
    (pkg / "sources").mkdir(parents=True)
    (pkg / "sources" / "source.py").write_text("x = 1\n")
    (pkg / "export.json").write_text(json.dumps({"backend": ["x"]}))
    assert read_candidate(pkg) == ({"source": "x = 1\n"}, "pytorch")
    run = tmp_path / "run"
    (run / "candidates" / "abc").mkdir(parents=True)
    (run / "run.db").write_bytes(b"")
    for cfg in ([], {"backend": [1]}):
        (run / "config.json").write_text(json.dumps(cfg))
        # since rt65: named, with what to do, unless the caller gives the backend (then its own stands)
        with pytest.raises(ValueError, match="config.json names no backend"):
            candidate_run_backend(run / "candidates" / "abc")
        assert candidate_run_backend(run / "candidates" / "abc", "pytorch") is None


def test_a_shape_option_refuses_a_variable_given_twice_and_sizes_past_64_bits():
    """``--timing-shape B=1,B=2`` took B=2 without a word (as ``--budget
    evals=10,evals=20`` did, case 17), and ``B=99999999999999999999`` (or
    sizes whose product passes 64-bit byte counts) ended ``eval`` in a
    traceback from inside the judge (rc=1). Each is one ValueError now
    (``error: --timing-shape: ...``, exit 2)."""
    import pytest

    from kstrata.tasks.loader import resolve_task
    from kstrata.tasks.scaling import parse_shape_option

    task = resolve_task("relu")
    assert parse_shape_option("B=2", task) == {"B": 2, "D": task.full_shape(None)["D"]}
    for text, said in (("B=1,B=2", "given twice"), ("B=99999999999999999999", "at most"),
                       ("B=2147483647,D=2147483647", "multiply to more than")):
        with pytest.raises(ValueError, match=said):
            parse_shape_option(text, task)


def test_a_queue_report_with_fields_of_the_wrong_kind_is_refused(tmp_path):
    """The answerer's ``<id>.response.json``: a NaN or negative ``cost_usd``
    was taken as the answer's cost, so the run's cost limit was never reached
    (NaN) or moved back (negative); ``"input_tokens": "abc"``, ``1e400`` or a
    list raised ValueError/OverflowError/TypeError instead of a provider
    error, and a dict as ``finish_reason`` went on to the run store. Each is
    a ``rejected`` ProviderError naming the field; a well-formed report is
    taken as before."""
    from kstrata.llm.base import ProviderError

    def with_report(report: str):
        def make(d: Path, rid: str) -> None:
            (d / f"{rid}.response.json").write_text(report)
            _rename_in(d / f"{rid}.response.md", "hi")
        return make

    for i, (report, field) in enumerate((('{"cost_usd": NaN}', "cost_usd"), ('{"cost_usd": -5}', "cost_usd"),
                                         ('{"input_tokens": "abc"}', "input_tokens"),
                                         ('{"output_tokens": 1e400}', "output_tokens"),
                                         ('{"finish_reason": {"a": 1}}', "finish_reason"))):
        value, error = _queue_answered(tmp_path / str(i), with_report(report))
        assert value is None and isinstance(error, ProviderError) and repr(field) in str(error), (report, value, error)
    value, error = _queue_answered(tmp_path / "ok", with_report('{"input_tokens": 5, "output_tokens": 7, '
                                                                  '"cost_usd": 0.5, "model": "m"}'))
    assert error is None and (value.input_tokens, value.output_tokens, value.cost_usd, value.model) == (5, 7, 0.5, "m")

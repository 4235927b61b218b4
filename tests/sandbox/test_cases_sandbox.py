"""The sandbox red-team cases (``../shared/cases/sandbox``: 02, 03, 04, 05, 06,
12, 13, 15, 21) as tests, each with the outcome its README asks for. The
candidate files are copies under ``tests/sandbox/cases/<case>/``; probes that
the original wrote to ``/tmp`` report their results in the load error's message
instead (``PROBE{json}ENDPROBE``), since the sandbox's ``/tmp`` is private.

Cases 01, 16, 17 and 20 are tested elsewhere (``test_candidate_text_isolation``,
``tests/test_bad_input.py``, ``tests/store/test_damaged_run.py``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kstrata.sandbox import status

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
KSTRATA = str(Path(sys.executable).with_name("kstrata"))

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def kstrata_eval(task: str, candidate: Path, *args: str, env: dict[str, str] | None = None,
                 timeout: float = 300) -> dict:
    """``kstrata eval TASK CANDIDATE --backend pytorch --json ARGS``; its JSON."""
    full_env = {**os.environ, **(env or {})}
    p = subprocess.run([KSTRATA, "eval", task, str(candidate), "--backend", "pytorch", "--json", *args],
                       capture_output=True, text=True, env=full_env, timeout=timeout, cwd=str(REPO))
    assert p.returncode == 0, f"kstrata eval failed (rc={p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    return json.loads(p.stdout[p.stdout.index("{"):])


def summary(d: dict) -> str:
    return f"{d['verdict']} {d.get('check')}: {str(d.get('evidence', {}).get('message'))[:500]}"


# -- 02: sandbox escape -------------------------------------------------------------------
class Listener:
    """A loopback listener (bounded: closes with the test) that records what connects."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            c.settimeout(2)
            try:
                self.seen.append(c.recv(200) or b"<connected>")
            except OSError:
                self.seen.append(b"<connected>")
            c.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join(5)
        self.sock.close()


def _src_snapshot() -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in (REPO / "src").rglob("*") if p.is_file()
            and "__pycache__" not in p.parts}


def test_case02_sandbox_escape_probe_reaches_nothing(tmp_path):
    listener = Listener()
    marker = REPO / "src" / "kstrata" / "verify" / "_redteam_marker.txt"
    assert not marker.exists()
    before = _src_snapshot()
    cand = tmp_path / "candidate.py"
    cand.write_text((CASES / "02_worker_sandbox_escape" / "candidate.py").read_text()
                    .replace("<checkout>", str(REPO)).replace("<port>", str(listener.port)))
    try:
        # control: the listener is reachable from here
        with socket.create_connection(("127.0.0.1", listener.port), timeout=2) as c:
            c.send(b"control")
        # --preset warn: static findings (try/except in the probe) must not stop the probe from running
        d = kstrata_eval("relu", cand, "--no-time", "--preset", "warn", "--timeout", "200",
                         env={"OPENAI_API_KEY": "sk-test-fake"})
        time.sleep(0.5)
    finally:
        listener.close()
    m = re.search(r"PROBE(\{.*\})ENDPROBE", d["evidence"]["message"], re.S)
    assert m, f"the probe did not report: {summary(d)}"
    r = json.loads(m.group(1))
    report = json.dumps(r, indent=1)[:4000]
    # the key: not in its own environment, not in the parent's /proc/<ppid>/environ, nowhere in /proc
    assert r["key_in_own_env"] is False, report
    assert r["parent_environ_has_key"] is not True, report
    assert r["key_in_any_environ"] in ([],) or str(r["key_in_any_environ"]).startswith("ERR"), report
    # the network: nothing reaches the listener, before or after setns (which must fail)
    assert listener.seen == [b"control"], f"connections reached the host listener: {listener.seen}\n{report}"
    for k in ("connect_netns", "connect_after_setns", "connect_after_setns_init"):
        assert r[k] != 0, report
    for k in ("setns_parent", "setns_init"):
        assert r[k] == "ERR" or str(r[k]).startswith("ERR") or r[k][0] != 0, report
    # the file system: no write into the repository, its other files and /root are not visible
    assert r["wrote_src"] is not True and str(r["wrote_src"]).startswith("ERR"), report
    assert not marker.exists()
    assert _src_snapshot() == before, "src/ changed during the candidate's evaluation"
    for k in ("repo_pyproject", "repo_developers", "repo_tests", "repo_git"):
        assert str(r[k]).startswith("ERR"), f"{k} visible inside the sandbox\n{report}"
    # /root: only the Python installation bound read-only (pyenv), nothing else of root's home
    assert str(r["root_entries"]).startswith("ERR") or set(r["root_entries"]) <= {".pyenv"}, report
    # processes: a subprocess sees only the sandbox's own (no pytest, no kstrata eval, no listener)
    cmdlines = r["subprocess_cmdlines"]
    assert isinstance(cmdlines, list) and cmdlines, report
    assert len(cmdlines) <= 4, report
    for line in cmdlines:
        assert "pytest" not in line and "kstrata eval" not in line and " eval relu" not in line, report
    # not root inside
    assert r["uid"] != 0 and r["euid"] != 0 and r["popen_id"] != "0", report


# -- 03, 05, 06: patching the judge from the candidate --------------------------------------
@pytest.fixture(scope="module")
def pool():
    """One judge worker for the cases that need no CLI (as ``kstrata optimize`` reuses one)."""
    from kstrata.backends.registry import get_backend
    from kstrata.backends.workers import pool_for

    p = pool_for(get_backend("pytorch"))
    yield p
    p.close()


def verify(pool, task: str, path: Path, secret: str = "c0ffee" * 6):
    from kstrata.tasks.loader import resolve_task
    from kstrata.verify import verify_candidate

    return verify_candidate(resolve_task(task), "pytorch", {"source": path.read_text()}, secret=secret,
                            pool=pool, scope="small")


@pytest.mark.parametrize("case,file", [
    ("03_patch_verifier_compare_pytorch", "candidate.py"),
    ("03_patch_verifier_compare_pytorch", "candidate_original.py"),
    ("05_patch_reference_op_pytorch", "candidate.py"),
    ("06_overwrite_oracle_gc_pytorch", "candidate.py"),
], ids=["03-compare", "03-original", "05-reference-op", "06-oracle-gc"])
def test_patching_the_judge_from_the_candidate_leaves_zeros_incorrect(pool, case, file):
    """Zeros (03, 06) or a constant 1/D (05) after patching the comparison, the
    reference's op or the oracle: incorrect (or rejected). The original case-03
    file looks the runner up in ``sys.modules``, where the candidate process
    never has it: it does not load (compile_error), which is as good."""
    ev = verify(pool, "softmax", CASES / case / file)
    allowed = ("incorrect", "rejected") + (("compile_error",) if file == "candidate_original.py" else ())
    assert ev.verdict.value in allowed, (ev.verdict, ev.check, ev.evidence)


# -- 04: contamination across candidates ----------------------------------------------------
@pytest.mark.slow
def test_case04_patcher_does_not_contaminate_later_candidates(pool):
    """As the case's contaminate.py (``kstrata optimize``'s pool and evaluator):
    zeros, the patchers, zeros again through one pool (the module's judge pool,
    which other candidates used before); zeros incorrect both times."""
    from kstrata.backends.registry import get_backend
    from kstrata.measure.timing import TimingConfig
    from kstrata.search.evaluators import VerifyMeasureEvaluator
    from kstrata.tasks.loader import resolve_task

    d = CASES / "04_worker_contamination_across_candidates"
    t, b = resolve_task("softmax"), get_backend("pytorch")
    ev = VerifyMeasureEvaluator(secret="0123456789abcdef", pool=pool, shape={"B": 64, "D": 128},
                                timing_config=TimingConfig(warmup_ms=10.0, budget_ms=50.0, max_remeasure=0),
                                confirm_scope=None, retimes=0, preset="warn")
    got = []  # preset warn: the patchers reach the judge's modules by computed names, and the sandbox must hold
    for name in ("zeros.py", "patcher.py", "patcher_import.py", "zeros.py"):
        e, m = ev.evaluate(t, b, {"source": (d / name).read_text()})
        got.append((name, e.verdict.value, e.check, str(e.evidence.get("message"))[:200]))
    assert got[0][1] == "incorrect", got
    assert got[3][1] == "incorrect", got
    assert got[0][2] == got[3][2], got
    # the import patcher is a real softmax: its own verdict is correct (its patch reached nothing)
    assert got[2][1] == "correct", got


# -- 12: orphans ---------------------------------------------------------------------------------
def _sleepers(arg: str) -> set[int]:
    out = set()
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if (p / "cmdline").read_bytes() == f"sleep\0{arg}\0".encode():
                    out.add(int(p.name))
            except OSError:
                pass
    return out


def test_case12_setsid_children_die_with_the_candidate(tmp_path):
    arg = f"{secrets.randbelow(900) + 60}.{secrets.randbelow(10**6):06d}"  # unique sleep duration (60-960 s)
    cand = tmp_path / "candidate.py"
    cand.write_text((CASES / "12_orphan_processes_outlive_kstrata" / "candidate.py").read_text()
                    .replace("<count>", "3").replace("<seconds>", arg))
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(_sleepers(arg))
            time.sleep(0.2)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    try:
        # 5 s of the candidate's own work (the candidate forks its children at its first call, then spins a
        # CPU until then; the watch above looks every 0.2 s); the sandbox's start and the judge's share do not
        # count against --timeout since feb24f0 (it was 60 s when they did: at load 15-39 the candidate never
        # reached forward in 30 s). 15 s here was 25 s of CI's 20 minutes, most of it spinning.
        d = kstrata_eval("relu", cand, "--no-time", "--scope", "small", "--timeout", "5", "--preset", "warn")
    finally:
        done.set()
        w.join(5)
    alive = _sleepers(arg)
    for pid in alive:  # clean up what the test itself made possible, by pid
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert d["verdict"] == "timeout", summary(d)
    assert seen, "the candidate's children were never seen (the probe did not run)"
    assert not alive, f"children of the candidate outlived kstrata eval: {sorted(alive)}"


# -- 13: memory -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def case13():
    return kstrata_eval("relu", CASES / "13_no_memory_limit_oom_killer" / "candidate.py", "--no-time",
                        "--scope", "small", "--timeout", "200", env={"KSTRATA_CANDIDATE_MEMORY_MB": "1024"})


def test_case13_allocation_over_the_limit_is_a_runtime_error(case13):
    assert case13["verdict"] == "runtime_error", summary(case13)
    assert case13["check"] == "oom", summary(case13)


def test_case13_runtime_error_names_the_memory_limit(case13):
    msg = str(case13["evidence"].get("message", ""))
    assert "1024" in msg and ("MiB" in msg or "MB" in msg), summary(case13)


# -- 15: a candidate breaks a Tensor method -------------------------------------------------
def test_case15_broken_tensor_method_is_a_verdict_and_does_not_leak(pool):
    """``torch.Tensor.detach`` replaced at import: a verdict (rejected or
    runtime_error), never a VerifierError; the next candidate in the same pool
    is judged as if nothing happened."""
    d = CASES / "15_candidate_crashes_verifier_traceback"
    bad = verify(pool, "relu", d / "candidate.py")
    good = verify(pool, "relu", d / "honest.py")
    assert bad.verdict.value in ("rejected", "runtime_error"), (bad.verdict, bad.check, bad.evidence)
    assert good.verdict.value == "correct", (good.verdict, good.check, good.evidence)


# -- 21: sources left in /tmp -----------------------------------------------------------------
def test_case21_no_candidate_source_left_in_tmp(tmp_path):
    marker = f"marker-{secrets.token_hex(12)}"
    cand = tmp_path / "cand" / "candidate.py"
    cand.parent.mkdir()
    text = (CASES / "21_candidate_sources_left_in_tmp" / "candidate.py").read_text()
    cand.write_text(f"# {marker}\n" + text.split("\n", 1)[1])
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    d = kstrata_eval("relu", cand, "--no-time", "--scope", "small", env={"TMPDIR": str(tmpdir)})
    assert d["verdict"] == "correct", summary(d)
    # the private TMPDIR, and whatever kstrata might still put in /tmp itself (kstrata*, cand_*)
    files = list(tmpdir.rglob("*"))
    for pattern in ("kstrata*", "cand_*", "tmp*.py"):
        for top in Path("/tmp").glob(pattern):
            files += [top, *top.rglob("*")] if top.is_dir() else [top]
    left = []
    for p in files:
        try:
            if p.is_file() and p.stat().st_size < 1 << 20 and marker in p.read_text(errors="ignore"):
                left.append(str(p))
        except OSError:
            continue
    assert not left, f"candidate source left behind: {left}"
    assert list(tmpdir.iterdir()) == []  # the judge pool's directory went with it

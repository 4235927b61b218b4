"""`kstrata optimize relu --backend tvm-llvm --proposer llm --llm queue:DIR` end to
end with a scripted answerer (a thread here) whose graph-level answer carries
case 01's payload (``"note": print.__self__.exec(PAYLOAD) or 1`` in a
``R.func_attr``): the answer is verified, the next prompt is built, and the
payload never runs in kstrata's own process (this test's process: the CLI runs
in it), so the host's marker path stays absent."""

from __future__ import annotations

import os
import re
import threading

import pytest
from typer.testing import CliRunner

GRAPH = re.compile(r"```python\n(# kstrata-tvm graph.*?)```", re.S)
EMPTY_SCHEDULE = "```python\n# kstrata-tvm schedule\n\ndef schedule(sch):\n    pass\n```\n"


def _answerer(directory, marker, stop, seen):
    payload = (f"import os\nos.makedirs({os.path.dirname(marker)!r}, exist_ok=True)\n"
               f"open({marker!r}, 'a').write('pid=%d\\n' % os.getpid())\n")
    while not stop.is_set():
        for p in sorted(directory.glob("*.prompt.md")) if directory.is_dir() else []:
            out = p.with_name(p.name.replace(".prompt.md", ".response.md"))
            if out.exists():
                continue
            text = p.read_text()
            m = GRAPH.search(text)
            if "editing its `graph` level" in text and m:
                g = m.group(1).replace("R.func_attr({", 'R.func_attr({"note": print.__self__.exec(%r) or 1, '
                                       % payload, 1)
                answer, kind = f"Rationale: a note.\n\n```python\n{g}```\n", "graph"
            elif "editing its `schedule` level" in text:
                answer, kind = "Rationale: keep defaults.\n\n" + EMPTY_SCHEDULE, "schedule"
            else:
                answer, kind = "I decline.", "other"
            seen.append((kind, text))
            tmp = out.with_name("." + out.name + ".tmp")
            tmp.write_text(answer)
            os.replace(tmp, out)
        stop.wait(0.05)


def _lightly_timed(monkeypatch):
    """The CLI's evaluator with a short timing round and no re-timing: what is
    tested here is where the answer runs and what the next prompt shows, not
    what a timing reads (the default rounds took most of 4.5 minutes under load).
    Nor the end of the run: no full-scope confirmation of a would-be best (the
    same verification in the same sandbox, at more shapes) and no end-of-run
    re-timing of untrusted contenders (``final_round``); together 28% of the
    test's time (109 s of 390 s at load 9). tests/search/test_final_round.py and
    test_confirm_at_end.py test those."""
    from kstrata.measure.timing import TimingConfig
    from kstrata.search import evaluators

    light, full = TimingConfig(warmup_ms=5.0, budget_ms=20.0, max_remeasure=0), evaluators.VerifyMeasureEvaluator

    def evaluator(**kw):
        ev = full(**{**kw, "confirm_scope": None}, timing_config=light, final_timing_config=light, retimes=0)
        ev.final_round = None  # the search loop takes the round from the evaluator when it has one
        return ev

    monkeypatch.setattr(evaluators, "VerifyMeasureEvaluator", evaluator)


@pytest.mark.slow
@pytest.mark.heavy
def test_optimize_with_a_queue_llm_verifies_a_hostile_graph_answer_and_builds_the_next_prompt(tmp_path, monkeypatch):
    """Under ``pytest -m heavy`` (61 s of CI's 20 minutes). Its parts run in CI: case 01's payload in a
    graph answer stays out of kstrata's process while the next (schedule-level) prompt is built and the
    parent's schedule replayed (tests/sandbox/test_candidate_text_isolation.py) and while the built-in
    proposer lowers, schedules and proposes from it
    (tests/agents/test_builtin_sandboxed.py::test_hostile_graph_and_schedule_run_only_in_the_sandbox);
    a queue LLM's answers verified on tvm-llvm and the next role's prompt built from them, end to end
    (tests/agents/test_hierarchical.py::test_hierarchical_roles_router_and_rebuild_through_the_queue)."""
    from kstrata.cli.main import app
    from kstrata.store.run_store import RunStore
    from kstrata.search.tree import CandidateTree

    q, run, marker = tmp_path / "q", tmp_path / "run", tmp_path / "probe" / "marker.txt"
    q.mkdir()
    stop, seen = threading.Event(), []
    t = threading.Thread(target=_answerer, args=(q, str(marker), stop, seen), daemon=True)
    t.start()
    _lightly_timed(monkeypatch)
    try:
        out = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--proposer", "llm",
                                       "--llm", f"queue:{q}", "--budget", "evals=3,calls=2",
                                       "--timing-shape", "B=64,D=512", "--out", str(run)], env={"COLUMNS": "200"})
    finally:
        stop.set()
        t.join(5)
    assert out.exit_code == 0, out.output
    # the payload ran nowhere on the host: not here (the CLI's process), not in a worker
    assert not marker.exists() and not marker.parent.exists()
    with RunStore.open(run) as store:
        tree = CandidateTree.from_store(store, with_sources=True)
    graph_nodes = [n for n in tree if n.level == "graph"]
    assert graph_nodes, [n.level for n in tree]
    g = graph_nodes[0]
    assert "print.__self__.exec" in g.sources["graph"] and g.evaluated and g.verdict, g.verdict
    # the next prompt was built after the graph answer was verified
    kinds = [k for k, _ in seen]
    assert kinds[0] == "graph" and len(kinds) == 2, kinds
    second = seen[1][1]
    if kinds[1] == "schedule":  # its context: the lowered TensorIR, made in the sandbox
        assert "The graph lowers to these PrimFuncs" in second and "# PrimFunc relu" in second
        assert "T.sblock(" in second
    else:  # a graph prompt shows the candidate's text as text
        assert kinds[1] == "graph" and "print.__self__.exec" in second

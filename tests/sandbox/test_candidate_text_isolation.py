"""Case 01 (issue 16) without an LLM: a graph-level answer whose TVMScript
carries ``"note": print.__self__.exec(PAYLOAD) or 1`` (TVMScript's parser
evaluates it) must never run in kstrata's own process, not even to build the
schedule-level prompt (``TVMBackend.level_context``) or to replay the parent's
schedule after the graph change (``HierarchicalProposer._replay``). It runs, if
at all, in the sandbox: another pid, whose ``/tmp`` is a private tmpfs, so the
host's marker path stays absent. The prompt still shows the lowered TensorIR."""

from __future__ import annotations

import os
import re

import pytest

from kstrata.backends.registry import get_backend
from kstrata.sandbox import status
from kstrata.tasks.loader import resolve_task

pytestmark = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")

# writes "pid=<its pid>" to MARKER (creating the directory: inside the sandbox
# that is the private tmpfs, so a write there never reaches the host)
PAYLOAD = ("import os\nos.makedirs(os.path.dirname(MARKER), exist_ok=True)\n"
           "open(MARKER, 'a').write('pid=%d\\n' % os.getpid())\n")


def hostile_graph(graph: str, marker: str, tail: str = "") -> str:
    """kstrata's relu graph turned into |x| with the case's func_attr payload."""
    code = f"MARKER = {marker!r}\n" + PAYLOAD + tail
    g = graph.replace("R.nn.relu(x)", "R.abs(x)")
    assert g != graph
    g2 = g.replace("R.func_attr({", "R.func_attr({\"note\": print.__self__.exec(%r) or 1, " % code, 1)
    assert g2 != g
    return g2


@pytest.fixture(scope="module")
def relu():
    task, backend = resolve_task("relu"), get_backend("tvm-llvm")
    return task, backend, backend.initial_sources(task)


def test_the_payload_is_live_when_parsed_unsandboxed(relu, tmp_path):
    """Control: the same text, parsed by TVMScript in an ordinary process, runs
    the payload there (so the tests below would see it if kstrata still parsed
    it). A fresh interpreter, so no state of earlier tests changes the parse."""
    import subprocess
    import sys

    task, backend, src = relu
    marker = tmp_path / "control" / "marker.txt"
    text = tmp_path / "graph.txt"
    text.write_text(hostile_graph(src["graph"], str(marker)))
    code = ("import sys, tvm\nfrom kstrata.backends.tvm.lower import parse_graph\n"
            "tvm.script.from_source(parse_graph(open(sys.argv[1]).read())[1])\nprint('PID', __import__('os').getpid())")
    r = subprocess.run([sys.executable, "-c", code, str(text)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    pid = int(r.stdout.split("PID", 1)[1].split()[0])
    assert marker.read_text() == f"pid={pid}\n"


def test_schedule_prompt_context_lowers_the_graph_in_the_sandbox(relu, tmp_path):
    task, backend, src = relu
    marker = tmp_path / "probe" / "marker.txt"
    sources = {**src, "graph": hostile_graph(src["graph"], str(marker))}
    note = backend.level_context(task, sources, "schedule")["schedule"]
    assert not marker.exists() and not marker.parent.exists()
    # the prompt still gets the lowered TensorIR: PrimFunc name, block and loops
    assert note.startswith("The graph lowers to these PrimFuncs")
    assert re.search(r"# PrimFunc \w*abs", note) and "T.sblock(" in note and "T.grid(" in note
    # the other levels get no context (and no sandbox is started for them)
    assert backend.level_context(task, sources, "graph") == {}


def test_a_payload_that_raises_reports_another_pid_and_the_prompt_says_why(relu, tmp_path):
    task, backend, src = relu
    marker = tmp_path / "raise" / "marker.txt"
    tail = "raise RuntimeError('payload ran in pid %d' % os.getpid())\n"
    sources = {**src, "graph": hostile_graph(src["graph"], str(marker), tail)}
    note = backend.level_context(task, sources, "schedule")["schedule"]
    assert not marker.exists()
    assert note.startswith("(the graph does not lower:"), note
    m = re.search(r"payload ran in pid (\d+)", note)
    assert m and int(m.group(1)) != os.getpid(), note


def test_hierarchical_replay_runs_in_the_sandbox(relu, tmp_path):
    from kstrata.agents.hierarchical import HierarchicalProposer
    from kstrata.backends.tvm.schedule import render_schedule

    task, backend, src = relu
    marker = tmp_path / "replay" / "marker.txt"
    # the parent's schedule is candidate text too: a step that also writes the marker
    schedule = render_schedule({"relu": ["sch.parallel(sch.get_loops(sch.get_sblock('compute'))[0])",
                                         f"open({str(marker)!r}, 'a').write('schedule step\\n')"]})
    prop = HierarchicalProposer(backend, agents={}, memory=None, ablations={"linear": True})
    sources, report = prop._replay(task, {**src, "schedule": schedule},
                                   {"graph": hostile_graph(src["graph"], str(marker))})
    assert not marker.exists() and not marker.parent.exists()
    # the new graph's PrimFunc is not "relu": the parent's schedule steps for it no longer apply
    assert "error" not in report, report
    assert report["funcs"] and all("abs" in f for f in report["funcs"])
    assert [s["func"] for s in report["failed"]] == ["relu"]
    assert "schedule_relu" not in sources["schedule"] and "open(" not in sources["schedule"]

"""``kstrata tree``/``show`` of a ``kstrata mcp`` run (newcomer nc21): the tree's
header read "? on ?" though every submission named its task and backend, and a
correct candidate whose timing failed (killed at the time limit) was shown as
"correct, not timed"."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kstrata.serve.mcp_server import KernelServer
from kstrata.serve.service import Outcome
from kstrata.verdict import Verdict
from kstrata.verify.result import Evaluation

TASKS = Path(__file__).parent / "tasks"
WHY = "timing failed (timeout): no answer within 300 s; worker killed"
SOURCE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def _text(renderable) -> str:
    console = Console(width=300, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return " ".join(console.export_text().split())


def test_an_mcp_run_names_its_task_and_backend_and_a_failed_timing(tmp_path, monkeypatch):
    from kstrata.search.views import candidate_view, run_tree

    def timed_out(task, backend, sources, **kw):  # correct, and the timing worker killed at its limit
        ev = Evaluation(verdict=Verdict.CORRECT, public_tests=1, hidden_tests=1)
        return Outcome(verdict="correct", public={"verdict": "correct", "timing": {"available": False,
                                                                                   "reason": WHY}},
                       evaluation=ev)

    monkeypatch.setattr("kstrata.serve.mcp_server.evaluate", timed_out)
    srv = KernelServer(tmp_path / "run", backend="pytorch", task_dir=TASKS)
    try:
        digest = srv.submit_candidate(task="tiny_relu", source=SOURCE)["candidate"]
    finally:
        srv.close()
    tree = _text(run_tree(tmp_path / "run"))
    assert "tiny_relu on pytorch" in tree and "?" not in tree.split("tiny_relu")[0], tree
    assert "timing failed" in tree, tree
    shown = _text(candidate_view(tmp_path / "run", digest[:12]))
    assert WHY in shown, shown
    best = _text(candidate_view(tmp_path / "run"))
    assert "not timed" not in best and "timing failed" in best, best

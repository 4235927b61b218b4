"""``kstrata show`` never cuts code: lines longer than the terminal wrap; a
failed verdict comes with its message."""

from __future__ import annotations

from rich.console import Console
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask

from kstrata.search import Budget, optimize
from kstrata.search.views import candidate_view

LONG = ('def main(x: R.Tensor((s77, s27), dtype="float32"), p_weight: R.Tensor((s27,), dtype="float32")) '
        '-> R.Tensor((s77, s27), dtype="float32"):  # end-of-line-marker')


def test_show_wraps_long_source_lines_instead_of_cutting_them(tmp_path):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", initial_sources={"graph": f"fuse=0\n# {LONG}\n", "schedule": "tile=1\norder=0\n"})
    console = Console(width=80, record=True, file=open("/dev/null", "w"))
    console.print(candidate_view(res.run_dir, res.tree.root.hash[:8]))
    text = console.export_text()
    assert "end-of-line-marker" in text
    flat = " ".join(text.split())
    for token in LONG.split():
        assert token in flat, token


def test_show_prints_feedback_as_text_lines_and_the_json_on_request(tmp_path):
    # The newcomer got ~50 lines of raw feedback JSON between the summary and the source.
    class Told(FakeEvaluator):
        def evaluate(self, task, backend, sources):
            ev, m = super().evaluate(task, backend, sources)
            ev = {**ev, "verdict": "incorrect", "check": "tolerance",
                  "feedback": [{"kind": "mismatch", "level": "source", "text": "wrong at B=17\n rows 3-5 differ",
                                "data": {"rows": [3, 4, 5]}}]}
            return ev, None

    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), Told(), "greedy", Budget(evaluations=1),
                   tmp_path / "run", initial_sources={"graph": "fuse=0\n", "schedule": "tile=1\norder=0\n"})
    console = Console(width=120, record=True, file=open("/dev/null", "w"))
    console.print(candidate_view(res.run_dir, res.tree.root.hash[:8]))
    text = console.export_text()
    assert "- [mismatch, source] wrong at B=17\n   rows 3-5 differ" in text
    assert '"rows"' not in text and '"evaluation"' not in text
    from kstrata.search.show_json import candidate_json

    assert candidate_json(res.run_dir, res.tree.root.hash[:8])["feedback"]["evaluation"][0]["data"] == {
        "rows": [3, 4, 5]}


class FailingEvaluator:
    def __init__(self, message):
        self.message = message

    def evaluate(self, task, backend, srcs):
        return {"verdict": "compile_error", "check": "load", "evidence": {"message": self.message}}, None


def _show(tmp_path, message):
    res = optimize(FakeTask(), FakeBackend(), FakeProposer(), FailingEvaluator(message), "greedy",
                   Budget(evaluations=1), tmp_path / "run", initial_sources={"graph": "fuse=0\n",
                                                                              "schedule": "tile=1\norder=0\n"})
    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    console.print(candidate_view(res.run_dir, res.tree.root.hash[:8]))
    return console.export_text()


def test_show_prints_a_failed_verdicts_message(tmp_path):
    """m23: `kstrata show RUN CAND` printed "compile_error (load)" alone; the
    NameError behind it was only in run.db."""
    error = ("schedule_layer_norm line 16 `_lanes_reduce(sch, 'x_sum')` failed: NameError: name '_lanes_reduce' "
             "is not defined")
    text = _show(tmp_path, error)
    assert "compile_error (load)" in text and error in " ".join(text.split())


def test_a_long_message_says_how_much_is_left_out(tmp_path):
    text = _show(tmp_path, "\n".join(f"frame {i}" for i in range(30)))
    assert "frame 0" in text and "frame 19" in text and "frame 20" not in text
    assert "... (10 more lines; the whole message is in the run's run.db" in text

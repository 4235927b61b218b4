"""Progress in a log (off a terminal): a step that runs long without change adds
a line every 30 s, each with its running time
(never two identical lines); a terminal's live line shows the running time
every second. The run directory lines are never wrapped before the path."""

from __future__ import annotations

from types import SimpleNamespace

from rich.text import Text
from search_fakes import FakeBackend, FakeEvaluator, FakeProposer, FakeTask
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.cli.progress import Heartbeat
from kstrata.search import Budget, SearchSettings
from kstrata.search import loop

PROPOSING = {"node": SimpleNamespace(hash="abcdef0123"), "level": "schedule", "backend": "tvm-llvm",
             "proposer": "builtin"}


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def run(self, beat, seconds: int):
        """The heartbeat thread's ticks over ``seconds``, one a second."""
        for _ in range(seconds):
            self.t += 1
            beat.tick()


def _beat(emit):
    clock, status = Clock(), Text("")

    def progress(event, info):
        status.plain = f"evaluated {info['n']}"

    beat = Heartbeat(status, emit, clock=clock)
    return beat, beat.wrap(progress), clock, status


def test_a_long_unchanged_step_is_logged_every_30_s_with_its_running_time():
    lines = []
    beat, wrapped, clock, _ = _beat(lambda ln: lines.append((clock.t, ln)))
    wrapped("evaluated", {"n": 1})
    wrapped("proposing", PROPOSING)
    clock.run(beat, 1200)  # a 20-minute MetaSchedule tuning inside one expansion
    assert [t for t, _ in lines] == list(range(30, 1201, 30))  # never silent for more than 30 s
    assert len({ln for _, ln in lines}) == len(lines)
    assert lines[0][1] == ("evaluated 1 · proposing schedule edits of abcdef01 (the built-in proposer's rules "
                           "and MetaSchedule tuning) (running 30 s)")
    assert lines[-1][1].endswith("(running 20 min 0 s)")
    # an event is a change: the next quiet spell is logged after 30 s again, with the time since the event
    wrapped("evaluated", {"n": 2})
    clock.run(beat, 60)
    assert lines[-2:] == [(1230, "evaluated 2 · no change for 30 s"), (1260, "evaluated 2 · no change for 1 min 0 s")]


def test_a_terminals_live_line_shows_the_running_time_every_second():
    beat, wrapped, clock, status = _beat(None)
    wrapped("evaluated", {"n": 1})
    wrapped("proposing", PROPOSING)
    clock.run(beat, 3)
    assert status.plain.endswith("MetaSchedule tuning) (running 3 s)")
    clock.run(beat, 62)
    assert status.plain.endswith("(running 1 min 5 s)")
    wrapped("evaluated", {"n": 2})
    clock.run(beat, 31)
    assert status.plain == "evaluated 2 · no change for 31 s"


def test_run_directory_lines_are_not_wrapped_off_a_terminal(tmp_path, monkeypatch):
    real = loop.optimize

    def fake_search(task, backend, proposer, evaluator, *, run_dir, progress, **kwargs):
        """The CLI's search, on the synthetic landscape (no compiler, no timing)."""
        return real(FakeTask(), FakeBackend(), FakeProposer(), FakeEvaluator(), "greedy", Budget(evaluations=2),
                    run_dir, progress=progress, settings=SearchSettings(final_contenders=0))

    monkeypatch.setattr(loop, "optimize", fake_search)
    out = tmp_path / ("a-run-directory-whose-path-is-longer-than-one-line-of-eighty-columns-" * 2)
    r = CliRunner().invoke(app, ["optimize", "softmax", "--backend", "triton-interp", "--out", str(out)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert f"run directory: {out}" in lines
    assert any(ln.startswith("stopped: ") and ln.endswith(f"; run directory: {out}") for ln in lines), r.output


def test_an_event_that_prints_no_line_does_not_restart_the_silence():
    # off a terminal optimize prints on 'evaluated' and 'stopped' only; a proposal event between two
    # steps (no line) restarted the count, and a newcomer's log went 57 s without a line
    clock, status, lines = Clock(), Text(""), []

    def progress(event, info):
        status.plain = f"evaluated {info['n']}"

    beat = Heartbeat(status, lambda ln: lines.append(clock.t), clock=clock, line_events=("evaluated",))
    wrapped = beat.wrap(progress)
    wrapped("evaluated", {"n": 1})
    wrapped("proposing", PROPOSING)
    clock.run(beat, 57)  # a line at 30 s
    wrapped("proposed", {"n": 1})  # updates the status, prints nothing
    wrapped("proposing", PROPOSING)
    clock.run(beat, 60)
    gaps = [b - a for a, b in zip([0.0] + lines, lines)]
    assert lines and max(gaps) <= 30, lines


def test_a_quiet_start_reads_starting_not_no_change():
    """newcomer nc23: `kstrata bench` printed "no change for 30 s" before its first task line (nothing had
    happened to change); the time before the first event reads "starting", with its running time."""
    lines = []
    beat, wrapped, clock, _ = _beat(lambda ln: lines.append(ln))
    clock.run(beat, 30)
    assert lines == ["starting (running 30 s)"], lines
    wrapped("evaluated", {"n": 1})
    clock.run(beat, 30)
    assert lines[-1] == "evaluated 1 · no change for 30 s", lines

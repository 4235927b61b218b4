"""``optimize --initial RUN/best/graph.py`` on a ``tvm-*`` backend starts from the whole
candidate folder, as ``kstrata eval`` takes that path (newcomer nc26).

``kstrata eval rmsnorm RUN/best/graph.py --backend tvm-llvm`` read the folder's graph and
schedule and verified the candidate, but ``kstrata optimize rmsnorm --backend tvm-llvm
--initial RUN/best/graph.py`` refused the same path ('a tvm-llvm candidate has the levels
graph, schedule, source, not one file'). A level file of a multi-level backend now reads its
folder; any other lone file is refused as before. The candidate folder is red-team round rt60's
honest rmsnorm graph and schedule (tests/verify/cases_rt60/g_rsqrt_honest), read as text only."""

from pathlib import Path

import pytest

from kstrata.backends.registry import get_backend
from kstrata.cli.errors import OptionError
from kstrata.cli.optimize import _initial
from kstrata.tasks.loader import resolve_task

BEST = Path(__file__).parents[1] / "verify" / "cases_rt60" / "g_rsqrt_honest"


def test_a_level_file_starts_from_its_whole_folder():
    task, backend = resolve_task("rmsnorm"), get_backend("tvm-llvm")
    whole = _initial(BEST, task, backend, None)
    assert set(whole) == {"graph", "schedule"}
    assert _initial(BEST / "graph.py", task, backend, None) == whole
    assert _initial(BEST / "schedule.py", task, backend, None) == whole


def test_another_lone_file_is_still_refused(tmp_path):
    other = tmp_path / "kernel.py"
    other.write_text((BEST / "graph.py").read_text())
    with pytest.raises(OptionError, match="not one file"):
        _initial(other, resolve_task("rmsnorm"), get_backend("tvm-llvm"), None)

"""Suite-wide test ordering: the longest tests start first.

CI runs ``pytest -n auto`` on a 2-core machine (two xdist workers). With
pytest's file order, a test of several minutes that starts near the end sets
the wall time while the other worker sits idle. So the test files that hold
the tests listed in ``slow_tests.txt`` run first, the file with the longest
listed test first, its listed tests longest first and then its other tests;
every other file keeps its place after them. A file's tests stay together, so
a module-scoped fixture (a judge pool, a Ray instance) is set up once per
worker. Under xdist each worker is handed one test at a time (with at most
about three waiting): the long tests spread over both workers and the short
ones fill in at the end.

Refresh the list from a full run: ``python -m pytest -n auto --durations=60``,
keeping the tests over about 10 s (lines ``SECONDS NODE_ID``).

A session-scoped fixture is set up once per xdist worker that runs a test
using it. The test files that use one of :data:`SHARED_FIXTURES` (a real bench
run, about 100 s on a busy 2-core machine) are one unit of work for xdist, sent
to one worker, so it is set up once. (xdist's own ``--dist loadgroup`` does not
group under pytest 9: it renames ``item._nodeid``, which pytest 9 no longer reads.)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import defaultdict
from pathlib import Path

import pytest

SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")

#: Session (or module) fixtures too costly to set up on every worker, and the test
#: files that use them: each fixture's files are one unit of work, run on one worker.
SHARED_FIXTURES = {
    "small_bench": ("tests/bench/test_harness.py", "tests/bench/test_bench_views.py",
                    "tests/report/test_report.py"),
    "ray_local": ("tests/execute/test_ray.py",),  # a local Ray instance (~10 s and ~1 GB each)
}
_GROUP_OF_FILE = {f: name for name, files in SHARED_FIXTURES.items() for f in files}

sys.path.insert(0, str(Path(__file__).parent / "bench"))


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory):
    """A real 2-task x 2-proposer bench (pytorch backend, evals=3), run once:
    ``(bench directory, run_bench's result)``."""
    from bench_helpers import isolated_env, make_bench

    root = tmp_path_factory.mktemp("bench")
    with isolated_env(root / "cache"):
        result = make_bench(root / "b")
    return root / "b", result


#: seconds between two looks of an xdist worker at its parent
ORPHAN_POLL_S = 2.0


@pytest.fixture
def keep_idle_processes(monkeypatch):
    """Idle zygotes and judge workers are kept whatever the machine's memory
    (:mod:`kstrata.execute.memory`: under its floor they are ended): for tests
    that assert which zygote a process forks from."""
    monkeypatch.setenv("KSTRATA_IDLE_MEMORY_FLOOR_MB", "0")


def _end_when_orphaned(parent: int) -> None:
    """End this xdist worker once its controller (``parent``) is gone: a killed ``pytest``
    left its two workers running for an hour, with their judge workers and sandbox zygotes
    (a newcomer's busy-machine run). SIGTERM, as when the controller is stopped by hand;
    kstrata's worker processes follow their parent's death."""
    while os.getppid() == parent:
        threading.Event().wait(ORPHAN_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        threading.Thread(target=_end_when_orphaned, args=(os.getppid(),), name="orphan-watch",
                         daemon=True).start()


def known_slow(path: Path = SLOW_TESTS) -> dict[str, float]:
    """``{node id: seconds}`` from ``path`` (lines ``SECONDS NODE_ID``; ``#`` starts a comment)."""
    seconds: dict[str, float] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            seconds[fields[1]] = float(fields[0])
    return seconds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        shared = [f for f in SHARED_FIXTURES if f in getattr(item, "fixturenames", ())]
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared[0]))
    seconds = known_slow()
    per_file: dict[str, float] = defaultdict(float)  # a file's longest listed test
    for nodeid, s in seconds.items():
        file = nodeid.split("::")[0]
        per_file[file] = max(per_file[file], s)

    first: dict[str, int] = {}  # a file's place in collection order
    for i, item in enumerate(items):
        first.setdefault(item.nodeid.split("::")[0], i)

    def key(item: pytest.Item) -> tuple[float, int, float]:
        file = item.nodeid.split("::")[0]
        if file not in per_file:
            return (0.0, 0, 0.0)
        return (-per_file[file], first[file], -seconds.get(item.nodeid, 0.0))

    items.sort(key=key)  # stable: files and tests not listed keep their order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's ``load`` scheduling, one test per unit of work (``load``'s default hands
    each worker a quarter of its share up front: the listed slow tests would all go
    to the first worker), except the files sharing a session fixture, which are one
    unit; units in the order set by :func:`pytest_collection_modifyitems`."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupedLoad(LoadScopeScheduling):
        """One test per unit of work, except the files of a :data:`SHARED_FIXTURES`
        entry, which are one unit together; units in collection order."""

        def _split_scope(self, nodeid: str) -> str:
            return _GROUP_OF_FILE.get(nodeid.split("::")[0], nodeid)

    config.option.loadscopereorder = False
    return GroupedLoad(config, log)

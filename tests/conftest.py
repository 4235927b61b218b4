"""Suite-wide test ordering: the longest tests start first.

CI runs ``pytest -n auto`` on a 2-core machine (two xdist workers). With
pytest's file order, a test of several minutes that starts near the end sets
the wall time while the other worker sits idle. So the test files that hold
the tests listed in ``slow_tests.txt`` run first, the file with the longest
listed test first, its listed tests longest first and then its other tests;
every other file keeps its place after them. A file's tests stay together, so
a module-scoped fixture (a judge pool, a Ray instance) is set up once per
worker. Under xdist's ``load`` distribution each worker is handed one test at
a time (``--maxschedchunk 1``, unless given): the long tests spread over both
workers and the short ones fill in at the end.

Refresh the list from a full run: ``python -m pytest -n auto --durations=60``,
keeping the tests over about 10 s (lines ``SECONDS NODE_ID``).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def known_slow(path: Path = SLOW_TESTS) -> dict[str, float]:
    """``{node id: seconds}`` from ``path`` (lines ``SECONDS NODE_ID``; ``#`` starts a comment)."""
    seconds: dict[str, float] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            seconds[fields[1]] = float(fields[0])
    return seconds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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
    """xdist's ``load`` scheduling, one test per request unless ``--maxschedchunk``
    says otherwise (its default hands each worker a quarter of its share up front:
    the listed slow tests would all go to the first worker)."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScheduling

    if config.getoption("maxschedchunk") is None:
        config.option.maxschedchunk = 1
    return LoadScheduling(config, log)

"""Suite-wide test ordering: the longest tests start first.

CI runs ``pytest -n auto`` on a 2-core machine (two xdist workers). With
pytest's file order, a test of several minutes that starts near the end sets
the wall time while the other worker sits idle. So the tests listed in
``slow_tests.txt`` (measured seconds, longest first) run first, in that order,
and every other test keeps its file order after them; and under xdist's
``load`` distribution each worker is handed one test at a time (``--maxschedchunk
1``, unless given), so the list is run longest-first across both workers and
the short tests fill in at the end.

Refresh the list from a full run: ``python -m pytest -n auto --durations=40``,
then keep the tests over about 20 s (the order matters, the seconds are notes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def known_slow(path: Path = SLOW_TESTS) -> dict[str, int]:
    """``{node id: rank}`` from ``path`` (lines ``SECONDS NODE_ID``, longest first;
    ``#`` starts a comment)."""
    ranks: dict[str, int] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            ranks.setdefault(fields[1], len(ranks))
    return ranks


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ranks = known_slow()
    last = len(ranks)
    items.sort(key=lambda item: ranks.get(item.nodeid, last))  # stable: the rest keep their order


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

import pytest


@pytest.fixture(scope="session")
def report_bench(small_bench):
    """A real bench (tests/conftest.py's ``small_bench``: relu and sigmoid x
    (edits, broken) on pytorch, evals=3): its directory."""
    return small_bench[0]

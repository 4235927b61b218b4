import pytest
from bench_helpers import isolated_env


@pytest.fixture(autouse=True)
def _cache(tmp_path):
    with isolated_env(tmp_path / "cache"):
        yield

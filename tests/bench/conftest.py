import pytest
from bench_helpers import isolated_env, make_bench


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory):
    """A real 2-task × 2-proposer bench (pytorch backend, evals=3), run once."""
    root = tmp_path_factory.mktemp("bench")
    with isolated_env(root / "cache"):
        result = make_bench(root / "b")
    return root / "b", result


@pytest.fixture(autouse=True)
def _cache(tmp_path):
    with isolated_env(tmp_path / "cache"):
        yield

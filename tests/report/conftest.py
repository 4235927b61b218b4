import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
from bench_helpers import isolated_env, make_bench  # noqa: E402


@pytest.fixture(scope="session")
def report_bench(tmp_path_factory):
    """A real bench: relu × (edits, broken) on pytorch, evals=3."""
    root = tmp_path_factory.mktemp("report")
    with isolated_env(root / "cache"):
        make_bench(root / "b", tasks=("relu",))
    return root / "b"

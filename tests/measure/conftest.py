import os

import pytest
import torch
from bench_helpers import keep_ceilings, seed_ceilings

from kstrata.measure.environment import THREAD_ENV


@pytest.fixture(autouse=True)
def _restore_threads_and_cache(tmp_path, monkeypatch, request):
    """Timing fixes the thread count process-wide; give it back after each test,
    and keep caches (roofline, baselines) in a temporary directory, seeded with
    the CPU ceilings an earlier test of this process measured (bench_helpers.seed_ceilings),
    except for the tests of the ceilings themselves (test_roofline.py: they stand in
    for the measurement and read its result from an empty cache; seeded, they read
    an earlier test's and failed, depending on the order the worker ran them)."""
    threads = torch.get_num_threads()
    env = {v: os.environ.get(v) for v in THREAD_ENV}
    monkeypatch.setenv("KSTRATA_CACHE_DIR", str(tmp_path / "cache"))
    if not request.module.__name__.endswith("test_roofline"):
        seed_ceilings(tmp_path / "cache")
    yield
    keep_ceilings(tmp_path / "cache")
    torch.set_num_threads(threads)
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v

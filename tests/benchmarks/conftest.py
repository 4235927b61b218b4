"""Fixtures shared by the tests of benchmarks/ scripts."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def load_benchmark() -> Iterator[Callable[[str], ModuleType]]:
    """``load(name)``: benchmarks/<name>.py imported as module ``name`` (not a
    package); removed from ``sys.modules`` after the test module."""
    loaded: list[str] = []

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        loaded.append(name)
        spec.loader.exec_module(mod)
        return mod

    yield load
    for name in loaded:
        sys.modules.pop(name, None)

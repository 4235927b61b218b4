"""Fixtures shared by the backend tests."""

from __future__ import annotations

import pytest

from kstrata.backends.registry import get_backend


@pytest.fixture(scope="module")
def opencl():
    """The ``tvm-opencl`` backend (PoCL on this CPU); the test is skipped where no
    OpenCL device works."""
    b = get_backend("tvm-opencl")
    av = b.availability()
    if not av.usable:
        pytest.skip(av.reason)
    return b

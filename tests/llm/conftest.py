from __future__ import annotations

import pytest
from fake_api import FakeAPI


@pytest.fixture
def api():
    with FakeAPI() as server:
        yield server


@pytest.fixture
def keys(monkeypatch):
    """Fake keys in the environment; base URLs from the environment removed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-SECRET-0123456789")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return {"openai": "sk-test-SECRET-openai-0123456789", "anthropic": "sk-ant-test-SECRET-0123456789"}

"""API keys never reach a cassette, a saved config, a queue folder or a log."""

from __future__ import annotations

import logging

import pytest

from kstrata.config import ProviderConfig, load_config, save_config
from kstrata.llm import ProviderError, ProviderSpec


def test_key_not_in_cassette_config_or_logs(api, keys, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # everything: kstrata, openai, anthropic, httpx2
    cassette = tmp_path / "c.jsonl"
    for kind, model, base in (("openai", "fake-model", api.root + "/v1"),
                              ("anthropic", "claude-fake-1", api.root)):
        cfg = ProviderConfig(kind=kind, model=model, base_url=base, max_retries=1)
        provider = ProviderSpec(kind, model, cfg).build(record=cassette)
        provider.retry = type(provider.retry)(max_attempts=2, initial_wait_s=0.01)
        provider.check()
        api.script = [("status", 500, {})]  # a retry logs too
        provider.complete([{"role": "user", "content": "hi"}])
        logging.getLogger("kstrata.test").debug("key is %s", keys[kind])  # a careless caller
    # the keys were sent (so the SDKs had them) ...
    sent = " ".join(str(r["headers"]) for r in api.requests)
    assert keys["openai"] in sent and keys["anthropic"] in sent
    # ... but are nowhere we write
    config = save_config(load_config(env={}), tmp_path / "run" / "config.json")
    logs = caplog.text + " ".join(r.getMessage() for r in caplog.records)
    assert "[REDACTED]" in logs
    for key in keys.values():
        assert key not in cassette.read_text()
        assert key not in config.read_text()
        assert key not in logs


def test_key_in_config_file_is_rejected(tmp_path):
    f = tmp_path / "kstrata.toml"
    f.write_text('[llm.providers.x]\nkind = "openai"\nmodel = "m"\napi_key = "sk-123"\n')
    with pytest.raises(ValueError, match="API keys may not be stored in configuration.*api_key_env"):
        load_config(f, env={})


def test_server_error_echoing_key_is_redacted(api, keys):
    cfg = ProviderConfig(kind="openai", model="fake-model", base_url=api.root + "/v1", max_retries=0)
    provider = ProviderSpec("openai", "fake-model", cfg).build()
    api.script = [("status", 401, {}, f"Incorrect API key provided: {keys['openai']}")]
    with pytest.raises(ProviderError, match=r"401.*Incorrect API key provided: \[REDACTED\]") as e:
        provider.complete([{"role": "user", "content": "hi"}])
    assert keys["openai"] not in str(e.value)

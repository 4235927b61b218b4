"""Each HTTP provider through its real SDK against a loopback fake API."""

from __future__ import annotations

import time

import pytest

from kstrata.config import ProviderConfig
from kstrata.llm import ProviderError, ProviderSpec, ProviderTimeout, Request, UsageTotals
from kstrata.llm.retry import RetryPolicy

MESSAGES = [
    {"role": "system", "content": "You write kernels."},
    {"role": "user", "content": "Make it fast."},
]


def build(kind: str, api, **settings):
    model = "fake-model" if kind == "openai" else "claude-fake-1"
    base = api.root + "/v1" if kind == "openai" else api.root
    cfg = ProviderConfig(kind=kind, model=model, base_url=base, **settings)
    usage = UsageTotals()
    provider = ProviderSpec(kind, model, cfg).build(accounting=usage)
    provider.retry = RetryPolicy(max_attempts=cfg.max_retries + 1, initial_wait_s=0.01, max_wait_s=0.2)
    return provider, usage


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_success_with_token_accounting(kind, api, keys):
    provider, usage = build(kind, api, usd_per_mtok_in=2.0, usd_per_mtok_out=10.0)
    provider.check()
    c = provider.complete(MESSAGES, max_tokens=100, temperature=0.3, stop=["###"])
    assert c.text == api.default_text
    assert c.provider == f"{kind}:{provider.model}"
    assert c.input_tokens > 0 and c.output_tokens > 0
    assert c.cost_usd == pytest.approx(c.input_tokens * 2e-6 + c.output_tokens * 10e-6)
    assert c.attempts == 1 and not c.truncated and c.latency_s > 0
    assert usage.calls == 1 and usage.input_tokens == c.input_tokens and usage.retries == 0
    body = api.completion_requests()[-1]["body"]
    if kind == "openai":
        assert body["messages"] == MESSAGES and body["max_tokens"] == 100 and body["stop"] == ["###"]
    else:
        assert body["system"] == "You write kernels." and body["stop_sequences"] == ["###"]
        assert body["messages"] == [{"role": "user", "content": "Make it fast."}]
    if kind == "openai":
        assert body["temperature"] == 0.3


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_rate_limit_then_success_is_retried_and_counted(kind, api, keys):
    provider, usage = build(kind, api, max_retries=3)
    api.script = [("status", 429, {"retry-after": "0.05"}), ("status", 503, {}), ("ok", "done")]
    t0 = time.perf_counter()
    c = provider.complete(MESSAGES)
    assert c.text == "done" and c.attempts == 3
    assert time.perf_counter() - t0 >= 0.05  # Retry-After honoured
    assert usage.calls == 1 and usage.attempts == 3 and usage.retries == 2
    assert len(api.completion_requests()) == 3


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_retries_exhausted_gives_one_clear_error(kind, api, keys):
    provider, usage = build(kind, api, max_retries=1)
    api.script = [("status", 429, {}), ("status", 429, {})]
    with pytest.raises(ProviderError, match=r"429 rate limited.*gave up after 2 attempts") as e:
        provider.complete(MESSAGES)
    assert e.value.kind == "rate_limit"
    assert usage.failed_calls == 1 and usage.attempts == 2


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_bad_request_is_not_retried(kind, api, keys):
    provider, _ = build(kind, api, max_retries=3)
    api.script = [("status", 400, {})]
    with pytest.raises(ProviderError, match="400") as e:
        provider.complete(MESSAGES)
    assert e.value.attempts == 1 and len(api.completion_requests()) == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_per_request_timeout_fires(kind, api, keys):
    provider, usage = build(kind, api, timeout_s=0.3, max_retries=1)
    api.script = [("sleep", 3.0), ("sleep", 3.0)]
    t0 = time.perf_counter()
    with pytest.raises(ProviderTimeout, match=r"no answer within 0.3 s.*gave up after 2 attempts"):
        provider.complete(MESSAGES)
    assert time.perf_counter() - t0 < 2.5
    assert usage.failed_calls == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_truncated_answer_is_flagged(kind, api, keys):
    provider, _ = build(kind, api)
    api.script = [("ok", "```python\nx = 1", "length" if kind == "openai" else "max_tokens")]
    c = provider.complete(MESSAGES)
    assert c.truncated


def test_complete_many_bounds_concurrency(api, keys):
    provider, usage = build("openai", api, concurrency=2)
    api.script = [("sleep", 0.3)] * 6
    t0 = time.perf_counter()
    out = provider.complete_many([Request(tuple(MESSAGES))] * 6, max_workers=6)
    elapsed = time.perf_counter() - t0
    assert [c.text for c in out] == [api.default_text] * 6
    assert 0.85 < elapsed < 3.0  # 6 calls of 0.3 s, 2 at a time: ~0.9 s
    assert usage.calls == 6


def test_complete_many_returns_errors_as_data(api, keys):
    provider, _ = build("openai", api, concurrency=1, max_retries=0)
    api.script = [("ok", "a"), ("status", 400, {}), ("ok", "c")]
    out = provider.complete_many([Request(tuple(MESSAGES))] * 3)
    assert out[0].text == "a" and isinstance(out[1], ProviderError) and out[2].text == "c"


# -- preflight ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_check_unreachable_server(kind, keys):
    cfg = ProviderConfig(kind=kind, model="m", base_url="http://127.0.0.1:9/v1", timeout_s=2)
    provider = ProviderSpec(kind, "m", cfg).build()
    with pytest.raises(ProviderError, match=r"127.0.0.1:9.*cannot connect.*check the base URL"):
        provider.check()


def test_check_unknown_model_names_served_models(api, keys):
    cfg = ProviderConfig(kind="openai", model="nope", base_url=api.root + "/v1")
    with pytest.raises(ProviderError, match=r"model 'nope' is not served.*fake-model"):
        ProviderSpec("openai", "nope", cfg).build().check()
    assert not api.completion_requests()  # nothing spent


def test_check_anthropic_alias_and_probe_fallback(api, keys):
    provider, _ = build("anthropic", api)
    provider.check()  # alias claude-fake-1 matches claude-fake-1-20250101
    api.models_status = 404  # a server without /models: one-token probe instead
    provider.check()
    assert api.completion_requests()[-1]["body"]["max_tokens"] == 1


def test_check_rejected_key(api, keys):
    provider, _ = build("openai", api)
    api.models_status = 401
    with pytest.raises(ProviderError, match=r"401.*OPENAI_API_KEY"):
        provider.check()


def test_missing_key_fails_at_start(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError, match=r"ANTHROPIC_API_KEY is not set"):
        ProviderSpec.parse("anthropic:claude-x").build()


def test_keyless_local_server(api, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = ProviderConfig(kind="openai", model="fake-model", base_url=api.root + "/v1", api_key_env="")
    provider = ProviderSpec("openai", "fake-model", cfg).build()
    provider.check()
    assert provider.complete(MESSAGES).text == api.default_text


def test_base_url_from_environment(api, keys, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", api.root + "/v1")
    provider = ProviderSpec.parse("openai:fake-model").build()
    assert provider.complete(MESSAGES).text == api.default_text
    assert api.completion_requests()[-1]["headers"]["authorization"] == "Bearer " + keys["openai"]


def test_check_reads_the_status_not_digits_in_the_url(api, keys, monkeypatch):
    # The full suite failed "DID NOT RAISE" when the fake server's port held "404"/"405" (e.g. 40451): the
    # rejected key's message was taken for "no /models route" and a probe answered instead.
    provider, _ = build("openai", api)
    api.models_status = 401
    monkeypatch.setattr(provider, "base_url", provider.base_url.replace("/v1", "/v1?port=40451"), raising=False)
    with pytest.raises(ProviderError) as err:
        provider.check()
    assert err.value.status == 401 and "OPENAI_API_KEY" in str(err.value)

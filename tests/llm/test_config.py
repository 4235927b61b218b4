"""kstrata.toml: unknown keys rejected by name; CLI > file > environment > defaults."""

from __future__ import annotations

import json

import pytest

from kstrata.config import ConfigError, load_config, save_config
from kstrata.llm import ProviderError, ProviderSpec, make_provider

TOML = """
[llm]
default = "local"

[llm.providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1"
model = "file-model"
api_key_env = ""
concurrency = 3
usd_per_mtok_in = 0.5
"""


@pytest.fixture
def cfg_file(tmp_path):
    f = tmp_path / "kstrata.toml"
    f.write_text(TOML)
    return f


def test_defaults_without_any_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_config(env={})
    assert cfg.llm.default is None and cfg.llm.providers == {}


@pytest.mark.parametrize(
    "text, key",
    [
        ("[llm]\ndefualt = 'x'\n", "llm.defualt"),
        ("[lm]\ndefault = 'x'\n", "lm"),
        ("[llm.providers.a]\nkind = 'openai'\nmodle = 'x'\n", "llm.providers.a.modle"),
    ],
)
def test_unknown_key_rejected_and_named(tmp_path, text, key):
    f = tmp_path / "k.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=rf"{f}: unknown key '{key}'") as e:
        load_config(f, env={})
    assert "known keys" in str(e.value)


def test_unknown_environment_key_rejected(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"environment.*unknown key 'llm.nope'"):
        load_config(env={"KSTRATA_LLM__NOPE": "1"})


def test_bad_value_named(cfg_file):
    with pytest.raises(ConfigError, match=r"llm.providers.local.concurrency"):
        load_config(cfg_file, env={}, cli={"llm.providers.local.concurrency": 0})


def test_precedence_cli_over_file_over_env_over_defaults(cfg_file):
    env = {
        "KSTRATA_LLM__DEFAULT": "env-choice",
        "KSTRATA_LLM__RECORD": "env.jsonl",
        "KSTRATA_LLM__PROVIDERS__LOCAL__MODEL": "env-model",
        "KSTRATA_LLM__PROVIDERS__LOCAL__TEMPERATURE": "0.7",
        "UNRELATED": "x",
    }
    cfg = load_config(cfg_file, env=env, cli={"llm.default": "cli-choice", "llm.record": None})
    local = cfg.llm.providers["local"]
    assert cfg.llm.default == "cli-choice"  # CLI beats file and env
    assert local.model == "file-model"  # file beats env
    assert local.temperature == 0.7  # env beats default (parsed as a number)
    assert cfg.llm.record == "env.jsonl"  # CLI None = not given
    assert local.max_tokens == 8192  # default
    assert local.concurrency == 3


def test_config_file_from_environment_and_cwd(cfg_file, tmp_path, monkeypatch):
    assert load_config(env={"KSTRATA_CONFIG": str(cfg_file)}).llm.default == "local"
    monkeypatch.chdir(cfg_file.parent)
    assert load_config(env={}).llm.default == "local"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml", env={})


def test_named_provider_and_resolved_config_saved(cfg_file, tmp_path):
    cfg = load_config(cfg_file, env={})
    spec = ProviderSpec.parse("local", cfg)
    assert (spec.kind, spec.target, spec.name) == ("openai", "file-model", "local")
    provider = make_provider(None, cfg, check=False)
    assert provider.label == "openai:file-model" and provider.concurrency == 3
    assert provider.base_url == "http://127.0.0.1:8000/v1" and provider.price_in == 0.5e-6
    saved = json.loads(save_config(cfg, tmp_path / "run" / "config.json").read_text())
    assert saved["llm"]["providers"]["local"]["model"] == "file-model"


def test_spec_errors():
    with pytest.raises(ProviderError, match=r"unknown LLM provider 'gpt-4o'.*openai:MODEL"):
        ProviderSpec.parse("gpt-4o")
    with pytest.raises(ProviderError, match=r"missing MODEL after 'openai:'"):
        ProviderSpec.parse("openai:")
    with pytest.raises(ProviderError, match="no LLM provider chosen"):
        make_provider(None, None)

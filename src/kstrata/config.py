"""Typed configuration: ``kstrata.toml``, environment, command line.

Precedence, highest first: command line > config file > environment > defaults.
Every layer is validated against the same schema, and an unknown key anywhere
is an error that names the key and where it came from (as accelerate's
``config_args.py`` does; never silently ignored).

Sources
-------
- file: ``--config FILE``, else ``$KSTRATA_CONFIG``, else ``./kstrata.toml`` if it
  exists. TOML tables map to sections::

      [llm]
      default = "local"                  # --llm when not given

      [llm.providers.local]
      kind = "openai"                    # openai | anthropic | queue | replay
      base_url = "http://127.0.0.1:8000/v1"
      model = "Qwen/Qwen3-Coder-30B-A3B-Instruct"
      api_key_env = ""                   # "" = server needs no key
      temperature = 0.2
      max_tokens = 8192
      concurrency = 8
      usd_per_mtok_in = 0.0
      usd_per_mtok_out = 0.0
      timeout_s = 600

- environment: ``KSTRATA_<SECTION>__<KEY>[__<KEY>...]=VALUE`` (double
  underscore separates levels, names are lower-cased), e.g.
  ``KSTRATA_LLM__DEFAULT=anthropic:claude-sonnet-4-5`` or
  ``KSTRATA_LLM__PROVIDERS__LOCAL__CONCURRENCY=2``. Values are read as TOML
  values when they parse as one (numbers, booleans, arrays), else as strings.
- command line: a mapping of dotted keys, ``{"llm.default": "openai:gpt-4o"}``;
  None values (options not given) are skipped.

API keys are never configuration: a provider names the environment variable
that holds its key (``api_key_env``) and a key in a file is rejected.

To add a section, add a field of a ``_Strict`` model to :class:`Config`.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV_PREFIX = "KSTRATA_"
ENV_CONFIG_FILE = "KSTRATA_CONFIG"
DEFAULT_FILE = "kstrata.toml"


class ConfigError(ValueError):
    """Invalid configuration; the message names the key, its source and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProviderConfig(_Strict):
    """One named LLM provider (``[llm.providers.NAME]``).

    Attributes
    ----------
    kind:
        ``openai`` (any OpenAI-compatible chat-completions server), ``anthropic``
        (messages API), ``queue`` (prompt/response files in ``path``) or
        ``replay`` (cassette at ``path``).
    model:
        Model name sent to the API.
    base_url:
        API root; None uses ``$OPENAI_BASE_URL`` / ``$ANTHROPIC_BASE_URL`` or
        the SDK's default.
    api_key_env:
        Name of the environment variable holding the key; None uses
        ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``; ``""`` sends no key (local
        servers).
    path:
        Directory (queue) or cassette file (replay).
    temperature, max_tokens:
        Defaults for each call.
    concurrency:
        Calls in flight at once.
    usd_per_mtok_in, usd_per_mtok_out:
        Price in US dollars per million input / output tokens (the unit
        providers publish), used for the cost accounting.
    timeout_s:
        Per-request timeout in seconds; None: 600 for HTTP providers, 24 h for
        a queue (how long to wait for an answer).
    max_retries:
        Retries after the first attempt on rate limits and transient errors.
    poll_s:
        Queue only: seconds between checks for a response file.
    settle_s:
        Queue only: seconds a response file written in place must stay
        unchanged before it is read (a person or a tool writing it in pieces;
        the recommended way is a temporary name renamed into place, whole when it appears).
    """

    kind: Literal["openai", "anthropic", "queue", "replay"] = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    path: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(8192, gt=0)
    concurrency: int = Field(4, gt=0)
    usd_per_mtok_in: float = Field(0.0, ge=0.0)
    usd_per_mtok_out: float = Field(0.0, ge=0.0)
    timeout_s: float | None = Field(None, gt=0.0)
    max_retries: int = Field(5, ge=0)
    poll_s: float = Field(0.5, gt=0.0)
    settle_s: float = Field(5.0, gt=0.0)

    @model_validator(mode="before")
    @classmethod
    def _no_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for k in data:
                if "key" in str(k).lower() and k != "api_key_env":
                    raise ValueError(
                        f"{k!r}: API keys may not be stored in configuration; put the key in "
                        "an environment variable and set api_key_env to its name"
                    )
        return data


class LLMConfig(_Strict):
    """The ``[llm]`` section.

    Attributes
    ----------
    default:
        Provider used when ``--llm`` is not given: a spec string
        (``openai:MODEL``, ``anthropic:MODEL``, ``queue:DIR``, ``replay:FILE``)
        or the name of an entry in ``providers``.
    record:
        Cassette file to record every exchange into (``--record``).
    providers:
        Named providers.
    """

    default: str | None = None
    record: str | None = None
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)


class Config(_Strict):
    """The whole configuration; each section is a strict model."""

    llm: LLMConfig = Field(default_factory=LLMConfig)


# -- layers ------------------------------------------------------------------
def _parse_env_value(value: str) -> Any:
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def _set_path(tree: dict[str, Any], keys: list[str], value: Any, source: str) -> None:
    node = tree
    for k in keys[:-1]:
        nxt = node.setdefault(k, {})
        if not isinstance(nxt, dict):
            raise ConfigError(f"{source}: {'.'.join(keys)} conflicts with a value at {k!r}")
        node = nxt
    node[keys[-1]] = value


def env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    """Nested settings from ``KSTRATA_SECTION__KEY`` variables in ``env``."""
    tree: dict[str, Any] = {}
    for name, value in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or "__" not in name[len(ENV_PREFIX) :]:
            continue
        keys = [k.lower() for k in name[len(ENV_PREFIX) :].split("__")]
        if any(not k for k in keys):
            raise ConfigError(f"environment variable {name}: empty key between '__'")
        _set_path(tree, keys, _parse_env_value(value), f"environment variable {name}")
    return tree


def cli_layer(cli: Mapping[str, Any] | None) -> dict[str, Any]:
    """Nested settings from dotted CLI keys; None values are dropped."""
    tree: dict[str, Any] = {}
    for key, value in (cli or {}).items():
        if value is None:
            continue
        _set_path(tree, key.split("."), value, f"command-line option {key}")
    return tree


def find_config_file(path: str | Path | None, env: Mapping[str, str]) -> Path | None:
    """The config file to read: ``path``, else ``$KSTRATA_CONFIG``, else
    ``./kstrata.toml`` when it exists.

    Raises
    ------
    ConfigError
        When an explicitly named file does not exist.
    """
    explicit = path if path is not None else env.get(ENV_CONFIG_FILE)
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            how = "--config" if path is not None else f"${ENV_CONFIG_FILE}"
            what = ("is a directory" if p.is_dir() else "is not a regular file (a device or a pipe)" if p.exists()
                    else "does not exist")  # /dev/null was said not to exist (red team rt62)
            raise ConfigError(f"config file {p} (from {how}) {what}; give a kstrata.toml file")
        return p
    p = Path(DEFAULT_FILE)
    return p if p.is_file() else None


def file_layer(path: Path | None) -> dict[str, Any]:
    """The TOML file's tables, or ``{}`` when there is no file.

    Raises
    ------
    ConfigError
        When the file is not valid TOML.
    """
    if path is None:
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None


def _merge(low: dict[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(low)
    for k, v in high.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(dict(out[k]), v)
        else:
            out[k] = v
    return out


def _validate(tree: Mapping[str, Any], source: str) -> Config:
    try:
        return Config.model_validate(tree)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            parent = _model_at(err["loc"][:-1])
            known = f" (known keys: {', '.join(parent.model_fields)})" if parent else ""
            raise ConfigError(f"{source}: unknown key {loc!r}{known}") from None
        msg = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{source}: {loc}: {msg}") from None


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] = Config
    i = 0
    while i < len(loc):
        field = model.model_fields.get(str(loc[i]))
        if field is None:
            return None
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model, i = ann, i + 1
        elif str(loc[i]) == "providers":
            model, i = ProviderConfig, i + 2  # providers.NAME
        else:
            return None
    return model


def load_config(
    path: str | Path | None = None,
    *,
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Resolve the configuration from all layers.

    Parameters
    ----------
    path:
        ``--config FILE``; None looks at ``$KSTRATA_CONFIG`` then ``./kstrata.toml``.
    cli:
        Dotted keys from the command line, e.g. ``{"llm.default": "queue:q"}``.
    env:
        The environment (default ``os.environ``).

    Raises
    ------
    ConfigError
        On an unknown key (named, with its source), a wrong type or value, a
        missing explicit file or invalid TOML.
    """
    env = os.environ if env is None else env
    file = find_config_file(path, env)
    layers = [
        (env_layer(env), "environment (KSTRATA_* variables)"),
        (file_layer(file), str(file)),
        (cli_layer(cli), "command line"),
    ]
    merged: dict[str, Any] = {}
    for tree, source in layers:
        _validate(tree, source)  # attribute errors to the layer that has them
        merged = _merge(merged, tree)
    return _validate(merged, "configuration")


def save_config(config: Config, path: str | Path) -> Path:
    """Write the resolved ``config`` as JSON, atomically (temp file + rename).

    The config holds no secrets (keys are only named, never stored).
    """
    from kstrata.store.artifacts import write_atomic

    text = json.dumps(config.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    return write_atomic(Path(path), text)

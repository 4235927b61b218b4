"""Isolated Python environments for backends that cannot share the main one.

TileLang 0.1.15 pins ``apache-tvm-ffi<0.1.13`` and ships its own ``tvm``, while
the main environment's ``apache-tvm==0.27`` needs ``apache-tvm-ffi>=0.1.14``
(DEVELOPERS.md). So the ``tilelang-*`` backends run in worker processes whose
interpreter lives in a separate virtual environment, created by
``kstrata setup`` (:func:`ensure_env`) and found by the executor through
:func:`python_for`.

Layout: ``<root>/<env name>/`` is a venv (``--system-site-packages`` off) with
``kstrata-env.json``, the manifest of what was installed. ``<root>`` is
``$KSTRATA_ENV_DIR`` or ``~/.cache/kstrata/envs``.

This module imports only the standard library at import time.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from kstrata.backends.base import Availability

MANIFEST = "kstrata-env.json"
#: Bump when the manifest layout or the install recipe changes.
MANIFEST_VERSION = 1

#: Requirements of kstrata that the isolated environments must not get: they
#: are TVM's (and pull a conflicting ``apache-tvm-ffi``).
EXCLUDED_REQUIREMENTS = frozenset({
    "apache-tvm", "apache-tvm-ffi",  # TileLang ships its own tvm and pins its own ffi
    "xgboost", "tornado",            # MetaSchedule only
    "triton", "pyopencl", "openai", "anthropic", "mcp", "anyio",  # other backends, the driver
})


class EnvMissingError(RuntimeError):
    """A backend needs an isolated environment that has not been set up."""


@dataclass(frozen=True)
class EnvSpec:
    """What one isolated environment holds.

    Attributes
    ----------
    name:
        Folder name under the env root (``"tilelang"``).
    backends:
        Backend names whose workers run in this environment.
    packages:
        pip requirement strings besides torch and kstrata, with exact pins.
    import_check:
        A module that must import in the finished environment.
    """

    name: str
    backends: tuple[str, ...]
    packages: tuple[str, ...]
    import_check: str


#: tilelang 0.1.15 and the pins that were seen working on CPU here and on the
#: H200 (``../shared/gpu/README.md``): its ``libz3.so.4.15`` needs z3-solver
#: 4.15.4.0; tilelang itself requires apache-tvm-ffi <0.1.13.
TILELANG = EnvSpec(
    name="tilelang",
    backends=("tilelang-c", "tilelang-cuda"),
    packages=("tilelang==0.1.15", "apache-tvm-ffi==0.1.12", "z3-solver==4.15.4.0"),
    import_check="tilelang",
)

ENVS: dict[str, EnvSpec] = {TILELANG.name: TILELANG}


def env_root() -> Path:
    """Directory holding the isolated environments (``$KSTRATA_ENV_DIR`` or
    ``~/.cache/kstrata/envs``)."""
    override = os.environ.get("KSTRATA_ENV_DIR")
    return Path(override).expanduser() if override else Path.home() / ".cache/kstrata/envs"


def env_dir(name: str) -> Path:
    """The virtual environment folder of env ``name``."""
    return env_root() / name


def env_python(name: str) -> Path:
    """The interpreter of env ``name`` (it may not exist yet)."""
    return env_dir(name) / "bin" / "python"


def spec_for_backend(backend_name: str) -> EnvSpec | None:
    """The isolated environment ``backend_name`` runs in, or None for the main one."""
    for spec in ENVS.values():
        if backend_name in spec.backends:
            return spec
    return None


def read_manifest(name: str) -> dict | None:
    """The manifest of env ``name`` as a dict, or None if absent or unreadable."""
    path = env_dir(name) / MANIFEST
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def env_ready(name: str) -> tuple[bool, str]:
    """Whether env ``name`` exists with a manifest and an interpreter; (ok, why not)."""
    py = env_python(name)
    if not py.exists():
        return False, f"isolated environment {env_dir(name)} does not exist; run `kstrata setup`"
    if read_manifest(name) is None:
        return False, f"{env_dir(name)} has no {MANIFEST} (setup was interrupted); run `kstrata setup`"
    return True, ""


def python_for(backend_name: str) -> Path | None:
    """Interpreter that workers of ``backend_name`` must use.

    Returns
    -------
    Path or None
        The isolated environment's ``bin/python``, or None when the backend
        runs in the main environment (``sys.executable``).

    Raises
    ------
    EnvMissingError
        When the backend needs an isolated environment that ``kstrata setup``
        has not created (the message says so).
    """
    spec = spec_for_backend(backend_name)
    if spec is None:
        return None
    ok, why = env_ready(spec.name)
    if not ok:
        raise EnvMissingError(f"backend {backend_name!r}: {why}")
    return env_python(spec.name)


def availability(backend_name: str) -> Availability:
    """Whether ``backend_name``'s isolated environment is set up, with the
    versions its manifest recorded (no subprocess, no import)."""
    spec = spec_for_backend(backend_name)
    if spec is None:
        return Availability(True, "runs in the main environment")
    ok, why = env_ready(spec.name)
    if not ok:
        return Availability(False, why)
    installed = read_manifest(spec.name).get("installed", {})
    keys = ("tilelang", "torch", "apache-tvm-ffi")
    return Availability(True, "", tuple((k, installed[k]) for k in keys if k in installed))


# -- creating an environment ------------------------------------------------


def default_torch_spec() -> str:
    """``torch==X.Y.Z`` for the main environment's torch (local tag such as
    ``+cpu`` dropped, so pip picks the build its index or find-links offer).

    ``$KSTRATA_TORCH_SPEC`` overrides it.
    """
    override = os.environ.get("KSTRATA_TORCH_SPEC")
    if override:
        return override
    try:
        v = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "torch"
    return f"torch=={v.split('+')[0]}"


def kstrata_install() -> tuple[str, ...]:
    """pip arguments that install this kstrata into another environment.

    ``-e <checkout>`` when kstrata is installed editable (PEP 610
    ``direct_url.json``), else ``kstrata==<version>``; always with
    ``--no-deps`` added by the caller, since kstrata's own requirements
    include TVM's.
    """
    try:
        dist = metadata.distribution("kstrata")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        raw = dist.read_text("direct_url.json")
        if raw:
            info = json.loads(raw)
            if info.get("dir_info", {}).get("editable") and info.get("url", "").startswith("file://"):
                return ("-e", info["url"][len("file://"):])
        return (f"kstrata=={dist.version}",)
    # Running from a source tree that pip does not know (PYTHONPATH=src).
    here = Path(__file__).resolve().parents[3]
    if (here / "pyproject.toml").exists():
        return ("-e", str(here))
    raise EnvMissingError("cannot tell how kstrata was installed; reinstall it with pip")


def kstrata_requirements() -> tuple[str, ...]:
    """kstrata's runtime requirements minus :data:`EXCLUDED_REQUIREMENTS` and extras."""
    try:
        reqs = metadata.requires("kstrata") or []
    except metadata.PackageNotFoundError:
        return ("numpy>=1.24", "typer>=0.12", "rich>=13", "pydantic>=2.6", "jinja2>=3.1",
                "tenacity>=8.2", "psutil>=5.9", "ml_dtypes>=0.4")
    out = []
    for r in reqs:
        if "extra ==" in r:
            continue
        name = r.split(";")[0]
        for sep in "<>=!~[ ":
            name = name.split(sep)[0]
        if name.lower() in EXCLUDED_REQUIREMENTS or name.lower() == "torch":
            continue
        out.append(r.split(";")[0].strip())
    return tuple(out)


@dataclass
class Plan:
    """What :func:`ensure_env` will install; its hash decides whether an
    existing environment is up to date."""

    name: str
    python_version: str
    torch: str
    packages: tuple[str, ...]
    kstrata: tuple[str, ...]
    kstrata_deps: tuple[str, ...]
    pip_args: tuple[str, ...] = ()
    manifest_version: int = MANIFEST_VERSION

    def digest(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def make_plan(spec: EnvSpec, torch_spec: str | None = None,
              pip_args: tuple[str, ...] = ()) -> Plan:
    """The install plan for ``spec`` in this interpreter's Python version."""
    return Plan(
        name=spec.name,
        python_version=".".join(map(str, sys.version_info[:2])),
        torch=torch_spec or default_torch_spec(),
        packages=spec.packages,
        kstrata=kstrata_install(),
        kstrata_deps=kstrata_requirements(),
        pip_args=tuple(pip_args),
    )


@dataclass
class SetupResult:
    """Outcome of :func:`ensure_env`."""

    name: str
    path: Path
    changed: bool
    seconds: float
    installed: dict[str, str] = field(default_factory=dict)
    message: str = ""


def _run(cmd: list[str], log: Callable[[str], None]) -> None:
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-25:])
        raise EnvMissingError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")


def _freeze(python: Path) -> dict[str, str]:
    code = ("import json, importlib.metadata as m; "
            "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ensure_env(spec: EnvSpec, torch_spec: str | None = None, pip_args: tuple[str, ...] = (),
               force: bool = False, log: Callable[[str], None] = lambda s: None) -> SetupResult:
    """Create or update the isolated environment ``spec`` (idempotent).

    A no-op (``changed=False``) when the manifest's plan digest matches the
    plan for these arguments and the interpreter exists. Otherwise: ``python
    -m venv`` (no system site packages, reusing the folder), ``pip install``
    torch + the spec's packages, kstrata's non-TVM requirements, kstrata itself
    with ``--no-deps``; an import check; then the manifest, written atomically
    and last, so an interrupted setup is redone next time.

    Parameters
    ----------
    torch_spec:
        pip requirement for torch (default: the main environment's version).
    pip_args:
        Extra arguments for every ``pip install`` (``--index-url URL`` ...).

    Raises
    ------
    EnvMissingError
        If venv creation, an install or the import check fails (with pip's tail).
    """
    start = time.perf_counter()
    plan = make_plan(spec, torch_spec, pip_args)
    env_root().mkdir(parents=True, exist_ok=True)
    # One setup at a time per environment (concurrent test sessions, two shells).
    with open(env_root() / f".{spec.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(spec, plan, force, log, start)


def _ensure_locked(spec: EnvSpec, plan: Plan, force: bool, log: Callable[[str], None],
                   start: float) -> SetupResult:
    path = env_dir(spec.name)
    py = env_python(spec.name)
    manifest = read_manifest(spec.name)
    if not force and manifest and manifest.get("plan_digest") == plan.digest() and py.exists():
        return SetupResult(spec.name, path, False, time.perf_counter() - start,
                           manifest.get("installed", {}), "up to date")
    path.parent.mkdir(parents=True, exist_ok=True)
    (path / MANIFEST).unlink(missing_ok=True)
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(path)], log)
    pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *plan.pip_args]
    _run([*pip, plan.torch, *plan.packages], log)
    if plan.kstrata_deps:
        _run([*pip, *plan.kstrata_deps], log)
    _run([*pip, "--no-deps", *plan.kstrata], log)
    # Torch and the pins must have survived the later installs.
    _run([*pip, "--no-deps", plan.torch, *plan.packages], log)
    _run([str(py), "-c", f"import {spec.import_check}, kstrata"], log)
    installed = _freeze(py)
    record = {
        "manifest_version": MANIFEST_VERSION,
        "plan_digest": plan.digest(),
        "plan": asdict(plan),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": str(py),
        "installed": installed,
    }
    from kstrata.atomic import write_atomic

    write_atomic(path / MANIFEST, json.dumps(record, indent=2, sort_keys=True))
    return SetupResult(spec.name, path, True, time.perf_counter() - start, installed, "installed")


def check_main_env() -> dict[str, str]:
    """Import checks of the main environment's backend libraries, in a subprocess
    (so a broken import cannot take this process with it).

    Returns
    -------
    dict
        library -> version, or ``"error: ..."``.
    """
    out = {}
    for mod in ("torch", "tvm", "triton"):
        code = f"import {mod}; print(getattr({mod}, '__version__', 'unknown'))"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if p.returncode == 0:
            out[mod] = p.stdout.strip().splitlines()[-1]
        else:
            lines = p.stderr.strip().splitlines()
            out[mod] = "error: " + (lines[-1] if lines else f"exit {p.returncode}")
    return out

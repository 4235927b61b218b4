"""Isolated Python environments for backends that cannot share the main one.

TileLang 0.1.15 pins ``apache-tvm-ffi<0.1.13`` and ships its own ``tvm``, while
the main environment's ``apache-tvm==0.27`` needs ``apache-tvm-ffi>=0.1.14``
(DEVELOPERS.md). So the ``tilelang-*`` backends run in worker processes whose
interpreter lives in a separate virtual environment, created by
``kstrata setup`` (:func:`ensure_env`) and found by the executor through
:func:`python_for`.

Layout: ``<root>/<env name>/`` is a venv (``--system-site-packages`` off,
unless torch comes from the system: :data:`SYSTEM_TORCH`) with
``kstrata-env.json``, the manifest of what was installed. ``<root>`` is
``$KSTRATA_ENV_DIR`` or ``~/.cache/kstrata/envs``.

Without network (an offline GPU machine): :func:`download_wheels` fetches every
wheel an environment needs, for a target Python and platform, into a folder on
a machine that has network (``kstrata setup --download-wheels DIR``), and
:func:`ensure_env` with ``wheels=DIR`` installs from that folder only
(``pip --no-index --find-links DIR``; ``kstrata setup --wheels DIR``).

This module imports only the standard library at import time.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from kstrata import jsontext
from kstrata.backends.availability import Availability

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

#: ``torch_spec`` value that installs no torch: the environment sees the base
#: interpreter's site packages (a GPU machine's own CUDA build of torch, whose
#: wheels with the CUDA libraries are gigabytes) and installs the rest on top.
SYSTEM_TORCH = "system"


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
        return jsontext.loads(path.read_text())
    except (OSError, ValueError):
        return None


def env_ready(name: str) -> tuple[bool, str]:
    """Whether env ``name`` exists with a manifest and an interpreter; (ok, why not)."""
    py = env_python(name)
    if not py.exists():
        return False, f"isolated environment {env_dir(name)} does not exist; run `kstrata setup`"
    manifest = read_manifest(name)
    if manifest is None:
        return False, (f"{env_dir(name)} has no {MANIFEST}: its setup failed or was interrupted; run "
                       f"`kstrata setup` again, with the same --wheels/--torch options on a machine without "
                       f"network (its last error said what was missing)")
    system = (manifest.get("plan") or {}).get("torch") == SYSTEM_TORCH
    if not system and _base_venv_pth(py).exists():
        return False, (f"{env_dir(name)} still sees another environment's packages through "
                       f"{_base_venv_pth(py).name}, left by an earlier `--torch {SYSTEM_TORCH}` setup; "
                       f"run `kstrata setup` again (it removes the file)")
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

    ``()`` for a source checkout (an editable install, PEP 610
    ``direct_url.json``, or a tree on ``PYTHONPATH``): the environment gets
    kstrata's requirements only, and every process started in it imports
    kstrata from the checkout through ``PYTHONPATH``
    (:func:`kstrata.execute.pool.worker_env`). Installing the checkout there
    (``pip install -e``) bound the shared environment to one clone, so
    ``kstrata setup`` in a second clone re-pointed the first clone's workers
    at the second's code. Else ``kstrata==<version>``, always with
    ``--no-deps`` added by the caller, since kstrata's own requirements
    include TVM's.

    Raises
    ------
    EnvMissingError
        When kstrata is neither installed nor a source tree.
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
                return ()
        return (f"kstrata=={dist.version}",)
    # Running from a source tree that pip does not know (PYTHONPATH=src).
    here = Path(__file__).resolve().parents[3]
    if (here / "pyproject.toml").exists():
        return ()
    raise EnvMissingError("cannot tell how kstrata was installed; reinstall it with pip")


def kstrata_requirements() -> tuple[str, ...]:
    """kstrata's runtime requirements minus :data:`EXCLUDED_REQUIREMENTS` and extras."""
    try:
        reqs = metadata.requires("kstrata") or []
    except metadata.PackageNotFoundError:  # a source tree on PYTHONPATH (a GPU machine without pip install)
        reqs = _source_tree_requirements()
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


def _source_tree_requirements() -> list[str]:
    """``[project] dependencies`` of the checkout this module was imported from.

    Raises
    ------
    EnvMissingError
        When there is no readable ``pyproject.toml`` beside ``src/`` (kstrata
        neither installed nor run from its checkout)."""
    path = Path(__file__).resolve().parents[3] / "pyproject.toml"
    try:
        return list(tomllib.loads(path.read_text())["project"]["dependencies"])
    except (OSError, ValueError, KeyError) as e:
        raise EnvMissingError(f"cannot read kstrata's requirements from {path} ({e}); "
                              f"install kstrata with pip") from None


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

    @property
    def system_torch(self) -> bool:
        """Whether torch comes from the base interpreter (:data:`SYSTEM_TORCH`)."""
        return self.torch == SYSTEM_TORCH

    @property
    def wheels(self) -> str | None:
        """The ``--find-links`` folder when pip may use no index, else None."""
        if "--no-index" not in self.pip_args:
            return None
        for i, a in enumerate(self.pip_args):
            if a == "--find-links" and i + 1 < len(self.pip_args):
                return self.pip_args[i + 1]
        return None

    def digest(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def make_plan(spec: EnvSpec, torch_spec: str | None = None,
              pip_args: tuple[str, ...] = (), wheels: Path | None = None) -> Plan:
    """The install plan for ``spec`` in this interpreter's Python version.

    ``wheels``: install from that folder only (``--no-index --find-links``,
    appended to ``pip_args`` with the folder made absolute).
    """
    offline = ("--no-index", "--find-links", str(Path(wheels).resolve())) if wheels is not None else ()
    return Plan(
        name=spec.name,
        python_version=".".join(map(str, sys.version_info[:2])),
        torch=torch_spec or default_torch_spec(),
        packages=spec.packages,
        kstrata=kstrata_install(),
        kstrata_deps=kstrata_requirements(),
        pip_args=tuple(pip_args) + offline,
    )


def build_requirements() -> tuple[str, ...]:
    """What pip needs to build kstrata for an editable install (``[build-system]
    requires`` of the checkout's ``pyproject.toml``); ``()`` when kstrata is
    installed from a version, which is then a wheel itself."""
    install = kstrata_install()
    if not install or install[0] != "-e":  # a checkout is not installed into the environment at all
        return ()
    try:
        data = tomllib.loads((Path(install[1]) / "pyproject.toml").read_text())
    except (OSError, ValueError):
        return ("setuptools>=68", "wheel")
    return tuple(data.get("build-system", {}).get("requires", ("setuptools>=68", "wheel")))


@dataclass
class SetupResult:
    """Outcome of :func:`ensure_env`."""

    name: str
    path: Path
    changed: bool
    seconds: float
    installed: dict[str, str] = field(default_factory=dict)
    message: str = ""


def _checkout_env() -> dict[str, str]:
    """This process's environment with ``PYTHONPATH`` as a worker gets it (kstrata first)."""
    from kstrata.execute.pool import worker_env

    return {**os.environ, "PYTHONPATH": worker_env()["PYTHONPATH"]}


def _run(cmd: list[str], log: Callable[[str], None], wheels: str | None = None,
         env: dict[str, str] | None = None) -> None:
    """Run ``cmd`` (in ``env``, default this process's environment); on failure
    raise :class:`EnvMissingError` with pip's tail and, when installing from
    the folder ``wheels``, which wheel it lacks."""
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-25:])
        head = ""
        missing = re.search(r"No matching distribution found for (\S+)", proc.stdout)
        if wheels is not None and missing:
            head = (f"the wheel folder {wheels} has no wheel for {missing.group(1)} that fits Python "
                    f"{sys.version_info[0]}.{sys.version_info[1]} on this platform; on a machine with "
                    f"network run `{download_command_here()}` (this machine's Python and platform tags; "
                    f"add --torch as in this setup) and copy DIR here (README: TileLang without network)\n")
        raise EnvMissingError(f"{head}command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")


def _freeze(python: Path) -> dict[str, str]:
    # the first of a name on sys.path is the one that imports (an environment made with --torch system
    # from a venv also lists that venv's copies, after its own: kstrata's apache-tvm-ffi 0.1.14 after 0.1.12)
    code = ("import json, importlib.metadata as m; out = {}\n"
            "for d in m.distributions(): out.setdefault(d.metadata['Name'].lower(), d.version)\n"
            "print(json.dumps(out))")
    out = subprocess.run([str(python), "-P", "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


#: glibc 2.N minors that manylinux wheels on PyPI are commonly tagged with (PEP 600)
COMMON_GLIBC_MINORS = (35, 34, 31, 28, 27, 24, 17)


def download_command_here(dest: Path | str = "DIR", torch_spec: str | None = None) -> str:
    """The ``kstrata setup --download-wheels`` command line that fetches, on a machine with
    network, wheels for THIS machine: its ``--python-version`` and, on glibc Linux, the
    manylinux ``--platform`` tags it accepts that wheels are commonly built for (pip matches
    each tag exactly: this glibc's, :data:`COMMON_GLIBC_MINORS` below it, ``manylinux2014``;
    PEP 600 tags). For error messages that tell
    an offline machine's user what to run elsewhere."""
    import platform

    parts = ["kstrata setup --download-wheels", str(dest)]
    if torch_spec:
        parts += ["--torch", torch_spec]
    parts += ["--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}"]
    lib, version = platform.libc_ver()
    machine = platform.machine()
    if sys.platform.startswith("linux") and lib == "glibc" and version:
        try:
            major, minor = (int(x) for x in version.split(".")[:2])
        except ValueError:
            major, minor = 0, 0
        if major == 2:
            for m in sorted({minor} | {n for n in COMMON_GLIBC_MINORS if n < minor}, reverse=True):
                parts += ["--platform", f"manylinux_2_{m}_{machine}"]
            parts += ["--platform", f"manylinux2014_{machine}"]
    return " ".join(parts)


def check_wheel_dir(wheels: Path) -> Path:
    """``wheels`` made absolute, after checking that it is a folder holding wheels.

    Raises
    ------
    EnvMissingError
        When it does not exist or holds no ``*.whl`` file (the message says how to fill it).
    """
    wheels = Path(wheels).expanduser().resolve()
    if not wheels.is_dir():
        raise EnvMissingError(f"wheel folder {wheels} does not exist; fill it on a machine with network "
                              f"with `{download_command_here(wheels)}` (this machine's Python and platform)")
    if not any(wheels.glob("*.whl")):
        raise EnvMissingError(f"wheel folder {wheels} holds no *.whl file; fill it on a machine with "
                              f"network with `{download_command_here(wheels)}` (this machine's Python and "
                              f"platform)")
    return wheels


def download_wheels(spec: EnvSpec, dest: Path, torch_spec: str | None = None,
                    python_version: str | None = None, platforms: tuple[str, ...] = (),
                    pip_args: tuple[str, ...] = (),
                    log: Callable[[str], None] = lambda s: None) -> list[Path]:
    """Download every wheel that :func:`ensure_env` with ``wheels=dest`` needs
    (needs network or an index; run it where pip reaches one).

    One ``pip download --only-binary=:all:`` of torch, the spec's packages,
    kstrata's non-TVM requirements and what pip needs to build kstrata's
    editable install (:func:`build_requirements`), with their dependencies.
    With ``torch_spec`` :data:`SYSTEM_TORCH` neither torch nor what only
    torch needs (triton, the ``nvidia-*`` CUDA libraries) is fetched.

    Parameters
    ----------
    dest:
        The folder (created); wheels already there are kept.
    python_version:
        Target Python, e.g. ``"3.12"`` (default: this interpreter's); also
        sets ``--implementation cp``.
    platforms:
        Target pip platform tags, e.g. ``("manylinux_2_28_x86_64",
        "manylinux2014_x86_64")`` (default: this machine's).
    pip_args:
        Extra arguments for ``pip download`` (``--index-url URL`` ...).

    Returns
    -------
    list of Path
        The wheels in ``dest`` afterwards.

    Raises
    ------
    EnvMissingError
        When pip fails (its tail), e.g. a package without a wheel for the target.
    """
    plan = make_plan(spec, torch_spec, pip_args)
    dest = Path(dest).expanduser().resolve()
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-P", "-m", "pip", "download", "--disable-pip-version-check", "-q",
           "--only-binary=:all:", "-d", str(dest), *pip_args]
    if python_version:
        cmd += ["--python-version", python_version, "--implementation", "cp"]
    for p in platforms:
        cmd += ["--platform", p]
    reqs = [*plan.packages, *plan.kstrata_deps, *build_requirements()]
    if not plan.system_torch:
        _run([*cmd, plan.torch, *reqs], log)
        return sorted(dest.glob("*.whl"))
    # TileLang (and torch-c-dlpack-ext) require torch, and pip cannot leave one
    # requirement out of a resolution: an empty stand-in wheel of torch, offered
    # from a folder of its own, satisfies them (so neither torch nor its CUDA
    # libraries are fetched), and is removed from ``dest`` afterwards.
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kstrata-torch-stub-") as tmp:
        stub = write_wheel(Path(tmp), "torch", _STUB_TORCH, {})
        try:
            _run([*cmd, "--find-links", tmp, f"torch=={_STUB_TORCH}", *reqs, *SYSTEM_TORCH_ALSO], log)
        finally:
            (dest / stub.name).unlink(missing_ok=True)
    return sorted(dest.glob("*.whl"))


#: What the real torch of the target requires and the stand-in does not: pip checks the system
#: torch's requirements when it installs into the environment, and a new venv's own setuptools
#: (65.5 on Python 3.11) hides a newer one outside it (torch 2.13 requires setuptools>=77.0.3;
#: newcomer nc10: "no wheel for setuptools>=77.0.3" from a folder --download-wheels had filled).
SYSTEM_TORCH_ALSO = ("setuptools",)

#: Version of the stand-in torch that :func:`download_wheels` resolves against
#: for :data:`SYSTEM_TORCH` (a local version no index serves).
_STUB_TORCH = "0.0.0+kstrata.system"


def write_wheel(folder: Path, name: str, version: str, files: dict[str, str],
                requires: tuple[str, ...] = ()) -> Path:
    """Write a minimal pure-Python wheel (PEP 427) of ``name`` ``version``
    holding ``files`` (``{path in the wheel: text}``) and requiring ``requires``
    (``Requires-Dist`` lines) into ``folder``; returns its path."""
    import base64
    import zipfile

    dist = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: kstrata\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    out = Path(folder) / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return out


def ensure_env(spec: EnvSpec, torch_spec: str | None = None, pip_args: tuple[str, ...] = (),
               force: bool = False, log: Callable[[str], None] = lambda s: None,
               wheels: Path | None = None) -> SetupResult:
    """Create or update the isolated environment ``spec`` (idempotent).

    A no-op (``changed=False``) when the manifest's plan digest matches the
    plan for these arguments and the interpreter exists. Otherwise: ``python
    -m venv`` (no system site packages, reusing the folder), ``pip install``
    torch + the spec's packages, kstrata's non-TVM requirements, kstrata itself
    with ``--no-deps`` unless it is a source checkout (then workers import it
    through ``PYTHONPATH``, :func:`kstrata_install`); an import check; then the manifest, written atomically
    and last, so an interrupted setup is redone next time.

    Parameters
    ----------
    torch_spec:
        pip requirement for torch (default: the main environment's version).
        :data:`SYSTEM_TORCH` installs none and makes the venv see the base
        interpreter's site packages, where torch must import.
    pip_args:
        Extra arguments for every ``pip install`` (``--index-url URL`` ...).
    wheels:
        Install from this folder only, without network (``--no-index
        --find-links``); :func:`download_wheels` fills it. kstrata's editable
        install builds from the checkout with the folder's setuptools/wheel.

    Raises
    ------
    EnvMissingError
        If the wheel folder is missing or empty, venv creation, an install or
        the import check fails (with pip's tail and, from a wheel folder, the
        package it lacks).
    """
    start = time.perf_counter()
    if wheels is not None:
        wheels = check_wheel_dir(wheels)
    plan = make_plan(spec, torch_spec, pip_args, wheels)
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
    stale_pth = not plan.system_torch and _base_venv_pth(py).exists()  # see below
    if not force and manifest and manifest.get("plan_digest") == plan.digest() and py.exists() and not stale_pth:
        return SetupResult(spec.name, path, False, time.perf_counter() - start,
                           manifest.get("installed", {}), "up to date")
    path.parent.mkdir(parents=True, exist_ok=True)
    (path / MANIFEST).unlink(missing_ok=True)
    if not py.exists() or _sees_system_site(path) != plan.system_torch:
        _make_venv(path, plan.system_torch, log)
    if plan.system_torch:
        _see_running_venv(py, log)
        try:
            _run([str(py), "-P", "-c", "import torch"], log)
        except EnvMissingError as e:
            raise EnvMissingError(f"--torch {SYSTEM_TORCH}: torch does not import from the site packages "
                                  f"of {sys.executable}'s base interpreter; install torch there or name "
                                  f"a torch requirement\n{e}") from None
    else:
        # An earlier `--torch system` setup of this folder left the .pth that lists the running venv's
        # site packages; remade without --system-site-packages the venv still read it, and the main
        # environment's apache-tvm (and its apache-tvm-ffi) showed through in the TileLang workers.
        _base_venv_pth(py).unlink(missing_ok=True)
    torch = [] if plan.system_torch else [plan.torch]
    wheels = plan.wheels
    pip = [*_pip(py), "install", "--disable-pip-version-check", "-q", *plan.pip_args]
    _run([*pip, *torch, *plan.packages], log, wheels)
    if plan.kstrata_deps:
        _run([*pip, *plan.kstrata_deps], log, wheels)
    if plan.kstrata:
        _run([*pip, "--no-deps", *plan.kstrata], log, wheels)
    else:  # a checkout: imported through PYTHONPATH; drop a copy an earlier setup installed
        _run([*_pip(py), "uninstall", "-y", "-q", "kstrata"], log)
    # Torch and the pins must have survived the later installs.
    _run([*pip, "--no-deps", *torch, *plan.packages], log, wheels)
    _run([str(py), "-P", "-c", f"import {spec.import_check}, kstrata"], log, env=_checkout_env())
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


def _make_venv(path: Path, system_site: bool, log: Callable[[str], None]) -> None:
    """``python -m venv`` at ``path``; where this interpreter's base has no
    ``ensurepip`` (Debian's python3 without python3-venv; a venv made by uv),
    the venv is made without pip and :func:`_pip` installs into it with this
    interpreter's pip.

    Raises
    ------
    EnvMissingError
        When the venv cannot be made."""
    args = [sys.executable, "-P", "-m", "venv", *(["--system-site-packages"] if system_site else [])]
    try:
        _run([*args, str(path)], log)
    except EnvMissingError as e:
        if "ensurepip" not in str(e):
            raise
        log("# no ensurepip here: the environment gets no pip of its own; this interpreter's pip installs into it")
        _run([*args, "--without-pip", "--clear", str(path)], log)


def _pip(py: Path) -> list[str]:
    """The pip command line that installs into the environment of interpreter
    ``py``: its own pip, else this interpreter's with ``--python`` (pip >= 22.3)."""
    try:
        has_pip = subprocess.run([str(py), "-P", "-c", "import pip"], capture_output=True).returncode == 0
    except OSError:  # no interpreter yet: the venv step failed and says so itself
        has_pip = True
    return [str(py), "-P", "-m", "pip"] if has_pip else [sys.executable, "-P", "-m", "pip", "--python", str(py)]


#: ``.pth`` file of an environment made from a virtual environment with ``--torch system``
BASE_VENV_PTH = "_kstrata_base_venv.pth"


def _see_running_venv(py: Path, log: Callable[[str], None]) -> None:
    """Let the environment of interpreter ``py`` see this interpreter's site packages
    when this interpreter is itself a virtual environment.

    ``python -m venv --system-site-packages`` run from a venv makes an
    environment over the venv's *base* interpreter, whose site packages lack what
    was installed into the venv: on the lent H200 ``python3`` is
    ``/opt/torch/.venv/bin/python3``, and its torch is in that venv. A ``.pth``
    file (:data:`BASE_VENV_PTH`) in the new environment's site packages lists the
    running venv's site-packages folders; ``site`` appends them after the
    environment's own folder, so its own pins (``apache-tvm-ffi``) still win.
    Removed again when this interpreter is not a venv."""
    pth = _base_venv_pth(py)
    if sys.prefix == sys.base_prefix:
        pth.unlink(missing_ok=True)
        return
    import site

    ours = [p for p in site.getsitepackages() if Path(p).resolve().is_relative_to(Path(sys.prefix).resolve())]
    log(f"# {pth}: the site packages of {sys.prefix} (this interpreter's venv)")
    from kstrata.atomic import write_atomic

    pth.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(pth, "".join(f"{p}\n" for p in ours))


def _base_venv_pth(py: Path) -> Path:
    """Where :func:`_see_running_venv` writes :data:`BASE_VENV_PTH` for interpreter ``py``."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"  # the venv was made by this interpreter
    return py.parent.parent / "lib" / version / "site-packages" / BASE_VENV_PTH


def _sees_system_site(path: Path) -> bool:
    """Whether the venv at ``path`` was made with ``--system-site-packages``."""
    try:
        cfg = (path / "pyvenv.cfg").read_text()
    except OSError:
        return False
    return bool(re.search(r"^include-system-site-packages\s*=\s*true\s*$", cfg, re.M | re.I))


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
        p = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
        if p.returncode == 0:
            out[mod] = p.stdout.strip().splitlines()[-1]
        else:
            lines = p.stderr.strip().splitlines()
            out[mod] = "error: " + (lines[-1] if lines else f"exit {p.returncode}")
    return out

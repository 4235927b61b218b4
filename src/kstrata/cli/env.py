"""``kstrata env``: a report of versions, devices and usable backends, to paste
into a bug report (like ``accelerate env``)."""

from __future__ import annotations

import json
import platform
import shutil
import sys
from importlib.metadata import PackageNotFoundError, version

import typer
from rich.table import Table

from kstrata.cli.errors import Console
from kstrata import __version__
from kstrata.backends import registry

console = Console()

LIBRARIES = ("torch", "numpy", "apache-tvm", "apache-tvm-ffi", "triton", "tilelang", "pyopencl")


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _isolated_version(lib: str) -> str | None:
    """``"0.1.15 (own environment)"`` for a library that lives in a backend's
    isolated environment (TileLang), else None."""
    if lib != "tilelang":
        return None
    from kstrata.backends import envs

    av = envs.availability("tilelang-c")
    version = dict(av.versions).get("tilelang")
    return f"{version} (own environment, `kstrata setup`)" if av.usable and version else None


def collect() -> dict:
    """Everything ``kstrata env`` reports, as a JSON-able dict."""
    import torch

    devices = [f"cpu: {platform.processor() or platform.machine()} ({torch.get_num_threads()} threads)"]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            devices.append(f"cuda:{i}: {torch.cuda.get_device_name(i)}")
    tools = {t: shutil.which(t) or "not found" for t in ("nvcc", "ncu", "perf", "clinfo")}
    backends = {}
    for name in registry.names():
        try:
            av = registry.get_backend(name).availability()
            backends[name] = {"usable": av.usable, "reason": av.reason, "versions": dict(av.versions)}
        except Exception as e:  # noqa: BLE001 - report a broken backend, don't crash env
            backends[name] = {"usable": False, "reason": f"{type(e).__name__}: {e}", "versions": {}}
    return {
        "kstrata": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": {lib: _isolated_version(lib) or _version(lib) for lib in LIBRARIES},
        "devices": devices,
        "tools": tools,
        "backends": backends,
        "sandbox": _sandbox(),
    }


def _sandbox() -> dict:
    from kstrata.sandbox import status

    s = status()
    return {"tool": s.tool, "usable": s.usable, "version": s.version, "limits": s.limits,
            "unsafe_no_sandbox": s.unsafe, "describe": s.describe(), "reason": s.reason}


def register(app: typer.Typer) -> None:
    """Add the ``env`` command to ``app``."""

    @app.command("env")
    def env(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
        """Versions of Python, torch and each backend library; devices; usable backends."""
        info = collect()
        if as_json:
            typer.echo(json.dumps(info, indent=2))
            return
        console.print(f"kstrata {info['kstrata']} · Python {info['python']} · {info['platform']}")
        libs = Table(title="libraries")
        libs.add_column("library")
        libs.add_column("version")
        for k, v in info["libraries"].items():
            libs.add_row(k, v)
        console.print(libs)
        console.print("devices: " + "; ".join(info["devices"]))
        console.print("tools: " + ", ".join(f"{k}={v}" for k, v in info["tools"].items()))
        sb = info["sandbox"]
        console.print("sandbox for candidate code: " + ("[green]" if sb["usable"] else "[red]") + sb["describe"]
                      + "[/]", highlight=False)
        bt = Table(title="backends")
        for col in ("backend", "usable", "why not / notes"):
            bt.add_column(col)
        for name, b in info["backends"].items():
            bt.add_row(name, "[green]yes[/]" if b["usable"] else "[red]no[/]", b["reason"])
        console.print(bt)

"""``kstrata setup --wheels DIR`` / ``--download-wheels DIR``: the TileLang
environment from a local folder of wheels, without network (issue 18 item 4).

The fast tests build a real venv from small wheels made here (an env spec of
stand-in packages, so no torch is installed); the slow one builds the real
TileLang environment from a folder that ``--download-wheels`` filled (the
folder named by ``$KSTRATA_TEST_WHEELS``; skipped without it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kstrata.backends import envs
from kstrata.cli.main import app

FAKE = envs.EnvSpec(name="fake", backends=("fake-backend",), packages=("kst_fake_dsl==1.0",),
                    import_check="kst_fake_dsl")


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal wheel of ``name`` whose module of that name sets ``VERSION``."""
    return envs.write_wheel(folder, name, version, {f"{name}/__init__.py": f"VERSION = {version!r}\n"},
                            requires)


def cut_off_network(monkeypatch):
    """pip without this machine's pip config (its local indexes) and with
    proxies where nothing listens, so any download fails."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """An env root, a wheel folder with stand-ins for torch, the DSL and kstrata,
    and pip cut off from every index and from this machine's pip config."""
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path / "envs"))
    cut_off_network(monkeypatch)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "kst_fake_torch", "2.0")
    make_wheel(wheels, "kst_fake_dsl", "1.0")
    kstrata_whl = make_wheel(wheels, "kstrata", "0.0.1")
    monkeypatch.setattr(envs, "kstrata_requirements", lambda: ())
    monkeypatch.setattr(envs, "kstrata_install", lambda: (str(kstrata_whl),))
    return wheels


def test_env_from_a_wheel_folder_without_network(offline):
    res = envs.ensure_env(FAKE, torch_spec="kst_fake_torch==2.0", wheels=offline)
    assert res.changed and res.installed["kst_fake_dsl"] == "1.0" and res.installed["kst_fake_torch"] == "2.0"
    manifest = envs.read_manifest("fake")
    args = manifest["plan"]["pip_args"]
    assert "--no-index" in args and args[args.index("--find-links") + 1] == str(offline.resolve())
    py = envs.env_python("fake")
    out = subprocess.run([str(py), "-c", "import kst_fake_dsl, kstrata; print(kstrata.VERSION)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0.0.1"
    # same folder, same plan: up to date; the online plan differs (it would reinstall)
    again = envs.ensure_env(FAKE, torch_spec="kst_fake_torch==2.0", wheels=offline, log=pytest.fail)
    assert not again.changed
    assert envs.make_plan(FAKE, "kst_fake_torch==2.0").digest() != manifest["plan_digest"]


def test_a_missing_wheel_is_named(offline):
    spec = envs.EnvSpec(name="fake2", backends=(), packages=("kst_fake_dsl==1.0", "kst_absent==3.1"),
                        import_check="kst_fake_dsl")
    with pytest.raises(envs.EnvMissingError) as e:
        envs.ensure_env(spec, torch_spec="kst_fake_torch==2.0", wheels=offline)
    msg = str(e.value)
    assert f"wheel folder {offline.resolve()} has no wheel for kst_absent==3.1" in msg
    # the command to run elsewhere carries THIS machine's Python (and platform tags), newcomer nc10
    assert f"--download-wheels DIR --python-version {sys.version_info[0]}.{sys.version_info[1]}" in msg
    assert envs.read_manifest("fake2") is None  # not marked ready


def test_wheel_folder_must_hold_wheels(tmp_path):
    with pytest.raises(envs.EnvMissingError, match="does not exist"):
        envs.check_wheel_dir(tmp_path / "nope")
    with pytest.raises(envs.EnvMissingError, match=r"holds no \*\.whl"):
        envs.check_wheel_dir(tmp_path)
    def setup(*args):
        r = CliRunner().invoke(app, ["setup", *args])
        return r.exit_code, " ".join(r.output.split())  # rich wraps long lines

    code, out = setup("--wheels", str(tmp_path / "nope"), "--skip-main-check")
    assert code == 2 and "does not exist" in out and "--download-wheels" in out
    assert f"--python-version {sys.version_info[0]}.{sys.version_info[1]}" in out
    # an unknown name lists the environments and the backends that run in them (newcomer nc10: tilelang_c)
    code, out = setup("--backends", "tilelang_c", "--skip-main-check")
    assert code == 2 and "'tilelang_c'" in out and "tilelang-c" in out and "tilelang-cuda" in out
    code, out = setup("--python-version", "3.12", "--skip-main-check")
    assert code == 2 and "--download-wheels" in out
    code, out = setup("--download-wheels", str(tmp_path), "--wheels", str(tmp_path))
    assert code == 2 and "give one" in out


def test_download_command_targets_python_and_platform(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(envs, "_run", lambda cmd, log, wheels=None, env=None: calls.append(cmd))
    envs.download_wheels(envs.TILELANG, tmp_path / "w", torch_spec=envs.SYSTEM_TORCH, python_version="3.12",
                         platforms=("manylinux_2_28_x86_64", "manylinux2014_x86_64"))
    [cmd] = calls
    assert cmd[cmd.index("-d") + 1] == str((tmp_path / "w").resolve())
    assert "--only-binary=:all:" in cmd and cmd[cmd.index("--python-version") + 1] == "3.12"
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--platform"] == ["manylinux_2_28_x86_64",
                                                                            "manylinux2014_x86_64"]
    assert "--implementation" in cmd
    # the target's own torch is used: only the stand-in that satisfies TileLang's requirement
    assert [a for a in cmd if a.startswith("torch")] == [f"torch=={envs._STUB_TORCH}"]
    assert set(envs.TILELANG.packages) <= set(cmd) and set(envs.kstrata_requirements()) <= set(cmd)
    assert set(envs.build_requirements()) <= set(cmd)  # kstrata's editable build needs them offline
    calls.clear()
    envs.download_wheels(envs.TILELANG, tmp_path / "w", torch_spec="torch==2.13.0")
    assert "torch==2.13.0" in calls[0] and "--python-version" not in calls[0]


def test_system_torch_download_leaves_torch_and_its_libraries_out(offline, tmp_path, monkeypatch):
    index = tmp_path / "index"
    index.mkdir()
    make_wheel(index, "kst_fake_dsl", "1.0", requires=("torch", "kst_fake_dep>=1"))
    make_wheel(index, "kst_fake_dep", "1.2")
    make_wheel(index, "torch", "9.9", requires=("kst_fake_cuda_libs",))  # what must not come
    make_wheel(index, "kst_fake_cuda_libs", "1.0")
    make_wheel(index, "setuptools", "80.0")  # what the target's real torch requires (SYSTEM_TORCH_ALSO)
    monkeypatch.setattr(envs, "build_requirements", lambda: ())
    got = envs.download_wheels(FAKE, tmp_path / "dl", torch_spec=envs.SYSTEM_TORCH,
                               pip_args=("--no-index", "--find-links", str(index)))
    assert sorted(w.name.split("-")[0] for w in got) == ["kst_fake_dep", "kst_fake_dsl", "setuptools"]


def test_system_torch_makes_a_venv_that_sees_site_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path))
    calls = []
    monkeypatch.setattr(envs, "_run", lambda cmd, log, wheels=None, env=None: calls.append(cmd))
    monkeypatch.setattr(envs, "_freeze", lambda py: {"tilelang": "0.1.15"})
    res = envs.ensure_env(envs.TILELANG, torch_spec=envs.SYSTEM_TORCH)
    assert res.changed
    venv = calls[0]
    assert venv[1:5] == ["-P", "-m", "venv", "--system-site-packages"]  # -P: the working folder is not on sys.path
    assert calls[1][-2:] == ["-c", "import torch"]
    installs = [c for c in calls if "install" in c]
    assert installs and not any(a.startswith("torch") or a == envs.SYSTEM_TORCH for c in installs for a in c)
    cfg = tmp_path / "tilelang" / "pyvenv.cfg"
    cfg.write_text("include-system-site-packages = true\n")
    assert envs._sees_system_site(tmp_path / "tilelang")
    cfg.write_text("include-system-site-packages = false\n")
    assert not envs._sees_system_site(tmp_path / "tilelang")


def test_system_torch_without_torch_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path))

    def run(cmd, log, wheels=None):
        if cmd[-2:] == ["-c", "import torch"]:
            raise envs.EnvMissingError("command failed (1): ... No module named 'torch'")

    monkeypatch.setattr(envs, "_run", run)
    with pytest.raises(envs.EnvMissingError, match="--torch system: torch does not import"):
        envs.ensure_env(envs.TILELANG, torch_spec=envs.SYSTEM_TORCH)


@pytest.mark.slow
def test_real_tilelang_env_from_downloaded_wheels(tmp_path, monkeypatch):
    """The real environment from a folder ``kstrata setup --download-wheels``
    filled (``$KSTRATA_TEST_WHEELS``), with pip cut off from every index."""
    folder = os.environ.get("KSTRATA_TEST_WHEELS")
    if not folder or not any(Path(folder).glob("tilelang-*.whl")):
        pytest.skip("set KSTRATA_TEST_WHEELS to a folder filled by `kstrata setup --download-wheels`")
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path / "envs"))
    cut_off_network(monkeypatch)
    res = envs.ensure_env(envs.TILELANG, wheels=Path(folder))
    assert res.installed["tilelang"] == "0.1.15"
    code = "import tilelang, kstrata, json; print(json.dumps(tilelang.__version__))"
    out = subprocess.run([str(envs.env_python("tilelang")), "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]).startswith("0.1.15")


def test_system_torch_from_a_venv_sees_that_venvs_packages(tmp_path):
    """``--torch system`` run by a venv's interpreter (the lent H200's python3 is
    /opt/torch/.venv/bin/python3, torch installed in that venv): ``venv
    --system-site-packages`` alone sees only the base interpreter's packages, so
    torch did not import in the new environment."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the test interpreter is not a venv")
    env = tmp_path / "tilelang"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(env)], check=True)
    py = env / "bin" / "python"
    code = "import torch, sys; print(torch.__file__)"
    assert subprocess.run([str(py), "-c", code], capture_output=True, env={"PATH": "/usr/bin:/bin"}).returncode != 0
    envs._see_running_venv(py, lambda s: None)
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve().is_relative_to(Path(sys.prefix).resolve())


def _wheel(folder: Path, name: str, version: str, code: str) -> Path:
    """A pure-Python wheel of one module ``name`` (dist name with '-' for '_')."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}.py", code)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


def test_an_environment_without_its_own_pip_is_installed_into(tmp_path):
    """Where the base interpreter has no ensurepip, the environment is made with
    --without-pip and this interpreter's pip installs into it (pip --python)."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    py = env / "bin" / "python"
    pip = envs._pip(py)
    assert pip[:5] == [sys.executable, "-P", "-m", "pip", "--python"]
    wheel = _wheel(tmp_path / "wheels", "kst_probe", "1.0", "VALUE = 42\n")
    envs._run([*pip, "install", "-q", "--no-index", "--find-links", str(wheel.parent), "kst-probe"], lambda s: None)
    out = subprocess.run([str(py), "-c", "import kst_probe; print(kst_probe.VALUE, kst_probe.__file__)"],
                         capture_output=True, text=True, check=True)
    value, where = out.stdout.split()
    assert value == "42" and Path(where).is_relative_to(env)


def test_the_manifest_records_the_environments_own_copy_first(tmp_path):
    """An environment that also sees a venv's site packages (--torch system from a venv)
    records the version that imports, its own, not the venv's copy listed after it."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the test interpreter is not a venv")
    from importlib import metadata

    outer = metadata.version("einops")
    env = tmp_path / "tilelang"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(env)], check=True)
    py = env / "bin" / "python"
    envs._see_running_venv(py, lambda s: None)
    wheel = _wheel(tmp_path / "wheels", "einops", "0.0.1", "VERSION = 'own'\n")
    envs._run([*envs._pip(py), "install", "-q", "--no-deps", "--no-index", str(wheel)], lambda s: None)
    assert outer != "0.0.1"
    assert envs._freeze(py)["einops"] == "0.0.1"
    assert envs._freeze(py)["torch"] == metadata.version("torch")  # seen through the venv only


def test_download_command_names_this_machines_platform(monkeypatch):
    import platform

    monkeypatch.setattr(platform, "libc_ver", lambda *a, **k: ("glibc", "2.31"))
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(sys, "platform", "linux")
    cmd = envs.download_command_here("/w", "system")
    tags = cmd.split("--platform ")[1:]
    assert cmd.startswith("kstrata setup --download-wheels /w --torch system --python-version ")
    # this glibc first, none newer than it (pip would take wheels this machine cannot load), 2014 last
    assert [t.strip() for t in tags] == ["manylinux_2_31_x86_64", "manylinux_2_28_x86_64", "manylinux_2_27_x86_64",
                                         "manylinux_2_24_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    monkeypatch.setattr(platform, "libc_ver", lambda *a, **k: ("", ""))  # musl, macOS: no tag guessed
    assert "--platform" not in envs.download_command_here()


def test_a_setup_without_system_torch_drops_the_base_venv_pth_an_earlier_one_left(tmp_path, monkeypatch):
    """CI (f874efc): a `--torch system` setup of the real environment (an old test) wrote
    _kstrata_base_venv.pth; the pinned setup after it remade the venv but kept the file, so the
    main environment's apache-tvm showed through in the TileLang workers, and a later setup with
    the same plan said 'up to date'."""
    monkeypatch.setenv("KSTRATA_ENV_DIR", str(tmp_path))
    env = tmp_path / "tilelang"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    py = envs.env_python("tilelang")
    pth = envs._base_venv_pth(py)
    pth.write_text(f"{tmp_path / 'elsewhere'}\n")
    plan = envs.make_plan(envs.TILELANG)
    from kstrata.atomic import write_atomic

    write_atomic(env / envs.MANIFEST, json.dumps({"plan_digest": plan.digest(), "plan": {"torch": plan.torch},
                                                  "installed": {}}))
    ok, why = envs.env_ready("tilelang")
    assert not ok and envs.BASE_VENV_PTH in why and "kstrata setup" in why
    calls = []
    monkeypatch.setattr(envs, "_run", lambda cmd, log, wheels=None, env=None: calls.append(cmd))
    monkeypatch.setattr(envs, "_freeze", lambda py: {"tilelang": "0.1.15"})
    res = envs.ensure_env(envs.TILELANG)
    assert res.changed and calls  # not 'up to date' while the file is there
    assert not pth.exists()
    assert envs.env_ready("tilelang") == (True, "")
    assert not envs.ensure_env(envs.TILELANG).changed  # and now it is

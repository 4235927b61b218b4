"""System directories that are symbolic links on the host (merged ``/usr``:
``/lib -> usr/lib``) are links in the sandbox too: bound as directories, a path
that climbs out of one with ``..`` left ``/usr``, and PoCL (loaded from
``/lib/x86_64-linux-gnu``) found no headers at ``/lib/x86_64-linux-gnu/../../share/pocl``,
so every ``tvm-opencl`` candidate read ``compile_error`` ("no OpenCL device
compiles a kernel") in the sandbox while the same kernel built outside it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kstrata.sandbox import policy, status

LINKED = [p for p in ("/lib", "/bin", "/lib64") if os.path.islink(p)
          and os.path.realpath(p).startswith("/usr/")]
needs_links = pytest.mark.skipif(not LINKED, reason="no system directory is a link into /usr here")
needs_sandbox = pytest.mark.skipif(not status().usable, reason=f"no sandbox here: {status().reason}")


def sandboxed(code: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "probe.py"
    script.write_text(code)
    cmd = policy.command([sys.executable, str(script)], python=sys.executable, read_only=[str(script)])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@needs_links
def test_a_linked_system_directory_is_a_link_in_the_command():
    cmd = policy.command(["true"])
    links = {cmd[i + 2]: cmd[i + 1] for i, a in enumerate(cmd) if a == "--symlink"}
    binds = {cmd[i + 1] for i, a in enumerate(cmd) if a == "--ro-bind"}
    for p in LINKED:
        assert links.get(p) == os.readlink(p), (p, links)
        assert p not in binds


@needs_links
@needs_sandbox
def test_dot_dot_from_a_linked_directory_stays_in_usr(tmp_path):
    probe = ("import os\n"
             f"for p in {LINKED!r}:\n"
             "    print(p, os.path.islink(p), os.path.realpath(os.path.join(p, '..')))\n")
    r = sandboxed(probe, tmp_path)
    assert r.returncode == 0, r.stderr
    for line, p in zip(r.stdout.splitlines(), LINKED):
        assert line == f"{p} True {os.path.realpath(os.path.join(p, '..'))}", r.stdout


@needs_sandbox
def test_an_opencl_kernel_builds_in_the_sandbox_where_it_builds_outside(tmp_path):
    cl = pytest.importorskip("pyopencl")
    src = "__kernel void k(__global float* a) { a[0] = 1.0f; }"
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        pytest.skip("no OpenCL device")
    try:
        cl.Program(cl.Context(devices[:1]), src).build()
    except Exception as e:  # noqa: BLE001 - the host itself cannot build: nothing to compare
        pytest.skip(f"OpenCL does not build outside the sandbox either: {e}")
    probe = ("import pyopencl as cl\n"
             "d = [d for p in cl.get_platforms() for d in p.get_devices()][:1]\n"
             f"cl.Program(cl.Context(d), {src!r}).build()\n"
             "print('built')\n")
    r = sandboxed(probe, tmp_path)
    assert r.stdout.strip() == "built", r.stdout + r.stderr

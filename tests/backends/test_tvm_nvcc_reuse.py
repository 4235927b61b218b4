"""A tvm-cuda build's nvcc run is not repeated for a CUDA text this process
already compiled: a candidate's normal build and its two poison builds at a
shape, and shapes that specialise to the same kernels, often generate the
same text (relu's start at the verifier's 17 shapes: 51 builds, 13 texts),
and nvcc is most of GPU verification's build time (6.2 s median per level-1
task on the H100, issue 18). A fake ``nvcc`` counts its runs here."""

from __future__ import annotations

import threading

import pytest

from kstrata.backends.tvm import build as tb


@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch):
    """An ``nvcc`` that writes ``PTX:<source>`` and logs each run; the count of runs."""
    log = tmp_path / "runs"
    script = tmp_path / "nvcc"
    script.write_text(
        "#!/bin/sh\n"
        f'echo run >> "{log}"\n'
        'while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; *.cu) src="$1";; esac; shift; done\n'
        'if grep -q BROKEN "$src"; then echo "error: broken" >&2; exit 1; fi\n'
        'sleep 0.2; { printf "PTX:"; cat "$src"; } > "$out"\n')
    script.chmod(0o755)
    monkeypatch.setattr(tb, "nvcc_path", lambda: str(script))
    monkeypatch.setattr(tb, "_NVCC_DONE", {}, raising=False)  # a fresh cache
    return lambda: len(log.read_text().splitlines()) if log.exists() else 0


def test_the_same_text_is_compiled_once(fake_nvcc):
    assert tb.nvcc_compile("kernel A") == b"PTX:kernel A"
    assert tb.nvcc_compile("kernel A") == b"PTX:kernel A"
    assert fake_nvcc() == 1
    assert tb.nvcc_compile("kernel B") == b"PTX:kernel B"  # another text is another run
    assert tb.nvcc_compile("kernel A", arch="sm_80") == b"PTX:kernel A"  # another arch too
    assert fake_nvcc() == 3


def test_builds_at_once_of_the_same_text_wait_for_one_run(fake_nvcc):
    """prepare() compiles a shape's three builds in a thread pool: the same text
    compiled by several threads at once is one nvcc run."""
    out = []
    threads = [threading.Thread(target=lambda: out.append(tb.nvcc_compile("kernel C"))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [b"PTX:kernel C"] * 3 and fake_nvcc() == 1


def test_a_failure_is_not_kept(fake_nvcc):
    for _ in range(2):
        with pytest.raises(tb.BuildError, match="broken"):
            tb.nvcc_compile("BROKEN kernel")
    assert fake_nvcc() == 2  # each try runs nvcc and reports its error

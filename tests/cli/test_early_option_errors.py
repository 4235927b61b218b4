"""``kstrata optimize`` refuses options wrong by their text alone before the
task, torch and the backend load (newcomer nc18: ``--proposer gpt``,
``--timing-shape huge`` and a missing ``--initial`` each took 20-29 s to be
told on a busy machine). Checked by what the process imported, not by time."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from kstrata.__main__ import main
sys.argv = ["kstrata", *sys.argv[1:]]
try:
    main()
except SystemExit as e:
    print("exit", e.code)
print("torch imported:", "torch" in sys.modules)
print("backend loaded:", "kstrata.backends.tvm" in sys.modules)
"""


@pytest.mark.parametrize(("args", "said"), [
    (["--proposer", "gpt"], "unknown --proposer 'gpt'; choose one of builtin, llm, hierarchical"),
    (["--initial", "nosuch.py"], "--initial nosuch.py: no such file or directory"),
    (["--timing-shape", "huge"], "--timing-shape: shape item 'huge' is not NAME=INT"),
    (["--timing-shape", "B=4,D=x"], "--timing-shape: shape item 'D=x' is not NAME=INT"),
    # the lead's option battery: each said after 2-3 minutes of loading the task, backend and start
    (["--baselines", "bogus"], "unknown --baselines 'bogus'; choose from eager, compile, metaschedule"),
    (["--baselines", "metaschedule", "--backend", "triton-interp"], "metaschedule is for tvm-* backends"),
    (["--proposer", "llm", "--llm", "bogus:xyz"], "unknown LLM provider 'bogus:xyz'"),
    (["--proposer", "llm"], "--proposer llm needs --llm PROVIDER:MODEL"),
    (["--proposer", "hierarchical", "--llm", "queue:"], "'queue:': missing DIR after 'queue:'"),
    (["--proposer", "hierarchical", "--ablate", "bogus"], "--ablate: unknown ablation 'bogus'"),
    (["--out", "a_file"], "--out a_file: exists and is not a directory"),
    (["--out", "a_file/run"], "--out a_file/run: the run directory cannot be created"),
])
def test_a_wrong_option_is_refused_before_torch_loads(args, said, tmp_path):
    (tmp_path / "a_file").write_text("the user's")
    r = subprocess.run([sys.executable, "-c", PROBE, "optimize", "rmsnorm", *args, "--budget", "evals=1"],
                       capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert "exit 2" in r.stdout and said in " ".join(r.stderr.split()), r.stdout + r.stderr
    assert "torch imported: False" in r.stdout



@pytest.mark.parametrize(("args", "said"), [
    (["optimize", "rmsnorm", "--timing-shape", "B=0"], "--timing-shape: shape item 'B=0': sizes must be at least 1"),
    (["optimize", "rmsnorm", "--timing-shape", "Q=5"], "--timing-shape: task rmsnorm has no shape variable 'Q'"),
    (["eval", "rmsnorm", "x.json", "--scope", "tiny"], "unknown scope 'tiny'; choose full or small"),
    (["eval", "rmsnorm", "x.json", "--timing-shape", "B=0"], "sizes must be at least 1"),
    (["eval", "rmsnorm", "x.json", "--timing-shape", "Q=5"], "task rmsnorm has no shape variable 'Q'"),
    (["eval", "rmsnorm", "x.json", "--preset", "bogus"], "unknown preset 'bogus'; choose one of strict, warn"),
])
def test_a_wrong_value_is_refused_before_the_backend_loads(args, said, tmp_path):
    """Newcomer nc22: --timing-shape B=0 took 44 s, Q=5 25 s, eval --scope tiny 15 s to be refused.
    The candidate file exists: a missing one is refused first, before any option (c19d6d5)."""
    (tmp_path / "x.json").write_text('{"source": "import torch"}')
    r = subprocess.run([sys.executable, "-c", PROBE, *args, "--backend", "tvm-llvm",
                        *(["--budget", "evals=1"] if args[0] == "optimize" else [])],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "exit 2" in r.stdout and said in " ".join(r.stderr.split()), r.stdout + r.stderr
    assert "backend loaded: False" in r.stdout
    if "B=0" in args:  # a size below 1 is wrong by its text alone: refused before torch loads
        r = subprocess.run([sys.executable, "-c", PROBE, "optimize", "rmsnorm", "--timing-shape", "B=0", "--budget",
                            "evals=1"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert "torch imported: False" in r.stdout, r.stdout + r.stderr


def test_bench_refuses_an_unknown_preset_before_any_cell_runs(tmp_path):
    """Every candidate of every cell was a runtime_error of the evaluator (45 s for one cell), the bench
    'run'; now one error, and no bench folder."""
    r = subprocess.run([sys.executable, "-c", PROBE, "bench", "--suite", "level1", "--tasks", "relu",
                        "--preset", "bogus", "--out", str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "exit 2" in r.stdout and "unknown preset 'bogus'" in r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "b" / "bench.db").exists()


def test_a_wrong_timing_shape_name_is_refused_before_the_reference_runs(tmp_path):
    """Newcomer nc28: --timing-shape X=4 on a plain file took 70 s at load 19 (the
    reference run to fit the CPU's shapes) to be told the task has no X."""
    marker = tmp_path / "ran"
    task = tmp_path / "marked.py"
    task.write_text(f"import torch\nB, D = 16, 32\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    f"        open({str(marker)!r}, 'w').close()\n        return torch.relu(x)\n"
                    "def get_inputs(): return [torch.randn(B, D)]\ndef get_init_inputs(): return []\n")
    r = subprocess.run([sys.executable, "-c", PROBE, "optimize", str(task), "--timing-shape", "X=4", "--budget",
                        "evals=1"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "exit 2" in r.stdout and "has no shape variable 'X'; it has B, D" in " ".join(r.stderr.split()), \
        r.stdout + r.stderr
    assert not marker.exists()  # the reference never ran

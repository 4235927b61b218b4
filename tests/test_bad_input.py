"""Bad user input gets one ``error: ...`` line and exit status 2, never a traceback:
task files whose reference cannot be run or judged (case 16) and option values
that are NaN, infinite, out of range or repeated (case 17)."""

from __future__ import annotations

import math
import textwrap
import time
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kstrata.bench.harness import BenchError
from kstrata.bench.harness import parse_budget as bench_parse_budget
from kstrata.cli.errors import OptionError
from kstrata.cli.main import app
from kstrata.cli.optimize import parse_budget as cli_parse_budget
from kstrata.search.budget import BudgetError, parse_budget
from kstrata.tasks.base import TaskError
from kstrata.tasks.loader import check_reference, load_task, resolve_task, suite

RELU_CANDIDATE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, *a): return torch.relu(x)\n"


def _task(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("import torch\n" + textwrap.dedent(body))
    return path


def _one_error_line(result, *needles: str) -> str:
    """The run ended with status 2 and exactly one line, ``error: ...``, containing ``needles``."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# -- case 16: task files the reference cannot run or judge ----------------------

BAD_TASKS = {
    "nontensor_inputs": ("""
        class Model(torch.nn.Module):
            def forward(self, x, s): return torch.relu(x) * 2
        def get_inputs(): return [[1, 2, 3], "abc"]
        def get_init_inputs(): return []
        """, ["Model.forward raised TypeError", "get_inputs() gave list, str", "fix get_inputs()"]),
    "forward_dict": ("""
        N = 64
        class Model(torch.nn.Module):
            def forward(self, x): return {"a": torch.relu(x)}
        def get_inputs(): return [torch.randn(N, 32)]
        def get_init_inputs(): return []
        """, ["returned a dict (keys 'a')", "must return a tensor or a tuple/list of tensors"]),
    "forward_none": ("""
        N = 64
        class Model(torch.nn.Module):
            def forward(self, x): return None
        def get_inputs(): return [torch.randn(N, 32)]
        def get_init_inputs(): return []
        """, ["returned None", "must return a tensor"]),
    "forward_raises": ("""
        N = 64
        class Model(torch.nn.Module):
            def forward(self, x): raise ValueError("reference is broken")
        def get_inputs(): return [torch.randn(N, 32)]
        def get_init_inputs(): return []
        """, ["raised ValueError: reference is broken", "N': 64"]),
    "scalar_output": ("""
        N = 64
        class Model(torch.nn.Module):
            def forward(self, x): return x.sum().item()
        def get_inputs(): return [torch.randn(N, 32)]
        def get_init_inputs(): return []
        """, ["returned a Python float", "torch.tensor(...)"]),
    "tuple_with_none": ("""
        N = 4
        class Model(torch.nn.Module):
            def forward(self, x): return x * 2, None
        def get_inputs(): return [torch.randn(N)]
        def get_init_inputs(): return []
        """, ["a tuple whose item 1 is None"]),
    "init_raises": ("""
        N = 4
        class Model(torch.nn.Module):
            def __init__(self, k):
                super().__init__()
                raise RuntimeError("no weights for k")
            def forward(self, x): return x
        def get_inputs(): return [torch.randn(N)]
        def get_init_inputs(): return [3]
        """, ["building the reference", "RuntimeError: no weights for k", "Model.__init__"]),
    # red-team round of 2026-12-04: a sparse input was a NotImplementedError traceback (its storage)
    "sparse_input": ("""
        N = 4
        class Model(torch.nn.Module):
            def forward(self, x): return x.to_dense() * 2
        def get_inputs(): return [torch.randn(N, 8).to_sparse()]
        def get_init_inputs(): return []
        """, ["get_inputs() item 0 is a sparse_coo tensor", "dense strided"]),
    "sparse_output": ("""
        N = 4
        class Model(torch.nn.Module):
            def forward(self, x): return (x * 2).to_sparse()
        def get_inputs(): return [torch.randn(N, 8)]
        def get_init_inputs(): return []
        """, ["returned a sparse_coo tensor"]),
}


@pytest.mark.parametrize("case", sorted(BAD_TASKS))
def test_eval_of_a_task_whose_reference_cannot_be_judged(tmp_path, case):
    body, needles = BAD_TASKS[case]
    task = _task(tmp_path, f"task_{case}.py", body)
    cand = tmp_path / "cand.py"
    cand.write_text(RELU_CANDIDATE)
    res = CliRunner().invoke(app, ["eval", str(task), str(cand), "--backend", "pytorch", "--json",
                                   "--no-time", "--scope", "small"])
    _one_error_line(res, f"task_{case}.py: ", *needles)
    with pytest.raises(TaskError, match=f"task_{case}.py"):
        resolve_task(str(task))


GOOD_TASKS = {
    "tuple_outputs": """
        N = 5
        class Model(torch.nn.Module):
            def forward(self, x): return x.max(dim=0)
        def get_inputs(): return [torch.randn(N, 3)]
        def get_init_inputs(): return []
        """,
    "nested_list_outputs": """
        N = 5
        class Model(torch.nn.Module):
            def forward(self, x): return [x + 1, (x * 2, x.sum())]
        def get_inputs(): return [torch.randn(N)]
        def get_init_inputs(): return []
        """,
    "integer_and_bool_outputs": """
        N = 5
        class Model(torch.nn.Module):
            def forward(self, x): return x.argmax(dim=-1), x > 0
        def get_inputs(): return [torch.randn(N, 4)]
        def get_init_inputs(): return []
        """,
    "nan_reference": """
        N = 5
        class Model(torch.nn.Module):
            def forward(self, x): return torch.log(x - 10)
        def get_inputs(): return [torch.rand(N)]
        def get_init_inputs(): return []
        """,
    "zero_size_inputs": """
        KSTRATA = {"shapes": {"nominal": {"N": 8}, "small": [{"N": 0}, {"N": 3}], "sweep": [{"N": 0}]}}
        N = 8
        class Model(torch.nn.Module):
            def forward(self, x): return torch.relu(x)
        def get_inputs(): return [torch.randn(N, 4)]
        def get_init_inputs(): return []
        """,
    "python_scalar_input": """
        N = 5
        class Model(torch.nn.Module):
            def forward(self, x, alpha): return x * alpha
        def get_inputs(): return [torch.randn(N), 0.5]
        def get_init_inputs(): return []
        """,
}


@pytest.mark.parametrize("case", sorted(GOOD_TASKS))
def test_tasks_that_can_be_judged_still_load(tmp_path, case):
    task = resolve_task(str(_task(tmp_path, f"{case}.py", GOOD_TASKS[case])))
    assert task.name == case


def test_the_check_runs_the_smallest_shape_once_and_keeps_the_rng(tmp_path):
    path = _task(tmp_path, "counted.py", """
        KSTRATA = {"shapes": {"nominal": {"N": 64}, "small": [{"N": 9}, {"N": 2}], "sweep": [{"N": 64}]}}
        N = 64
        SEEN = []
        class Model(torch.nn.Module):
            def forward(self, x):
                with open(__file__ + ".log", "a") as f:
                    f.write(f"{x.shape[0]}\\n")
                return x
        def get_inputs(): return [torch.randn(N)]
        def get_init_inputs(): return []
        """)
    task = load_task(path)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    check_reference(task)
    check_reference(task)
    resolve_task(str(path))  # same text: cached
    assert torch.equal(torch.get_rng_state(), state)
    # twice at the smallest shape, on the same inputs: the second call checks the reference is a function
    # of them (tests/tasks/test_reference_deterministic.py); then cached
    assert Path(str(path) + ".log").read_text() == "2\n2\n"


def test_every_suite_task_passes_the_check_quickly():
    tasks = suite()
    assert len(tasks) >= 53
    t0 = time.perf_counter()
    for t in tasks:
        check_reference(t)
    assert time.perf_counter() - t0 < 20.0
    t0 = time.perf_counter()
    res = CliRunner().invoke(app, ["tasks", "list"])
    assert res.exit_code == 0 and f"{len(tasks)} tasks" in res.output
    assert time.perf_counter() - t0 < 5.0


# -- case 17: option values ------------------------------------------------------

@pytest.mark.parametrize("value", ["-1", "nan", "0", "inf"])
def test_eval_refuses_a_timeout_that_is_not_a_positive_number(tmp_path, value):
    cand = tmp_path / "cand.py"
    cand.write_text(RELU_CANDIDATE)
    res = CliRunner().invoke(app, ["eval", "relu", str(cand), "--backend", "pytorch", "--timeout", value,
                                   "--no-time"])
    _one_error_line(res, "error: --timeout ", "finite number > 0")


@pytest.mark.parametrize("args", [["eval", "relu", "CAND", "--timeout", "1e308", "--no-time"],
                                  ["baseline", "relu", "--timeout", "1e308"],
                                  ["mcp", "--max-wall", "1e308"]])
def test_a_time_limit_past_what_the_os_can_wait_is_refused(tmp_path, args):
    """``--timeout 1e308`` ended ``kstrata eval`` in an OverflowError traceback
    (a wait's timestamp out of range; red-team round of 2026-12-04)."""
    cand = tmp_path / "cand.py"
    cand.write_text(RELU_CANDIDATE)
    args = [str(cand) if a == "CAND" else a for a in args]
    res = CliRunner().invoke(app, args + (["--run", str(tmp_path / "r")] if args[0] == "mcp" else []))
    _one_error_line(res, f"error: {args[args.index('1e308') - 1]} ", "at most")


@pytest.mark.parametrize("value", ["-5", "0", "nan"])
def test_eval_and_baseline_refuse_a_bad_timing_budget(tmp_path, value):
    cand = tmp_path / "cand.py"
    cand.write_text(RELU_CANDIDATE)
    res = CliRunner().invoke(app, ["eval", "relu", str(cand), "--budget-ms", value])
    _one_error_line(res, "--budget-ms ")
    res = CliRunner().invoke(app, ["baseline", "relu", "--budget-ms", value])
    _one_error_line(res, "--budget-ms ")


@pytest.mark.parametrize("args", [["baseline", "relu", "--timeout", "-1"],
                                  ["baseline", "relu", "--timeout", "nan"],
                                  ["baseline", "relu", "--threads", "0"],
                                  ["mcp", "--max-wall", "nan"],
                                  ["mcp", "--max-wall", "-3"],
                                  ["mcp", "--workers", "0"],
                                  ["mcp", "--max-evaluations", "-1"],
                                  ["mcp", "--port", "70000"],
                                  ["optimize", "relu", "--lookahead", "-1"],
                                  ["bench", "--sample", "0"]])
def test_other_commands_refuse_bad_numbers(tmp_path, args):
    res = CliRunner().invoke(app, args + (["--run", str(tmp_path / "r")] if args[0] == "mcp" else [])
                             + (["--out", str(tmp_path / "b")] if args[0] == "bench" else []))
    _one_error_line(res, f"error: {args[-2]} ")
    assert not (tmp_path / "r").exists() and not (tmp_path / "b").exists()


BAD_BUDGETS = {
    "cost=nan": "finite", "wall=nan": "finite", "wall=inf": "finite", "evals=inf": "finite",
    "evals=10,evals=20": "evals=10 and evals=20 both set evaluations",
    "evals=10,evaluations=20": "both set evaluations",
    "roofline=5": "(0, 1]", "roofline=0": "(0, 1]", "patience=0": "at least 1",
    "bogus=1": "unknown", "evals": "KEY=VALUE", "evals=x": "must be a number, got 'x'",
    "evals=-1": "negative", "evals=1.5": "whole number", "wall=-3": "negative",
    ",": "no KEY=VALUE item", " , ,": "no KEY=VALUE item",  # ran with the defaults as if no --budget was given
}


@pytest.mark.parametrize("text", sorted(BAD_BUDGETS))
def test_both_budget_parsers_refuse_the_same_texts(text):
    with pytest.raises(BudgetError, match=BAD_BUDGETS[text].replace("(", r"\(").replace(")", r"\)")):
        parse_budget(text)
    with pytest.raises(OptionError, match="--budget"):
        cli_parse_budget(text)
    with pytest.raises(BenchError, match="--budget"):
        bench_parse_budget(text)


def test_both_budget_parsers_read_the_same_limits():
    text = "evals=3,wall=60,calls=4,tokens_in=100,tokens_out=7,cost=0.5,patience=2,roofline=0.8"
    given = cli_parse_budget(text)
    assert given == parse_budget(text) == {
        "evaluations": 3, "wall_clock_s": 60.0, "proposer_calls": 4, "tokens_in": 100, "tokens_out": 7,
        "cost_usd": 0.5, "patience": 2, "target_roofline": 0.8}
    b = bench_parse_budget(text)
    assert {k: getattr(b, k) for k in given} == given
    assert bench_parse_budget("wall=10").evaluations is None  # bench: unset limits stay unlimited
    assert all(isinstance(v, int) for k, v in given.items() if k not in ("wall_clock_s", "cost_usd",
                                                                       "target_roofline"))
    assert math.isfinite(b.cost_usd)


@pytest.mark.parametrize("text", ["cost=nan", "evals=10,evals=20", "roofline=5"])
def test_optimize_and_bench_refuse_a_bad_budget_before_starting(tmp_path, text):
    res = CliRunner().invoke(app, ["optimize", "relu", "--budget", text, "--out", str(tmp_path / "run")])
    _one_error_line(res, "error: --budget ")
    res = CliRunner().invoke(app, ["bench", "--budget", text, "--out", str(tmp_path / "bench")])
    _one_error_line(res, "error: --budget ")
    assert not (tmp_path / "run").exists() and not (tmp_path / "bench").exists()


# -- text the parser cannot take: nested too deeply, NUL bytes, too long ------------

UNPARSABLE = {
    "deep_unary": "x = " + "-" * 300_000 + "1\n",     # MemoryError inside ast.parse on 3.11
    "deep_sum": "x = " + "1+" * 200_000 + "1\n",        # RecursionError inside ast.parse
    "nul_byte": "x = 1\x00\n",                            # ValueError on 3.11
}


@pytest.mark.parametrize("case", sorted(UNPARSABLE))
def test_a_task_file_the_parser_cannot_take_is_one_error_line(tmp_path, case):
    task = tmp_path / f"task_{case}.py"
    task.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\n"
                    + UNPARSABLE[case])
    for args in (["tasks", "show", str(task)], ["eval", str(task), str(task), "--no-time"]):
        _one_error_line(CliRunner().invoke(app, args), f"task_{case}.py", "syntax error")
    with pytest.raises(TaskError, match="syntax error"):
        load_task(task)


@pytest.mark.parametrize("case", sorted(UNPARSABLE))
def test_a_kernel_file_the_parser_cannot_take_is_refused_in_one_line(tmp_path, case):
    # `import` and `optimize --initial` never parse a user's kernel in kstrata's process: a child
    # process parses it (kstrata.pysyntax.syntax_error_isolated), and hostile nesting is refused there
    kernel = tmp_path / f"k_{case}.py"
    kernel.write_text("import triton\nclass ModelNew:\n    pass\n" + UNPARSABLE[case])
    res = CliRunner().invoke(app, ["import", str(kernel), "--task", "relu", "--backend", "triton-interp",
                                   "--out", str(tmp_path / "out")])
    _one_error_line(res, f"k_{case}.py", "NUL byte" if case == "nul_byte" else "syntax error")
    assert not (tmp_path / "out").exists()


def test_a_formula_the_parser_cannot_take_is_a_formula_error():
    from kstrata.tasks.formula import FormulaError, check_formula, eval_formula

    deep = "(" * 100 + "N" + ")" * 100 + "+" + "1+" * 200_000 + "1"
    with pytest.raises(FormulaError, match="not valid Python arithmetic"):
        check_formula(deep)
    with pytest.raises(FormulaError, match="not valid Python arithmetic"):
        eval_formula(deep, {"N": 1.0})


def test_a_run_directory_that_is_a_file_is_refused_before_any_work(tmp_path):
    """``--out`` naming a file was a FileExistsError traceback from the secret's writer."""
    f = tmp_path / "a_file"
    f.write_text("mine")
    res = CliRunner().invoke(app, ["optimize", "relu", "--backend", "tvm-llvm", "--budget", "evals=1", "--out", str(f)])
    _one_error_line(res, f"error: --out {f}: exists and is not a directory")
    assert f.read_text() == "mine"


@pytest.mark.parametrize("option", ["--backend", "--secret"])
def test_eval_refuses_an_empty_backend_or_secret(tmp_path, option):
    """An empty value (an unset shell variable) was taken as 'not given': the default backend, or a random
    secret where the user meant a fixed one."""
    cand = tmp_path / "relu_new.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.relu(x)\n")
    args = ["eval", "relu", str(cand), "--no-time", option, ""]
    res = CliRunner().invoke(app, args if option == "--backend" else args + ["--backend", "pytorch"])
    _one_error_line(res, f"error: {option} is empty")

"""kstrata's own process never parses, imports or evaluates candidate text
(DESIGN.md, trust boundary; issue 16, case 01). A static scan of the modules
that run there (agents, search, serve, cli, report, bench, llm, store) for the
calls that would do it: TVMScript parsing, ``exec``/``eval``/``compile``,
imports by name, TVM lowering, schedule replay, MetaSchedule tuning and module
loading. Lowering for prompts and rebuilds, and the built-in proposer's rules
and tuning, go through :mod:`kstrata.backends.tvm.isolated` (a sandboxed
process) instead."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kstrata"
PARENT_PACKAGES = ("agents", "search", "serve", "cli", "report", "bench", "llm", "store")

#: bare names whose call evaluates or imports text
NAMES = {"exec", "eval", "compile", "__import__", "lower_graph", "replay_schedule", "schedule_variants",
         "from_source", "import_module", "run_path", "run_module", "load_llvm_ir", "import_module_from_path",
         "tune", "tune_tir", "parse_module"}
#: attribute calls that parse, evaluate, import or lower text (``x.eval()`` is torch's, ``re.compile`` a regex)
ATTRS = {"exec", "from_source", "exec_module", "import_module", "run_path", "run_module", "load_json",
         "load_llvm_ir", "lower", "scheduled_funcs", "generate_source", "materialize_schedule", "load_module",
         "replay_schedule", "schedule_variants", "lower_graph", "tune_tir"}
#: same-named functions that only edit text (regular expressions, JSON), never parse
#: or run it: a bare call is not flagged where every import of the name is from here
TEXT_ONLY = {("kstrata.backends.tilelang.tune_rules", "schedule_variants")}
#: ``tvm.script.parse(...)``-style dotted calls
DOTTED = {"tvm.script.parse", "tvm.script.from_source", "tvm.ir.load_json", "tvm.runtime.load_module",
          "ast.parse"}
#: parses of a TASK file's text (the user's reference, which the judge loads and runs; never a
#: candidate's): the public view of the reference that prompts and MCP clients are shown
TASK_TEXT = {("agents/prompt.py", "parse_module"), ("serve/public.py", "parse_module")}

#: Places known to still do it, owned elsewhere; each must go (``test_no_known_open_places_remain``).
KNOWN_OPEN: set[tuple[str, str]] = set()


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _own_module(call: ast.Call) -> bool:
    """``import_module("kstrata.x")`` or ``import_module(f"kstrata.cli.{name}")``:
    one of kstrata's own modules by name (the CLI's lazy subcommand table), a
    package module and never a file of candidate text."""
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if name != "import_module" or not call.args:
        return False
    arg = call.args[0]
    head = arg.values[0] if isinstance(arg, ast.JoinedStr) and arg.values else arg
    return isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith("kstrata.")


def _flagged(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    origins: dict[str, set[tuple[str, str]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                origins.setdefault(a.asname or a.name, set()).add((node.module or "", a.name))
    text_only = {n for n, o in origins.items() if o <= TEXT_ONLY}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out += [(node.lineno, f"import {m}") for m in mods if m == "tvm" or m.startswith("tvm.")]
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if _own_module(node):
            continue
        if isinstance(f, ast.Name) and f.id in NAMES and f.id not in text_only:
            out.append((node.lineno, f.id))
        elif isinstance(f, ast.Attribute):
            d = _dotted(f)
            if d in DOTTED:
                out.append((node.lineno, d))
            elif f.attr in ATTRS and not (f.attr == "lower" and not node.args):  # str.lower()
                out.append((node.lineno, f.attr))
    return out


def _scan() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for pkg in PARENT_PACKAGES:
        for path in sorted((SRC / pkg).rglob("*.py")):
            rel = path.relative_to(SRC).as_posix()
            for line, what in _flagged(ast.parse(path.read_text(), filename=rel)):
                found.setdefault((rel, what), []).append(line)
    return found


def test_the_scan_catches_the_case_01_calls():
    """The scan would have caught case 01 (and its obvious variants)."""
    src = ("import tvm\nfrom tvm.script import relax\n"
           "def f(backend, task, sources, text):\n"
           "    backend.lower(task, sources, task.nominal_shape)\n"
           "    tvm.script.from_source(text)\n    tvm.script.parse(text)\n"
           "    lower_graph(task, text, {})\n    replay_schedule({}, text)\n"
           "    exec(text)\n    eval(text)\n    compile(text, 'x', 'exec')\n    __import__(text)\n"
           "    importlib.import_module(text)\n    'A'.lower()\n    model.eval()\n    re.compile(text)\n"
           "    importlib.import_module(f'kstrata.cli.{name}')\n    importlib.import_module(f'{text}.x')\n"
           "    tune(task, {}, 'tvm-llvm', sources=sources)\n    ms.tune_tir(mod, 'llvm', 'w')\n"
           "    ast.parse(text)\n    parse_module(text)\n")
    got = sorted({w for _, w in _flagged(ast.parse(src))})
    # the TileLang moves (JSON and regular expressions) share a name with the TVM rules
    text = "from kstrata.backends.tilelang.tune_rules import schedule_variants\nschedule_variants(s, '', 't')\n"
    assert _flagged(ast.parse(text)) == []
    assert _flagged(ast.parse(text.replace("tilelang.tune_rules", "tvm.rules"))) == [(2, "schedule_variants")]
    assert got == sorted({"import tvm", "import tvm.script", "lower", "tvm.script.from_source",
                          "tvm.script.parse", "lower_graph", "replay_schedule", "exec", "eval", "compile",
                          "__import__", "import_module", "tune", "tune_tir", "ast.parse", "parse_module"})


def test_parent_modules_never_parse_or_evaluate_candidate_text():
    found = _scan()
    new = {k: v for k, v in found.items() if k not in KNOWN_OPEN | TASK_TEXT}
    assert not new, ("kstrata's own process must not parse/evaluate candidate text; lower it through "
                     "kstrata.backends.tvm.isolated (call_isolated) instead: "
                     + "; ".join(f"{p}:{lines} {w}" for (p, w), lines in sorted(new.items())))


def test_no_known_open_places_remain():
    assert not KNOWN_OPEN and not (set(_scan()) & KNOWN_OPEN)


def test_builtin_rules_and_tuning_go_through_the_sandbox():
    """The built-in TVM proposer (its candidates may be an LLM's) lowers, runs the
    rules on the schedule text and tunes only through ``schedule_expansion``."""
    tree = ast.parse((SRC / "agents" / "builtin.py").read_text())
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "TVMRulesProposer")
    assert {w for _, w in _flagged(cls)} == set()
    imports = {(n.module, a.name) for n in ast.walk(cls) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert ("kstrata.backends.tvm.tune", "tune") not in imports
    fn = next(n for n in ast.walk(cls) if isinstance(n, ast.FunctionDef) and n.name == "_schedule")
    assert "schedule_expansion" in ast.unparse(fn)


def test_level_context_and_replay_go_through_the_sandbox():
    """The two case-01 paths call the isolated helpers and nothing that lowers."""
    tree = ast.parse((SRC / "backends" / "tvm" / "backend.py").read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "level_context")
    assert {w for _, w in _flagged(fn)} == set()
    assert "primfunc_context" in ast.unparse(fn)
    tree = ast.parse((SRC / "agents" / "hierarchical.py").read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_replay")
    assert {w for _, w in _flagged(fn)} == set()
    assert "replay_in_sandbox" in ast.unparse(fn)
    # the replay both proposers use (the single LLM proposer's graph changes too)
    tree = ast.parse((SRC / "agents" / "llm_agent.py").read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "replay_in_sandbox")
    assert {w for _, w in _flagged(fn)} == set()
    assert "replay_after_graph_change" in ast.unparse(fn)


def test_task_text_parsers_parse_only_the_task_file():
    """The allowed parses in kstrata's process read ``task.source`` (the reference), nothing else."""
    for rel, _ in TASK_TEXT:
        tree = ast.parse((SRC / rel).read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "parse_module"]
        assert calls
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            if any(c in ast.walk(fn) for c in calls):
                assert fn.name in ("public_reference", "public_source", "_forward_params"), (rel, fn.name)
    # _forward_params (the reference forward's parameter names, queue round rt78) is reached from
    # drawn_inputs alone, and that only with the task's own text
    tree = ast.parse((SRC / "agents" / "prompt.py").read_text())
    users = {fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
             for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
             and c.func.id == "_forward_params"}
    assert users == {"drawn_inputs"}
    args = [ast.unparse(c.args[0]) for c in ast.walk(tree) if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Name) and c.func.id == "drawn_inputs"]
    assert args and set(args) == {"task.source"}

"""Safe evaluation of FLOP/byte formulas such as ``"2*M*N*K + M*N"``.

Only integer/float literals, shape-variable names, ``+ - * / // ** %``, unary
minus and the functions ``min``, ``max``, ``ceil``, ``floor``, ``log2`` are
allowed; the expression is parsed with :mod:`ast`, never ``eval``-ed.
"""

from __future__ import annotations

import ast
import math
import operator

from kstrata.pysyntax import parse_module

def _shift(op):
    """``op`` (a bit shift) of two whole numbers, which a size may be written with
    (``N = 1 << 20``, newcomer nc17); a fraction is refused."""
    def shifted(a: float, b: float) -> int:
        if not (float(a).is_integer() and float(b).is_integer() and b >= 0):
            raise FormulaError(f"a shift of {a} by {b}: shifts take whole numbers")
        return op(int(a), int(b))
    return shifted


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.LShift: _shift(operator.lshift),
    ast.RShift: _shift(operator.rshift),
}
_FUNCS = {"min": min, "max": max, "ceil": math.ceil, "floor": math.floor, "log2": math.log2}


class FormulaError(ValueError):
    """A formula that is not plain arithmetic over shape variables."""


def _walk(node: ast.AST, env: dict[str, float] | None, names: set[str]) -> float:
    if isinstance(node, ast.Expression):
        return _walk(node.body, env, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        names.add(node.id)
        if env is None:
            return 1
        if node.id not in env:
            raise FormulaError(f"unknown variable {node.id!r} (known: {sorted(env)})")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_walk(node.left, env, names), _walk(node.right, env, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_walk(node.operand, env, names)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
    ):
        args = [_walk(a, env, names) for a in node.args]
        return _FUNCS[node.func.id](*args)
    raise FormulaError(f"unsupported syntax {ast.dump(node)[:60]!r}")


def check_formula(expr: str) -> set[str]:
    """Validate ``expr`` and return the variable names it uses.

    Raises
    ------
    FormulaError
        If ``expr`` is not valid arithmetic in the allowed subset.
    """
    try:
        tree = parse_module(expr, mode="eval")
    except SyntaxError as e:
        raise FormulaError(f"formula {expr!r} is not valid Python arithmetic: {e.msg}") from None
    names: set[str] = set()
    try:
        _walk(tree, None, names)
    except ZeroDivisionError:
        pass
    names -= set(_FUNCS)
    return names


def eval_formula(expr: str, env: dict[str, float]) -> float:
    """Evaluate ``expr`` with shape variables bound from ``env``.

    Raises
    ------
    FormulaError
        On disallowed syntax or a variable missing from ``env``.
    """
    try:
        tree = parse_module(expr, mode="eval")
    except SyntaxError as e:
        raise FormulaError(f"formula {expr!r} is not valid Python arithmetic: {e.msg}") from None
    return float(_walk(tree, env, set()))

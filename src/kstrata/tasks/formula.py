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

#: The largest exponent of a power and the largest shift a formula may hold: an integer ``N ** N ** N``
#: (or ``1 << 10**9``) is exact arithmetic that ran without end, holding the CPU and growing memory,
#: where a task's flops formula was evaluated (red-team rt59). No count of FLOPs or bytes needs more.
MAX_EXPONENT = 1024


def _shift(op):
    """``op`` (a bit shift) of two whole numbers, which a size may be written with
    (``N = 1 << 20``, newcomer nc17); a fraction, or a shift past :data:`MAX_EXPONENT`, is refused."""
    def shifted(a: float, b: float) -> int:
        if not (float(a).is_integer() and float(b).is_integer() and b >= 0):
            raise FormulaError(f"a shift of {a} by {b}: shifts take whole numbers")
        if b > MAX_EXPONENT:
            raise FormulaError(f"a shift by {_short(b)}: more than {MAX_EXPONENT} bits")
        return op(int(a), int(b))
    return shifted


def _short(x: float) -> str:
    """``x`` for a message; a huge whole number by its size (its digits cannot all be printed)."""
    if isinstance(x, int) and x.bit_length() > 64:
        return f"about 2**{x.bit_length()}"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _power(a: float, b: float) -> float:
    """``a ** b`` with an exponent of at most :data:`MAX_EXPONENT` in size, exact for whole numbers."""
    if abs(b) > MAX_EXPONENT:
        raise FormulaError(f"a power {_short(a)} ** {_short(b)}: the exponent is over {MAX_EXPONENT}")
    return operator.pow(a, b)


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: _power,
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
    except (ArithmeticError, TypeError, ValueError) as e:
        if isinstance(e, FormulaError):  # a power or shift too large for any count
            raise FormulaError(f"formula {expr!r}: {e}") from None
        # with every variable 1, a division by (N - 1) or log2(N - 1) fails: the syntax is what is checked
    names -= set(_FUNCS)
    return names


def eval_formula(expr: str, env: dict[str, float]) -> float:
    """Evaluate ``expr`` with shape variables bound from ``env``.

    Raises
    ------
    FormulaError
        On disallowed syntax, a variable missing from ``env``, or arithmetic
        without a finite value there (a division by zero, ``log2(0)``, an
        overflow, a power or shift over :data:`MAX_EXPONENT`): a
        ``ZeroDivisionError`` ended ``kstrata eval`` in a traceback (red-team rt59).
    """
    try:
        tree = parse_module(expr, mode="eval")
    except SyntaxError as e:
        raise FormulaError(f"formula {expr!r} is not valid Python arithmetic: {e.msg}") from None
    try:
        value = float(_walk(tree, env, set()))
    except FormulaError as e:
        raise FormulaError(f"formula {expr!r} at {env}: {e}") from None
    except (ArithmeticError, TypeError, ValueError) as e:
        raise FormulaError(f"formula {expr!r} at {env}: {type(e).__name__}: {e}") from None
    if not math.isfinite(value):
        raise FormulaError(f"formula {expr!r} at {env} is {value}, not a finite number")
    return value

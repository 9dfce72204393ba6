"""Arithmetic for the model's calculator tool, parsed with ``ast`` and evaluated node by
node over a whitelist — never ``eval``. Numbers, + − × ÷ // % **, parentheses, a few math
functions and constants; sizes are capped so no expression can hang the server."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any


class CalculatorError(ValueError):
    """An expression the calculator will not evaluate (the message says why)."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt, "log": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "abs": abs, "round": round,
    "floor": math.floor, "ceil": math.ceil, "min": min, "max": max,
}  # fmt: skip
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
MAX_LENGTH = 300
MAX_MAGNITUDE = 1e300


def calculate(expression: str) -> int | float:
    """The value of ``expression`` (raises :class:`CalculatorError`)."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculatorError("give an arithmetic expression, e.g. 12 * (3 + 4)")
    if len(expression) > MAX_LENGTH:
        raise CalculatorError(f"the expression is longer than {MAX_LENGTH} characters")
    text = expression.replace("×", "*").replace("÷", "/").replace("^", "**").replace("−", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)  # 1,000,000 → 1000000; f(1, 2) stays
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise CalculatorError(f"cannot read {expression!r} as arithmetic") from None
    try:
        value = _evaluate(tree.body)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except (OverflowError, ValueError, TypeError) as exc:
        raise CalculatorError(f"cannot compute that: {exc}") from None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 1000 or (abs(left) > 1e6 and abs(right) > 20)):
            raise CalculatorError("that power is too large")
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and len(node.args) <= 10
    ):
        return _checked(_FUNCTIONS[node.func.id](*(_evaluate(a) for a in node.args)))
    raise CalculatorError(f"{ast.unparse(node)!r} is not allowed; use numbers, + - * / // % ** and "
                          f"{', '.join(sorted(_FUNCTIONS))}")  # fmt: skip


def _checked(value: Any) -> Any:
    if isinstance(value, complex):
        raise CalculatorError("the result is not a real number")
    if isinstance(value, (int, float)) and abs(value) > MAX_MAGNITUDE:
        raise CalculatorError("the result is too large")
    return value

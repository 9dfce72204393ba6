"""The calculator tool: arithmetic without eval, and everything else refused."""

from __future__ import annotations

import math

import pytest

from vaultseek.study.calculator import CalculatorError, calculate


@pytest.mark.parametrize(
    ("expression", "value"),
    [("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("2 ** 10", 1024), ("2^8", 256), ("7 // 2", 3), ("7 % 4", 3),
     ("-3 + +4", 1), ("10 / 4", 2.5), ("sqrt(16)", 4), ("max(3, 9, 4)", 9), ("round(2.567, 2)", 2.57),
     ("1,000 * 3", 3000), ("6 × 7", 42), ("9 ÷ 3", 3), ("pi", math.pi), ("log10(1000)", 3)],
)  # fmt: skip
def test_arithmetic(expression: str, value: float) -> None:
    assert calculate(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    "expression",
    ["__import__('os').system('true')", "open('/etc/passwd')", "().__class__", "x", "lambda: 1",
     "[1, 2]", "'a' * 3", "1 if 1 else 2", "9 ** 9 ** 9", "10 ** 5000", "1 / 0", "sqrt(-1)",
     "", "1 +", "max(*[1])", "e.__class__", "2 ** 0.5 ** 999999", "1" * 400],
)  # fmt: skip
def test_refuses_everything_else(expression: str) -> None:
    with pytest.raises(CalculatorError):
        calculate(expression)

"""calculator: exact arithmetic, and refusal of anything that is not arithmetic."""

from __future__ import annotations

import pytest

from config import load_settings
from tools.compute.calculator import CalculatorError, evaluate, format_result, make_calculator_tools
from tools.core.executor import run_tool


@pytest.mark.parametrize(("expression", "expected"), [
    ("2**10 + 7", "1031"), ("2^10", "1024"), ("(1500 - 350) * 0.15", "172.5"), ("7 // 2", "3"),
    ("7 % 3", "1"), ("-3 + +2", "-1"), ("sqrt(16)", "4"), ("log(100, 10)", "2"), ("round(2.675, 2)", "2.67"),
    ("max(3, 9, 4)", "9"), ("factorial(10)", "3628800"), ("0.1 + 0.2", "0.3"), ("pi * 2", "6.28318530718"),
    ("1 < 2 < 3", "True"), ("gcd(12, 18)", "6"), ("3 × 4 ÷ 2", "6"), ("10**20", "100000000000000000000"),
    ("2**10000 > 0", "True"),
])
def test_arithmetic(expression: str, expected: str) -> None:
    assert format_result(evaluate(expression)) == expected


@pytest.mark.parametrize("expression", [
    "__import__('os').system('echo hi')",       # a call outside the whitelist
    "open('/etc/passwd').read()",
    "(1).__class__.__bases__",                   # attribute walk
    "().__class__.__base__.__subclasses__()",
    "x + 1",                                     # unknown name
    "os",
    "[1, 2, 3]",                                 # not arithmetic
    "{'a': 1}",
    "'abc' * 3",                                 # strings
    "lambda: 1",
    "(lambda: 1)()",
    "sqrt.__self__",
    "a if 1 else 2",
    "[x for x in range(10)]",
    "sqrt(x=4)",                                 # keyword arguments
    "True + 1",                                  # booleans are not numbers here
    "9**9**9",                                   # huge exponent
    "2**100000",
    "10**10**10",
    "(10**4000) * (10**4000) * (10**4000) * (10**4000) * (10**4000)",
    "factorial(100000)",
    "1/0",
    "1e308 * 1e308 ** 2",
    "",
    "2 +",
    "x" * 3000,
])
@pytest.mark.timeout(60)  # refused before any expensive work: 9**9**9 computed would never end
def test_refuses(expression: str) -> None:
    with pytest.raises(CalculatorError) as info:
        evaluate(expression)
    assert str(info.value)  # every refusal says why


def test_the_tool_reports_refusals_as_observations() -> None:
    settings = load_settings()
    [calculator] = make_calculator_tools(settings)
    ok = run_tool(calculator, {"expression": "6*7"}, settings)
    assert (ok.output, ok.ok) == ("42", True)
    bad = run_tool(calculator, {"expression": "__import__('os')"}, settings)
    assert not bad.ok and bad.output.startswith("Error:") and "not allowed" in bad.output
    assert bad.error_kind == "bad_arguments"


def test_docstring_is_the_schema() -> None:
    [calculator] = make_calculator_tools(load_settings())
    assert calculator.name == "calculator"
    assert list(calculator.args) == ["expression"]
    assert "arithmetic" in calculator.description


def test_runs_inline_in_the_callers_thread() -> None:
    import threading

    from langchain_core.tools import tool

    settings = load_settings()
    [calculator] = make_calculator_tools(settings)
    assert calculator.metadata == {"inline": True}
    seen: list[str] = []

    @tool
    def where(x: str) -> str:
        """Report the thread.

        Args:
            x: Ignored.
        """
        seen.append(threading.current_thread().name)
        return "ok"

    run_tool(where, {"x": "1"}, settings)
    where.metadata = {"inline": True}
    run_tool(where, {"x": "1"}, settings)
    assert seen[0] != threading.current_thread().name and seen[1] == threading.current_thread().name

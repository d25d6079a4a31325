"""calculator: exact arithmetic over a parsed expression tree, never `eval`.

Only numbers, arithmetic operators, comparisons and a whitelist of `math` functions and constants are
accepted; names, attributes, subscripts, lambdas and any other call are refused with a message. Huge
powers and factorials are refused before they are computed, so a single call cannot hang the worker.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any, cast

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.errors import ToolFailure

MAX_EXPONENT = 10_000
MAX_BASE_FOR_BIG_EXPONENT = 2 ** 64
MAX_FACTORIAL = 5_000
MAX_DIGITS = 5_000
MAX_LENGTH = 2_000

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs, "round": round, "min": min, "max": max, "int": int, "float": float,
    **{name: getattr(math, name) for name in (
        "sqrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
        "sinh", "cosh", "tanh", "degrees", "radians", "floor", "ceil", "trunc", "fabs", "hypot",
        "gcd", "lcm", "comb", "perm", "isqrt", "factorial")},
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf}


class CalculatorError(ToolFailure):
    """The expression is not plain arithmetic, or too big to compute safely."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "bad_arguments")


def evaluate(expression: str) -> int | float | bool:
    """Evaluate an arithmetic expression safely (see the module docstring for what is allowed)."""
    text = (expression or "").strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    if not text:
        raise CalculatorError("empty expression. Pass arithmetic such as '2**10 + 7'.")
    if len(text) > MAX_LENGTH:
        raise CalculatorError(f"expression longer than {MAX_LENGTH} characters. Use run_python for big computations.")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"cannot parse {text!r}: {exc.msg}. Use numbers, + - * / // % **, parentheses "
                              "and math functions like sqrt(2).") from None
    return cast("int | float | bool", _eval(tree.body))


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CalculatorError(f"only numbers are allowed, not {node.value!r}.")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        if isinstance(node.op, ast.Mult) and _is_big(left) and _is_big(right):
            raise CalculatorError("result would be too large. Use run_python for big-number arithmetic.")
        try:
            return _limit(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculatorError("division by zero.") from None
        except OverflowError:
            raise CalculatorError("result overflows a float. Use run_python with integers or decimal.") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _eval(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise CalculatorError(f"unknown name {node.id!r}. Allowed constants: {', '.join(CONSTANTS)}.")
    if isinstance(node, ast.Call):
        return _call(node)
    raise CalculatorError(f"{type(node).__name__} is not arithmetic. Only numbers, operators, parentheses and "
                          f"these functions are allowed: {', '.join(sorted(FUNCTIONS))}.")


def _call(node: ast.Call) -> Any:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        shown = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
        raise CalculatorError(f"function {shown!r} is not allowed. Allowed: {', '.join(sorted(FUNCTIONS))}.")
    if node.keywords:
        raise CalculatorError("keyword arguments are not allowed; pass positional numbers.")
    args = [_eval(a) for a in node.args]
    name = node.func.id
    if name in ("factorial", "comb", "perm") and any(isinstance(a, (int, float)) and a > MAX_FACTORIAL for a in args):
        raise CalculatorError(f"{name} argument above {MAX_FACTORIAL} is too large. Use run_python.")
    try:
        return _limit(FUNCTIONS[name](*args))
    except (ValueError, TypeError) as exc:
        raise CalculatorError(f"{name}{tuple(args)}: {exc}.") from None
    except OverflowError:
        raise CalculatorError(f"{name} overflows a float.") from None


def _check_power(base: Any, exponent: Any) -> None:
    if isinstance(exponent, (int, float)) and abs(exponent) > MAX_EXPONENT and abs(base) not in (0, 1):
        raise CalculatorError(f"exponent {exponent} is too large (limit {MAX_EXPONENT}). Use run_python.")
    if isinstance(exponent, (int, float)) and abs(exponent) > 64 and abs(base) > MAX_BASE_FOR_BIG_EXPONENT:
        raise CalculatorError("power would be too large. Use run_python for big-number arithmetic.")


def _is_big(value: Any) -> bool:
    return isinstance(value, int) and value.bit_length() > 10_000


def _limit(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_DIGITS * 3.33:
        raise CalculatorError(f"result has more than {MAX_DIGITS} digits. Use run_python for big numbers.")
    return value


def format_result(value: Any) -> str:
    """Print a result the way a person would: integers exact, floats without float noise."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(round(value, 12))
    return str(value)


def make_calculator_tools(settings: Settings) -> list[BaseTool]:
    """The calculator tool (no prerequisites)."""

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression exactly and return the result.

        Use it for any arithmetic instead of computing in your head. Supports + - * / // % ** (or ^),
        parentheses, comparisons, the constants pi, e, tau, and the functions sqrt, exp, log (natural;
        log(x, base) too), log10, log2, sin, cos, tan, asin, acos, atan, atan2, degrees, radians, floor,
        ceil, round, abs, min, max, hypot, gcd, lcm, comb, perm, factorial, isqrt.

        Args:
            expression: The arithmetic to evaluate, e.g. "(1500 - 350) * 0.15" or "sqrt(2) * 10**3".
        """
        return format_result(evaluate(expression))

    calculator.metadata = {"inline": True}  # pure and bounded (limits above): run_tool skips the worker thread
    return [calculator]

"""The two kinds of tool failure the executor knows: what the model can act on, and what is not installed.

Any other exception a tool raises is a bug: the executor logs it with its traceback, shows it in the
trace as an internal error, and (under tests) raises it.
"""

from __future__ import annotations

import importlib
from typing import Literal

ErrorKind = Literal[
    # the model's input
    "bad_arguments", "unknown_tool", "unsupported_type", "wrong_tool",
    # files
    "missing_file", "empty_file", "corrupt_file", "encrypted", "not_allowed", "size_limit",
    # the web and services
    "blocked", "http_error", "network_error", "empty_page", "no_results", "not_found",
    # models and dependencies
    "model_error", "missing_model", "missing_dependency",
    # run_python exit reasons
    "timeout", "memory", "output_limit", "file_size", "disk", "signal", "exit_code", "error",
    # the executor's own verdicts
    "reported", "internal", "failed",
]
"""Why a tool call did not succeed (ToolResult.error_kind). Add a member here before raising a new one."""


class ToolFailure(Exception):
    """A failure the model can act on: `kind` classifies it, the message says what to try next."""

    def __init__(self, message: str, kind: ErrorKind = "failed") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


class MissingDependency(Exception):
    """A factory's prerequisite is absent; `tools` are the names it would have provided, `reason` the fix."""

    def __init__(self, tools: list[str], reason: str) -> None:
        super().__init__(reason)
        self.tools = tools
        self.reason = reason


def require_modules(tools: list[str], install: str, *modules: str) -> None:
    """MissingDependency for `tools` unless every one of `modules` imports; `install` is the command that adds them."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingDependency(tools, f"{module} is not installed ({exc}); run `{install}`.") from None

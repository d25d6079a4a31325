"""context_tool: LangChain's `@tool` for a function that takes the run's ToolContext as its first argument.

A tool that needs its run (files, workspace, page cache, browser, model client) is written

    @context_tool
    def read_file(_ctx: ToolContext, path: str, page: int = 1) -> str:

and the model sees exactly what plain `@tool` would show for `read_file(path, page=1)`: the same name,
arguments, docstring and schema. LangChain calls a wrapper that takes its injected `config` (never shown
to the model) and hands the function `ToolContext.of(config)`: the run's context, or an unconfined one
for a call made outside a run (`python -m tools call`, a test invoking the tool bare).

The underscore is what keeps the docstring honest: pydocstyle (D417) leaves `_` arguments out, so it
checks that every argument the model sees is described under `Args:`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, overload

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from tools.core.context import ToolContext

P = ParamSpec("P")
R = TypeVar("R")
ResponseFormat = Literal["content", "content_and_artifact"]

_CONFIG = inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, annotation=RunnableConfig)


@overload
def context_tool(fn: Callable[Concatenate[ToolContext, P], R], /) -> BaseTool: ...


@overload
def context_tool(*, response_format: ResponseFormat = "content"
                 ) -> Callable[[Callable[Concatenate[ToolContext, P], R]], BaseTool]: ...


def context_tool(fn: Callable[Concatenate[ToolContext, P], R] | None = None, /, *,
                 response_format: ResponseFormat = "content"
                 ) -> BaseTool | Callable[[Callable[Concatenate[ToolContext, P], R]], BaseTool]:
    """The tool of `fn`, whose first argument is the run's ToolContext; `response_format` as for `@tool`."""

    def make(function: Callable[Concatenate[ToolContext, P], R]) -> BaseTool:
        return tool(_taking_config(function), response_format=response_format)

    return make if fn is None else make(fn)


def _taking_config(fn: Callable[..., R]) -> Callable[..., R]:
    """`fn` as LangChain reads it: the model's arguments, then `config` (injected) in place of the context."""
    context, *model_args = inspect.signature(fn).parameters.values()

    def call(*args: Any, config: RunnableConfig, **kwargs: Any) -> R:
        return fn(ToolContext.of(config), *args, **kwargs)

    # LangChain builds the schema from the signature and type hints, and injects the RunnableConfig into the
    # argument annotated with it; the hints' names resolve in fn's module through `__wrapped__`.
    shown: Any = functools.wraps(fn)(call)  # `call` itself, with fn's name, docstring and module
    shown.__signature__ = inspect.signature(fn).replace(parameters=[*model_args, _CONFIG])
    shown.__annotations__ = {name: hint for name, hint in fn.__annotations__.items() if name != context.name}
    shown.__annotations__["config"] = RunnableConfig
    return call

"""The agent's tools: a registry of imported factories, a typed context per run, one executor.

The wings: core (registry, specs, context, executor, workspace, paging), documents, web, search,
browser, media, isolation (the sandbox and the budgeted worker), compute.

Public names are imported on first use (PEP 562) so that light modules such as `tools.core.errors`
load without langchain.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # `X as X` marks an explicit re-export (PEP 484) of the lazily loaded names below.
    from tools.core.context import ToolContext as ToolContext
    from tools.core.context import ToolModel as ToolModel
    from tools.core.errors import ErrorKind as ErrorKind
    from tools.core.errors import MissingDependency as MissingDependency
    from tools.core.errors import ToolFailure as ToolFailure
    from tools.core.executor import run_tool as run_tool
    from tools.core.outcome import ToolOutcome as ToolOutcome
    from tools.core.registry import FACTORIES as FACTORIES
    from tools.core.registry import ToolFactory as ToolFactory
    from tools.core.registry import ToolRegistry as ToolRegistry
    from tools.core.registry import ToolTier as ToolTier
    from tools.core.registry import build_registry as build_registry
    from tools.core.workspace import Workspace as Workspace
    from tools.core.workspace import open_workspace as open_workspace

_HOME = {
    **dict.fromkeys(["ToolContext", "ToolModel"], "tools.core.context"),
    **dict.fromkeys(["ErrorKind", "MissingDependency", "ToolFailure"], "tools.core.errors"),
    "ToolOutcome": "tools.core.outcome",
    "run_tool": "tools.core.executor",
    **dict.fromkeys(["FACTORIES", "ToolFactory", "ToolRegistry", "ToolTier", "build_registry"], "tools.core.registry"),
    **dict.fromkeys(["Workspace", "open_workspace"], "tools.core.workspace"),
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module 'tools' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)

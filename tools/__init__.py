"""The agent's tools: a registry of imported factories, a typed context per run, one executor.

Public names are imported on first use (PEP 562) so that light modules such as `tools.errors`
load without langchain.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # `X as X` marks an explicit re-export (PEP 484) of the lazily loaded names below.
    from tools.context import ToolContext as ToolContext
    from tools.context import ToolModel as ToolModel
    from tools.errors import ErrorKind as ErrorKind
    from tools.errors import MissingDependency as MissingDependency
    from tools.errors import ToolFailure as ToolFailure
    from tools.executor import ToolOutcome as ToolOutcome
    from tools.executor import run_tool as run_tool
    from tools.registry import FACTORIES as FACTORIES
    from tools.registry import ToolFactory as ToolFactory
    from tools.registry import ToolRegistry as ToolRegistry
    from tools.registry import ToolTier as ToolTier
    from tools.registry import build_registry as build_registry
    from tools.workspace import Workspace as Workspace
    from tools.workspace import open_workspace as open_workspace

_HOME = {
    **dict.fromkeys(["ToolContext", "ToolModel"], "tools.context"),
    **dict.fromkeys(["ErrorKind", "MissingDependency", "ToolFailure"], "tools.errors"),
    **dict.fromkeys(["ToolOutcome", "run_tool"], "tools.executor"),
    **dict.fromkeys(["FACTORIES", "ToolFactory", "ToolRegistry", "ToolTier", "build_registry"], "tools.registry"),
    **dict.fromkeys(["Workspace", "open_workspace"], "tools.workspace"),
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module 'tools' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)

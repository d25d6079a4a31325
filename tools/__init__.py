"""The agent's tools: a registry of imported factories, a typed context per run, one executor.

Public names are imported on first use (PEP 562) so that light modules such as `tools.errors`
load without langchain.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.context import ToolContext, ToolModel
    from tools.errors import ErrorKind, MissingDependency, ToolFailure
    from tools.executor import ToolOutcome, run_tool
    from tools.registry import FACTORIES, ToolFactory, ToolRegistry, ToolTier, build_registry
    from tools.workspace import Workspace, open_workspace

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

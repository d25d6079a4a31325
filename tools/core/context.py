"""ToolContext: everything a tool call knows about the run it belongs to, as one typed object.

The graph makes it once per run (`ToolContext.to_config()` puts it into the LangChain
`RunnableConfig`); a tool declared with `context_tool` (tools.core.context_tool) receives it as its first
argument, and the executor reads it with `ToolContext.of(config)`; nothing else builds or reads
`configurable` by hand. The run's shared objects (workspace, page cache, browser, downloads) are
its `RunServices` (`ctx.services`). A call made outside a run (`python -m tools call`, a test invoking a
tool directly) gets an unconfined context with the process's services.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tools.core.services import RunServices, process_services
from tools.core.workspace import Workspace

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig

    from models.client import CallResult
    from models.endpoint import Role
    from models.model_client import Purpose
    from tools.core.replay_cache import ToolCache

CONFIG_KEY = "tool_context"


class ToolModel(Protocol):
    """The run's model client as tools see it (models.ModelClient): retries, the shared gate, token counts."""

    def invoke(self, messages: Sequence[BaseMessage], *, purpose: Purpose = "tool",
               model_name: str | None = None, role: Role = "agent") -> CallResult:
        """Send `messages` to `role`'s endpoint (`model_name`, default the agent's model); the reply with its usage."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """The run a tool call belongs to: its files, its workspace, what it may open, its model client."""

    attachments: tuple[Path, ...] = ()
    """Absolute paths of the task's attachments."""
    task_id: str | None = None
    """The task being solved (rag_search leaves its own stored entry out)."""
    run_services: RunServices | None = field(default=None, compare=False)
    """The run's workspace and shared objects; None outside a run (the process's are used then)."""
    readable: tuple[Path, ...] = ()
    """Further files or folders the run may open (the app session's own uploads)."""
    confined: bool = False
    """True in app sessions and batch runs: file tools open only attachments, `readable` and the workspace."""
    model: ToolModel | None = field(default=None, compare=False)
    """The run's model client, for tools that call a model (vision, video descriptions)."""
    tool_cache: ToolCache | None = field(default=None, compare=False)
    """The run's tool-result cache (tools.core.replay_cache): calls kept, matching ones replayed; None = live only."""

    @property
    def services(self) -> RunServices:
        """The run's services, or the process's for calls made outside a run."""
        return self.run_services if self.run_services is not None else process_services()

    @property
    def workspace(self) -> Workspace | None:
        """The run's own directory; None outside a run."""
        return self.run_services.workspace if self.run_services is not None else None

    @property
    def work(self) -> Workspace:
        """The run's workspace, or the process workspace for calls made outside a run."""
        return self.services.workspace

    def to_config(self) -> RunnableConfig:
        """The RunnableConfig that hands this context to tools."""
        return {"configurable": {CONFIG_KEY: self}}

    @classmethod
    def of(cls, config: RunnableConfig | dict[str, Any] | None) -> ToolContext:
        """The context in `config`; an unconfined one (attachments and task id if given) when there is none."""
        configurable = (config or {}).get("configurable") or {}
        found = configurable.get(CONFIG_KEY)
        if isinstance(found, ToolContext):
            return found
        # Callers outside a run (the tools CLI, benchmarks) may pass plain attachment paths.
        return cls(attachments=tuple(Path(p) for p in configurable.get("attachments") or ()),
                   task_id=configurable.get("task_id"))

    def allows(self, path: Path) -> bool:
        """Whether a confined run may open `path` (resolved, so a symlink pointing out is judged by its target)."""
        if not self.confined:
            return True
        target = path.resolve()
        if any(target == a.resolve() for a in self.attachments):
            return True
        if self.workspace is not None and self.workspace.contains(target):
            return True
        for root in self.readable:
            root = root.resolve()
            if target == root or target.is_relative_to(root):
                return True
        return False

"""The orchestrator's one tool: `delegate(worker, task)`, a fresh worker loop whose final message is the report.

Built per run (its closure runs the delegation inside that run). The schema names all four roles; a role
left without tools is not on the team, the tool's description lists who is, and a call to anyone else
is refused with an observation naming the workers there are.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Annotated, Literal

from langchain_core.tools import BaseTool, InjectedToolCallId, tool

from tools.core.specs import Role

WorkerName = Literal["researcher", "browser", "reader", "coder"]
"""The `worker` argument's values (the contract; the same names as `tools.core.specs.Role`)."""

Delegation = Callable[[Role, str, str], str]
"""`(worker, task, call_id) -> report`: runs one delegation inside the current run."""


def make_delegate_tool(team: Collection[Role], run: Delegation) -> BaseTool:
    """The `delegate` tool of one run: `team` are the workers offered, `run` carries a delegation out."""

    @tool(parse_docstring=True)
    def delegate(worker: WorkerName, task: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Give one sub-task to a worker of your team; its report comes back as the result.

        The worker starts fresh and sees only your task and the attachments' paths: write everything it needs
        (names, dates, URLs, file paths) and what to report. Several delegate calls in one turn run at the
        same time.

        Args:
            worker: who does it: researcher (web search, web pages, Wikipedia, archives, papers, maps),
                browser (operates web pages in a real browser), reader (attached files of any type),
                coder (Python and the calculator).
            task: the self-contained instruction: what to find, read or compute, and what to report back.
            tool_call_id: set by the harness (the call's id), not part of the schema.
        """
        if worker not in team:
            others = ", ".join(team) or "none"
            return (f"Error: there is no {worker} on this team (its tools are not installed). "
                    f"Delegate to one of: {others}.")
        if not task.strip():
            return "Error: the task is empty. Call delegate again with a self-contained instruction."
        return run(worker, task, tool_call_id)

    delegate.description += f"\n\nWorkers on this team: {', '.join(team) or 'none'}."
    return delegate

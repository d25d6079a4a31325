"""The agent: one pipeline (router → RAG short-circuit → LangGraph loop → answer extraction).

Callers use `Pipeline(settings, app=...).stream(...)` / `.solve(...)`, or the module-level `stream` /
`solve`, each call on an application of its own built from `load_settings()`. Names are imported on first use, so that
`agent.events` (the typed trace) loads without langchain: the UI renders events before the preload.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # `X as X` marks an explicit re-export (PEP 484) of the lazily loaded names below.
    from agent.answer import extract_answer as extract_answer
    from agent.answer import extract_final_answer as extract_final_answer
    from agent.events import AnswerExtracted as AnswerExtracted
    from agent.events import ErrorEvent as ErrorEvent
    from agent.events import Event as Event
    from agent.events import HistoryTrimmed as HistoryTrimmed
    from agent.events import IterationCap as IterationCap
    from agent.events import ModelCall as ModelCall
    from agent.events import RagLookup as RagLookup
    from agent.events import Retry as Retry
    from agent.events import RouteDecided as RouteDecided
    from agent.events import Solution as Solution
    from agent.events import ToolCall as ToolCall
    from agent.events import ToolResult as ToolResult
    from agent.events import TraceEvent as TraceEvent
    from agent.events import event_from_dict as event_from_dict
    from agent.pipeline import Pipeline as Pipeline
    from agent.pipeline import solve as solve
    from agent.pipeline import stream as stream

_HOME = {
    **dict.fromkeys(["AnswerExtracted", "ErrorEvent", "Event", "HistoryTrimmed", "IterationCap", "ModelCall",
                     "RagLookup", "Retry",
                     "RouteDecided", "Solution", "ToolCall", "ToolResult", "TraceEvent", "event_from_dict"],
                    "agent.events"),
    **dict.fromkeys(["extract_answer", "extract_final_answer"], "agent.answer"),
    **dict.fromkeys(["Pipeline", "solve", "stream"], "agent.pipeline"),
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)

"""The agent: one pipeline (router → RAG short-circuit → LangGraph loop → answer extraction).

Callers use `Pipeline(settings).stream(...)` / `.solve(...)`, or the module-level `stream` / `solve`
over a default pipeline built from `get_settings()`.
"""

from agent.answer import extract_answer, extract_final_answer
from agent.events import (
    AnswerExtracted,
    ErrorEvent,
    Event,
    IterationCap,
    ModelCall,
    RagLookup,
    Retry,
    RouteDecided,
    Solution,
    ToolCall,
    ToolResult,
    event_from_dict,
)
from models.client import RequestGate, build_chat_model
from agent.pipeline import Pipeline, default_pipeline, solve, stream

__all__ = [
    "AnswerExtracted",
    "ErrorEvent",
    "Event",
    "IterationCap",
    "ModelCall",
    "Pipeline",
    "RagLookup",
    "RequestGate",
    "Retry",
    "RouteDecided",
    "Solution",
    "ToolCall",
    "ToolResult",
    "build_chat_model",
    "default_pipeline",
    "event_from_dict",
    "extract_answer",
    "extract_final_answer",
    "solve",
    "stream",
]

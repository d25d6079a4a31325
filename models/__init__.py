"""The one model-client layer: build the chat model, call it with retries and the shared gate,
classify failures, count tokens. Used by the agent loop, the RAG hints and every tool that calls a model.
"""

from models.client import (
    CallResult,
    Failure,
    LLMCallError,
    OpenGate,
    RequestGate,
    build_chat_model,
    call_model,
    classify_failure,
    make_text_llm,
    parse_retry_after,
    token_usage,
)
from models.messages import message_text

__all__ = [
    "CallResult",
    "Failure",
    "LLMCallError",
    "OpenGate",
    "RequestGate",
    "build_chat_model",
    "call_model",
    "classify_failure",
    "make_text_llm",
    "message_text",
    "parse_retry_after",
    "token_usage",
]

"""The one model-client layer: build, call with retries and the shared gate, classify, count, check.

Used by the agent loop, the RAG hints and every tool that calls a model (through `ModelClient`).
"""

from models.client import (
    CallResult,
    LLMCallError,
    OpenGate,
    RequestGate,
    ResponseInfo,
    build_chat_model,
    call_model,
    token_usage,
)
from models.endpoint import Endpoint, EndpointMonitor, EndpointState, Role, endpoint_for, separate_vision_endpoint
from models.failures import Failure, FailureKind, classify_failure, next_delay, parse_retry_after
from models.messages import message_text
from models.model_client import ChatModels, ModelClient, Purpose

__all__ = [
    "CallResult",
    "ChatModels",
    "Endpoint",
    "EndpointMonitor",
    "EndpointState",
    "Failure",
    "FailureKind",
    "LLMCallError",
    "ModelClient",
    "OpenGate",
    "Purpose",
    "RequestGate",
    "ResponseInfo",
    "Role",
    "build_chat_model",
    "call_model",
    "classify_failure",
    "endpoint_for",
    "message_text",
    "next_delay",
    "parse_retry_after",
    "separate_vision_endpoint",
    "token_usage",
]

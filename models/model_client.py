"""`ModelClient`: what one run uses to call a model — the loop, the RAG hints and tools alike.

    result = ctx.model.invoke(messages, role="vision", purpose="vision", model_name=settings.vision_model)

A call names its `role` (agent | vision): that picks the endpoint (`models.endpoint.endpoint_for`) and
its monitor. Every call goes through the same path: the endpoint check (fail at once while it is unreachable), the
run's `RequestGate`, retries classified by `models.failures`, token counts, and the run's hooks
(`on_call(result, purpose)` becomes a trace event upstream; `on_retry(attempt, delay, failure, purpose)`
a Retry step). Chat models are built once per model name and shared by every run (`ChatModels`).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from config import Settings, redact
from models.client import CallResult, LLMCallError, OpenGate, RequestGate, build_chat_model, call_model
from models.context_window import ContextWindows
from models.endpoint import EndpointMonitor, Role, endpoint_for, separate_vision_endpoint
from models.failures import Failure
from models.messages import message_text
from models.token_estimate import PromptEstimator, PromptEstimators

Purpose = Literal["agent", "final", "rag_hint", "vision", "tool", "answer_check"]
"""What a call is for, as its trace shows it: a loop turn, the forced final answer, a RAG hint, a vision
question, another tool's call, the answer check (issue 32)."""
CallHook = Callable[[CallResult, Purpose], None]
"""Told of every finished call with its purpose ('agent', 'rag_hint', 'vision', …)."""
RetryHook = Callable[[int, float, Failure, Purpose], None]
"""Told before each retry sleep: (attempt from 1, delay in seconds, the failure, the call's purpose)."""


class ChatModels:
    """One chat model per (role, model name), built on first use and shared by every run; thread-safe.

    A model passed in (a test's scripted model) answers for every role and name.
    """

    def __init__(self, settings: Settings, model: BaseChatModel | None = None) -> None:
        self.settings = settings
        self.fixed = model
        """The injected model that answers for every name (None: built from settings)."""
        self._models: dict[tuple[Role, str], BaseChatModel] = {}
        self._bound: dict[tuple[str, tuple[str, ...], str], Runnable[LanguageModelInput, BaseMessage]] = {}
        self._lock = threading.Lock()

    def get(self, model_name: str | None = None, role: Role = "agent") -> BaseChatModel:
        """The chat model for `model_name` (default MODEL_NAME) on `role`'s endpoint."""
        if self.fixed is not None:
            return self.fixed
        key = (role, model_name or self.settings.MODEL_NAME)
        with self._lock:
            if key not in self._models:
                self._models[key] = build_chat_model(self.settings, key[1], role)
            return self._models[key]

    def with_tools(self, tools: Sequence[Any],
                   model_name: str | None = None) -> Runnable[LanguageModelInput, BaseMessage]:
        """The model with `tools` bound and LLM_TOOL_CHOICE sent (some servers drop tools without it)."""
        model = self.get(model_name)
        if not tools:
            return model
        choice = self.settings.LLM_TOOL_CHOICE
        key = (model_name or self.settings.MODEL_NAME, tuple(getattr(t, "name", str(t)) for t in tools), choice)
        with self._lock:
            if key not in self._bound:
                self._bound[key] = model.bind_tools(list(tools), tool_choice=choice)
            return self._bound[key]


@dataclasses.dataclass
class ModelClient:
    """Per-run access to the model: chat models, settings, gate, endpoint checks and trace hooks."""

    settings: Settings
    models: ChatModels
    gate: RequestGate = dataclasses.field(default_factory=OpenGate)
    endpoint: EndpointMonitor | None = None
    """The agent endpoint's check (also the vision role's while vision shares that endpoint)."""
    on_call: CallHook | None = None
    on_retry: RetryHook | None = None
    sleep: Callable[[float], None] = time.sleep
    vision_endpoint: EndpointMonitor | None = None
    """The vision endpoint's own check when VISION_BASE_URL / VISION_API_KEY make it another endpoint."""
    estimators: PromptEstimators = dataclasses.field(default_factory=PromptEstimators)
    """The token ratios learnt per endpoint and model (the application's, shared by its runs)."""
    windows: ContextWindows = dataclasses.field(default_factory=ContextWindows)
    """The context windows learnt per endpoint and model (the application's, shared by its runs)."""

    def monitor(self, role: Role) -> EndpointMonitor | None:
        """The check of `role`'s endpoint: never the agent's for vision requests sent elsewhere."""
        if role == "vision" and separate_vision_endpoint(self.settings):
            return self.vision_endpoint
        return self.endpoint

    def estimator(self, model_name: str | None = None, role: Role = "agent") -> PromptEstimator:
        """The prompt-size estimator of `model_name` (default MODEL_NAME) on `role`'s endpoint."""
        return self.estimators.get(endpoint_for(self.settings, role).base_url, model_name or self.settings.MODEL_NAME)

    def request(self, messages: Sequence[BaseMessage], *, purpose: Purpose = "agent", model_name: str | None = None,
                tools: Sequence[Any] = (), role: Role = "agent") -> CallResult:
        """One call to `role`'s endpoint with retries and the gate.

        Without the on_call hook: the loop reports its own steps.
        """
        monitor = self.monitor(role)
        blocked = monitor.blocking_error() if monitor is not None else None
        if blocked is not None:
            raise LLMCallError(redact(blocked, self.settings))
        if tools and role != "agent":
            raise ValueError("tools are bound for the agent role only")
        model = self.models.with_tools(tools, model_name) if tools else self.models.get(model_name, role)

        def retried(attempt: int, delay: float, failure: Failure) -> None:
            if self.on_retry is not None:
                self.on_retry(attempt, delay, failure, purpose)

        try:
            result = call_model(model, messages, self.settings, self.gate, on_retry=retried, sleep=self.sleep,
                                base_url=endpoint_for(self.settings, role).base_url,
                                estimator=self.estimator(model_name, role))
        except LLMCallError as exc:
            if exc.failure is not None and exc.failure.kind == "unreachable" and monitor is not None:
                monitor.mark_unreachable(exc.failure.reason)
            raise
        if not result.model_name:
            result.model_name = model_name or _name_of(model, self.settings)
        return result

    def invoke(self, messages: Sequence[BaseMessage], *, purpose: Purpose = "tool", model_name: str | None = None,
               role: Role = "agent") -> CallResult:
        """One call as `request`, reported through `on_call(result, purpose)` (a ModelCall trace event)."""
        result = self.request(messages, purpose=purpose, model_name=model_name, role=role)
        if self.on_call is not None:
            self.on_call(result, purpose)
        return result

    def ask(self, prompt: str, *, purpose: Purpose, model_name: str | None = None, role: Role = "agent") -> str:
        """`prompt -> text` over `invoke` (the knowledge base's hint LLM)."""
        reply = self.invoke([HumanMessage(content=prompt)], purpose=purpose, model_name=model_name, role=role)
        return message_text(reply.message)


def _name_of(model: Any, settings: Settings) -> str:
    bound = getattr(model, "bound", model)  # a RunnableBinding from bind_tools wraps the chat model
    return str(getattr(bound, "model_name", None) or getattr(bound, "model", None) or settings.MODEL_NAME)

"""A scripted chat model for graph and pipeline tests: no network, `bind_tools` returns the model itself.

    model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), ai("FINAL ANSWER: 42")])
    Pipeline(settings, llm=model).solve("What is 6*7?")

A script entry is an `AIMessage` (replayed), an exception (raised, e.g. to test retries), or a
function `(messages) -> AIMessage` that answers from the conversation. `model.calls` records the
messages of every request; `model.bound_tools` the tool names last bound.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

ScriptEntry = AIMessage | BaseException | Callable[[list[BaseMessage]], AIMessage]

_ids = itertools.count(1)


def ai(text: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> AIMessage:
    """An assistant message with text and token usage."""
    return AIMessage(content=text, usage_metadata={"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                                                   "total_tokens": prompt_tokens + completion_tokens})


def tool_call(name: str, /, **args: Any) -> AIMessage:
    """An assistant message asking for one tool call."""
    return tool_calls((name, args))


def tool_calls(*calls: tuple[str, dict[str, Any]], text: str = "") -> AIMessage:
    """An assistant message asking for several tool calls at once (parallel calls)."""
    return AIMessage(content=text, tool_calls=[{"name": n, "args": a, "id": f"call_{next(_ids)}", "type": "tool_call"}
                                               for n, a in calls],
                     usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})


class ScriptedChatModel(BaseChatModel):
    """Replays a script of replies; an exhausted script raises so a test cannot pass by accident."""

    script: list[Any] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)
    model_name: str = "scripted-fake"
    _position: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The messages of every request, in order."""
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Remember the tool names and return the model itself (it ignores the schemas)."""
        self.bound_tools = [getattr(t, "name", str(t)) for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._lock:
            self._calls.append(list(messages))
            if self._position >= len(self.script):
                raise AssertionError(f"script exhausted after {self._position} replies")
            entry = self.script[self._position]
            self._position += 1
        if isinstance(entry, BaseException):
            raise entry
        message = entry(list(messages)) if callable(entry) else entry
        return ChatResult(generations=[ChatGeneration(message=message.model_copy())])

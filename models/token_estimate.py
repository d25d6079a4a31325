"""Prompt-token estimates before a request, corrected by the usage the server reports after it.

A tokens-per-minute budget admits a request by its prompt size, so the estimate is needed before
the request is sent. tiktoken would count exactly for OpenAI models, but it downloads its BPE files
on first use (no network here, and other providers tokenise differently), so the estimate is the
prompt's characters (messages, tool calls and the bound tool schemas, all of which the server
counts) times a tokens-per-character ratio learnt from the server's own `prompt_tokens`. The ratio
used is the highest of the latest observations, plus a margin, so the estimate errs on the high side: a request
admitted against it is not one the provider's budget would refuse.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

DEFAULT_TOKENS_PER_CHAR = 1 / 3.0
"""Before the first reply: a little more than English prose's ~1/4 (JSON and code tokenise denser)."""
PER_MESSAGE_TOKENS = 4
"""Role and separator tokens the chat format adds to every message."""
IMAGE_CHARS = 3000
"""An image block counted as this many characters (~1,000 tokens, a high-detail tile set), never its base64."""
MARGIN = 1.1
"""Estimates run this much high: text of another kind (a tool's output) may tokenise denser than what the
ratio was learnt on. Nearly free: the budget gets the excess back when the reply reports the usage."""


def prompt_chars(messages: Sequence[BaseMessage], model: Any = None) -> int:
    """Characters the server will tokenise: every message's text and tool calls, plus the bound tool schemas."""
    total = 0
    for message in messages:
        content = message.content
        if isinstance(content, str):
            total += len(content)
        else:  # content blocks: text counts as written, an image as the provider's flat per-image price
            for block in content:
                is_image = isinstance(block, dict) and block.get("type") in ("image_url", "image", "input_image")
                total += IMAGE_CHARS if is_image else len(block if isinstance(block, str)
                                                          else json.dumps(block, default=str))
        if isinstance(message, AIMessage) and message.tool_calls:
            total += len(json.dumps([{"name": c["name"], "args": c["args"]} for c in message.tool_calls],
                                    default=str))
    tools = (getattr(model, "kwargs", None) or {}).get("tools")  # a RunnableBinding from bind_tools
    if tools:
        total += len(json.dumps(tools, default=str))
    return total


class PromptEstimator:
    """Thread-safe chars -> tokens estimate, learning the ratio from each reply's reported prompt tokens."""

    RECENT = 16

    def __init__(self, tokens_per_char: float = DEFAULT_TOKENS_PER_CHAR) -> None:
        self._default = tokens_per_char
        self._ratios: deque[float] = deque(maxlen=self.RECENT)
        self._lock = threading.Lock()

    @property
    def tokens_per_char(self) -> float:
        """The ratio estimates use now: the highest recent observation (the default before any)."""
        with self._lock:
            return max(self._ratios) if self._ratios else self._default

    def estimate(self, messages: Sequence[BaseMessage], model: Any = None) -> int:
        """Estimated prompt tokens of sending `messages` through `model`."""
        chars = prompt_chars(messages, model)
        return int((chars * self.tokens_per_char + PER_MESSAGE_TOKENS * len(messages)) * MARGIN) + 1

    def observe(self, messages: Sequence[BaseMessage], model: Any, prompt_tokens: int) -> None:
        """Learn from the prompt tokens the server counted for `messages` (ignored when it reported none)."""
        chars = prompt_chars(messages, model)
        if prompt_tokens <= 0 or chars <= 0:
            return
        ratio = max(0.0, prompt_tokens - PER_MESSAGE_TOKENS * len(messages)) / chars
        with self._lock:
            self._ratios.append(ratio)


class PromptEstimators:
    """One estimator per (endpoint, model name), made on first use; thread-safe.

    Each server tokenises and reports usage its own way: a vision endpoint that counts an image's tiles,
    or another model's denser tokeniser, must not inflate the agent model's estimates (an inflated
    estimate masks observations the model still needs).
    """

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], PromptEstimator] = {}
        self._lock = threading.Lock()

    def get(self, base_url: str, model_name: str) -> PromptEstimator:
        """The estimator of `model_name` on the endpoint at `base_url` ('' = the provider's default)."""
        key = ((base_url or "").rstrip("/"), model_name)
        with self._lock:
            return self._by_key.setdefault(key, PromptEstimator())

    def forget(self) -> None:
        """Drop what was learnt (tests start each server afresh)."""
        with self._lock:
            self._by_key.clear()

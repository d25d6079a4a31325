"""Asking the vision model: one request with a question and images, through the run's model client.

In a run, `ToolContext.model` is the run's client (its retries, the batch's shared rate limiter, a
`ModelCall` with purpose "vision" and token counts in the trace). A call made outside a run (the
tools CLI, a benchmark) has no such client; `StandaloneModel` then sends the request through the
same retrying `models.client.call_model`, with no shared gate and no trace.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from config import Settings
from models.client import CallResult, LLMCallError, build_chat_model, call_model
from models.messages import message_text
from tools.context import ToolContext, ToolModel
from tools.errors import ToolFailure
from tools.images import SourceImage, image_data_url

VISION_MAX_SIDE = 2048  # downscale before upload: enough detail for the model, a bounded request size


class StandaloneModel:
    """A `ToolModel` for calls made outside a run: `call_model` over one chat model per model name."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def invoke(self, messages: Sequence[BaseMessage], *, purpose: str = "tool",
               model_name: str | None = None) -> CallResult:
        """Send `messages` to `model_name` (default MODEL_NAME) with the client's retries."""
        name = model_name or self.settings.MODEL_NAME
        with self._lock:
            model = self._models.get(name)
            if model is None:
                model = self._models[name] = build_chat_model(self.settings, name)
        return call_model(model, messages, self.settings)


def run_model(config: Any, fallback: ToolModel) -> ToolModel:
    """The run's model client from the tool call's config, else `fallback` (calls made outside a run)."""
    model = ToolContext.of(config).model
    return model if model is not None else fallback


def ask_vision(model: ToolModel, settings: Settings, prompt: str, images: Sequence[SourceImage],
               max_side: int = VISION_MAX_SIDE) -> str:
    """The vision model's answer to `prompt` about `images` (sent in order after the text)."""
    content: list[str | dict[str, Any]] = [{"type": "text", "text": prompt}]
    content += [{"type": "image_url", "image_url": {"url": image_data_url(image, max_side)}} for image in images]
    try:
        result = model.invoke([HumanMessage(content=content)], purpose="vision", model_name=settings.vision_model)
    except LLMCallError as exc:
        raise ToolFailure(f"the vision model call failed ({exc}). Check that VISION_MODEL_NAME="
                          f"{settings.vision_model} accepts images, or use image_ocr for the text.",
                          "model_error") from None
    return message_text(result.message).strip()

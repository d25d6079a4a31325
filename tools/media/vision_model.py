"""Asking the vision model: one request with a question and images, through the run's model client.

In a run, `ToolContext.model` is the run's client (its retries, the batch's shared rate limiter, a
`ModelCall` with purpose "vision" and token counts in the trace). A call made outside a run (the
tools CLI, a benchmark) has no such client; `standalone_client` then sends the request through the
same `models.ModelClient` (retries, endpoint check), with no shared gate and no trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage

from config import Settings
from models.client import LLMCallError
from models.messages import message_text
from models.model_client import ChatModels, ModelClient
from tools.core.context import ToolContext, ToolModel
from tools.core.errors import ToolFailure
from tools.media.images import SourceImage, image_data_url

VISION_MAX_SIDE = 2048  # downscale before upload: enough detail for the model, a bounded request size


def standalone_client(settings: Settings) -> ToolModel:
    """The model client for calls made outside a run: the run's own kind of client, without a shared gate or trace."""
    return ModelClient(settings, ChatModels(settings))


def run_model(ctx: ToolContext, fallback: ToolModel) -> ToolModel:
    """The run's model client, else `fallback` (calls made outside a run)."""
    model = ctx.model
    return model if model is not None else fallback


def ask_vision(model: ToolModel, settings: Settings, prompt: str, images: Sequence[SourceImage],
               max_side: int = VISION_MAX_SIDE) -> str:
    """The vision model's answer to `prompt` about `images` (sent in order after the text)."""
    content: list[str | dict[str, Any]] = [{"type": "text", "text": prompt}]
    content += [{"type": "image_url", "image_url": {"url": image_data_url(image, max_side)}} for image in images]
    try:
        result = model.invoke([HumanMessage(content=content)], role="vision", purpose="vision",
                              model_name=settings.vision_model)
    except LLMCallError as exc:
        raise ToolFailure(f"the vision model call failed ({exc}). Check that VISION_MODEL_NAME="
                          f"{settings.vision_model} accepts images, or use image_ocr for the text.",
                          "model_error") from None
    return message_text(result.message).strip()

"""What a model call cost: its tokens at the configured prices (LLM_PRICE_INPUT_PER_MTOK / _OUTPUT_PER_MTOK)."""

from __future__ import annotations

from config import Settings


def cost_usd(settings: Settings, prompt_tokens: int, completion_tokens: int) -> float:
    """USD of one call's tokens at the configured prices (0 when they are unknown)."""
    cost = (prompt_tokens * settings.LLM_PRICE_INPUT_PER_MTOK + completion_tokens * settings.LLM_PRICE_OUTPUT_PER_MTOK)
    return round(cost / 1_000_000, 8)

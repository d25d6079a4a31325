"""Send one of the loop's requests fitted to the model's window, and once more masked if the server says it is too long.

The request is masked first when it would pass CONTEXT_MASK_RATIO of the window (`agent.run_limits`). A
server that still refuses it as too long usually names its window ("maximum context length is 16384
tokens"): the run adopts it (and the process remembers it for the next runs), masks to fit it and sends
the request once more. An overflow that masking cannot fix (nothing left to mask, or refused again) is a
permanent failure: asking again would send the same request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from agent.events import Event
from agent.run_limits import Fitted
from agent.state import RunContext
from models.client import CallResult, LLMCallError
from models.context_window import ContextWindow
from models.model_client import Purpose

UNSTATED_SHRINK = 0.5
"""Without a stated window, a refused request is masked to this share of its estimated size."""


@dataclass
class Sent:
    """A request's outcome (the answer, or the error to end the run with) and the tool messages masked for it."""

    outcome: CallResult | LLMCallError
    replaced: list[ToolMessage] = field(default_factory=list)


def send_fitted(ctx: RunContext, emit: Callable[[Event], None], messages: Sequence[BaseMessage], *, purpose: Purpose,
                tools: Sequence[Any]) -> Sent:
    """Fit `messages` to the window, send them; after an overflow, refit and send once more."""
    budget = ctx.limits
    model = ctx.client.models.with_tools(tools) if tools else ctx.client.models.get()

    estimator = ctx.client.estimator()  # the one the request itself is sized and learnt with

    def estimate(batch: Sequence[BaseMessage]) -> int:
        return estimator.estimate(batch, model)

    fitted = budget.masker.fit(messages, estimate, budget.window)
    replaced = _report(ctx, emit, fitted, {})
    try:
        return Sent(ctx.client.request(fitted.messages, purpose=purpose, tools=tools), list(replaced.values()))
    except LLMCallError as exc:
        failure = exc.failure
        if failure is None or failure.kind != "context_length":
            return Sent(exc, list(replaced.values()))
        first_error = exc
    if failure.context_limit:
        budget.window = ContextWindow(failure.context_limit, "overflow_error")
        ctx.client.windows.learn(ctx.settings, failure.context_limit)
        limit = budget.masker.threshold(budget.window.tokens)
    else:
        limit = int(estimate(fitted.messages) * UNSTATED_SHRINK)
    refit = budget.masker.fit(fitted.messages, estimate, budget.window, limit=limit)
    if refit.event is None:
        return Sent(_unfixable(first_error), list(replaced.values()))
    replaced = _report(ctx, emit, refit, replaced)
    budget.overflow_retries += 1
    try:
        return Sent(ctx.client.request(refit.messages, purpose=purpose, tools=tools), list(replaced.values()))
    except LLMCallError as exc:
        overflow = exc.failure is not None and exc.failure.kind == "context_length"
        return Sent(_unfixable(exc) if overflow else exc, list(replaced.values()))


def _report(ctx: RunContext, emit: Callable[[Event], None], fitted: Fitted,
            replaced: dict[str | None, ToolMessage]) -> dict[str | None, ToolMessage]:
    """Emit the masking step (if any); return every tool message masked so far for this request, by id."""
    if fitted.event is not None:
        emit(dataclasses.replace(fitted.event, elapsed_s=ctx.elapsed()))
    return {**replaced, **{m.id: m for m in fitted.replaced}}


def _unfixable(exc: LLMCallError) -> LLMCallError:
    """The overflow error, said to be permanent: masking every observation it could did not make it fit."""
    error = LLMCallError(f"{exc} Masking the older tool observations could not make the request fit.", exc.failure,
                         permanent=True)
    return error

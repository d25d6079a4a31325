"""The run's `ModelClient`, with hooks that turn every model call and retry into trace events.

The loop reports its own steps (`agent.graph`); calls made for the knowledge base's hints or by tools
(`purpose` 'rag_hint', 'vision', …) reach the trace through these hooks. Before the graph starts the
events are kept (the router runs inline); afterwards they go straight to the run's event queue.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator

from agent.events import Event, ModelCall, Retry
from application import Application
from config import Settings
from models import CallResult, ChatModels, EndpointMonitor, Failure, ModelClient, RequestGate
from models.cost import cost_usd
from models.messages import message_text
from models.model_client import CallHook, RetryHook

HELPER_LABELS = {"rag_hint": "RAG hint call", "vision": "vision call"}
"""How a helper call's retries are introduced in the trace (other purposes: '<purpose> call')."""


class RunEvents:
    """Where the run's model-call events go: kept until `drain()`, or handed to `sink` once it is set."""

    def __init__(self, settings: Settings, started: float) -> None:
        self.settings = settings
        self.started = started
        self.sink: Callable[[Event], None] | None = None
        self._kept: list[Event] = []
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return round(time.monotonic() - self.started, 4)

    def emit(self, event: Event) -> None:
        """Send `event` to the sink, or keep it for `drain()`."""
        with self._lock:
            sink = self.sink
            if sink is None:
                self._kept.append(event)
        if sink is not None:
            sink(event)

    def drain(self) -> Iterator[Event]:
        """The events kept so far, once."""
        with self._lock:
            kept, self._kept = self._kept, []
        yield from kept


def run_client(settings: Settings, models: ChatModels, gate: RequestGate, endpoint: EndpointMonitor | None,
               events: RunEvents, vision_endpoint: EndpointMonitor | None = None,
               app: Application | None = None) -> ModelClient:
    """A `ModelClient` for one run whose helper calls and every retry become trace events in `events`.

    `endpoint` checks the agent's endpoint, `vision_endpoint` the vision one when it is another endpoint;
    `app` lends the windows and token ratios learnt so far (None: the client starts knowing nothing).
    """
    on_call, on_retry = _hooks(settings, events.emit, events.elapsed)
    client = ModelClient(settings, models, gate, endpoint, on_call=on_call, on_retry=on_retry,
                         vision_endpoint=vision_endpoint)
    if app is not None:
        client.windows, client.estimators = app.windows, app.estimators
    return client


def reporting_client(client: ModelClient, report: Callable[[Event], None],
                     elapsed: Callable[[], float]) -> ModelClient:
    """A copy of the run's `client` whose helper calls and retries are events handed to `report`.

    A team worker's loop and its tools (a vision or transcription tool's own model call) use it, so the
    worker can put its name on those events too; the model, gate and endpoint checks stay the run's.
    """
    on_call, on_retry = _hooks(client.settings, report, elapsed)
    return dataclasses.replace(client, on_call=on_call, on_retry=on_retry)


def _hooks(settings: Settings, emit: Callable[[Event], None],
           elapsed: Callable[[], float]) -> tuple[CallHook, RetryHook]:
    """The `on_call` / `on_retry` hooks turning a call and a retry into ModelCall and Retry events for `emit`."""

    def on_call(result: CallResult, purpose: str) -> None:
        emit(ModelCall(elapsed_s=elapsed(), iteration=0, model=result.model_name,
                       latency_s=round(result.latency_s, 4), prompt_tokens=result.prompt_tokens,
                       completion_tokens=result.completion_tokens,
                       content=message_text(result.message)[:2000], purpose=purpose,
                       finish_reason=result.finish_reason, truncated=result.truncated,
                       usage_reported=result.usage_reported,
                       cost_usd=cost_usd(settings, result.prompt_tokens, result.completion_tokens)))

    def on_retry(attempt: int, delay: float, failure: Failure, purpose: str) -> None:
        label = "" if purpose in ("agent", "final") else HELPER_LABELS.get(purpose, f"{purpose} call") + ": "
        emit(Retry(elapsed_s=elapsed(), attempt=attempt, max_retries=settings.RATE_LIMIT_RETRY_MAX,
                   delay_s=round(delay, 3), reason=label + failure.reason, status_code=failure.status_code,
                   retry_after_s=failure.retry_after_s, failure_kind=failure.kind))

    return on_call, on_retry

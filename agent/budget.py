"""What one run may spend: iterations, the model's window (observation masking), tokens and cost.

- **Iterations**: `max_iterations` per run (`--max-iterations`, the tabs' field), else MAX_ITERATIONS.
- **Window**: every request must fit the model's context (`models.context_window`) with room for the
  reply (LLM_MAX_TOKENS, at most half the window). Once a request would pass CONTEXT_MASK_RATIO of the
  window, or not fit, the oldest tool observations are *masked*: the message stays (the API pairs every
  tool call with its result), its content becomes the observation's first line and, literally,
  `read_file("PATH")`, PATH being the full text saved in the run's workspace. The most recent
  observations stay whole. Masking goes down to `MASK_TARGET` of the threshold, so it does not repeat at
  every step. (Observation masking halves an agent's cost with no loss of solve rate: Lindenbauer et
  al., "The Complexity Trap", 2025.)
- **Tokens**: MAX_TOKENS_PER_TASK over every model call of the run (loop, final answer, vision, RAG hints).
- **Cost**: tokens times LLM_PRICE_INPUT_PER_MTOK / LLM_PRICE_OUTPUT_PER_MTOK (`models.cost`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent.events import ContextMasked, Event, ModelCall
from config import Settings
from models.context_window import ContextWindow
from models.cost import cost_usd
from models.messages import message_text
from tools.errors import ToolFailure
from tools.workspace import Workspace

MASK_TARGET = 0.75
"""Masking brings a request down to this share of the threshold that set it off."""
FIRST_LINE_CHARS = 200
"""Characters of an observation's first line kept in its stub."""
__all__ = ["MASKED_KEY", "Fitted", "ObservationMasker", "RunBudget", "TokenMeter", "cost_usd", "reply_reserve"]

MASKED_KEY = "masked_path"
"""`response_metadata` key of a masked tool message: where its full text is."""


def reply_reserve(settings: Settings, window: int) -> int:
    """Tokens of the window kept free for the reply: LLM_MAX_TOKENS, at most half the window."""
    return min(settings.LLM_MAX_TOKENS, window // 2)


class TokenMeter:
    """Tokens and cost of every model call of one run (fed each ModelCall event); thread-safe."""

    def __init__(self, limit: int = 0, used: int = 0) -> None:
        self.limit = limit
        """MAX_TOKENS_PER_TASK (0 = none)."""
        self.used = used
        """Tokens spent so far (earlier attempts at the same task included)."""
        self.cost_usd = 0.0
        self._lock = threading.Lock()

    def observe(self, event: Event) -> None:
        """Count a ModelCall's tokens and cost; other events pass."""
        if isinstance(event, ModelCall):
            with self._lock:
                self.used += event.prompt_tokens + event.completion_tokens
                self.cost_usd = round(self.cost_usd + event.cost_usd, 8)

    @property
    def exhausted(self) -> bool:
        """True once the run's tokens passed the limit."""
        return self.limit > 0 and self.used > self.limit


@dataclass
class Fitted:
    """A request fitted to the window: what to send, the tool messages replaced by stubs, the trace event."""

    messages: list[BaseMessage]
    replaced: list[ToolMessage] = field(default_factory=list)
    event: ContextMasked | None = None


class ObservationMasker:
    """Replaces the run's oldest tool observations by stubs, keeping their full text in the workspace."""

    def __init__(self, settings: Settings, workspace: Workspace | None) -> None:
        self.settings = settings
        self.workspace = workspace
        self.total_masked = 0
        self._folder: Path | None = None
        self._saved = 0
        self._lock = threading.Lock()

    def threshold(self, window: int) -> int:
        """Estimated prompt tokens past which a request is masked."""
        return min(int(window * self.settings.CONTEXT_MASK_RATIO), window - reply_reserve(self.settings, window))

    def fit(self, messages: Sequence[BaseMessage], estimate: Callable[[Sequence[BaseMessage]], int],
            window: ContextWindow, *, limit: int | None = None) -> Fitted:
        """`messages` masked as needed to stay under the threshold (or `limit`, after an overflow)."""
        threshold = limit if limit is not None else self.threshold(window.tokens)
        before = estimate(messages)
        if before <= threshold:
            return Fitted(list(messages))
        target = int(threshold * MASK_TARGET)
        out, replaced, paths = list(messages), [], []
        current = before
        for index in self._maskable(out):
            stub = self._stub(out[index])
            if stub is None:
                continue
            out[index] = stub
            replaced.append(stub)
            paths.append(str(stub.response_metadata[MASKED_KEY]))
            current = estimate(out)
            if current <= target:
                break
        if not replaced:
            return Fitted(list(messages))
        with self._lock:
            self.total_masked += len(replaced)
            total = self.total_masked
        event = ContextMasked(masked=len(replaced), total_masked=total, tokens_before=before, tokens_after=current,
                              window=window.tokens, window_source=window.source,
                              reason="ratio" if limit is None else "overflow", paths=paths)
        return Fitted(out, replaced, event)

    @staticmethod
    def _maskable(messages: list[BaseMessage]) -> list[int]:
        """Indexes of unmasked tool observations, oldest first; the latest turn's come last (masked only if need be)."""
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        tools = [i for i, m in enumerate(messages)
                 if isinstance(m, ToolMessage) and MASKED_KEY not in (m.response_metadata or {})]
        return [i for i in tools if i < last_ai] + [i for i in tools if i > last_ai]

    def _stub(self, message: BaseMessage) -> ToolMessage | None:
        """The stub replacing `message` (same id and call id), or None when its text could not be kept."""
        assert isinstance(message, ToolMessage)
        text = message_text(message)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if len(first) > FIRST_LINE_CHARS:
            first = first[:FIRST_LINE_CHARS] + "…"
        if len(text) <= len(first) + 200:
            return None  # nothing worth masking
        path = self._save(message, text)
        if path is None:
            return None  # nowhere to keep it: the observation stays whole
        content = (f"{first}\n[observation masked to save context: its {len(text):,} characters are kept in full; "
                   f'read them with read_file("{path}")]')
        return ToolMessage(content=content, tool_call_id=message.tool_call_id, name=message.name, id=message.id,
                           status=message.status, response_metadata={MASKED_KEY: str(path)})

    def _save(self, message: ToolMessage, text: str) -> Path | None:
        if self.workspace is None:
            return None
        data = text.encode("utf-8")
        try:
            self.workspace.reserve(len(data), "keeping a masked observation")
            with self._lock:
                if self._folder is None:
                    self._folder = self.workspace.subdir("masked")
                folder, self._saved = self._folder, self._saved + 1
                number = self._saved
            safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in (message.name or "tool"))[:40]
            path = (folder / f"{number:03d}-{safe}.txt").resolve()
            path.write_bytes(data)
        except (ToolFailure, OSError):
            return None
        return path


@dataclass
class RunBudget:
    """One run's limits and meters (held by the graph's RunContext)."""

    settings: Settings
    window: ContextWindow
    masker: ObservationMasker
    meter: TokenMeter
    max_iterations: int
    overflow_retries: int = 0
    """Requests sent again after an overflow (once each)."""

    @classmethod
    def for_run(cls, settings: Settings, window: ContextWindow, workspace: Workspace | None,
                max_iterations: int | None = None, meter: TokenMeter | None = None) -> RunBudget:
        """The budget of a run: its workspace keeps masked observations; `max_iterations` overrides MAX_ITERATIONS."""
        return cls(settings, window, ObservationMasker(settings, workspace),
                   meter or TokenMeter(settings.MAX_TOKENS_PER_TASK), max_iterations or settings.MAX_ITERATIONS)

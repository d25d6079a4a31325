"""What one run may spend: iterations, the model's window (observation masking), tokens and cost.

- **Iterations**: `max_iterations` per run (`--max-iterations`, the tabs' field), else MAX_ITERATIONS.
- **Window**: every request must fit the model's context (`models.context_window`) with room for the
  reply (LLM_MAX_TOKENS, at most half the window) and a small margin (`FIT_MARGIN`). A request that would
  not fit (or, with CONTEXT_MASK_RATIO < 1, that would pass that share of the window) has its oldest tool
  observations *masked*, oldest first, and masking stops as soon as it fits: the message stays (the API
  pairs every tool call with its result), its content becomes the observation's first line and,
  literally, `read_file("PATH")`, PATH being the full text saved in the run's workspace. The latest
  assistant turn's observations are never masked (the model needs what it just read, e.g. the next
  address of a chain); when even they cannot fit, the newest is *cut* at its end, and the cut says so
  and names the `read_file("PATH")` of its whole text. (Observation masking halves an agent's cost with
  no loss of solve rate: Lindenbauer et al., "The Complexity Trap", 2025.)
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
from tools.core.errors import ToolFailure
from tools.core.workspace import Workspace

FIT_MARGIN = 0.02
"""Share of the window (at least `MIN_MARGIN_TOKENS`) kept free besides the reply: estimates are estimates."""
MIN_MARGIN_TOKENS = 64
CUT_ROUNDS = 4
"""Attempts at cutting the newest observation to fit (each from the estimate of the previous one)."""
FIRST_LINE_CHARS = 200
"""Characters of an observation's first line kept in its stub."""
__all__ = ["CUT_KEY", "MASKED_KEY", "Fitted", "ObservationMasker", "RunBudget", "TokenMeter", "cost_usd",
           "reply_reserve"]

MASKED_KEY = "masked_path"
"""`response_metadata` key of a masked tool message: where its full text is."""
CUT_KEY = "cut_path"
"""`response_metadata` key of a tool message cut at its end to fit: where its whole text is."""


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
        """Prompt tokens past which a request is masked: what the window leaves, or CONTEXT_MASK_RATIO of it."""
        margin = max(MIN_MARGIN_TOKENS, int(window * FIT_MARGIN))
        room = window - reply_reserve(self.settings, window) - margin
        return max(1, min(int(window * self.settings.CONTEXT_MASK_RATIO), room))

    def fit(self, messages: Sequence[BaseMessage], estimate: Callable[[Sequence[BaseMessage]], int],
            window: ContextWindow, *, limit: int | None = None) -> Fitted:
        """`messages` masked (oldest first) until they fit the threshold (or `limit`, after an overflow)."""
        threshold = limit if limit is not None else self.threshold(window.tokens)
        before = estimate(messages)
        if before <= threshold:
            return Fitted(list(messages))
        out, replaced, paths = list(messages), [], []
        current = before
        older, newest = self._maskable(out)
        for index in older:
            stub = self._stub(out[index])
            if stub is None:
                continue
            out[index] = stub
            replaced.append(stub)
            paths.append(str(stub.response_metadata[MASKED_KEY]))
            current = estimate(out)
            if current <= threshold:
                break
        cut = 0
        for index in reversed(newest):  # the newest turn's observations: cut at their end, never masked
            if current <= threshold:
                break
            stub = self._cut(out, index, estimate, threshold)
            if stub is None:
                continue
            out[index], cut = stub, cut + 1
            replaced.append(stub)
            paths.append(str(stub.response_metadata[CUT_KEY]))
            current = estimate(out)
        if not replaced:
            return Fitted(list(messages))
        with self._lock:
            self.total_masked += len(replaced)
            total = self.total_masked
        event = ContextMasked(masked=len(replaced) - cut, total_masked=total, tokens_before=before,
                              tokens_after=current, window=window.tokens, window_source=window.source,
                              reason="ratio" if limit is None else "overflow", paths=paths, cut=cut)
        return Fitted(out, replaced, event)

    @staticmethod
    def _maskable(messages: list[BaseMessage]) -> tuple[list[int], list[int]]:
        """Indexes of unmasked tool observations: those before the latest assistant turn (oldest first), and its own."""
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        tools = [i for i, m in enumerate(messages)
                 if isinstance(m, ToolMessage) and MASKED_KEY not in (m.response_metadata or {})]
        return [i for i in tools if i < last_ai], [i for i in tools if i > last_ai]

    def _cut(self, messages: list[BaseMessage], index: int, estimate: Callable[[Sequence[BaseMessage]], int],
             threshold: int) -> ToolMessage | None:
        """The observation at `index` cut at its end so the request fits (None: it cannot be, or cannot be kept)."""
        message = messages[index]
        assert isinstance(message, ToolMessage)
        text = message_text(message)
        path = self._kept_path(message) or self._save(message, text)
        if path is None:
            return None  # nowhere to keep the whole text: never cut silently
        probe = list(messages)
        probe[index] = ToolMessage(content="", tool_call_id=message.tool_call_id, name=message.name)
        empty = estimate(probe)
        keep = len(text)
        for _ in range(CUT_ROUNDS):
            per_char = max(1e-6, (estimate([*probe[:index], _with(message, text[:keep]), *probe[index + 1:]])
                                  - empty) / max(1, keep))
            keep = int((threshold - empty) / per_char) - len(str(path)) - 140  # the note's own characters
            if keep <= 0:
                return None
            stub = _cut_stub(message, text, keep, path)
            probe[index] = stub
            if estimate(probe) <= threshold:
                return stub
            probe[index] = _with(message, "")
        return None

    @staticmethod
    def _kept_path(message: ToolMessage) -> Path | None:
        kept = (message.response_metadata or {}).get(CUT_KEY)
        return Path(kept) if kept else None

    def _stub(self, message: BaseMessage) -> ToolMessage | None:
        """The stub replacing `message` (same id and call id), or None when its text could not be kept."""
        assert isinstance(message, ToolMessage)
        kept = self._kept_path(message)
        text = message_text(message)
        if kept is not None:  # already cut at its end: its whole text is saved, its stub points there
            text = _read(kept) or text
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if len(first) > FIRST_LINE_CHARS:
            first = first[:FIRST_LINE_CHARS] + "…"
        if len(text) <= len(first) + 200:
            return None  # nothing worth masking
        path = kept or self._save(message, text)
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


def _with(message: ToolMessage, content: str) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=message.tool_call_id, name=message.name, id=message.id,
                       status=message.status)


def _cut_stub(message: ToolMessage, text: str, keep: int, path: Path) -> ToolMessage:
    """`text` cut after `keep` characters, with a note saying how much is missing and where it all is."""
    note = (f"\n[observation cut to fit the model's context: {len(text) - keep:,} of its {len(text):,} characters "
            f'are not shown; read them with read_file("{path}")]')
    return ToolMessage(content=text[:keep] + note, tool_call_id=message.tool_call_id, name=message.name,
                       id=message.id, status=message.status, response_metadata={CUT_KEY: str(path)})


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


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

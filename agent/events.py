"""Typed trace events: what happened while one question was answered.

The pipeline yields them as they happen; the UI renders them, the runner stores them as JSONL.
Nobody parses log text. Every event carries `elapsed_s`, seconds since the run started.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from tools.core.outcome import ToolOutcome

Source = Literal["rag", "agent"]
"""Where an answer came from: the knowledge base's short-circuit, or the agent loop."""
RagTier = Literal["answer", "candidates", "hints", "miss", "off"]
ErrorStage = Literal["input", "config", "access", "limit", "model", "tool", "pipeline", "agent", "app", "stopped"]
"""Which step a run failed in (ErrorEvent.stage)."""


@dataclass(kw_only=True)
class Event:
    """Base of all trace events."""

    elapsed_s: float = 0.0
    """Seconds since the start of the run."""
    worker: str | None = None
    """The team worker whose loop emitted it (`team` strategy); None: the run's own loop or the orchestrator."""
    delegation: str | None = None
    """The `delegate` call (its call id) the worker runs for; None outside a worker."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with its `kind` discriminator (`worker` / `delegation` only when set)."""
        data = asdict(self)
        for key in ("worker", "delegation"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    def to_json(self) -> str:
        """One JSONL line."""
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)


@dataclass(kw_only=True)
class RouteDecided(Event):
    """The router's decision before the loop: RAG answer or agent, and the attachment's tool hint."""

    kind: Literal["route"] = field(default="route", init=False)
    route: Source
    reason: str
    file_path: str | None = None
    file_type: str | None = None
    tool_hint: str | None = None


@dataclass(kw_only=True)
class RagLookup(Event):
    """The knowledge-base lookup and the tier it landed in."""

    kind: Literal["rag_lookup"] = field(default="rag_lookup", init=False)
    tier: RagTier
    similarity: float = 0.0
    matched_question: str | None = None
    answer: str | None = None
    task_id: str | None = None
    excluded_task_id: str | None = None
    note: str = ""
    duration_s: float = 0.0


@dataclass(kw_only=True)
class ModelCall(Event):
    """One completed model request (after retries)."""

    kind: Literal["model_call"] = field(default="model_call", init=False)
    iteration: int
    model: str
    latency_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    final: bool = False
    """True for the forced best-effort call at the iteration cap."""
    purpose: str = "agent"
    """'agent' for the loop's calls; other values (e.g. 'rag_hint', 'vision') are helper calls that are not steps."""
    finish_reason: str | None = None
    """Why the model stopped, as the server said: 'stop', 'tool_calls', 'length', … (None: not said)."""
    truncated: bool = False
    """The reply was cut at the completion limit (finish_reason 'length'): it is not a whole answer."""
    usage_reported: bool = True
    """False when the server sent no token usage (the counts are zero, not measured)."""
    tools_offered: int = 0
    """Tool schemas sent with the request."""
    tool_choice: str | None = None
    """The `tool_choice` sent with them (LLM_TOOL_CHOICE); None when no tools were offered."""
    cost_usd: float = 0.0
    """Its tokens times LLM_PRICE_INPUT_PER_MTOK / LLM_PRICE_OUTPUT_PER_MTOK (0 when the prices are unknown)."""


@dataclass(kw_only=True)
class Retry(Event):
    """A model request failed retriably (429, 5xx, timeout, connection) and will be retried."""

    kind: Literal["retry"] = field(default="retry", init=False)
    attempt: int
    max_retries: int
    delay_s: float
    reason: str
    status_code: int | None = None
    retry_after_s: float | None = None
    failure_kind: str = ""
    """What the failure means (`models.failures.FailureKind`): rate_limited, unreachable, timeout, …"""


@dataclass(kw_only=True)
class ToolCall(Event):
    """The model asked for a tool."""

    kind: Literal["tool_call"] = field(default="tool_call", init=False)
    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(kw_only=True)
class ToolResult(Event, ToolOutcome):
    """A tool's observation as the model sees it (already truncated / converted from an error), and its facts."""

    kind: Literal["tool_result"] = field(default="tool_result", init=False)
    call_id: str
    name: str


@dataclass(kw_only=True)
class IterationCap(Event):
    """MAX_ITERATIONS reached; a last tool-less call asks for the best answer."""

    kind: Literal["iteration_cap"] = field(default="iteration_cap", init=False)
    iterations: int


@dataclass(kw_only=True)
class ContextMasked(Event):
    """The oldest tool observations were replaced by stubs (first line + the read_file call) to fit the window."""

    kind: Literal["context_masked"] = field(default="context_masked", init=False)
    masked: int
    """Observations masked in this step."""
    total_masked: int
    """Observations masked so far in the run."""
    tokens_before: int
    """Estimated prompt tokens of the request before this step."""
    tokens_after: int
    window: int
    """The model's context window in tokens."""
    window_source: str = "default"
    """Where the window came from: configured, vllm_models, llamacpp_props, overflow_error, default."""
    reason: Literal["ratio", "overflow"] = "ratio"
    """'ratio': the request passed CONTEXT_MASK_RATIO of the window; 'overflow': the server refused it as too long."""
    paths: list[str] = field(default_factory=list)
    """Where the masked observations are kept in full (readable with read_file)."""
    cut: int = 0
    """Observations of the latest turn cut at their end (too long to fit even alone); their paths come last."""


@dataclass(kw_only=True)
class ToolsetChosen(Event):
    """A small window: the loop offers only the tools this task can use (`agent.toolsets`), named here."""

    kind: Literal["toolset"] = field(default="toolset", init=False)
    name: str
    """Which sets were joined, e.g. 'route+research' or 'research+browser'."""
    tools: list[str] = field(default_factory=list)
    """The tools offered, in the registry's order."""
    left_out: int = 0
    """Active tools not offered."""
    window: int = 0
    """The context window that called for it (tokens)."""


@dataclass(kw_only=True)
class TokenBudgetExhausted(Event):
    """MAX_TOKENS_PER_TASK passed: no further tool call; a last tool-less call asks for the best answer."""

    kind: Literal["token_budget"] = field(default="token_budget", init=False)
    tokens_used: int
    limit: int


@dataclass(kw_only=True)
class HistoryTrimmed(Event):
    """Older chat turns were left out of the request (CHAT_HISTORY_MAX_TURNS / CHAT_HISTORY_MAX_CHARS)."""

    kind: Literal["history_trimmed"] = field(default="history_trimmed", init=False)
    kept: int
    dropped: int
    max_turns: int
    max_chars: int


@dataclass(kw_only=True)
class AnswerExtracted(Event):
    """The final answer pulled out of the model's last message (or the RAG hit)."""

    kind: Literal["answer"] = field(default="answer", init=False)
    answer: str
    raw: str
    method: str
    """Which extraction rule matched, e.g. 'final_answer_marker', 'json', 'last_line', 'rag'."""
    truncated: bool = False
    """The answer was taken from a reply cut at the length limit: it may be incomplete."""


@dataclass(kw_only=True)
class AnswerCheck(Event):
    """The answer checker's look at the extracted draft (ANSWER_CHECK, issue 32): only the form may change."""

    kind: Literal["answer_check"] = field(default="answer_check", init=False)
    before: str
    """The extracted draft."""
    after: str
    """What the checker proposed ('' when it failed or was not asked); the answer only when `accepted`."""
    accepted: bool
    """The proposal became the answer; False keeps the draft."""
    reason: str
    """Why: 'unchanged', 'form only: …', 'changes a fact: …', 'check failed: …', 'skipped: …'."""


@dataclass(kw_only=True)
class ErrorEvent(Event):
    """A failure that ended or degraded the run (LLM error after retries, configuration missing)."""

    kind: Literal["error"] = field(default="error", init=False)
    stage: ErrorStage
    message: str
    permanent: bool = False
    """Sending the same request again cannot succeed (a refused request, an unfixable overflow, the same server
    error twice): a batch does not re-run the task."""


# --- team strategy (issue 32) ---
@dataclass(kw_only=True)
class LedgerMade(Event):
    """The orchestrator's task ledger: what is known and the plan (`replan`: re-made after stalled rounds)."""

    kind: Literal["ledger"] = field(default="ledger", init=False)
    facts: str
    """Facts given, to look up, to derive, and educated guesses, as the orchestrator wrote them."""
    plan: str
    replan: bool = False


@dataclass(kw_only=True)
class ProgressChecked(Event):
    """The orchestrator's check after a round of reports."""

    kind: Literal["progress"] = field(default="progress", init=False)
    satisfied: bool
    looping: bool
    progress: bool
    next_step: str = ""
    round: int = 0
    stalls: int = 0
    """Rounds in a row without progress (or looping) so far."""


@dataclass(kw_only=True)
class WorkerReported(Event):
    """A worker finished a delegation: its report as the orchestrator reads it, and what it spent."""

    kind: Literal["worker_report"] = field(default="worker_report", init=False)
    task: str
    report: str
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_s: float = 0.0
    cut_tokens: int = 0
    """Estimated tokens cut from the report (WORKER_REPORT_TOKENS)."""
    started_s: float = 0.0
    """Seconds since the run's start when the worker began (with `elapsed_s`, its span: overlap shows concurrency)."""


TraceEvent = (RouteDecided | RagLookup | ModelCall | Retry | ToolCall | ToolResult | IterationCap | HistoryTrimmed
              | AnswerExtracted | ErrorEvent | ContextMasked | TokenBudgetExhausted | LedgerMade | ProgressChecked
              | WorkerReported | AnswerCheck | ToolsetChosen)
"""Every event a run can yield: a union discriminated by `kind`, so renderers can `match` on the type."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__dataclass_fields__["kind"].default: cls  # type: ignore[misc]
    for cls in (RouteDecided, RagLookup, ModelCall, Retry, ToolCall, ToolResult, IterationCap, HistoryTrimmed,
                AnswerExtracted, ErrorEvent, ContextMasked, TokenBudgetExhausted, LedgerMade, ProgressChecked,
                WorkerReported, AnswerCheck, ToolsetChosen)
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from `to_dict()` output (e.g. a stored trace)."""
    cls = EVENT_TYPES[data["kind"]]
    names = {f.name for f in fields(cls) if f.init}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(kw_only=True)
class Solution:
    """Everything one run produced: the answer, where it came from, and its full trace."""

    question: str
    answer: str
    source: Source
    task_id: str | None = None
    file_path: str | None = None
    steps: int = 0
    """Assistant iterations (model calls in the loop)."""
    tools_used: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    elapsed_s: float = 0.0
    error: str | None = None
    hit_iteration_cap: bool = False
    answer_truncated: bool = False
    """The answer comes from a reply cut at the length limit (it may be incomplete)."""
    raw_final: str = ""
    budget_exhausted: bool = False
    """MAX_TOKENS_PER_TASK was passed: the answer is the best-effort one asked for then."""
    cost_usd: float = 0.0
    """Sum of the model calls' cost_usd."""
    error_permanent: bool = False
    """The error cannot be fixed by asking again (see ErrorEvent.permanent)."""
    strategy: str = "react"
    """The strategy that ran (AGENT_STRATEGY or the run's own): `react` or `team`."""
    answer_before_check: str | None = None
    """The extracted draft when the answer check looked at it (None: no check ran)."""
    events: list[Event] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over all model calls."""
        return self.prompt_tokens + self.completion_tokens

    def trace_jsonl(self) -> str:
        """The trace as JSONL, one event per line."""
        return "\n".join(e.to_json() for e in self.events) + ("\n" if self.events else "")

    def to_dict(self, include_trace: bool = True) -> dict[str, Any]:
        """JSON-ready summary (the CLI's --json output)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "events"}
        data["total_tokens"] = self.total_tokens
        if include_trace:
            data["trace"] = [e.to_dict() for e in self.events]
        return data

    @classmethod
    def from_events(cls, question: str, events: list[Event], *, task_id: str | None = None,
                    file_path: str | None = None) -> Solution:
        """Fold a finished event stream into a Solution."""
        sol = cls(question=question, answer="", source="agent", task_id=task_id, file_path=file_path,
                  events=list(events))
        for ev in events:
            if isinstance(ev, RouteDecided):
                sol.source = ev.route
            elif isinstance(ev, ModelCall):
                sol.prompt_tokens += ev.prompt_tokens
                sol.completion_tokens += ev.completion_tokens
                sol.cost_usd = round(sol.cost_usd + ev.cost_usd, 8)
                if not ev.final and ev.purpose == "agent":
                    sol.steps += 1
            elif isinstance(ev, Retry):
                sol.retries += 1
            elif isinstance(ev, ToolCall):
                if ev.name not in sol.tools_used:
                    sol.tools_used.append(ev.name)
            elif isinstance(ev, IterationCap) and ev.worker is None:  # a worker's own cap ends only its delegation
                sol.hit_iteration_cap = True
            elif isinstance(ev, TokenBudgetExhausted):
                sol.budget_exhausted = True
            elif isinstance(ev, AnswerExtracted):
                sol.answer, sol.raw_final, sol.answer_truncated = ev.answer, ev.raw, ev.truncated
            elif isinstance(ev, AnswerCheck):
                sol.answer_before_check = ev.before
            elif isinstance(ev, ErrorEvent):
                sol.error = ev.message if sol.error is None else f"{sol.error}; {ev.message}"
                sol.error_permanent = sol.error_permanent or ev.permanent
        if events:
            sol.elapsed_s = events[-1].elapsed_s
        return sol

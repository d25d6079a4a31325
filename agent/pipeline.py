"""The one pipeline: router → RAG short-circuit → LangGraph loop (`agent.run_loop`) → answer extraction.

`Pipeline.stream()` yields typed events live as the run unfolds; `Pipeline.solve()` collects them
into a `Solution`. The app, the CLI and the evaluation runner call these two and nothing else.
No exception escapes either: failures end the run with an `ErrorEvent` and an empty answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agent.answer_check import checked
from agent.events import AnswerExtracted, ErrorEvent, Event, HistoryTrimmed, Solution
from agent.final_answer import final_answer
from agent.limits import history_messages, question_too_long, trim_history
from agent.parts import Parts
from agent.prompts import SYSTEM_PROMPT, task_message
from agent.redaction import redacted
from agent.router import decide
from agent.run_client import RunEvents, run_client
from agent.run_limits import TokenMeter
from agent.run_loop import LoopStart, run_loop
from agent.run_request import RunRequest
from application import Application
from config import Settings, Strategy, load_settings
from models import EndpointMonitor, OpenGate, RequestGate
from rag.types import KnowledgeBase
from tools.core.registry import ToolRegistry
from tools.core.replay_cache import ToolCache


class Pipeline:
    """Answers one question at a time (and many concurrently); see the module docstring."""

    def __init__(self, settings: Settings, *, llm: BaseChatModel | None = None, registry: ToolRegistry | None = None,
                 knowledge_base: KnowledgeBase | None = None, gate: RequestGate | None = None,
                 raise_internal_errors: bool = False, app: Application | None = None) -> None:
        """Parts not given are built by `preload()`; `raise_internal_errors`: see `agent.graph.build_graph`.

        `app` holds what outlives a run (learnt windows and ratios, endpoint checks, knowledge base, browsers);
        without one the pipeline owns a fresh application of its own (`close()` ends it).
        """
        self.settings = settings
        self.app = app if app is not None else Application(settings)
        self._owns_app = app is None
        self.gate: RequestGate = gate or OpenGate()
        self._parts = Parts(llm=llm, registry=registry, knowledge_base=knowledge_base,
                            raise_internal_errors=raise_internal_errors)

    # -- set-up -----------------------------------------------------------------------------------
    def preload(self) -> dict[str, str]:
        """Build the model client, tools, graph and knowledge base once (`agent.parts`); a status line per part."""
        return self._parts.load(self.settings, self.app)

    def with_gate(self, gate: RequestGate) -> Pipeline:
        """A copy sharing model, tools, graph and knowledge base, whose model requests pass through `gate`."""
        twin = Pipeline.__new__(Pipeline)
        twin.settings, twin.gate, twin._parts = self.settings, gate, self._parts
        twin.app, twin._owns_app = self.app, False  # the original's owner closes the application
        return twin

    def close(self) -> None:
        """End the application this pipeline made for itself (one passed in is its owner's to close)."""
        if self._owns_app:
            self.app.close()

    @property
    def registry(self) -> ToolRegistry:
        """The tool registry (built on first use)."""
        self.preload()
        assert self._parts.registry is not None
        return self._parts.registry

    @property
    def knowledge_base(self) -> KnowledgeBase:
        """The knowledge base the router consults (opened on first use); shared with `with_gate` copies."""
        self.preload()
        assert self._parts.knowledge_base is not None
        return self._parts.knowledge_base

    @property
    def llm(self) -> BaseChatModel | None:
        """The chat model (None when no endpoint is configured)."""
        self.preload()
        return self._parts.llm

    # -- live state for the app's header (issue 22) --------------------------------------------------
    def status_so_far(self) -> dict[str, str]:
        """The status lines `preload()` has filled in so far (read while it runs, from another thread)."""
        return dict(self._parts.status)

    @property
    def endpoint(self) -> EndpointMonitor | None:
        """The endpoint check (None before preload, without an endpoint, or for an injected model)."""
        return self._parts.endpoint

    # -- running ----------------------------------------------------------------------------------
    def stream(self, question: str, file_path: str | None = None, task_id: str | None = None, *,
               history: list[dict[str, Any]] | None = None, use_rag: bool = True, confine: bool = True,
               readable: Sequence[str | Path] = (), max_iterations: int | None = None,
               strategy: Strategy | None = None, tool_cache: ToolCache | None = None) -> Iterator[Event]:
        """Answer `question`, yielding trace events as they happen; the last is AnswerExtracted or ErrorEvent.

        `confine` limits file tools to the attachment, `readable` (e.g. the app session's uploads) and the
        run's own workspace; the CLIs, run by the machine's owner, pass `confine=False`. `max_iterations`
        overrides MAX_ITERATIONS for this run, `strategy` AGENT_STRATEGY; `tool_cache` records (and replays)
        its tool calls.
        """
        request = RunRequest(question, file_path, task_id, history, use_rag, confine, tuple(Path(p) for p in readable),
                             max_iterations, strategy=strategy, tool_cache=tool_cache)
        return self._events(request, live=True)

    def _events(self, request: RunRequest, *, live: bool) -> Iterator[Event]:
        started = time.monotonic()
        try:
            for event in self._run(request, started, live):
                yield redacted(event, self.settings)
        except Exception as exc:  # noqa: BLE001 - the contract: no exception escapes a run
            message = f"internal error: {type(exc).__name__}: {exc}"
            failed = ErrorEvent(elapsed_s=round(time.monotonic() - started, 4), stage="pipeline", message=message)
            yield redacted(failed, self.settings)

    def solve(self, question: str, file_path: str | None = None, task_id: str | None = None, *,
              history: list[dict[str, Any]] | None = None, use_rag: bool = True, confine: bool = True,
              readable: Sequence[str | Path] = (), max_iterations: int | None = None,
              spent_tokens: int = 0, strategy: Strategy | None = None,
              tool_cache: ToolCache | None = None) -> Solution:
        """Answer `question` and return the collected Solution (answer, source, tokens, trace); see `stream`.

        `spent_tokens`: what earlier attempts at the same task spent (a batch's retry of a failed task).
        """
        request = RunRequest(question, file_path, task_id, history, use_rag, confine, tuple(Path(p) for p in readable),
                             max_iterations, spent_tokens, strategy, tool_cache)
        events = list(self._events(request, live=False))
        path = str(Path(file_path).expanduser().resolve()) if file_path else None
        solution = Solution.from_events(question, events, task_id=task_id, file_path=path)
        solution.strategy = strategy or self.settings.AGENT_STRATEGY
        return solution

    def _run(self, request: RunRequest, started: float, live: bool) -> Iterator[Event]:
        """Check the question, route it, then answer from RAG or run the loop."""
        question, file_path, task_id = request.question, request.file_path, request.task_id

        def elapsed() -> float:
            return round(time.monotonic() - started, 4)

        if not (question or "").strip():
            yield ErrorEvent(elapsed_s=elapsed(), stage="input", message="The question is empty: ask something.")
            return
        if (too_long := question_too_long(question, self.settings)) is not None:
            yield ErrorEvent(elapsed_s=elapsed(), stage="limit", message=too_long)  # before any model request
            return
        self.preload()
        parts, s = self._parts, self.settings
        assert parts.registry is not None

        trace = RunEvents(s, started)  # the run's model calls and retries, routed to the current sink
        client = (run_client(s, parts.models, self.gate, parts.endpoint, trace, parts.vision_endpoint, self.app)
                  if parts.models is not None else None)
        decision = decide(question, file_path, task_id, settings=s, knowledge_base=parts.knowledge_base,
                          active_tools=parts.registry.names, use_rag=request.use_rag, started=started, client=client)
        meter = TokenMeter(s.MAX_TOKENS_PER_TASK, request.spent_tokens)  # every call: RAG hints, loop, tools' calls
        for event in trace.drain():
            meter.observe(event)
            yield event
        yield from decision.events

        if decision.route == "rag":
            yield AnswerExtracted(elapsed_s=elapsed(), answer=decision.answer or "", raw=decision.answer or "",
                                  method="rag")
            return
        if client is None:
            yield ErrorEvent(elapsed_s=elapsed(), stage="config", message=s.llm_missing_message())
            return
        trimmed = trim_history(request.history, s)
        if trimmed.dropped:
            yield HistoryTrimmed(elapsed_s=elapsed(), kept=len(trimmed.kept), dropped=trimmed.dropped,
                                 max_turns=s.CHAT_HISTORY_MAX_TURNS, max_chars=s.CHAT_HISTORY_MAX_CHARS)
        instruction = decision.file_route.instruction if decision.file_route else None
        messages: list[BaseMessage] = [SystemMessage(content=SYSTEM_PROMPT), *history_messages(trimmed.kept),
                                       HumanMessage(content=task_message(question, instruction, decision.rag_context))]
        attachments = (Path(decision.file_route.path),) if decision.file_route else ()
        loop = LoopStart(request, messages, attachments, client, trace, meter, started,
                         tuple(decision.file_route.tools) if decision.file_route else ())
        final_state = yield from run_loop(loop, parts, s, self.app.windows, live=live)
        if final_state.get("error"):
            return  # the node already emitted the ErrorEvent; the answer stays empty
        draft = final_answer(final_state.get("messages", []), parts.registry.tools, elapsed())
        yield from checked(draft, question, client, trace, s, started)  # ANSWER_CHECK, every strategy


# -- the Python API: one application per call ------------------------------------------------------
def stream(question: str, file_path: str | None = None, task_id: str | None = None, **options: Any) -> Iterator[Event]:
    """`Pipeline(load_settings()).stream(...)` on an application of its own, closed when the stream ends."""
    pipeline = Pipeline(load_settings())
    try:
        yield from pipeline.stream(question, file_path, task_id, **options)
    finally:
        pipeline.close()


def solve(question: str, file_path: str | None = None, task_id: str | None = None, **options: Any) -> Solution:
    """`Pipeline(load_settings()).solve(...)` on an application of its own, closed after the answer."""
    pipeline = Pipeline(load_settings())
    try:
        return pipeline.solve(question, file_path, task_id, **options)
    finally:
        pipeline.close()

"""The one pipeline: router → RAG short-circuit → LangGraph loop → answer extraction.

`Pipeline.stream()` yields typed events live as the run unfolds; `Pipeline.solve()` collects them
into a `Solution`. The app, the CLI and the evaluation runner call these two and nothing else.
No exception escapes either: failures end the run with an `ErrorEvent` and an empty answer.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import queue
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from agent.answer import answer_from_messages
from agent.answer_check import checked
from agent.events import AnswerExtracted, ErrorEvent, Event, HistoryTrimmed, Solution
from agent.graph import build_graph, recursion_limit
from agent.limits import history_messages, question_too_long, trim_history
from agent.prompts import SYSTEM_PROMPT, task_message
from agent.redaction import redacted
from agent.router import decide
from agent.run_client import RunEvents, run_client
from agent.run_limits import RunBudget, TokenMeter
from agent.state import AgentState, RunContext
from agent.team import Worker, build_workers, run_team
from agent.text_tool_calls import find_text_tool_calls, tool_argument_names
from agent.toolsets import SMALL_WINDOW_TOKENS, ToolsetChoice
from application import Application
from config import Settings, Strategy, load_settings, redact
from models import ChatModels, EndpointMonitor, ModelClient, OpenGate, RequestGate, separate_vision_endpoint
from models.messages import message_text
from rag.types import KnowledgeBase
from tools.core.context import ToolContext
from tools.core.registry import ToolRegistry, build_registry
from tools.core.replay_cache import ToolCache
from tools.core.services import RunServices
from tools.core.specs import Role
from tools.core.workspace import open_workspace

# Threads that drive graph runs; idle ones are reused across runs.
_RUNNER = cf.ThreadPoolExecutor(max_workers=256, thread_name_prefix="agent-run")


@dataclass(frozen=True)
class _Request:
    """One question as the caller asked it."""

    question: str
    file_path: str | None
    task_id: str | None
    history: list[dict[str, Any]] | None
    use_rag: bool
    confine: bool
    readable: tuple[Path, ...]
    max_iterations: int | None = None
    """This run's iteration cap (None: MAX_ITERATIONS)."""
    spent_tokens: int = 0
    """Tokens earlier attempts at the same task spent (they count against MAX_TOKENS_PER_TASK)."""
    strategy: Strategy | None = None
    """This run's strategy (None: AGENT_STRATEGY)."""
    tool_cache: ToolCache | None = None
    """The run's tool-result cache (record and replay, tools.core.replay_cache); None: every call live, none kept."""


@dataclass(frozen=True)
class _Loop:
    """What the loop of one run starts from: the routed request, its first messages, its client and meters."""

    request: _Request
    messages: list[BaseMessage]
    attachments: tuple[Path, ...]
    client: ModelClient
    trace: RunEvents
    meter: TokenMeter
    started: float
    route_tools: tuple[str, ...] = ()
    """The attachment route's tools (offered first on a small window)."""


@dataclass
class _Finished:
    """End-of-run marker on a run's event queue: the final graph state, or what went wrong."""

    state: dict[str, Any] | None
    error: BaseException | None = None


@dataclass
class _Parts:
    """The heavy, shareable pieces, built once by `preload()`."""

    llm: BaseChatModel | None
    registry: ToolRegistry | None
    knowledge_base: KnowledgeBase | None
    graph: CompiledStateGraph[AgentState, RunContext, AgentState, AgentState] | None = None
    models: ChatModels | None = None
    """One chat model per model name (None when no endpoint is configured)."""
    endpoint: EndpointMonitor | None = None
    """The agent endpoint's check (None for an injected model: tests' scripted models have no endpoint)."""
    vision_endpoint: EndpointMonitor | None = None
    """The vision endpoint's own check, when VISION_BASE_URL / VISION_API_KEY make it another endpoint."""
    status: dict[str, str] = field(default_factory=dict)
    raise_internal_errors: bool = False
    """A tool's bug ends the run with an internal error instead of becoming an observation (tests)."""
    workers: dict[Role, Worker] | None = None
    """The team strategy's workers, compiled on the first team run."""
    ready: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


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
        self._parts = _Parts(llm=llm, registry=registry, knowledge_base=knowledge_base,
                             raise_internal_errors=raise_internal_errors)

    # -- set-up -----------------------------------------------------------------------------------
    def preload(self) -> dict[str, str]:
        """Build the model client, tools, graph and knowledge base once; return a status line per part."""
        parts = self._parts
        with parts.lock:
            if parts.ready:
                return dict(parts.status)
            s, status = self.settings, parts.status
            if parts.llm is not None or s.llm_configured:
                parts.models = ChatModels(s, parts.llm)
                parts.llm = parts.models.get()
            if parts.llm is None:
                status["llm"] = "not configured — set OPENAI_API_KEY or OPENAI_BASE_URL"
            elif parts.models is not None and parts.models.fixed is None:
                parts.endpoint = self.app.monitor("agent", s)
                status["llm"] = parts.endpoint.probe().detail
                if s.vision_model and separate_vision_endpoint(s):  # the header shows both endpoints
                    parts.vision_endpoint = self.app.monitor("vision", s)
                    status["vision"] = f"{parts.vision_endpoint.probe().detail} (own endpoint)"
                if parts.endpoint.state is None or not parts.endpoint.state.unreachable:
                    window = self.app.windows.get(s)  # asked once here, not in the first question's time
                    status["window"] = f"{window.tokens:,} tokens ({window.source})"
            else:
                status["llm"] = f"ready ({_model_name(parts.llm, s)})"
            kb_error = None
            if parts.knowledge_base is None:
                parts.knowledge_base, kb_error = self.app.knowledge_base()
            if parts.registry is None:  # rag_search searches the pipeline's own knowledge base
                parts.registry = build_registry(s, deps={"knowledge_base": parts.knowledge_base,
                                                         **self.app.tool_services()})
            reg = parts.registry
            missing = f"; missing: {', '.join(sorted(reg.missing))}" if reg.missing else ""
            status["tools"] = f"{len(reg.tools)} active ({', '.join(reg.names) or 'none'}){missing}"
            parts.graph = build_graph(reg, raise_internal_errors=parts.raise_internal_errors)
            status["graph"] = f"ready (MAX_ITERATIONS={s.MAX_ITERATIONS})"
            if kb_error is not None:
                status["rag_error"] = kb_error
            status["rag"] = _describe_kb(parts.knowledge_base, s)
            if s.RAG_ENABLED:
                try:
                    parts.knowledge_base.warm()  # the index and embedding model now, not in the first question
                except Exception as exc:  # noqa: BLE001 - lookups will report it too; the agent still runs
                    status["rag_error"] = redact(f"{type(exc).__name__}: {exc}", s)
            parts.ready = True
            return dict(status)

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
        request = _Request(question, file_path, task_id, history, use_rag, confine, tuple(Path(p) for p in readable),
                           max_iterations, strategy=strategy, tool_cache=tool_cache)
        return self._events(request, live=True)

    def _events(self, request: _Request, *, live: bool) -> Iterator[Event]:
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
        request = _Request(question, file_path, task_id, history, use_rag, confine, tuple(Path(p) for p in readable),
                           max_iterations, spent_tokens, strategy, tool_cache)
        events = list(self._events(request, live=False))
        path = str(Path(file_path).expanduser().resolve()) if file_path else None
        solution = Solution.from_events(question, events, task_id=task_id, file_path=path)
        solution.strategy = strategy or self.settings.AGENT_STRATEGY
        return solution

    def _run(self, request: _Request, started: float, live: bool) -> Iterator[Event]:
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
        loop = _Loop(request, messages, attachments, client, trace, meter, started,
                     tuple(decision.file_route.tools) if decision.file_route else ())
        final_state = yield from self._loop(loop, live)
        if final_state.get("error"):
            return  # the node already emitted the ErrorEvent; the answer stays empty
        draft = self._answer(final_state.get("messages", []), elapsed())
        yield from checked(draft, question, client, trace, s, started)  # ANSWER_CHECK, every strategy

    def _loop(self, loop: _Loop, live: bool) -> Generator[Event, None, dict[str, Any]]:
        """Run the LangGraph loop in the run's workspace, yielding its events as they happen; the final state."""
        s, parts, request = self.settings, self._parts, loop.request
        assert parts.graph is not None
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        workspace = open_workspace(s, request.task_id or "run")
        tool_context = ToolContext(attachments=loop.attachments, task_id=request.task_id,
                                   run_services=RunServices(workspace),
                                   readable=request.readable, confined=request.confine, model=loop.client,
                                   tool_cache=request.tool_cache)

        def counted(event: Event) -> None:  # tools' model calls (vision) count against the run's tokens too
            loop.meter.observe(event)
            inbox.put(event)

        loop.trace.sink = counted
        window = self.app.windows.get(s, probe=parts.endpoint is not None)  # a scripted in-process model has no server
        budget = RunBudget.for_run(s, window, workspace, request.max_iterations, loop.meter)
        toolset = (ToolsetChoice(tuple(parts.registry.names), window.tokens, loop.route_tools, request.question)
                   if parts.registry is not None and window.tokens <= SMALL_WINDOW_TOKENS else None)
        ctx = RunContext(settings=s, client=loop.client, tools=tool_context, started=loop.started, emit=inbox.put,
                         budget=budget, toolset=toolset)
        graph, messages = parts.graph, loop.messages
        config: RunnableConfig = {"recursion_limit": recursion_limit(budget.max_iterations)}

        team = self._workers() if (request.strategy or s.AGENT_STRATEGY) == "team" else None

        def drive() -> None:
            try:
                if team is not None:  # the team strategy: an orchestrator delegating to workers (agent.team)
                    inbox.put(_Finished(run_team(ctx, team, message_text(messages[-1]))))
                else:
                    inbox.put(_Finished(graph.invoke({"messages": messages, "iterations": 0}, config=config,
                                                     context=ctx)))
            except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread
                inbox.put(_Finished(None, exc))
            finally:
                workspace.close()  # the run's files go with it, also when the caller stopped listening

        if live:
            # The graph runs in a pooled thread and its nodes emit into `inbox`, so each event reaches
            # the caller as it happens while LangGraph runs each step inline (no thread pool per run).
            _RUNNER.submit(contextvars.copy_context().run, drive)
        else:
            drive()  # solve() collects everything anyway: skip the thread hand-offs
        try:
            while not isinstance(item := inbox.get(), _Finished):
                yield item
        finally:
            ctx.cancelled.set()  # the caller stopped listening: end the run at the next node
        if item.error is not None:
            raise item.error
        return item.state or {}

    def _workers(self) -> dict[Role, Worker]:
        """The team's workers over the registry's tools (compiled once, on the first team run)."""
        parts = self._parts
        with parts.lock:
            if parts.workers is None:
                assert parts.registry is not None
                parts.workers = build_workers(parts.registry, raise_internal_errors=parts.raise_internal_errors)
            return parts.workers

    def _answer(self, final_messages: list[Any], elapsed_s: float) -> AnswerExtracted:
        """The answer the final messages hold; a tool call written as text is never one."""
        assert self._parts.registry is not None
        answer, method, raw = answer_from_messages(final_messages)
        how: str = method  # AnswerExtracted.method also names outcomes that are no extraction rule
        if raw and find_text_tool_calls(raw, tool_argument_names(self._parts.registry.tools)) is not None:
            answer, how = "", "unrun_tool_call"
        return AnswerExtracted(elapsed_s=elapsed_s, answer=answer, raw=raw, method=how,
                               truncated=_answer_was_cut(final_messages, raw))


def _answer_was_cut(messages: list[Any], raw: str) -> bool:
    """True when the message the answer came from was cut at the length limit."""
    for msg in reversed(messages):
        if isinstance(msg, AIMessage) and message_text(msg) == raw and raw:
            return (msg.response_metadata or {}).get("finish_reason") == "length"
    return False


def _model_name(llm: Any, settings: Settings) -> str:
    return str(getattr(llm, "model_name", None) or getattr(llm, "model", None) or settings.MODEL_NAME)


def _describe_kb(kb: KnowledgeBase, settings: Settings) -> str:
    if not settings.RAG_ENABLED:
        return "off (RAG_ENABLED=false)"
    try:
        return kb.describe()
    except Exception as exc:  # noqa: BLE001
        return f"unavailable: {type(exc).__name__}: {exc}"


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

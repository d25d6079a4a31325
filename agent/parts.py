"""The pipeline's heavy, shareable pieces: chat models, endpoint checks, tools, graph, knowledge base, team workers.

Built once by `Pipeline.preload()` (the first question or the app's preload thread, whichever comes
first) and shared by every run and every `with_gate` copy of the pipeline. Each part leaves a status
line for the app's header; a part that cannot be built says why there instead of failing the rest.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph.state import CompiledStateGraph

from agent.graph import build_graph
from agent.state import AgentState, RunContext
from agent.team import Worker, build_workers
from application import Application
from config import Settings, redact
from models import ChatModels, EndpointMonitor, separate_vision_endpoint
from rag.types import KnowledgeBase
from tools.core.registry import ToolRegistry, build_registry
from tools.core.specs import Role


@dataclass
class Parts:
    """The heavy, shareable pieces, built once by `load()`."""

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

    def load(self, settings: Settings, app: Application) -> dict[str, str]:
        """Build the model client, tools, graph and knowledge base once; return a status line per part."""
        with self.lock:
            if self.ready:
                return dict(self.status)
            s, status = settings, self.status
            if self.llm is not None or s.llm_configured:
                self.models = ChatModels(s, self.llm)
                self.llm = self.models.get()
            if self.llm is None:
                status["llm"] = "not configured — set OPENAI_API_KEY or OPENAI_BASE_URL"
            elif self.models is not None and self.models.fixed is None:
                self.endpoint = app.monitor("agent", s)
                status["llm"] = self.endpoint.probe().detail
                if s.vision_model and separate_vision_endpoint(s):  # the header shows both endpoints
                    self.vision_endpoint = app.monitor("vision", s)
                    status["vision"] = f"{self.vision_endpoint.probe().detail} (own endpoint)"
                if self.endpoint.state is None or not self.endpoint.state.unreachable:
                    window = app.windows.get(s)  # asked once here, not in the first question's time
                    status["window"] = f"{window.tokens:,} tokens ({window.source})"
            else:
                status["llm"] = f"ready ({_model_name(self.llm, s)})"
            kb_error = None
            if self.knowledge_base is None:
                self.knowledge_base, kb_error = app.knowledge_base()
            if self.registry is None:  # rag_search searches the pipeline's own knowledge base
                self.registry = build_registry(s, deps={"knowledge_base": self.knowledge_base, **app.tool_services()})
            reg = self.registry
            missing = f"; missing: {', '.join(sorted(reg.missing))}" if reg.missing else ""
            status["tools"] = f"{len(reg.tools)} active ({', '.join(reg.names) or 'none'}){missing}"
            self.graph = build_graph(reg, raise_internal_errors=self.raise_internal_errors)
            status["graph"] = f"ready (MAX_ITERATIONS={s.MAX_ITERATIONS})"
            if kb_error is not None:
                status["rag_error"] = kb_error
            status["rag"] = _describe_kb(self.knowledge_base, s)
            if s.RAG_ENABLED:
                try:
                    self.knowledge_base.warm()  # the index and embedding model now, not in the first question
                except Exception as exc:  # noqa: BLE001 - lookups will report it too; the agent still runs
                    status["rag_error"] = redact(f"{type(exc).__name__}: {exc}", s)
            self.ready = True
            return dict(status)

    def team_workers(self) -> dict[Role, Worker]:
        """The team's workers over the registry's tools (compiled once, on the first team run)."""
        with self.lock:
            if self.workers is None:
                assert self.registry is not None
                self.workers = build_workers(self.registry, raise_internal_errors=self.raise_internal_errors)
            return self.workers


def _model_name(llm: Any, settings: Settings) -> str:
    return str(getattr(llm, "model_name", None) or getattr(llm, "model", None) or settings.MODEL_NAME)


def _describe_kb(kb: KnowledgeBase, settings: Settings) -> str:
    if not settings.RAG_ENABLED:
        return "off (RAG_ENABLED=false)"
    try:
        return kb.describe()
    except Exception as exc:  # noqa: BLE001
        return f"unavailable: {type(exc).__name__}: {exc}"

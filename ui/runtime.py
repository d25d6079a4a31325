"""The app's shared, load-once components: the pipeline, the tool registry, and the preload around them.

The server answers HTTP before any of this exists: a daemon thread imports and builds the agent
(langgraph, the LLM client, embeddings, tool checks) so `import app` stays as light as `import gradio`.
Handlers call `runtime.pipeline()`, which waits for the load (or starts it when preloading is off)
instead of failing. Nothing here is per request: sessions keep their own data in `gr.State`.

The header reads `status_markdown()` live: each component as the preload reaches it, then the model
endpoint's latest verdict (re-checked every APP_STATUS_RECHECK_S in a background thread) and the
knowledge base's size as it is on disk now.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from config import Settings
from ui.status import LoadState, StatusLine, preload_status, rag_status, research_status
from visitors.batch_guard import RunSlots

if TYPE_CHECKING:
    from agent.pipeline import Pipeline
    from application import Application
    from rag.types import KnowledgeBase
    from tools.registry import ToolRegistry

log = logging.getLogger(__name__)


class AgentUnavailable(RuntimeError):
    """The pipeline could not be built; the message says why and how to fix it."""


@dataclass
class Loaded:
    """What a load produced; `pipeline` is None when building it failed (`error` says why)."""

    registry: ToolRegistry | None = None
    pipeline: Pipeline | None = None
    components: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def load_components(settings: Settings, building: Callable[[Pipeline], None] | None = None,
                    app: Application | None = None) -> Loaded:
    """Build and warm up the pipeline (model client, tools, graph, knowledge base); runs in the preload thread.

    `building` gets the pipeline before its preload starts, so the header can show each part as it is ready;
    `app` is the application it runs on (None: one of the pipeline's own).
    """
    loaded = Loaded()
    try:
        from agent.pipeline import Pipeline

        pipeline = Pipeline(settings, app=app)
        if building is not None:
            building(pipeline)
        loaded.components = {str(k): str(v) for k, v in (pipeline.preload() or {}).items()}
        loaded.registry, loaded.pipeline = pipeline.registry, pipeline
    except Exception as exc:  # noqa: BLE001 - shown in the header; previews and browsing keep working
        log.exception("pipeline failed to load")
        loaded.error = f"{type(exc).__name__}: {exc}"
        from tools.registry import build_registry

        loaded.registry = build_registry(settings, deps=app.tool_deps() if app is not None else None)
    return loaded


class Runtime:
    """Process-wide components, loaded once in a background thread; safe to share between sessions."""

    def __init__(self, settings: Settings, loader: Callable[[Settings], Loaded] | None = None, *,
                 app: Application | None = None) -> None:
        """`app`: the entry point's application the pipeline runs on (None: the pipeline makes its own)."""
        self.settings = settings
        self.app = app
        self.batch_slots = RunSlots()
        """The app's running batches (BATCH_MAX_RUNNING), shared by every session."""
        self._loader = loader
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()
        self._loaded = Loaded()
        self._building: Pipeline | None = None
        self._started_at: float | None = None
        self._finished_at: float | None = None
        self._own_kb: KnowledgeBase | None = None

    def start(self) -> None:
        """Start loading in a daemon thread (idempotent); once loaded, the endpoint re-check thread."""
        with self._lock:
            if self._thread is not None:
                return
            self._started_at = time.monotonic()
            self._thread = threading.Thread(target=self._load, name="preload", daemon=True)
            self._thread.start()

    def _load(self) -> None:
        try:
            if self._loader is None:
                self._loaded = load_components(self.settings, self._note_building, self.app)
            else:
                self._loaded = self._loader(self.settings)
        except Exception as exc:  # noqa: BLE001 - e.g. a tool module with a syntax error: report, don't die
            log.exception("preload failed")
            self._loaded = Loaded(error=f"{type(exc).__name__}: {exc}")
        finally:
            self._finished_at = time.monotonic()
            self.ready.set()
        threading.Thread(target=self._recheck_endpoint, name="endpoint-recheck", daemon=True).start()

    def _note_building(self, pipeline: Pipeline) -> None:
        self._building = pipeline

    def _recheck_endpoint(self) -> None:
        """Probe the model endpoint every APP_STATUS_RECHECK_S, so the header follows a server going up or down."""
        monitor = getattr(self._loaded.pipeline, "endpoint", None)
        while monitor is not None and hasattr(monitor, "probe"):
            time.sleep(self.settings.APP_STATUS_RECHECK_S)
            try:
                monitor.probe()
            except Exception:  # noqa: BLE001 - the next round tries again; requests report their own failures
                log.debug("endpoint re-check failed", exc_info=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until loaded (starting the load if nobody did); False on timeout."""
        self.start()
        return self.ready.wait(timeout)

    @property
    def state(self) -> LoadState:
        """idle, loading, ready or failed."""
        if not self.ready.is_set():
            return "loading" if self._thread is not None else "idle"
        return "failed" if self._loaded.pipeline is None else "ready"

    def pipeline(self) -> Pipeline:
        """The shared `agent.pipeline.Pipeline`, once loaded; AgentUnavailable if it could not be built."""
        self.wait()
        if self._loaded.pipeline is None:
            raise AgentUnavailable(f"The agent could not be loaded: {self._loaded.error or 'unknown error'}")
        return self._loaded.pipeline

    def registry(self) -> ToolRegistry:
        """The shared tool registry, once loaded; AgentUnavailable if even that failed."""
        self.wait()
        if self._loaded.registry is None:
            raise AgentUnavailable(f"The tools could not be loaded: {self._loaded.error or 'unknown error'}")
        return self._loaded.registry

    def knowledge_base(self) -> KnowledgeBase:
        """The pipeline's knowledge base; without a pipeline, the configured one, opened once and kept."""
        self.wait()
        if self._loaded.pipeline is not None:
            return self._loaded.pipeline.knowledge_base
        with self._lock:
            if self._own_kb is None:
                from rag import open_knowledge_base

                self._own_kb = open_knowledge_base(self.settings)
            return self._own_kb

    def components(self) -> dict[str, str]:
        """Each component's state now: as far as the preload got, then live endpoint and knowledge-base state."""
        if not self.ready.is_set():
            return self._building.status_so_far() if self._building is not None else {}
        comps = {**self._loaded.components, **research_status(self.settings)}
        pipeline = self._loaded.pipeline
        state = getattr(getattr(pipeline, "endpoint", None), "state", None)
        if state is not None and "llm" in comps:
            comps["llm"] = str(state.detail)
        if pipeline is not None and "rag" in comps:
            try:
                comps["rag"] = rag_status(pipeline.knowledge_base, self.settings)
            except Exception as exc:  # noqa: BLE001 - the header shows it instead of failing
                comps["rag"] = f"unavailable: {type(exc).__name__}"
        return comps

    def status(self) -> StatusLine:
        """The header's state: one summary line and one line per component."""
        end = self._finished_at if self._finished_at is not None else time.monotonic()
        elapsed = end - self._started_at if self._started_at is not None else None
        return preload_status(self.state, self.components(), llm_configured=self.settings.llm_configured,
                              model_name=self.settings.MODEL_NAME, error=self._loaded.error, elapsed_s=elapsed,
                              preload=self.settings.APP_PRELOAD)

    def status_markdown(self) -> str:
        """The header as Markdown: the summary line, then one entry per component."""
        return self.status().markdown()

    def tools_markdown(self) -> str:
        """The registry's tiers and missing tools, for the header's details."""
        if self._loaded.registry is None:
            return "Tool checks are still running…" if not self.ready.is_set() else "Tools could not be loaded."
        return "```\n" + self._loaded.registry.describe() + "\n```"

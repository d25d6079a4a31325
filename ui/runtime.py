"""The app's shared, load-once components: the pipeline, the tool registry, and the preload around them.

The server answers HTTP before any of this exists: a daemon thread imports and builds the agent
(langgraph, the LLM client, embeddings, tool checks) so `import app` stays as light as `import gradio`.
Handlers call `runtime.pipeline()`, which waits for the load (or starts it when preloading is off)
instead of failing. Nothing here is per request: sessions keep their own data in `gr.State`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from config import Settings
from ui.status import LoadState, preload_status

log = logging.getLogger(__name__)


class AgentUnavailable(RuntimeError):
    """The pipeline could not be built; the message says why and how to fix it."""


@dataclass
class Loaded:
    """What a load produced; `pipeline` is None when building it failed (`error` says why)."""

    registry: Any = None
    pipeline: Any = None
    components: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def load_components(settings: Settings) -> Loaded:
    """Build and warm up the pipeline (model client, tools, graph, knowledge base); runs in the preload thread."""
    loaded = Loaded()
    try:
        from agent.pipeline import Pipeline

        pipeline = Pipeline(settings)
        loaded.components = {str(k): str(v) for k, v in (pipeline.preload() or {}).items()}
        loaded.registry, loaded.pipeline = pipeline.registry, pipeline
    except Exception as exc:  # noqa: BLE001 - shown in the header; previews and browsing keep working
        log.exception("pipeline failed to load")
        loaded.error = f"{type(exc).__name__}: {exc}"
        from tools.registry import build_registry

        loaded.registry = build_registry(settings)
    return loaded


class Runtime:
    """Process-wide components, loaded once in a background thread; safe to share between sessions."""

    def __init__(self, settings: Settings, loader: Callable[[Settings], Loaded] = load_components) -> None:
        self.settings = settings
        self._loader = loader
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()
        self._loaded = Loaded()
        self._started_at: float | None = None
        self._finished_at: float | None = None
        self._own_kb: Any = None

    def start(self) -> None:
        """Start loading in a daemon thread (idempotent)."""
        with self._lock:
            if self._thread is not None:
                return
            self._started_at = time.monotonic()
            self._thread = threading.Thread(target=self._load, name="preload", daemon=True)
            self._thread.start()

    def _load(self) -> None:
        try:
            self._loaded = self._loader(self.settings)
        except Exception as exc:  # noqa: BLE001 - e.g. a tool module with a syntax error: report, don't die
            log.exception("preload failed")
            self._loaded = Loaded(error=f"{type(exc).__name__}: {exc}")
        finally:
            self._finished_at = time.monotonic()
            self.ready.set()

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

    def pipeline(self) -> Any:
        """The shared `agent.pipeline.Pipeline`, once loaded; AgentUnavailable if it could not be built."""
        self.wait()
        if self._loaded.pipeline is None:
            raise AgentUnavailable(f"The agent could not be loaded: {self._loaded.error or 'unknown error'}")
        return self._loaded.pipeline

    def registry(self) -> Any:
        """The shared tool registry, once loaded; AgentUnavailable if even that failed."""
        self.wait()
        if self._loaded.registry is None:
            raise AgentUnavailable(f"The tools could not be loaded: {self._loaded.error or 'unknown error'}")
        return self._loaded.registry

    def knowledge_base(self) -> Any:
        """The pipeline's knowledge base; without a pipeline, the configured one, opened once and kept."""
        self.wait()
        kb = getattr(self._loaded.pipeline, "knowledge_base", None)
        if kb is not None:
            return kb
        with self._lock:
            if self._own_kb is None:
                from rag import open_knowledge_base

                self._own_kb = open_knowledge_base(self.settings)
            return self._own_kb

    def status_markdown(self) -> str:
        """The header line: loading / ready / failed, and one entry per component."""
        end = self._finished_at if self._finished_at is not None else time.monotonic()
        elapsed = end - self._started_at if self._started_at is not None else None
        return preload_status(self.state, self._loaded.components, llm_configured=self.settings.llm_configured,
                              model_name=self.settings.MODEL_NAME, error=self._loaded.error, elapsed_s=elapsed,
                              preload=self.settings.APP_PRELOAD)

    def tools_markdown(self) -> str:
        """The registry's tiers and missing tools, for the header's details."""
        if self._loaded.registry is None:
            return "Tool checks are still running…" if not self.ready.is_set() else "Tools could not be loaded."
        return "```\n" + self._loaded.registry.describe() + "\n```"

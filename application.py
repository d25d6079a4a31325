"""The application object: what one process (an entry point) owns for as long as it runs.

Each entry point builds one — `app.py`, `python -m agent`, `python -m evaluation`, `python -m tools`, the
Python API (`agent.solve` / `agent.stream`, the seed's evaluator) — from `config.load_settings()`, hands
it down (`Pipeline(settings, app=...)`) and closes it at the end. Nothing below keeps process state in a
module: what a run learns about its endpoint (the context window, the tokens-per-character ratio), the
endpoint checks, the knowledge base, the browser pools and the workspace of tool calls made outside a
run all live here. Tests build their own (the `application` fixture), so nothing learnt leaks between them.

Heavy parts (the knowledge base, Chromium) are made on first use: building an application is cheap.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

from config import Settings, redact
from models.context_window import ContextWindows
from models.endpoint import EndpointMonitor, Role, endpoint_for
from models.token_estimate import PromptEstimators

if TYPE_CHECKING:
    from rag.types import KnowledgeBase
    from tools.browser.engines import BrowserEngines
    from tools.workspace import Workspace


class Application:
    """Settings and the process-lifetime services built from them; thread-safe; `close()` ends them."""

    def __init__(self, settings: Settings, *, knowledge_base: KnowledgeBase | None = None) -> None:
        """`knowledge_base`: one to use instead of the settings' (tests, the rerun of a task)."""
        self.settings = settings
        self.windows = ContextWindows()
        """The context window per endpoint and model: probed once, corrected by overflow errors."""
        self.estimators = PromptEstimators()
        """The prompt-token estimators per endpoint and model, learning from each reply's usage."""
        self._monitors: dict[tuple[Role, str, str], EndpointMonitor] = {}
        self._knowledge_base = knowledge_base
        self._kb_error: str | None = None
        self._browsers: BrowserEngines | None = None
        self._workspace: Workspace | None = None
        self._lock = threading.Lock()

    def monitor(self, role: Role = "agent", settings: Settings | None = None) -> EndpointMonitor:
        """The check of `role`'s endpoint under `settings` (default: the application's), made once per endpoint."""
        s = settings or self.settings
        key = (role, endpoint_for(s, role).base_url, s.MODEL_NAME)
        with self._lock:
            if key not in self._monitors:
                self._monitors[key] = EndpointMonitor(s, role=role)
            return self._monitors[key]

    def knowledge_base(self) -> tuple[KnowledgeBase, str | None]:
        """The knowledge base the settings point at (opened once, lazily), and why it is empty when opening failed."""
        with self._lock:
            if self._knowledge_base is None:
                from rag import open_knowledge_base  # heavy (faiss, embeddings): only when asked
                from rag.types import EmptyKnowledgeBase

                try:
                    self._knowledge_base = open_knowledge_base(self.settings)
                except Exception as exc:  # noqa: BLE001 - without a knowledge base the agent still works
                    self._knowledge_base = EmptyKnowledgeBase()
                    self._kb_error = redact(f"{type(exc).__name__}: {exc}", self.settings)
            return self._knowledge_base, self._kb_error

    @property
    def browsers(self) -> BrowserEngines:
        """The browser pools (one per set of address rules); Chromium starts on a run's first browser call."""
        with self._lock:
            if self._browsers is None:
                from tools.browser.engines import BrowserEngines

                self._browsers = BrowserEngines()
            return self._browsers

    @property
    def workspace(self) -> Workspace:
        """The workspace of tool calls made outside a run (`python -m tools call`), removed by `close()`."""
        with self._lock:
            if self._workspace is None or not self._workspace.root.is_dir():
                from tools.workspace import open_workspace

                self._workspace = open_workspace(self.settings, "process")
            return self._workspace

    def tool_deps(self) -> dict[str, Any]:
        """What tool factories may ask for (`tools.registry.build_registry(..., deps=)`)."""
        return {"knowledge_base": self.knowledge_base()[0], "browsers": self.browsers}

    def close(self) -> None:
        """Close the browsers and remove the process workspace (idempotent)."""
        with self._lock:
            browsers, workspace = self._browsers, self._workspace
            self._browsers = self._workspace = None
        if browsers is not None:
            browsers.close()
        if workspace is not None:
            workspace.close()

    def __enter__(self) -> Application:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

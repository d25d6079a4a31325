"""The application object: what one process (an entry point) owns for as long as it runs.

Each entry point builds one — `app.py`, `python -m agent`, `python -m evaluation`, `python -m tools`, the
Python API (`agent.solve` / `agent.stream`, the seed's evaluator) — from `config.load_settings()`, hands
it down (`Pipeline(settings, app=...)`) and closes it at the end. Nothing below keeps process state in a
module: what a run learns about its endpoint (the context window, the tokens-per-character ratio), the
endpoint checks, the knowledge base, the browser pools and the workspace of tool calls made outside a
run all live here. Tests build their own (the `application` fixture), so nothing learnt leaks between them.

Every part is made on first use, its module imported then: building an application is cheap and imports no
langchain, so `app.py` builds one on its import path and the server answers before the agent loads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from config import Settings, redact

if TYPE_CHECKING:
    from models.context_window import ContextWindows
    from models.endpoint import EndpointMonitor, Role
    from models.token_estimate import PromptEstimators
    from rag.types import KnowledgeBase
    from tools.browser.engines import BrowserEngines
    from tools.core.workspace import Workspace
    from tools.web.service import MinInterval

T = TypeVar("T")


class Application:
    """Settings and the process-lifetime services built from them; thread-safe; `close()` ends them."""

    def __init__(self, settings: Settings, *, knowledge_base: KnowledgeBase | None = None) -> None:
        """`knowledge_base`: one to use instead of the settings' (tests, the rerun of a task)."""
        self.settings = settings
        self._parts: dict[str, Any] = {}
        self._monitors: dict[tuple[str, str, str], EndpointMonitor] = {}
        self._knowledge_base = knowledge_base
        self._kb_error: str | None = None
        self._lock = threading.Lock()

    def _once(self, name: str, make: Callable[[], T]) -> T:
        """The part called `name`, made by `make` on first use."""
        with self._lock:
            if name not in self._parts:
                self._parts[name] = make()
            return cast("T", self._parts[name])

    @property
    def windows(self) -> ContextWindows:
        """The context window per endpoint and model: probed once, corrected by overflow errors."""
        from models.context_window import ContextWindows

        return self._once("windows", ContextWindows)

    @property
    def estimators(self) -> PromptEstimators:
        """The prompt-token estimators per endpoint and model, learning from each reply's usage."""
        from models.token_estimate import PromptEstimators

        return self._once("estimators", PromptEstimators)

    @property
    def nominatim_limit(self) -> MinInterval:
        """Nominatim's one request a second, shared by every map tool and run of the application."""
        from tools.web.geocoding import NOMINATIM_INTERVAL_S
        from tools.web.service import MinInterval

        return self._once("nominatim_limit", lambda: MinInterval(NOMINATIM_INTERVAL_S))

    def monitor(self, role: Role = "agent", settings: Settings | None = None) -> EndpointMonitor:
        """The check of `role`'s endpoint under `settings` (default: the application's), made once per endpoint."""
        from models.endpoint import EndpointMonitor, endpoint_for

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
        from tools.browser.engines import BrowserEngines

        return self._once("browsers", BrowserEngines)

    @property
    def workspace(self) -> Workspace:
        """The workspace of tool calls made outside a run (`python -m tools call`), removed by `close()`."""
        from tools.core.workspace import open_workspace

        with self._lock:
            made = self._parts.get("workspace")
            if made is None or not made.root.is_dir():
                made = self._parts["workspace"] = open_workspace(self.settings, "process")
            return cast("Workspace", made)

    def tool_deps(self) -> dict[str, Any]:
        """What tool factories may ask for (`tools.core.registry.build_registry(..., deps=)`)."""
        return {"knowledge_base": self.knowledge_base()[0], **self.tool_services()}

    def tool_services(self) -> dict[str, Any]:
        """The shared services tool factories may ask for, without the knowledge base (a pipeline brings its own)."""
        return {"browsers": self.browsers, "nominatim_limit": self.nominatim_limit}

    def close(self) -> None:
        """Close the browsers and remove the process workspace (idempotent)."""
        with self._lock:
            browsers, workspace = self._parts.pop("browsers", None), self._parts.pop("workspace", None)
        if browsers is not None:
            browsers.close()
        if workspace is not None:
            workspace.close()

    def __enter__(self) -> Application:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

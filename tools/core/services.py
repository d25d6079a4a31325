"""RunServices: the per-run objects tools share across calls, as one typed object.

A run (a batch task, a Debug question, a Chat turn) makes one at its start around its workspace and
hands it to every tool call through the ToolContext (`ToolContext.services`); workers of one run share
it. Closing it closes the workspace, whose close hooks end the run's browser context first. A call made
outside a run (`python -m tools call`) gets the process's services, built on the process workspace.

What a tool wing keeps per run (OpenAlex's spent budget, the YouTube downloads) is the wing's own
type, kept here by type (`kept`): the services need not import the wing, whose tools read the very
ToolContext that holds them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tools.core.paging import PageCache
from tools.core.workspace import Workspace, process_workspace

if TYPE_CHECKING:
    from tools.browser.run import BrowserRun
    from tools.documents.pdf_parse import PdfParse

Kept = TypeVar("Kept")


@dataclass
class RunServices:
    """One run's workspace and what its tools keep between calls."""

    workspace: Workspace
    """The run's own directory and disk budget."""
    pages: PageCache = field(default_factory=PageCache)
    """Every document the run has read (web pages, files, outputs), for paging and find_in_page."""
    downloaded_pdfs: dict[str, tuple[Path, str]] = field(default_factory=dict)
    """URL -> (saved PDF, head lines): a long PDF still being parsed is read on from the saved file."""
    pdf_parses: dict[str, PdfParse] = field(default_factory=dict)
    """File version -> its background parse (tools.documents.pdf_parse)."""
    _browser: BrowserRun | None = field(default=None, repr=False)
    _kept: dict[type, object] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # tools of one run run in parallel

    def browser(self, make: Callable[[], BrowserRun]) -> BrowserRun:
        """The run's browser (its session and latest snapshot), made by `make` on first use, closed with the run."""
        with self._lock:
            if self._browser is None:
                self._browser = make()
                self.workspace.on_close(self._browser.close)
            return self._browser

    @property
    def browser_run(self) -> BrowserRun | None:
        """The run's browser if a tool has opened one."""
        return self._browser

    def kept(self, kind: type[Kept]) -> Kept:
        """The run's one `kind` (a tool wing's per-run state, made with no arguments), made on first use."""
        with self._lock:
            found = self._kept.get(kind)
            if not isinstance(found, kind):
                found = self._kept[kind] = kind()
            return found

    def close(self) -> None:
        """End the run: its browser context, then its directory."""
        self.workspace.close()

    def __enter__(self) -> RunServices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_process: RunServices | None = None
_process_lock = threading.Lock()


def process_services() -> RunServices:
    """The services of tool calls made outside a run: one per process, on the process workspace."""
    global _process
    work = process_workspace()
    with _process_lock:
        if _process is None or _process.workspace is not work:
            _process = RunServices(work)
        return _process

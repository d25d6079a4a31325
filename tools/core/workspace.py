"""A workspace per run: the one directory where a run's extractions, downloads and rendered pages live.

Each run (a task in a batch, a question in Debug, a turn in Chat) gets its own directory, bound
alone into its sandbox and deleted when the run ends, so no run sees another's files. Disk use is
capped per run: writers `reserve()` bytes before writing (nested archives included), and a run
that would pass `WORKSPACE_MAX_MB` gets a clear `size_limit` failure instead of filling the disk.
The objects tools share across a run's calls live in its `RunServices` (tools.core.services), around this workspace.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from config import Settings
from tools.core.errors import ToolFailure

T = TypeVar("T")
log = logging.getLogger(__name__)


class Workspace:
    """One run's directory, its disk budget, and what to do when the run ends."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._reserved = 0
        self._on_close: list[Callable[[], None]] = []
        self._hooks_lock = threading.Lock()  # not _lock: a hook may be registered while reserving
        self._lock = threading.Lock()  # tools of one run may run in parallel

    def subdir(self, label: str) -> Path:
        """A new, empty directory under the workspace, named after `label`."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:60] or "files"
        self.root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=self.root))

    def reserve(self, nbytes: int, what: str) -> None:
        """Claim `nbytes` of the run's disk budget before writing them; ToolFailure when it would be passed."""
        with self._lock:
            if self._reserved + nbytes > self.max_bytes:
                left = max(0, self.max_bytes - self._reserved)
                raise ToolFailure(f"{what} needs {_mb(nbytes)} but this run's workspace has only {_mb(left)} left "
                                  f"(WORKSPACE_MAX_MB={_mb(self.max_bytes)}). Work on a smaller part or another "
                                  "source.", "size_limit")
            self._reserved += nbytes

    def contains(self, path: Path) -> bool:
        """True when `path` (resolved) lies inside this workspace."""
        try:
            return path.resolve().is_relative_to(self.root.resolve())
        except OSError:
            return False

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call `callback` when the run ends, before its directory goes (a browser context shared across calls)."""
        with self._hooks_lock:
            self._on_close.append(callback)

    def close(self) -> None:
        """Run the close hooks and delete the directory."""
        with self._hooks_lock:
            hooks, self._on_close = self._on_close, []
        for hook in hooks:
            try:
                hook()
            except Exception:  # a hook that fails must not keep the run's files on disk
                log.exception("a workspace close hook failed")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_workspace(settings: Settings, label: str = "run") -> Workspace:
    """A fresh workspace under WORKSPACE_DIR (or the system temp folder) with the WORKSPACE_MAX_MB budget."""
    base = settings.WORKSPACE_DIR
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)[:40] or "run"
    root = Path(tempfile.mkdtemp(prefix=f"gaia-{safe}-", dir=str(base) if base else None))
    return Workspace(root, settings.WORKSPACE_MAX_MB * 1024 * 1024)


_process: Workspace | None = None
_process_lock = threading.Lock()


def process_workspace() -> Workspace:
    """The workspace of tool calls made outside any run (a test calling a tool bare): one per process, removed at exit.

    Runs and the tools CLI bring their own (`ToolContext.workspace`); this one has the default WORKSPACE_MAX_MB
    budget in the system temp folder, since nothing outside a run hands it settings.
    """
    global _process
    with _process_lock:
        if _process is None or not _process.root.is_dir():
            budget_mb = int(Settings.model_fields["WORKSPACE_MAX_MB"].default)
            _process = Workspace(Path(tempfile.mkdtemp(prefix="gaia-process-")), budget_mb * 1024 * 1024)
            atexit.register(_process.close)
        return _process


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MB"

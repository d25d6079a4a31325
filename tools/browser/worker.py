"""One browser thread: its own sync Playwright, its own Chromium, and the jobs of the runs pinned to it.

Playwright's sync API is bound to the thread that started it, so each worker thread owns one
Playwright driver and one Chromium and runs the jobs (`fn(browser)`) of the runs pinned to it, one
at a time. A run's jobs get a `RunBrowser` — the worker's browser seen through that run — so a run
whose page hung or crashed gets a new handle (and so a new context) on its next call while the
other runs on the thread keep theirs. A Chromium that dies is launched again (MAX_RESTARTS).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.browser import guard
from tools.browser.launch import (
    FRAME_SCRIPT,
    IGNORED_DEFAULT_ARGS,
    Face,
    clean_env,
    context_options,
    driver_environment,
    launch_args,
    private_chromium,
)

log = logging.getLogger(__name__)
MAX_RESTARTS = 3
"""Times a browser that crashed after a good start is launched again before callers are told it failed."""


@dataclass(frozen=True)
class WorkerLaunch:
    """What a worker launches with (one EngineConfig's share)."""

    executable: str
    proxy_port: int
    sandbox: bool
    face: Face
    page_memory_mb: int
    launch_timeout_s: float
    bin_folder: Path


class RunBrowser:
    """The worker's Chromium as one run sees it: its contexts are closed when the run's page is killed.

    Everything else (`version`, `is_connected`, ...) is the real browser's. `notes` are told to the
    run's next session (why its last page was closed).
    """

    def __init__(self, browser: Any, face: Face, notes: list[str] | None = None,
                 crash_reason: Callable[[], str] = lambda: "") -> None:
        self._browser = browser
        self._face = face
        self._made: list[Any] = []
        self._crash_reason = crash_reason
        self.notes: list[str] = list(notes or [])
        self.stale = False
        self.why = ""

    def crashed(self) -> None:
        """A page of this run crashed (killed past a cap, or out of memory): the run starts afresh next call."""
        reason = self._crash_reason()
        self.why = f"The page crashed and was closed{': ' + reason if reason else ''}. Open it again (it may do the " \
                   "same) or read it with fetch_webpage."
        self.stale = True

    def new_context(self, **options: Any) -> Any:
        """A context with the browser's face (user agent, viewport, locale, timezone) and `options` on top."""
        context = self._browser.new_context(**{**context_options(self._browser.version, self._face), **options})
        context.add_init_script(FRAME_SCRIPT)
        self._made.append(context)
        return context

    def close_contexts(self) -> None:
        """Close every context made through this handle (on the worker thread)."""
        for context in self._made:
            try:
                context.close()
            except Exception:  # noqa: BLE001 - a crashed or gone context
                log.debug("closing a killed run's context failed", exc_info=True)
        self._made.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@dataclass
class Job:
    """A function to run on the worker thread for one run (`key`), and where its result goes."""

    fn: Callable[[Any], Any]
    key: object
    future: cf.Future[Any] = field(default_factory=cf.Future)
    started: threading.Event = field(default_factory=threading.Event)


class BrowserWorker:
    """One thread with its own Playwright and Chromium; `put(job)` runs `job.fn(handle)` there."""

    def __init__(self, index: int, launch: WorkerLaunch, home: Path) -> None:
        self.index = index
        self.launch = launch
        self.home = home
        self.cold_start_s: float | None = None
        self.failure: BaseException | None = None
        self.ready = threading.Event()
        self.pinned: set[int] = set()
        """Runs (by key id) pinned to this worker."""
        self.running: Job | None = None
        self.browser_pid: int | None = None
        self._handles: dict[int, RunBrowser] = {}
        self._kill_notes: dict[int, str] = {}
        self.last_crash = ""
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name=f"browser-{index}", daemon=True)
        self.thread.start()

    def put(self, job: Job) -> None:
        """Queue `job` for this thread."""
        self._jobs.put(job)

    def alive(self) -> bool:
        """Whether the thread still serves jobs."""
        return self.thread.is_alive() and self.failure is None

    def mark_killed(self, key: object, why: str) -> None:
        """The run `key`'s page was killed: its next job gets a fresh handle, told `why`."""
        with self._lock:
            self._kill_notes[id(key)] = why
            handle = self._handles.get(id(key))
            if handle is not None:
                handle.stale, handle.why = True, why

    def note_crash(self, why: str) -> None:
        """A renderer of this thread was killed for `why`: the run whose page crashes is told so."""
        self.last_crash = why

    def forget(self, key: object) -> None:
        """The run `key` ended: unpin it."""
        with self._lock:
            self.pinned.discard(id(key))
            self._handles.pop(id(key), None)
            self._kill_notes.pop(id(key), None)

    def stop(self) -> None:
        """Ask the thread to close its browser and end."""
        self._jobs.put(None)

    def _run(self) -> None:
        restarts = 0
        while True:
            try:
                self._launch_and_serve()
                return
            except BaseException as exc:  # noqa: BLE001 - reported to every caller instead of dying silently
                log.warning("browser thread %d: %s", self.index, exc)
                if restarts >= MAX_RESTARTS or self.cold_start_s is None:
                    self.failure = exc
                    self.ready.set()
                    self._fail_pending(exc)
                    return
                restarts += 1

    def _launch_and_serve(self) -> None:
        from playwright.sync_api import sync_playwright

        started = time.monotonic()
        env = clean_env(self.home)
        driver_environment({k: str(v) for k, v in env.items()}, self.launch.bin_folder)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                # Chromium's namespace sandbox writes its own uid_map, which a non-dumpable process cannot:
                # the exec-only copy (non-dumpable) only where the sandbox is off.
                executable_path=self.launch.executable if self.launch.sandbox
                else private_chromium(self.launch.executable, self.launch.bin_folder / "chromium"),
                headless=True, args=launch_args(self.launch.proxy_port, self.launch.page_memory_mb),
                ignore_default_args=IGNORED_DEFAULT_ARGS, chromium_sandbox=self.launch.sandbox,
                env=env, downloads_path=str(self.home / "downloads"),
                timeout=self.launch.launch_timeout_s * 1000, handle_sigint=False, handle_sigterm=False,
                handle_sighup=False)
            self.browser_pid = guard.browser_pid(str(self.home))
            with self._lock:
                for handle in self._handles.values():  # a relaunched browser: every run starts afresh
                    handle.stale = True
            if self.cold_start_s is None:
                self.cold_start_s = time.monotonic() - started
            self.ready.set()
            self._serve(browser)
            browser.close()

    def _handle(self, browser: Any, key: object) -> RunBrowser:
        with self._lock:
            handle = self._handles.get(id(key))
            if handle is None or handle.stale or handle._browser is not browser:
                if handle is not None:
                    handle.close_contexts()
                note = self._kill_notes.pop(id(key), None) or (handle.why if handle is not None else "")
                handle = self._handles[id(key)] = RunBrowser(browser, self.launch.face, [note] if note else [],
                                                             self._take_crash)
            return handle

    def _take_crash(self) -> str:
        why, self.last_crash = self.last_crash, ""
        return why

    def _serve(self, browser: Any) -> None:
        from tools.core.errors import ToolFailure

        while (job := self._jobs.get()) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue
            self.running = job
            job.started.set()
            handle = self._handle(browser, job.key)
            try:
                job.future.set_result(job.fn(handle))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                if handle.stale and not isinstance(exc, ToolFailure):  # the page was killed under the action
                    exc = ToolFailure(handle.why or "The page was closed.", "failed")
                job.future.set_exception(exc)
            finally:
                self.running = None
            if not browser.is_connected():
                raise RuntimeError("the browser process exited")

    def _fail_pending(self, exc: BaseException) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None and job.future.set_running_or_notify_cancel():
                from tools.core.errors import ToolFailure

                job.future.set_exception(ToolFailure(f"the browser stopped: {exc}", "failed"))

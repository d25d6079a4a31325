"""The app's browser: a small pool of browser threads, each with its own Playwright and Chromium.

Playwright's sync API is bound to the thread that started it, while tool calls run on many threads;
so each browser thread (tools.browser.worker) owns a Playwright driver and a Chromium, and a run's
session is pinned to one thread for its life (the thread with the fewest runs when it starts). Runs
on different threads never wait for each other; `BROWSER_THREADS` threads start lazily, one per new
concurrent run until there are that many. Every Chromium sends every request through the one
filtering proxy (`tools.browser.proxy`), with a clean environment (tools.browser.launch).

The per-call limit counts the action only (from when its thread starts it). An action still running
at its limit is ended by killing the page that keeps its thread busy (the renderer that used the most
CPU), then, if that is not enough, that thread's Chromium: the run is told, its next call gets a new
context, and the other runs go on. A watchdog kills any renderer past the memory or CPU caps.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from tools.browser import guard
from tools.browser.launch import Face, SandboxMode, clean_env, decide_sandbox, launch_args
from tools.browser.proxy import FilteringProxy, ProxyRules
from tools.browser.worker import MAX_RESTARTS, BrowserWorker, Job, WorkerLaunch
from tools.core.errors import ToolFailure

__all__ = ["MAX_RESTARTS", "BrowserEngine", "EngineConfig", "chromium_missing", "clean_env", "launch_args"]
log = logging.getLogger(__name__)
T = TypeVar("T")
KILL_GRACE_S = 2.0
"""After a call's limit, how long the busiest renderer gets to die before its whole Chromium is killed."""
_SHARED_KEY = object()


@dataclass(frozen=True)
class EngineConfig:
    """How the browsers are launched, what their proxy lets through, and what a page may take."""

    executable: str
    rules: ProxyRules
    launch_timeout_s: float = 30.0
    threads: int = 6
    sandbox: SandboxMode = "auto"
    page_memory_mb: int = 1024
    page_cpu_s: float = 120.0
    face: Face = Face()

    @classmethod
    def from_settings(cls, settings: Any, rules: ProxyRules) -> EngineConfig:
        """From the BROWSER_* settings and the proxy's rules."""
        return cls(settings.BROWSER_EXECUTABLE, rules, threads=settings.BROWSER_THREADS,
                   sandbox=settings.BROWSER_SANDBOX, page_memory_mb=settings.BROWSER_PAGE_MEMORY_MB,
                   page_cpu_s=settings.BROWSER_PAGE_CPU_S,
                   face=Face(settings.BROWSER_LOCALE, settings.BROWSER_ACCEPT_LANGUAGE, settings.BROWSER_TIMEZONE))


class BrowserEngine:
    """The browser threads; `call(fn, timeout, key)` runs `fn(browser)` on the thread `key`'s run is pinned to."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.proxy: FilteringProxy | None = None
        self.sandbox, self.sandbox_reason = decide_sandbox(config.sandbox, config.executable)
        self._workers: list[BrowserWorker] = []
        self._pins: dict[int, BrowserWorker] = {}
        self._lock = threading.Lock()
        self._home: Path | None = None
        """The browsers' private folder, made with the first browser thread (an engine never used leaves none)."""
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None

    @property
    def cold_start_s(self) -> float | None:
        """The first browser thread's launch time (driver + Chromium), once it started."""
        return self._workers[0].cold_start_s if self._workers else None

    @property
    def home(self) -> Path:
        """The private folder every browser thread of this engine keeps its profile and downloads in."""
        if self._home is None:
            self._home = Path(tempfile.mkdtemp(prefix="gaia-browser-"))
        return self._home

    @property
    def _failure(self) -> BaseException | None:
        return next((w.failure for w in self._workers if w.failure is not None), None)

    def call(self, fn: Callable[[Any], T], timeout: float, key: object = None) -> T:
        """`fn(browser)` on `key`'s thread; ToolFailure when the action runs past `timeout` once started."""
        key = _SHARED_KEY if key is None else key
        worker = self._worker_for(key)
        job = Job(fn, key)
        worker.put(job)
        # Waiting for the thread counts for nothing, but is bounded: a thread stuck past its own limits is killed.
        if not job.started.wait(timeout * 3 + self.config.launch_timeout_s):
            job.future.cancel()
            raise ToolFailure("the browser is busy; try again.", "timeout")
        try:
            return cast(T, job.future.result(timeout=timeout))
        except cf.TimeoutError:
            self._end_hung(worker, job, timeout)
            raise ToolFailure(f"the page did not finish within {timeout:g}s (a script kept it busy, or it hung); "
                              "its tab was closed: browser_open a page again, or use fetch_webpage.",
                              "timeout") from None

    def each(self, fn: Callable[[Any], T], timeout: float) -> list[T]:
        """`fn(browser)` on every running browser thread, after the jobs already queued there (tests, benchmarks)."""
        with self._lock:
            workers = [w for w in self._workers if w.alive() and w.ready.is_set()]
        jobs = [Job(fn, _SHARED_KEY) for _ in workers]
        for worker, job in zip(workers, jobs, strict=True):
            worker.put(job)
        return [job.future.result(timeout=timeout) for job in jobs]

    def submit(self, fn: Callable[[Any], Any], key: object = None) -> None:
        """Queue `fn(browser)` without waiting for it (closing a run's context); the run is unpinned after."""
        key = _SHARED_KEY if key is None else key
        with self._lock:
            worker = self._pins.pop(id(key), None) if key is not _SHARED_KEY else None
        if worker is None or not worker.alive():
            return
        worker.put(Job(fn, key))
        worker.put(Job(lambda _b: worker.forget(key), key))

    def _worker_for(self, key: object) -> BrowserWorker:
        with self._lock:
            if self.proxy is None:
                self.proxy = FilteringProxy(self.config.rules)
                self._watchdog = threading.Thread(target=self._watch, name="browser-watchdog", daemon=True)
                self._watchdog.start()
            worker = self._pins.get(id(key))
            if worker is None or not worker.alive():
                worker = self._least_loaded(key)
                self._pins[id(key)] = worker
                worker.pinned.add(id(key))
        if not worker.ready.wait(self.config.launch_timeout_s):
            raise ToolFailure("the browser did not start in time; try again later.", "timeout")
        if worker.failure is not None:
            raise ToolFailure(f"the browser could not start: {worker.failure}", "missing_dependency")
        return worker

    def _least_loaded(self, key: object) -> BrowserWorker:
        """An idle thread, a new one while fewer than `threads` run, else the one with fewest runs (lock held)."""
        self._workers = [w for w in self._workers if w.alive() or not w.ready.is_set()]
        if key is _SHARED_KEY and self._workers:
            return self._workers[0]
        idle = [w for w in self._workers if not w.pinned]
        if idle:
            return idle[0]
        if len(self._workers) < self.config.threads:
            assert self.proxy is not None
            launch = WorkerLaunch(self.config.executable, self.proxy.port, self.sandbox, self.config.face,
                                  self.config.page_memory_mb, self.config.launch_timeout_s, self.home / "bin")
            index = len(self._workers)
            home = self.home / f"t{index}-{time.monotonic_ns()}"
            home.mkdir(mode=0o700)
            self._workers.append(BrowserWorker(index, launch, home))
            return self._workers[-1]
        return min(self._workers, key=lambda w: len(w.pinned))

    def _end_hung(self, worker: BrowserWorker, job: Job, timeout: float) -> None:
        """Kill what keeps `job` running (its busiest renderer, then its Chromium), from a helper thread."""
        worker.mark_killed(job.key, f"The last page was closed: it did not finish within {timeout:g}s.")

        def reap() -> None:
            pid = worker.browser_pid
            if pid is None:
                return
            before = guard.cpu_times(pid)
            time.sleep(0.3)
            busiest = guard.busiest_renderer(pid, before)
            if busiest is not None:
                guard.kill(busiest)
            deadline = time.monotonic() + KILL_GRACE_S
            while time.monotonic() < deadline and worker.running is job:
                time.sleep(0.05)
            if worker.running is job:  # not a renderer's fault: the whole browser of this thread goes
                log.warning("browser thread %d stuck past its limit: killing its Chromium", worker.index)
                guard.kill(pid)

        threading.Thread(target=reap, name="browser-reaper", daemon=True).start()

    def _watch(self) -> None:
        """Every second: kill renderers past the memory or CPU caps; their runs are told on their next call."""
        while not self._closed.wait(1.0):
            running = [(w, w.browser_pid) for w in list(self._workers) if w.browser_pid is not None]
            # One scan of /proc for every thread's browser: a scan per thread cost six times the CPU (and the GIL),
            # beside the runs it watches.
            tree = guard.process_tree() if running else {}
            for worker, pid in running:
                for proc, why in guard.over_caps(pid, self.config.page_memory_mb, self.config.page_cpu_s, tree):
                    guard.kill(proc.pid)
                    log.warning("browser thread %d: killed renderer %d: %s", worker.index, proc.pid, why)
                    worker.note_crash(why)

    def close(self) -> None:
        """Stop every browser thread (each closes its browser) and the proxy."""
        self._closed.set()
        for worker in self._workers:
            worker.stop()
        for worker in self._workers:
            worker.thread.join(timeout=10)
        if self.proxy is not None:
            self.proxy.close()
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)


def chromium_missing(executable: str) -> str | None:
    """Why the browser cannot run here (no Playwright, no Chromium), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed: pip install -r requirements.txt"
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)) and shutil.which(executable) is None:
        return f"Chromium was not found at {executable}: apt-get install chromium (or set BROWSER_EXECUTABLE)"
    return None

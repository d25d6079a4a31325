"""One shared Chromium for the whole app or batch, driven from ONE thread that every run talks to.

Playwright's sync API is bound to the thread that started it, while tool calls run on many threads;
so a dedicated browser thread owns Playwright and the browser, and every run submits its work to it
as a function through a queue, getting the result back through a future. The browser starts lazily
(the first call), through the filtering proxy (`tools.browser.proxy`) for every request, with a clean
environment (no variable of the app, so no secret, reaches it) and its files in a private folder.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import contextlib
import logging
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tools.browser.proxy import FilteringProxy, ProxyRules
from tools.errors import ToolFailure

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_RESTARTS = 3
"""Times a browser that crashed after a good start is launched again before callers are told it failed."""


def launch_args(proxy_port: int) -> list[str]:
    """Chromium flags: everything through the proxy (loopback too), no WebRTC leak, no extensions, no chatter."""
    return [
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",  # Chromium otherwise bypasses proxies for localhost
        # Any name Chromium would resolve itself (a direct connection past the proxy) fails to resolve.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--dns-prefetch-disable",
        "--no-pings",
        "--disable-features=NetworkPrediction,InterestFeedContentSuggestions,MediaRouter,OptimizationHints",
        "--metrics-recording-only",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ]


def clean_env(home: Path) -> dict[str, str | float | bool]:
    """The browser's whole environment: a PATH, and HOME/TMPDIR in its private folder; nothing of the app's."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"), "LANG": "C.UTF-8"}


@dataclass(frozen=True)
class EngineConfig:
    """How the shared browser is launched and what its proxy lets through."""

    executable: str
    rules: ProxyRules
    launch_timeout_s: float = 30.0


class BrowserEngine:
    """The shared Chromium and the thread that drives it; `call(fn)` runs `fn(browser)` on that thread."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.proxy: FilteringProxy | None = None
        self.cold_start_s: float | None = None
        self.pid: int | None = None
        self._jobs: queue.Queue[tuple[Callable[[Any], Any], cf.Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._lock = threading.Lock()
        self._home = Path(tempfile.mkdtemp(prefix="gaia-browser-"))

    def call(self, fn: Callable[[Any], T], timeout: float) -> T:
        """`fn(browser)` run on the browser thread; ToolFailure when it does not finish within `timeout`."""
        self._start()
        future: cf.Future[T] = cf.Future()
        self._jobs.put((fn, future))
        try:
            return future.result(timeout=timeout)
        except cf.TimeoutError:
            future.cancel()
            raise ToolFailure(f"the browser did not finish within {timeout:g}s; try browser_snapshot, or a simpler "
                              "step.", "timeout") from None

    def submit(self, fn: Callable[[Any], Any]) -> None:
        """Queue `fn(browser)` without waiting for it (closing a run's context); dropped if the browser is gone."""
        if self._thread is not None and self._thread.is_alive():
            self._jobs.put((fn, cf.Future()))

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():  # first use, or the browser died: (re)start
                if self.proxy is None:
                    self.proxy = FilteringProxy(self.config.rules)
                self._ready.clear()
                self._failure = None
                self._thread = threading.Thread(target=self._run, name="browser", daemon=True)
                self._thread.start()
        if not self._ready.wait(self.config.launch_timeout_s):
            raise ToolFailure("the browser did not start in time; try again later.", "timeout")
        if self._failure is not None:
            raise ToolFailure(f"the browser could not start: {self._failure}", "missing_dependency")

    def _run(self) -> None:
        """Launch and serve; a browser that dies after a good start is launched again (queued jobs wait)."""
        restarts = 0
        while True:
            try:
                self._launch_and_serve()
                return
            except BaseException as exc:  # noqa: BLE001 - reported to every caller instead of dying silently
                log.exception("the shared browser failed")
                if restarts >= MAX_RESTARTS or self.cold_start_s is None:
                    self._failure = exc  # it never started, or keeps dying: callers are told why
                    self._ready.set()
                    self._fail_pending(exc)
                    return
                restarts += 1

    def _launch_and_serve(self) -> None:
        from playwright.sync_api import sync_playwright

        started = time.monotonic()
        assert self.proxy is not None
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=self.config.executable, headless=True, args=launch_args(self.proxy.port),
                env=clean_env(self._home), downloads_path=str(self._home / "downloads"),
                timeout=self.config.launch_timeout_s * 1000, handle_sigint=False, handle_sigterm=False,
                handle_sighup=False)
            if self.cold_start_s is None:
                self.cold_start_s = time.monotonic() - started
            self._ready.set()
            self._serve(browser)
            browser.close()

    def _serve(self, browser: Any) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(browser))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                future.set_exception(exc)
            if not browser.is_connected():
                raise RuntimeError("the browser process exited")

    def _fail_pending(self, exc: BaseException) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None and job[1].set_running_or_notify_cancel():
                job[1].set_exception(ToolFailure(f"the browser stopped: {exc}", "failed"))

    def close(self) -> None:
        """Stop the browser thread (it closes the browser) and the proxy."""
        if self._thread is not None and self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout=10)
        if self.proxy is not None:
            self.proxy.close()
        shutil.rmtree(self._home, ignore_errors=True)


_ENGINES: dict[EngineConfig, BrowserEngine] = {}
_ENGINES_LOCK = threading.Lock()


def shared_engine(config: EngineConfig) -> BrowserEngine:
    """The process's one browser for `config` (one per set of rules; the app and a batch have one)."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(config)
        if engine is None or (engine._failure is not None):
            engine = _ENGINES[config] = BrowserEngine(config)
        return engine


def release_engine(config: EngineConfig) -> None:
    """Close the shared browser for `config` now (tests, benchmarks); the next call starts a new one."""
    with _ENGINES_LOCK:
        engine = _ENGINES.pop(config, None)
    if engine is not None:
        engine.close()


@atexit.register
def _close_all() -> None:
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        with contextlib.suppress(Exception):  # best effort at exit
            engine.close()


def chromium_missing(executable: str) -> str | None:
    """Why the browser cannot run here (no Playwright, no Chromium), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed: pip install -r requirements.txt"
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)) and shutil.which(executable) is None:
        return f"Chromium was not found at {executable}: apt-get install chromium (or set BROWSER_EXECUTABLE)"
    return None

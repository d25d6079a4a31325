"""The browser pools of one application: one `BrowserEngine` per set of launch and address rules.

The application object (`application.Application.browsers`) owns one of these and closes it; the app and
a batch share the pool of their rules, a test's application brings its own.
"""

from __future__ import annotations

import contextlib
import threading

from tools.browser.engine import BrowserEngine, EngineConfig


class BrowserEngines:
    """The engines made so far, by config; a failed engine is replaced on the next ask. Thread-safe."""

    def __init__(self) -> None:
        self._engines: dict[EngineConfig, BrowserEngine] = {}
        self._lock = threading.Lock()

    def get(self, config: EngineConfig) -> BrowserEngine:
        """The browser pool for `config` (started lazily by the engine itself)."""
        with self._lock:
            engine = self._engines.get(config)
            if engine is None or engine._failure is not None:  # its thread died: start afresh
                engine = self._engines[config] = BrowserEngine(config)
            return engine

    def release(self, config: EngineConfig) -> None:
        """Close the pool for `config` now (tests, benchmarks); the next `get` starts a new one."""
        with self._lock:
            engine = self._engines.pop(config, None)
        if engine is not None:
            engine.close()

    def close(self) -> None:
        """Close every pool (best effort: the application is ending)."""
        with self._lock:
            engines = list(self._engines.values())
            self._engines.clear()
        for engine in engines:
            with contextlib.suppress(Exception):
                engine.close()

"""Warm spares: one pre-started, idle sandbox per launch configuration, so a call skips the start-up cost.

A spare is an ordinary sandbox of its backend (same wrappers, limits and mounts) whose interpreter has
started and waits for its program on stdin; it is used for exactly one call and never reused.
Taking a spare hands the process to the caller and asks for a replacement in the background.

Spares are spawned by one long-lived daemon thread: bwrap's `--die-with-parent` follows the thread
that forked the child, so a spawning thread that ended would kill its spares. The key includes the
attachments' identity (path, size, mtime), so a changed or new attachment never meets a stale spare.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from tools.isolation.launcher import files_of
from tools.isolation.spawn import Child

Spawn = Callable[[], Child]
MAX_SPARES = 4


def _identity(path: str) -> tuple[str, int | None, int | None, int | None]:
    try:
        st = os.stat(path)
    except OSError:
        return (path, None, None, None)
    return (path, st.st_size, st.st_mtime_ns, st.st_mode)


def attachment_key(paths: list[str]) -> tuple[tuple[str, int | None, int | None, int | None], ...]:
    """Identity of the attachments and the workspace as the sandbox would bind them (a directory's files included)."""
    key = []
    for p in paths:
        key.append(_identity(p))
        if os.path.isdir(p):  # a directory's mtime misses changes in its subdirectories
            key += [_identity(f) for f in files_of(p)]
    return tuple(key)


def _discard(child: Child) -> None:
    child.close()


class SparePool:
    """Keeps at most `max_spares` idle sandboxes, one per key (least recently requested evicted first)."""

    def __init__(self, max_spares: int = MAX_SPARES) -> None:
        self.max_spares = max_spares
        self._spares: OrderedDict[Hashable, Child] = OrderedDict()
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue[tuple[Hashable, Spawn]] = queue.SimpleQueue()
        self._pending: set[Hashable] = set()
        self._thread: threading.Thread | None = None

    def take(self, key: Hashable) -> Child | None:
        """A live idle spare for `key`, now owned by the caller; None when there is none."""
        with self._lock:
            child = self._spares.pop(key, None)
        if child is not None and child.proc.poll() is not None:  # died while idle (e.g. killed): not usable
            _discard(child)
            return None
        return child

    def request(self, key: Hashable, spawn: Spawn) -> None:
        """Ask the spawner thread for a spare for `key` (no-op when one exists or is on its way)."""
        with self._lock:
            if key in self._spares or key in self._pending:
                if key in self._spares:
                    self._spares.move_to_end(key)
                return
            self._pending.add(key)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="sandbox-spares", daemon=True)
                self._thread.start()
        self._requests.put((key, spawn))

    def spare_pids(self) -> list[int]:
        """Process ids (the group leaders) of the idle spares."""
        with self._lock:
            return [c.proc.pid for c in self._spares.values()]

    def spare_workdirs(self) -> list[str]:
        """Working directories of the idle spares (landlock, degraded; bwrap's live in its own tmpfs)."""
        with self._lock:
            return [c.workdir for c in self._spares.values() if c.workdir]

    def clear(self) -> None:
        """Kill every idle spare."""
        with self._lock:
            spares = list(self._spares.values())
            self._spares.clear()
        for proc in spares:
            _discard(proc)

    def _serve(self) -> None:
        while True:
            key, spawn = self._requests.get()
            try:
                proc = spawn()
            except OSError:
                proc = None
            evicted = []
            with self._lock:
                self._pending.discard(key)
                if proc is not None:
                    self._spares[key] = proc
                    while len(self._spares) > self.max_spares:
                        evicted.append(self._spares.popitem(last=False)[1])
            for old in evicted:
                _discard(old)


SPARES = SparePool()
"""The process-wide pool used by `run_sandboxed`."""

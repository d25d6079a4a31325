"""The one start/stop of every test server in tests/support/: a server on 127.0.0.1, used with `with`.

    with SomeServer(...) as server:   # start(): bind, serve, return the server
        ...                           # stop() on the way out: idempotent, also after a failed start

Two kinds share the `LoopbackServer` base:
- `HTTPLoopbackServer`: a `ThreadingHTTPServer` in a daemon thread of the test process (scripted
  doubles of real services); a subclass gives its request handler class;
- `ProcessLoopbackServer`: a child process (the real app, llama.cpp) listening on a free port, ready
  when a URL answers 200, its output in a log file that a failed start quotes; stopped with its
  whole process group (SIGTERM, then SIGKILL when it lingers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Self

LOOPBACK = "127.0.0.1"
POLL_S = 0.05
"""How often a serving thread looks for `stop()` (the standard library's 0.5 s made every stop cost ~0.25 s)."""


def free_port(host: str = LOOPBACK) -> int:
    """An unused TCP port on `host` (127.0.0.1 by default)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def wait_http_200(url: str, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> float:
    """Poll `url` until it answers 200; return the seconds it took. Raise if the process died or time ran out."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer 200 within {timeout:.0f}s")


class LoopbackServer(ABC):
    """A server on a loopback address: `start()` serves and returns it, `stop()` ends it, `with` does both."""

    host: str = LOOPBACK

    @property
    @abstractmethod
    def port(self) -> int:
        """The TCP port it listens on."""

    @property
    @abstractmethod
    def running(self) -> bool:
        """True between a successful `start()` and `stop()`."""

    @property
    def base(self) -> str:
        """`http://HOST:PORT`, what every URL of this server starts with."""
        return f"http://{self.host}:{self.port}"

    @abstractmethod
    def _serve(self) -> None:
        """Begin serving (called by `start()` when not running); raise when the server cannot come up."""

    @abstractmethod
    def _shutdown(self) -> None:
        """End serving and free the port (called by `stop()`, also after a failed `_serve`)."""

    def start(self) -> Self:
        """Serve (a no-op when already running) and return the server."""
        if not self.running:
            try:
                self._serve()
            except BaseException:
                self._shutdown()
                raise
        return self

    def stop(self) -> None:
        """Stop serving; safe to call twice or before `start()`."""
        self._shutdown()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class HTTPLoopbackServer(LoopbackServer):
    """A `ThreadingHTTPServer` serving `handler()` in a daemon thread of the test process.

    The address is kept after `stop()`, so a test can still name URLs of a server it has closed.
    """

    def __init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._address: tuple[str, int] | None = None

    @abstractmethod
    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (usually a closure over the server's state)."""

    def bind(self, port: int = 0) -> None:
        """Bind `host`:`port` (0: an ephemeral port) now; `start()` binds an ephemeral one if this was not called."""
        self._httpd = ThreadingHTTPServer((self.host, port), self.handler())  # daemon threads: stop() does not wait
        self._address = (self.host, int(self._httpd.server_address[1]))

    @property
    def port(self) -> int:
        """The bound port (kept after `stop()`)."""
        assert self._address is not None, "server not started"
        return self._address[1]

    @property
    def running(self) -> bool:
        """True while the serving thread runs."""
        return self._thread is not None

    def _serve(self) -> None:
        if self._httpd is None:
            self.bind()
        assert self._httpd is not None
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": POLL_S},
                                        daemon=True)
        self._thread.start()

    def _shutdown(self) -> None:
        if self._httpd is None:
            return
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd, self._thread = None, None


class ProcessLoopbackServer(LoopbackServer):
    """A child process that listens on `port`, ready when `ready_url` answers 200 within `timeout` seconds."""

    def __init__(self, *, port: int | None = None, timeout: float = 60.0, log: Path | None = None) -> None:
        self._port = port if port is not None else free_port()
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_s: float | None = None
        """Seconds from spawning the process to the first HTTP 200."""
        if log is None:
            with tempfile.NamedTemporaryFile(prefix=f"{type(self).__name__}-", suffix=".log", delete=False) as tmp:
                log = Path(tmp.name)
        self.log_path = log
        self._log: IO[bytes] | None = None

    @property
    def port(self) -> int:
        """The port the process was told to listen on."""
        return self._port

    @property
    def running(self) -> bool:
        """True while the process runs."""
        return self.proc is not None and self.proc.poll() is None

    @property
    @abstractmethod
    def ready_url(self) -> str:
        """The URL that answers 200 once the server is ready."""

    @abstractmethod
    def command(self) -> Sequence[str]:
        """The process's argv."""

    def environment(self) -> Mapping[str, str] | None:
        """The process's environment (None: this process's)."""
        return None

    def cwd(self) -> Path | None:
        """The process's working directory (None: this process's)."""
        return None

    def log(self) -> str:
        """The process's combined stdout/stderr so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def _serve(self) -> None:
        t0 = time.monotonic()
        out = open(self.log_path, "wb")  # noqa: SIM115 - the process writes to it until _shutdown closes it
        self._log = out
        self.proc = subprocess.Popen(list(self.command()), cwd=self.cwd(), env=self.environment(), stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_http_200(self.ready_url, self.timeout, self.proc)
        except Exception as exc:
            out.flush()
            raise RuntimeError(f"{type(self).__name__}: {exc}\n--- log ({self.log_path}) ---\n{self.log()}") from exc
        self.started_s = time.monotonic() - t0

    def _shutdown(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

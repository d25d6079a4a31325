"""Start the real app (`python app.py`) as a subprocess on a free loopback port, for tests and benchmarks.

    with AppServer(env={"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test"}) as app:
        client = gradio_client.Client(app.url)

The child gets a clean, offline environment (no analytics, HF hub offline, no stray API keys) plus
`env`; it runs with cwd=ROOT so `app.py` finds its modules, and its output goes to a log file that
failures quote.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from config import Settings
from tests.support.settings import ENDPOINT_SETTINGS

ROOT = Path(__file__).resolve().parents[2]

# Every secret setting (derived, so a new provider key is dropped too) and the endpoints a developer may have set.
_DROPPED = (*Settings.secret_fields(), *ENDPOINT_SETTINGS, "SPACE_ID", "SPACE_AUTHOR_NAME",
            "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT")


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent environment without secrets/endpoints, offline, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update({"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra or {})
    return env


def wait_http_200(url: str, timeout: float, proc: subprocess.Popen | None = None) -> float:
    """Poll `url` until it answers 200; return the seconds it took. Raise if the process died or time ran out."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"app exited with code {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer 200 within {timeout:.0f}s")


def as_user(uid: int | None) -> list[str]:
    """The command prefix that runs a program as `uid` (and its group), without root's groups or capabilities."""
    return [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


class AppServer:
    """`python app.py` on 127.0.0.1:<free port> with the given environment."""

    def __init__(self, env: Mapping[str, str] | None = None, *, timeout: float = 60.0,
                 args: tuple[str, ...] = (), root: Path = ROOT, user: int | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.timeout = timeout
        self.args = args
        self.root, self.user = root, user
        """The app folder to run (`root/app.py`, cwd) and the uid to run it as (None: this process's)."""
        self.env = base_env({"GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(self.port), **(env or {})})
        self.proc: subprocess.Popen | None = None
        self.started_s: float | None = None
        """Seconds from spawning the process to the first HTTP 200."""
        self._log = tempfile.NamedTemporaryFile(prefix="app-server-", suffix=".log", delete=False)  # noqa: SIM115 - the app writes to it until stop() closes it
        self.log_path = Path(self._log.name)

    def start(self) -> AppServer:
        """Spawn the app and wait for HTTP 200 (raising with the app's log if it never comes)."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen([*as_user(self.user), sys.executable, str(self.root / "app.py"), *self.args],
                                     cwd=self.root, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        try:
            wait_http_200(self.url, self.timeout, self.proc)
        except Exception as exc:
            log = self.log()
            self.stop()
            raise RuntimeError(f"{exc}\n--- app log ---\n{log}") from exc
        self.started_s = time.monotonic() - t0
        return self

    def log(self) -> str:
        """The app's combined stdout/stderr so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """Terminate the app (its whole process group), then kill it if it lingers."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.proc = None
        self._log.close()

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

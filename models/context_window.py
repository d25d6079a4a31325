"""The model's context window: configured, asked of the server, or learnt from an overflow error.

`LLM_CONTEXT_TOKENS` > 0 is taken as given. Otherwise the server is asked once per endpoint and model:

- vLLM lists it in `GET {base}/models` as the model's `max_model_len`;
- llama.cpp's server answers `GET /props` (at the server's root, not under `/v1`) with
  `default_generation_settings.n_ctx` (the context of one slot, what one request may use);
- else an overflow error names it ("This model's maximum context length is 16384 tokens"), which
  `learn` records for every later run of the application (`application.Application.windows`);
- else `DEFAULT_CONTEXT_TOKENS`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from config import Settings

DEFAULT_CONTEXT_TOKENS = 128_000
"""The window assumed when nothing says otherwise (today's hosted models' common size)."""
PROBE_TIMEOUT_S = 3.0

WindowSource = Literal["configured", "vllm_models", "llamacpp_props", "overflow_error", "default"]


@dataclass(frozen=True)
class ContextWindow:
    """A window size and where it came from."""

    tokens: int
    source: WindowSource


def _get_json(client: httpx.Client, url: str) -> Any:
    try:
        response = client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def vllm_max_model_len(models: Any, model_name: str) -> int | None:
    """`max_model_len` of `model_name` in an OpenAI-style model list (the only model's, if the name is not listed)."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    items = [m for m in data if isinstance(m, dict)]
    named = [m for m in items if m.get("id") == model_name or str(m.get("id", "")).rsplit("/", 1)[-1] == model_name]
    chosen = named or (items if len(items) == 1 else [])
    return _positive_int(chosen[0].get("max_model_len")) if chosen else None


def llamacpp_n_ctx(props: Any) -> int | None:
    """A llama.cpp server's per-slot context from its `/props` answer."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    found = _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return found or _positive_int(props.get("n_ctx"))


def probe_window(settings: Settings, timeout: float = PROBE_TIMEOUT_S) -> ContextWindow | None:
    """Ask the configured OpenAI-compatible server for its window; None when it does not say (or no base URL)."""
    base = (settings.OPENAI_BASE_URL or "").rstrip("/")
    if not base:
        return None  # OpenAI's own API publishes no window per model
    key = settings.OPENAI_API_KEY.get_secret_value() if settings.OPENAI_API_KEY else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(headers=headers, timeout=timeout, follow_redirects=False) as client:  # one client, both asks
        found = vllm_max_model_len(_get_json(client, f"{base}/models"), settings.MODEL_NAME)
        if found:
            return ContextWindow(found, "vllm_models")
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        found = llamacpp_n_ctx(_get_json(client, f"{root}/props"))
    return ContextWindow(found, "llamacpp_props") if found else None


class ContextWindows:
    """The window per (endpoint, model) for one application: probed once, corrected by overflow errors; thread-safe."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], ContextWindow] = {}
        self._lock = threading.Lock()
        self._probing = threading.Lock()
        """Held while the server is asked: concurrent first runs wait for one answer instead of each asking."""

    @staticmethod
    def _key(settings: Settings) -> tuple[str, str]:
        return (settings.OPENAI_BASE_URL or "", settings.MODEL_NAME)

    def get(self, settings: Settings, *, probe: bool = True) -> ContextWindow:
        """The window requests must fit (see the module docstring)."""
        if settings.LLM_CONTEXT_TOKENS > 0:
            return ContextWindow(settings.LLM_CONTEXT_TOKENS, "configured")
        key = self._key(settings)
        with self._lock:
            if key in self._known:
                return self._known[key]
        if not probe:
            return ContextWindow(DEFAULT_CONTEXT_TOKENS, "default")
        with self._probing:
            with self._lock:
                if key in self._known:
                    return self._known[key]
            window = probe_window(settings) or ContextWindow(DEFAULT_CONTEXT_TOKENS, "default")
            with self._lock:
                return self._known.setdefault(key, window)

    def learn(self, settings: Settings, tokens: int) -> ContextWindow:
        """An overflow error named the window: remember it (a configured window stays as configured)."""
        if settings.LLM_CONTEXT_TOKENS > 0:
            return ContextWindow(settings.LLM_CONTEXT_TOKENS, "configured")
        window = ContextWindow(tokens, "overflow_error")
        with self._lock:
            self._known[self._key(settings)] = window
        return window

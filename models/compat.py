"""`ChatOpenAI` adjusted to what OpenAI-compatible servers (llama.cpp, vLLM, Ollama, the HF router) accept.

Two differences from OpenAI's own API matter in practice:

- an assistant message that only calls tools goes out as `content: null`; llama-cpp-python's server
  rejects it with an HTTP 500, the same body every time. An empty string means the same to everyone.
- langchain sends the completion limit as `max_completion_tokens`, which OpenAI wants and several local
  servers ignore (so a runaway generation fills the context). Other endpoints get `max_tokens`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_openai import ChatOpenAI

OPENAI_HOSTS = ("api.openai.com",)


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` whose request bodies every OpenAI-compatible server accepts (see the module docstring)."""

    def _get_request_payload(self, input_: LanguageModelInput, *, stop: list[str] | None = None,
                             **kwargs: Any) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        for message in payload.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
        if not speaks_openai_dialect(self.openai_api_base) and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload


def speaks_openai_dialect(base_url: str | None) -> bool:
    """True for OpenAI's own API (no base URL, or an api.openai.com one): it wants `max_completion_tokens`."""
    return not base_url or any(host in base_url for host in OPENAI_HOSTS)

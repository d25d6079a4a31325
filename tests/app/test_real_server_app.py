"""The app (`python app.py`, its /ask endpoint) against a real llama.cpp server: requests accepted, usage counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gradio_client import Client

from tests.support.app_server import AppServer
from tests.support.llama_server import RecordingProxy

pytestmark = pytest.mark.integration


def test_ask_through_the_app_reaches_the_real_server(llama_server, tmp_path) -> None:
    proxy = RecordingProxy(llama_server.port).start()
    env = {"OPENAI_BASE_URL": proxy.url, "MODEL_NAME": llama_server.model, "RAG_ENABLED": "false",
           "LLM_MAX_TOKENS": "24", "MAX_ITERATIONS": "1", "LLM_TIMEOUT": "120",
           "RAG_INDEX_DIR": str(tmp_path / "rag"), "OUTPUT_DIR": str(tmp_path / "runs")}
    try:
        with AppServer(env=env, timeout=120) as app:
            trace, answer, _verdict, trace_file = Client(app.url, verbose=False).predict(
                "What is 2 + 2?", None, api_name="/ask")
    finally:
        proxy.stop()
    events = [json.loads(line) for line in Path(trace_file).read_text().splitlines()]
    calls = [e for e in events if e["kind"] == "model_call"]
    assert calls and not [e for e in events if e["kind"] == "error"], events
    chat = proxy.chat()
    assert all(e.status == 200 for e in chat) and chat[0].body["tool_choice"] == "auto"
    assert sum(c["prompt_tokens"] for c in calls) == sum(e.reply["usage"]["prompt_tokens"] for e in chat) > 0
    assert [c["finish_reason"] for c in calls] == [e.reply["choices"][0]["finish_reason"] for e in chat]
    assert any(e["kind"] == "answer" for e in events)

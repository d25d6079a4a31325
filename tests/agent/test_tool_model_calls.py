"""A tool that calls a model (analyze_image) uses the run's ModelClient: its gate, retries and trace."""

from __future__ import annotations

import pytest

from agent.events import ModelCall, Retry
from agent.pipeline import Pipeline
from config import load_settings
from tests.support.media import make_text_image
from tests.support.openai_server import ScriptedOpenAI, call, fail, say, tool_results
from tools.core.registry import build_registry
from tools.media.vision import make_vision_tools

pytestmark = pytest.mark.integration


class CountingGate:
    def __init__(self) -> None:
        self.acquired = 0

    def acquire(self, estimated_tokens: int = 0) -> None:
        self.acquired += 1

    def on_success(self, info=None) -> None: ...

    def on_rate_limited(self, retry_after, info=None) -> None: ...


def test_analyze_image_goes_through_the_runs_client(tmp_path) -> None:
    image = make_text_image(tmp_path / "board.png", "4721")
    vision_replies = iter([fail(503), say("The board shows 4721.", prompt_tokens=50, completion_tokens=6)])

    def script(body):
        if body["model"] == "vision-x":
            return next(vision_replies)
        if not tool_results(body):
            return call("analyze_image", path=str(image), question="Which number?")
        return say("FINAL ANSWER: 4721")

    with ScriptedOpenAI(script) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", MODEL_NAME="scripted",
                                 VISION_MODEL_NAME="vision-x", RAG_ENABLED=False, RATE_LIMIT_RETRY_BASE_DELAY=0.01)
        registry = build_registry(settings, [("extension", make_vision_tools)])
        gate = CountingGate()
        sol = Pipeline(settings, registry=registry).with_gate(gate).solve("What number is on the board?",
                                                                          file_path=str(image))
    assert sol.answer == "4721", sol.error
    vision = [e for e in sol.events if isinstance(e, ModelCall) and e.purpose == "vision"]
    assert len(vision) == 1 and vision[0].model == "vision-x" and vision[0].prompt_tokens == 50
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert retry.reason.startswith("vision call: HTTP 503") and retry.failure_kind == "overloaded"
    assert gate.acquired == 4  # two loop steps, the vision call and its retry
    assert sol.steps == 2 and sol.prompt_tokens == 11 * 2 + 50

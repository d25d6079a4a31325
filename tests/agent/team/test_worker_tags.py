"""Every event of a worker's trace carries its name: also its tools' own model calls and their retries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.events import ModelCall, Retry, WorkerReported, event_from_dict
from agent.pipeline import Pipeline
from config import load_settings
from tests.support.media import make_text_image
from tests.support.openai_server import Reply, ScriptedOpenAI, call, fail, say, tool_results
from tests.support.team_script import TeamScript, orchestrator_script
from tools.core.registry import build_registry
from tools.media.vision import make_vision_tools

pytestmark = pytest.mark.integration


def test_a_readers_vision_call_and_its_retry_carry_the_readers_name(tmp_path: Path) -> None:
    image = make_text_image(tmp_path / "board.png", "4721")
    vision_replies = iter([fail(503), say("The board shows 4721.", prompt_tokens=50, completion_tokens=6)])

    orchestrator = orchestrator_script(("reader", f"Which number is on the image {image}?"),
                                       answer=say("FINAL ANSWER: 4721"))

    def reader(body: dict[str, Any]) -> Reply:
        if tool_results(body):
            return say("The image shows 4721.")
        return call("analyze_image", path=str(image), question="Which number?")

    team = TeamScript({"orchestrator": orchestrator, "reader": reader})

    def script(body: dict[str, Any]) -> Reply:
        return next(vision_replies) if body["model"] == "vision-x" else team(body)

    with ScriptedOpenAI(script) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", MODEL_NAME="scripted",
                                 VISION_MODEL_NAME="vision-x", RAG_ENABLED=False, AGENT_STRATEGY="team",
                                 ANSWER_CHECK="off", RATE_LIMIT_RETRY_BASE_DELAY=0.01)
        registry = build_registry(settings, [("extension", make_vision_tools)])
        sol = Pipeline(settings, registry=registry, raise_internal_errors=True).solve(
            "What number is on the board?", file_path=str(image))
    assert sol.answer == "4721", sol.error
    report = next(e for e in sol.events if isinstance(e, WorkerReported))
    vision = next(e for e in sol.events if isinstance(e, ModelCall) and e.purpose == "vision")
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert (vision.worker, vision.delegation) == ("reader", report.delegation)
    assert (retry.worker, retry.delegation) == ("reader", report.delegation) and retry.reason.startswith("vision")
    assert report.prompt_tokens >= 50  # the worker's section counts its tool's call
    assert sol.prompt_tokens == sum(e.prompt_tokens for e in sol.events if isinstance(e, ModelCall))
    loop_calls = [e for e in sol.events if isinstance(e, ModelCall) and e.worker is None]
    assert vision not in loop_calls and all(e.purpose != "vision" for e in loop_calls)
    kept = event_from_dict(json.loads(json.dumps(vision.to_dict())))  # the JSONL trace keeps the name
    assert kept.worker == "reader" and kept.delegation == report.delegation

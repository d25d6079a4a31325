"""Content-and-artifact replies: the model reads the text, the trace gets the artifact (tools.core.artifacts)."""

from __future__ import annotations

from langchain_core.tools import tool

from config import load_settings
from tools.core.artifacts import CONTENT_AND_ARTIFACT, Reply, ToolArtifact
from tools.core.executor import run_tool

PIXEL = "data:image/jpeg;base64,/9j/4AAQ"


@tool(response_format=CONTENT_AND_ARTIFACT)
def look(where: str) -> Reply:
    """Look somewhere.

    Args:
        where: The place.
    """
    return f"You see {where}.", ToolArtifact(thumbnail=PIXEL)


@tool
def plain(where: str) -> str:
    """Look somewhere, text only.

    Args:
        where: The place.
    """
    return f"You see {where}."


def test_the_executor_keeps_the_text_for_the_model_and_the_thumbnail_for_the_trace():
    outcome = run_tool(look, {"where": "a page"}, load_settings())
    assert outcome.ok and outcome.output == "You see a page." and outcome.thumbnail == PIXEL
    assert look.invoke({"where": "a page"}) == "You see a page."  # a plain invocation: the text alone


def test_a_text_tool_has_no_artifact():
    outcome = run_tool(plain, {"where": "a page"}, load_settings())
    assert outcome.ok and outcome.output == "You see a page." and outcome.thumbnail is None


def test_bad_arguments_to_an_artifact_tool_are_still_the_models_to_fix():
    outcome = run_tool(look, {"there": "a page"}, load_settings())
    assert not outcome.ok and outcome.error_kind == "bad_arguments" and outcome.thumbnail is None

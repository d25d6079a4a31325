"""context_tool: a tool function takes the run's ToolContext first, and the model sees only its own arguments."""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from config import load_settings
from tools.core.artifacts import CONTENT_AND_ARTIFACT, Reply, ToolArtifact
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace

SEEN: list[ToolContext] = []


@context_tool
def lookup(_ctx: ToolContext, title: str, page: int = 1) -> str:
    """Look a title up.

    Args:
        title: The title.
        page: Which page (1 is the first).
    """
    SEEN.append(_ctx)
    return f"{title} p{page} task={_ctx.task_id} confined={_ctx.confined}"


@tool
def lookup_plain(title: str, page: int = 1) -> str:
    """Look a title up.

    Args:
        title: The title.
        page: Which page (1 is the first).
    """
    return title


@context_tool(response_format=CONTENT_AND_ARTIFACT)
def glance(_ctx: ToolContext, where: str) -> Reply:
    """Glance somewhere.

    Args:
        where: The place.
    """
    return f"You see {where} in {_ctx.task_id}.", ToolArtifact(thumbnail="data:image/jpeg;base64,/9j/")


def _schema(made):
    schema = convert_to_openai_tool(made)["function"]
    return {**schema, "name": "lookup"}


def test_the_model_sees_what_plain_tool_shows_for_the_same_arguments():
    assert lookup.name == "lookup" and list(lookup.args) == ["title", "page"]
    assert _schema(lookup) == _schema(lookup_plain)
    assert "_ctx" not in str(convert_to_openai_tool(lookup)) and "config" not in lookup.args


def test_a_call_in_a_run_gets_that_run_s_context(tmp_path):
    with Workspace(tmp_path / "w", 2**20) as work:
        context = ToolContext(task_id="t-1", run_services=RunServices(work), confined=True)
        reply = lookup.invoke({"title": "Paris", "page": 2}, config=context.to_config())
    assert reply == "Paris p2 task=t-1 confined=True"
    assert SEEN[-1] is context


def test_a_call_outside_a_run_gets_an_unconfined_context():
    assert lookup.invoke({"title": "Paris"}) == "Paris p1 task=None confined=False"
    assert SEEN[-1].run_services is None
    lookup.invoke({"title": "Rome"}, config={"configurable": {"attachments": ["/x/a.txt"], "task_id": "t-2"}})
    assert SEEN[-1].attachments == (Path("/x/a.txt"),) and SEEN[-1].task_id == "t-2"


def test_the_executor_runs_it_in_the_run_and_keeps_an_artifact_for_the_trace():
    config = ToolContext(task_id="t-3").to_config()
    outcome = run_tool(glance, {"where": "a page"}, load_settings(), config, raise_internal_errors=True)
    assert outcome.ok and outcome.output == "You see a page in t-3." and outcome.thumbnail
    assert glance.response_format == CONTENT_AND_ARTIFACT


def test_a_wrong_argument_is_the_model_s_to_fix():
    outcome = run_tool(lookup, {"name": "Paris"}, load_settings())
    assert not outcome.ok and outcome.error_kind == "bad_arguments"

"""agent.toolsets: the tools a task is offered on a small window, from the route and the tool-spec table."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from agent.toolsets import SMALL_WINDOW_TOKENS, ToolsetChoice, choose_toolset
from tools.core.specs import SPECS

ACTIVE = tuple(SPECS)  # every tool with a row, in the table's order


def test_a_large_window_offers_every_tool():
    assert choose_toolset(ACTIVE, window=SMALL_WINDOW_TOKENS + 1) is None
    assert choose_toolset(ACTIVE, window=128_000, question="click the button") is None


def test_a_small_window_offers_the_research_set_and_the_readers_of_masked_observations():
    chosen = choose_toolset(ACTIVE, window=16_000, question="Who won the 1987 prize?")
    assert chosen is not None and chosen.name == "research"
    assert {"web_search", "fetch_webpage", "wikipedia_page", "read_file", "calculator"} <= set(chosen.tools)
    assert not any(t.startswith("browser_") for t in chosen.tools)
    assert not {"transcribe_audio", "parse_excel", "run_python"} & set(chosen.tools)
    assert chosen.left_out == len(ACTIVE) - len(chosen.tools) and list(chosen.tools) == [
        t for t in ACTIVE if t in chosen.tools]  # the registry's order


def test_the_route_adds_its_tools_and_an_inactive_one_is_never_offered():
    active = tuple(t for t in ACTIVE if t != "run_python")
    chosen = choose_toolset(active, window=8192, route_tools=("parse_excel", "run_python"))
    assert chosen is not None and chosen.name == "route+research"
    assert "parse_excel" in chosen.tools and "run_python" not in chosen.tools


def test_the_browser_set_joins_when_a_page_must_be_operated():
    chosen = choose_toolset(ACTIVE, window=16_384, question="Click 'Load more' on the page and count the rows.")
    assert chosen is not None and chosen.name == "research+browser"
    assert {"browser_open", "browser_click", "find_in_page"} <= set(chosen.tools)


def test_a_run_widens_its_set_once_an_observation_calls_for_the_browser():
    choice = ToolsetChoice(ACTIVE, 16_000, question="What does the page list?")
    first, event = choice.pick([], 0.1)
    assert first is not None and event is not None and event.name == "research" and event.window == 16_000
    assert choice.pick([], 0.2) == (first, None)  # unchanged: no second event
    said = [AIMessage(content="", tool_calls=[{"id": "c", "name": "fetch_webpage", "args": {}}]),
            ToolMessage(content="This page renders with JavaScript: open it with browser_open(url=...).",
                        tool_call_id="c")]
    wider, event = choice.pick(said, 0.3)
    assert event is not None and event.name == "research+browser" and wider is not None
    assert "browser_open" in wider.tools and event.tools == list(wider.tools)

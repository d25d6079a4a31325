"""Tool calls written as text (Qwen/Hermes tags, bare JSON) are recognised; ordinary answers are not."""

from __future__ import annotations

import pytest

from agent.text_tool_calls import find_text_tool_calls

TOOLS = {"calculator": frozenset({"expression"}), "parse_pdf": frozenset({"path", "pages"}),
         "read_file": frozenset({"path"}), "web_search": frozenset({"query"})}


def names(text: str) -> list[tuple[str, dict]]:
    found = find_text_tool_calls(text, TOOLS)
    return [] if found is None else [(c["name"], c["args"]) for c in found.calls]


def test_hermes_tags_one_or_several() -> None:
    text = ('Let me compute.\n<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>\n'
            '<tool_call>\n{"name": "web_search", "arguments": {"query": "GAIA"}}\n</tool_call>')
    found = find_text_tool_calls(text, TOOLS)
    assert found is not None and found.remainder == "Let me compute."
    assert names(text) == [("calculator", {"expression": "6*7"}), ("web_search", {"query": "GAIA"})]


def test_an_unclosed_tag_and_string_arguments() -> None:
    assert names('<tool_call>{"name": "calculator", "arguments": "{\\"expression\\": \\"1+1\\"}"}') == [
        ("calculator", {"expression": "1+1"})]


@pytest.mark.parametrize("text", [
    '{"name": "calculator", "arguments": {"expression": "2+2"}}',
    '```json\n{"name": "calculator", "parameters": {"expression": "2+2"}}\n```',
    '{"type": "function", "function": {"name": "calculator", "arguments": {"expression": "2+2"}}}',
    '{"expression": "2+2"}',
])
def test_bare_json_naming_a_tool_or_fitting_one(text: str) -> None:
    assert names(text) == [("calculator", {"expression": "2+2"})]


def test_arguments_that_fit_several_tools_are_ambiguous_not_an_answer() -> None:
    found = find_text_tool_calls('{"path": "file.pdf"}', TOOLS)
    assert found is not None and found.calls == [] and found.ambiguous == ["parse_pdf", "read_file"]


@pytest.mark.parametrize("text", [
    "FINAL ANSWER: 42", '{"answer": "42"}', '{"name": "no_such_tool", "arguments": {}}', "{not json}",
    "The JSON is {\"expression\": 1} inside a sentence.", "",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert find_text_tool_calls(text, TOOLS) is None

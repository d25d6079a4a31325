"""The answer a finished loop's messages hold, as the run's `AnswerExtracted` event (before the answer check).

The extraction rules are `agent.answer`'s; here a tool call the model wrote as text instead of making
it is no answer (`unrun_tool_call`), and an answer cut at the length limit is marked as such.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool

from agent.answer import answer_from_messages
from agent.events import AnswerExtracted
from agent.text_tool_calls import find_text_tool_calls, tool_argument_names
from models.messages import message_text


def final_answer(final_messages: list[Any], tools: list[BaseTool], elapsed_s: float) -> AnswerExtracted:
    """The answer the final messages hold; a tool call written as text is never one."""
    answer, method, raw = answer_from_messages(final_messages)
    how: str = method  # AnswerExtracted.method also names outcomes that are no extraction rule
    if raw and find_text_tool_calls(raw, tool_argument_names(tools)) is not None:
        answer, how = "", "unrun_tool_call"
    return AnswerExtracted(elapsed_s=elapsed_s, answer=answer, raw=raw, method=how,
                           truncated=_answer_was_cut(final_messages, raw))


def _answer_was_cut(messages: list[Any], raw: str) -> bool:
    """True when the message the answer came from was cut at the length limit."""
    for msg in reversed(messages):
        if isinstance(msg, AIMessage) and message_text(msg) == raw and raw:
            return (msg.response_metadata or {}).get("finish_reason") == "length"
    return False

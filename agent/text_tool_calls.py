"""Tool calls a model wrote as text: recognised, so they run as calls and never become the answer.

Many local models emit their call in the message content when the server does not parse it:

- Qwen / Hermes: `<tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}</tool_call>`;
- a bare JSON object naming a tool: `{"name": "read_file", "arguments": {...}}` (also `parameters`, or a
  ```json fence around it);
- a bare JSON object of one tool's arguments and nothing else: `{"path": "file.pdf"}`.

Only names of tools that are bound count, so an answer that happens to be JSON is left alone.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S | re.I)
_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S | re.I)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


@dataclass
class TextToolCalls:
    """The calls found in a message's text, and the text left around them."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    """langchain tool-call dicts: name, args, id, type."""
    remainder: str = ""
    ambiguous: list[str] = field(default_factory=list)
    """Tools whose arguments a nameless JSON object fits when more than one does (the model must say which)."""


def find_text_tool_calls(text: str, tools: Mapping[str, frozenset[str]]) -> TextToolCalls | None:
    """Calls written in `text`, or None; `tools` maps each bound tool's name to its argument names."""
    if not text or not tools:
        return None
    tagged = _TAGGED.findall(text)
    if tagged:
        calls = [c for c in (_call_from(_load(body), tools) for body in tagged) if c is not None]
        if calls:
            return TextToolCalls(calls, _TAGGED.sub("", text).strip())
        return None
    body = text.strip()
    fenced = _FENCED.match(body)
    if fenced:
        body = fenced.group(1)
    if not (body.startswith("{") and body.endswith("}")):
        return None
    data = _load(body)
    call = _call_from(data, tools)
    if call is not None:
        return TextToolCalls([call], "")
    owners = _owners(data, tools)
    return TextToolCalls([], "", owners) if len(owners) > 1 else None


def tool_argument_names(tools: list[Any]) -> dict[str, frozenset[str]]:
    """Each tool's name and argument names (from its schema), for `find_text_tool_calls`."""
    return {t.name: frozenset((getattr(t, "args", None) or {}).keys()) for t in tools}


def _load(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _call_from(data: Any, tools: Mapping[str, frozenset[str]]) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("function"), dict):  # the OpenAI wire shape written out as text
        data = data["function"]
    name = next((data[k] for k in _NAME_KEYS if isinstance(data.get(k), str)), None)
    if name is not None:
        if name not in tools:
            return None
        args: object = next((data[k] for k in _ARG_KEYS if k in data), {})
        if isinstance(args, str):
            args = _load(args)
        return _make(name, args) if isinstance(args, dict) else None
    # No name: the arguments of exactly one bound tool (the `{"path": "file.pdf"}` case).
    owners = _owners(data, tools)
    return _make(owners[0], data) if len(owners) == 1 else None


def _owners(data: Any, tools: Mapping[str, frozenset[str]]) -> list[str]:
    if not isinstance(data, dict) or not data or any(k in data for k in _NAME_KEYS):
        return []
    keys = frozenset(data)
    return sorted(tool for tool, names in tools.items() if keys <= names)


def _make(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"text_call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}

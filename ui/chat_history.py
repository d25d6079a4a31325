"""Gradio chat history → the pipeline's `history` turns, and the attachment of a chat message.

Gradio hands history over in several shapes (plain strings, lists of typed parts, file dicts,
collapsed tool steps with `metadata`); the pipeline wants `[{"role", "content"}]` with text only.
Tool steps are left out: the next turn needs what was asked and answered, not the scratch work.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast


def _file_path(part: Any) -> str | None:
    if isinstance(part, dict):
        if part.get("type") == "file" and isinstance(part.get("file"), dict):
            return cast("str | None", part["file"].get("path"))
        if "path" in part and isinstance(part["path"], str):
            return part["path"]
    if isinstance(part, (list, tuple)) and part and isinstance(part[0], str) and Path(part[0]).suffix:
        return part[0]  # the legacy (path, alt_text) tuple
    return None


def _parts(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    if isinstance(content, tuple) and _file_path(content) is None:
        return list(content)
    return [content]


def content_text(content: Any) -> str:
    """The text of a message's content; attachments become `[attached: name]`."""
    texts: list[str] = []
    for part in _parts(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif (path := _file_path(part)) is not None:
            texts.append(f"[attached: {Path(path).name}]")
    return "\n".join(t for t in texts if t.strip())


def history_turns(history: Iterable[Any]) -> list[dict[str, str]]:
    """User questions and final assistant answers, as `{"role", "content"}` text turns."""
    turns: list[dict[str, str]] = []
    for msg in history or []:
        if not isinstance(msg, dict):
            msg = {"role": getattr(msg, "role", ""), "content": getattr(msg, "content", ""),
                   "metadata": getattr(msg, "metadata", None)}
        role = msg.get("role")
        if role not in ("user", "assistant"):
            continue
        if (msg.get("metadata") or {}).get("title"):
            continue  # a collapsed tool step
        text = content_text(msg.get("content"))
        if not text.strip():
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n" + text  # gradio splits one turn's text and files into two messages
        else:
            turns.append({"role": role, "content": text})
    return turns


def message_input(message: Any) -> tuple[str, str | None]:
    """(text, first attached file) of a multimodal textbox value or a plain string."""
    if isinstance(message, str):
        return message, None
    if isinstance(message, dict):
        text = str(message.get("text") or "")
        files = [f if isinstance(f, str) else _file_path(f) for f in message.get("files") or []]
        files = [f for f in files if f]
        return text, (files[0] if files else None)
    return str(message or ""), None

"""Plain text out of a chat message, whatever shape its content has."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage


def message_text(msg: BaseMessage) -> str:
    """The plain text of a message whose content may be a string or a list of content blocks."""
    content: Any = msg.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)

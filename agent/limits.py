"""Input limits every caller of the pipeline gets (the app, its API, the CLIs, the runner).

The public app spends its owner's key, so the size of what reaches the model is bounded before
any model request: a question longer than `MAX_QUESTION_CHARS` is refused outright, and earlier
chat turns are cut to the newest `CHAT_HISTORY_MAX_TURNS` messages within `CHAT_HISTORY_MAX_CHARS`
characters (a forged 500-turn history becomes a small one, and the trace says how much was dropped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from config import Settings


def question_too_long(question: str, settings: Settings) -> str | None:
    """The refusal message when `question` is longer than MAX_QUESTION_CHARS; None when it fits."""
    if len(question) <= settings.MAX_QUESTION_CHARS:
        return None
    return (f"The question has {len(question):,} characters; at most {settings.MAX_QUESTION_CHARS:,} are accepted "
            "(MAX_QUESTION_CHARS). Shorten it, or attach the long text as a file.")


@dataclass(frozen=True)
class TrimmedHistory:
    """The turns kept for the model (oldest first) and how many older ones were dropped."""

    kept: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0


def trim_history(history: list[dict[str, Any]] | None, settings: Settings) -> TrimmedHistory:
    """The newest turns within CHAT_HISTORY_MAX_TURNS and CHAT_HISTORY_MAX_CHARS; older ones are dropped."""
    turns = [t for t in history or [] if isinstance(t, dict)]
    kept: list[dict[str, Any]] = []
    used = 0
    for turn in reversed(turns):
        size = len(_text(turn.get("content")))
        if len(kept) >= settings.CHAT_HISTORY_MAX_TURNS or used + size > settings.CHAT_HISTORY_MAX_CHARS:
            break
        kept.append(turn)
        used += size
    return TrimmedHistory(list(reversed(kept)), len(turns) - len(kept))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return content if isinstance(content, str) else ""


def history_messages(history: list[dict[str, Any]] | None) -> list[BaseMessage]:
    """Earlier chat turns as messages; anything that is not a user/assistant text turn is skipped."""
    out: list[BaseMessage] = []
    for turn in history or []:
        content = turn.get("content") if isinstance(turn, dict) else None
        if isinstance(content, list):  # Gradio may send content blocks
            content = " ".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
        if not isinstance(content, str) or not content.strip():
            continue
        if (turn.get("metadata") or {}).get("title"):
            continue  # a rendered trace step (tool call, RAG note) in the chat UI, not something said
        if turn.get("role") == "user":
            out.append(HumanMessage(content=content))
        elif turn.get("role") == "assistant":
            out.append(AIMessage(content=content))
    return out

"""The small interface between the router and the knowledge base."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

Tier = Literal["answer", "candidates", "hints", "miss"]


@dataclass(frozen=True)
class Match:
    """One stored question near the asked one."""

    question: str
    answer: str
    similarity: float
    task_id: str | None = None
    source: str = ""
    level: int | None = None
    file_name: str = ""
    """Attachment the stored answer depends on ('' when none)."""


@dataclass
class LookupResult:
    """What a lookup decided: answer directly, give candidates or hints to the loop, or nothing."""

    tier: Tier
    matches: list[Match] = field(default_factory=list)
    """Nearest entries, best first (leave-one-out already applied)."""
    answer: str | None = None
    """Set only for tier 'answer'."""
    context: str = ""
    """Text for the loop's prompt (candidates or hints); empty for 'answer' and 'miss'."""
    note: str = ""
    """Why the tier was chosen, e.g. 'guard: years differ (2010 vs 2020) — demoted'."""

    @property
    def best(self) -> Match | None:
        """The nearest match, if any."""
        return self.matches[0] if self.matches else None


class KnowledgeBase(Protocol):
    """Anything the router can ask before the loop."""

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None) -> LookupResult:
        """Find stored questions like `question`, never returning entries of `exclude_task_id`.

        `file_name` is the attachment's file name (no directory) when the question comes with one: a stored
        answer that depends on an attachment is answered directly only for the same file name.
        """
        ...


class EmptyKnowledgeBase:
    """A knowledge base with nothing in it (or switched off): every lookup misses."""

    def __init__(self, note: str = "knowledge base is empty") -> None:
        self.note = note

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None) -> LookupResult:
        """Always a miss."""
        return LookupResult(tier="miss", note=self.note)

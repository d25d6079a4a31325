"""The small interface between the router and the knowledge base."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

Tier = Literal["answer", "candidates", "hints", "miss"]
HintLLM = Callable[[str], str]
"""`prompt -> text`: the run's model client writing solving hints for a 'hints' lookup (the router makes it)."""


@dataclass
class StoredQuestion:
    """A question the knowledge base keeps, with its known answer and where it came from."""

    question: str
    answer: str
    task_id: str | None = None
    source: str = ""
    level: int | None = None
    file_name: str = ""
    """Attachment the answer depends on ('' when the question stands alone)."""

    def stored(self) -> dict[str, Any]:
        """The stored question's fields by name (of a holder that adds more)."""
        return {f.name: getattr(self, f.name) for f in fields(StoredQuestion)}


@dataclass(kw_only=True)
class Match(StoredQuestion):
    """One stored question near the asked one."""

    similarity: float


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
    """What the pipeline, the router and the rag_search tool use of a knowledge base."""

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None,
               hint_llm: HintLLM | None = None) -> LookupResult:
        """Find stored questions like `question`, never returning entries of `exclude_task_id`.

        `file_name` is the attachment's file name (no directory) when the question comes with one: a stored
        answer that depends on an attachment is answered directly only for the same file name. `hint_llm`
        (the run's model client) writes the 'hints' tier's hints; without one the tier lists related entries.
        """
        ...

    def search(self, query: str, k: int | None = None, exclude_task_ids: Iterable[str] = ()) -> list[Match]:
        """The nearest stored entries to `query`, best first, without tiers (the rag_search tool)."""
        ...

    def describe(self) -> str:
        """One status line for the app's header and the CLIs."""
        ...

    def warm(self) -> None:
        """Load what the first lookup would (index, embedding model) now; raises what that lookup would."""
        ...

    def saved_count(self) -> int:
        """How many entries are stored (read without loading the index or the embedding model)."""
        ...


class EmptyKnowledgeBase:
    """A knowledge base with nothing in it (or switched off): every lookup misses."""

    def __init__(self, note: str = "knowledge base is empty") -> None:
        self.note = note

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None,
               hint_llm: HintLLM | None = None) -> LookupResult:
        """Always a miss."""
        return LookupResult(tier="miss", note=self.note)

    def search(self, query: str, k: int | None = None, exclude_task_ids: Iterable[str] = ()) -> list[Match]:
        """Nothing is stored."""
        return []

    def describe(self) -> str:
        """'empty'."""
        return "empty"

    def warm(self) -> None:
        """Nothing to load."""

    def saved_count(self) -> int:
        """Nothing is stored."""
        return 0

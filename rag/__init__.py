"""Knowledge base consulted by the router before the agent loop."""

from __future__ import annotations

from config import Settings
from rag.shortcut import FaissKnowledgeBase
from rag.store import CorruptIndexError, Entry, KnowledgeBaseError, ModelMismatchError
from rag.types import EmptyKnowledgeBase, HintLLM, KnowledgeBase, LookupResult, Match

__all__ = [
    "CorruptIndexError", "EmptyKnowledgeBase", "Entry", "FaissKnowledgeBase", "HintLLM", "KnowledgeBase",
    "KnowledgeBaseError",
    "LookupResult", "Match", "ModelMismatchError", "open_knowledge_base",
]


def open_knowledge_base(settings: Settings, hint_llm: HintLLM | None = None) -> KnowledgeBase:
    """The knowledge base the settings point at (lazy: nothing heavy loads until the first lookup).

    With RAG_ENABLED false every lookup misses. `hint_llm` (prompt -> text) writes solving hints for
    low-similarity lookups when RAG_LLM_HINTS is true and the lookup brings no `hint_llm` of its own
    (in a run the router passes the run's model client with each lookup).
    """
    if not settings.RAG_ENABLED:
        return EmptyKnowledgeBase(note="RAG_ENABLED is false")
    return FaissKnowledgeBase(settings, hint_llm=hint_llm)

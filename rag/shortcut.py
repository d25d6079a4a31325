"""The knowledge base the router asks first: tiers, the guarded short-circuit, leave-one-out, hints.

    similarity >= RAG_ANSWER_THRESHOLD and the guard agrees  -> 'answer'      (no LLM call at all)
    guarded out, or >= RAG_CANDIDATE_THRESHOLD               -> 'candidates'  (answers as references)
    >= RAG_HINT_THRESHOLD                                     -> 'hints'       (LLM hints, or a listing)
    below                                                     -> 'miss'

Entries of `exclude_task_id` are never seen (leave-one-out: an evaluated task cannot find itself).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from config import Settings
from rag import guard
from rag.embeddings import Embedder, get_embedder, normalize_question
from rag.store import AddReport, Entry, ModelMismatchError, VectorStore, rebuild_hint
from rag.types import HintLLM, LookupResult, Match

_SHOWN_CHARS = 600  # of a stored question, in context text


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _match(entry: Entry, similarity: float) -> Match:
    return Match(**entry.stored(), similarity=round(min(similarity, 1.0), 4))


def candidates_context(matches: list[Match], why: str) -> str:
    """Reference text for the loop: stored answers of similar, possibly different, questions."""
    lines = [f"Answers of SIMILAR stored questions ({why}). They may be different questions: "
             "check that the question really is the same before relying on an answer."]
    for i, m in enumerate(matches, 1):
        lines.append(f"{i}. similarity {m.similarity:.3f} | stored question: {_short(m.question)}\n"
                     f"   stored answer: {m.answer}" + (f" (attachment: {m.file_name})" if m.file_name else ""))
    return "\n".join(lines)


def related_listing(matches: list[Match]) -> str:
    """Plain listing of related solved questions (the hint tier without an LLM)."""
    lines = ["Related solved questions (different questions; their answers are NOT this question's answer, "
             "but the way to find them may help):"]
    for i, m in enumerate(matches, 1):
        lines.append(f"{i}. similarity {m.similarity:.3f} | {_short(m.question)} -> {m.answer}")
    return "\n".join(lines)


def hint_prompt(question: str, matches: list[Match]) -> str:
    """The request to the hint LLM: how to approach `question`, learned from solved neighbours."""
    solved = "\n".join(f"- Q: {_short(m.question)}\n  A: {m.answer}" for m in matches)
    return ("You help an agent that must answer a question with tools (web search, file readers, Python).\n"
            f"New question:\n{_short(question)}\n\nSolved questions that look related:\n{solved}\n\n"
            "Give at most 4 short, concrete hints for solving the NEW question (where to look, what to "
            "compute, pitfalls in the answer format). Do not answer it and do not copy answers above.")


class FaissKnowledgeBase:
    """A FAISS-backed knowledge base in `settings.RAG_INDEX_DIR`; model and index load on first use."""

    def __init__(self, settings: Settings, hint_llm: HintLLM | None = None,
                 embedder: Embedder | None = None) -> None:
        """`hint_llm` writes hints when a lookup brings none of its own (the rag CLI, tests)."""
        self.settings = settings
        self.hint_llm = hint_llm
        self.embedder = embedder or get_embedder(settings.EMBEDDING_MODEL)
        self.store = VectorStore(Path(settings.RAG_INDEX_DIR))
        self._lock = threading.RLock()

    # ---- state --------------------------------------------------------------------------------------
    def describe(self) -> str:
        """One status line (loads the index, not the model)."""
        if not self.store.exists():
            return (f"empty ({self.store.directory} has no index; build one with "
                    f"`python -m rag build --gaia-dir DIR --split validation --index-dir {self.store.directory}`)")
        return f"{len(self.store)} entries ({self.store.model}) in {self.store.directory}"

    def warm(self) -> None:
        """Load index and model now (the app's preload thread), so the first lookup is fast."""
        if len(self.store):
            self._check_model()
            self.embedder.load()

    def saved_count(self) -> int:
        """Entries in the saved index (read from its manifest; nothing heavy loads)."""
        return self.store.saved_count()

    def _check_model(self) -> None:
        if self.store.model not in (None, self.embedder.model_id):
            raise ModelMismatchError(
                f"the index in {self.store.directory} was built with embedding model {self.store.model}, "
                f"but EMBEDDING_MODEL gives {self.embedder.model_id}; "
                f"set EMBEDDING_MODEL back or {rebuild_hint(self.store.directory)}")

    def stats(self) -> dict[str, Any]:
        """Counts by source and level, the model and the directory."""
        entries = self.store.entries()
        by_source: dict[str, int] = {}
        by_level: dict[str, int] = {}
        for e in entries:
            by_source[e.source or "?"] = by_source.get(e.source or "?", 0) + 1
            by_level[str(e.level) if e.level is not None else "?"] = (
                by_level.get(str(e.level) if e.level is not None else "?", 0) + 1)
        return {"index_dir": str(self.store.directory), "entries": len(entries), "model": self.store.model,
                "dim": self.store.dim, "by_source": by_source, "by_level": by_level,
                "with_task_id": sum(1 for e in entries if e.task_id)}

    # ---- reading ------------------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, exclude_task_ids: Iterable[str] = ()) -> list[Match]:
        """Nearest stored entries to `query`, best first, without tiers (the rag_search tool)."""
        if not len(self.store):  # missing or empty index: no model load
            return []
        self._check_model()
        vector = self.embedder.encode([query])[0]
        return [_match(e, sc) for e, sc in self.store.search(vector, k or self.settings.RAG_TOP_K, exclude_task_ids)]

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None,
               hint_llm: HintLLM | None = None) -> LookupResult:
        """Decide the tier for `question` (see the module docstring); never returns `exclude_task_id`'s entries.

        `hint_llm` (the run's model client) writes the hints of a 'hints' lookup; else the one given at
        construction, if any.
        """
        s = self.settings
        if not s.RAG_ENABLED:
            return LookupResult(tier="miss", note="RAG_ENABLED is false")
        if not normalize_question(question):
            return LookupResult(tier="miss", note="empty question")
        if not len(self.store):
            return LookupResult(tier="miss", note=f"knowledge base is empty ({self.store.directory})")
        self._check_model()
        vector = self.embedder.encode([question])[0]
        matches = [_match(e, sc) for e, sc in self.store.search(vector, s.RAG_TOP_K, [exclude_task_id])]
        loo = f" (task {exclude_task_id} left out)" if exclude_task_id else ""
        if not matches:
            return LookupResult(tier="miss", note=f"no stored entries{loo}")
        best = matches[0]
        if best.similarity >= s.RAG_ANSWER_THRESHOLD:
            why = self._why_not_answer(question, file_name, matches)
            if why is None:
                return LookupResult(tier="answer", matches=matches, answer=best.answer,
                                    note=f"similarity {best.similarity:.3f} >= {s.RAG_ANSWER_THRESHOLD}; "
                                         f"guard: specifics agree{loo}")
            note = f"similarity {best.similarity:.3f} but {why} — demoted to candidates{loo}"
            return LookupResult(tier="candidates", matches=matches, note=note,
                                context=candidates_context(self._above(matches, s.RAG_HINT_THRESHOLD), why))
        if best.similarity >= s.RAG_CANDIDATE_THRESHOLD:
            why = f"similarity {best.similarity:.3f} below the answer threshold {s.RAG_ANSWER_THRESHOLD}"
            return LookupResult(tier="candidates", matches=matches, note=why + loo,
                                context=candidates_context(self._above(matches, s.RAG_HINT_THRESHOLD), why))
        if best.similarity >= s.RAG_HINT_THRESHOLD:
            return self._hints(question, matches, loo, hint_llm or self.hint_llm)
        return LookupResult(tier="miss", matches=matches,
                            note=f"best similarity {best.similarity:.3f} < hint threshold {s.RAG_HINT_THRESHOLD}{loo}")

    @staticmethod
    def _above(matches: list[Match], threshold: float) -> list[Match]:
        return [m for m in matches if m.similarity >= threshold]

    def _why_not_answer(self, question: str, file_name: str | None, matches: list[Match]) -> str | None:
        """Why the best match may not answer directly, or None when it may."""
        best = matches[0]
        verdict = guard.check(question, best.question)
        if not verdict.agree:
            return f"guard: {verdict.reason}"
        if best.file_name and Path(file_name or "").name != best.file_name:
            asked = Path(file_name).name if file_name else "no attachment"
            return f"guard: the stored answer depends on attachment {best.file_name} ({asked} given)"
        # Another near-identical stored question with another answer: the knowledge base itself is unsure.
        for other in matches[1:]:
            if (other.similarity >= self.settings.RAG_ANSWER_THRESHOLD and other.answer.strip() != best.answer.strip()
                    and guard.check(question, other.question).agree):
                return f"conflicting stored answers ({best.answer!r} vs {other.answer!r})"
        return None

    def _hints(self, question: str, matches: list[Match], loo: str, hint_llm: HintLLM | None) -> LookupResult:
        s = self.settings
        near = self._above(matches, s.RAG_HINT_THRESHOLD)
        base = (f"best similarity {near[0].similarity:.3f} below the candidate threshold "
                f"{s.RAG_CANDIDATE_THRESHOLD}{loo}")
        if hint_llm is not None and s.RAG_LLM_HINTS:
            try:
                hints = (hint_llm(hint_prompt(question, near)) or "").strip()
            except Exception as exc:  # noqa: BLE001 - a failed hint call must not stop the question
                return LookupResult(tier="hints", matches=matches, context=related_listing(near),
                                    note=f"{base}; hint LLM failed ({type(exc).__name__}: {str(exc)[:200]}), "
                                         f"listing related entries instead")
            if hints:
                return LookupResult(tier="hints", matches=matches, note=f"{base}; hints written by the LLM",
                                    context="Solving hints drawn from related solved questions:\n" + hints)
            return LookupResult(tier="hints", matches=matches, context=related_listing(near),
                                note=f"{base}; hint LLM returned nothing, listing related entries instead")
        why = "RAG_LLM_HINTS is false" if hint_llm is not None else "no LLM for hints"
        return LookupResult(tier="hints", matches=matches, context=related_listing(near),
                            note=f"{base}; {why}, listing related entries")

    # ---- writing ------------------------------------------------------------------------------------
    def add(self, entries: Iterable[Entry], *, replace_all: bool = False, batch_size: int = 256) -> AddReport:
        """Embed and store entries (same task_id replaces the old entry), then save. `replace_all` starts afresh."""
        entries = list(entries)
        with self._lock:
            if not replace_all:
                self._check_model()
            vectors = self.embedder.encode([e.question for e in entries], batch_size=batch_size)
            if replace_all:
                self.store.reset(self.embedder.model_id, self.embedder.dim)
            report = self.store.add(entries, vectors, self.embedder.model_id)
            self.store.save()
            return report

    def remove(self, task_ids: Iterable[str]) -> int:
        """Remove the entries of these task ids and save; returns how many were removed."""
        with self._lock:
            removed = self.store.remove(task_ids)
            if removed:
                self.store.save()
            return removed

"""The router: what happens before the loop.

(a) The RAG short-circuit — a knowledge-base hit of tier 'answer' answers without any model call;
'candidates' and 'hints' become context in the loop's first message; 'miss' adds nothing.
(b) The attachment's route — the tool its file type demands, as an explicit instruction (`tools.core.routes`).
A failing knowledge base never ends the run: the failure is recorded in the lookup's note. The run's
model client goes with the lookup (its 'hints' tier asks the model through it, gated and traced).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from agent.events import Event, RagLookup, RouteDecided, Source
from config import Settings, redact
from rag.types import KnowledgeBase, LookupResult
from tools.core.routes import FileRoute, route_for

if TYPE_CHECKING:
    from models import ModelClient


@dataclass
class Decision:
    """The router's verdict for one question, and the events that record it."""

    route: Source
    reason: str
    answer: str | None = None
    """Set when the knowledge base answered (route 'rag')."""
    rag_context: str = ""
    file_route: FileRoute | None = None
    events: list[Event] = field(default_factory=list)


def decide(question: str, file_path: str | None, task_id: str | None, *, settings: Settings,
           knowledge_base: KnowledgeBase | None, active_tools: Iterable[str], use_rag: bool = True,
           started: float | None = None, client: ModelClient | None = None) -> Decision:
    """Route one question: RAG answer, or the agent loop with an attachment instruction and optional context.

    `client` is the run's model client: the knowledge base's hint calls go through it (None: no hints).
    """
    started = time.monotonic() if started is None else started

    def elapsed() -> float:
        return round(time.monotonic() - started, 4)

    events: list[Event] = []
    lookup: LookupResult | None = None
    if use_rag and settings.RAG_ENABLED and knowledge_base is not None:
        file_name = Path(file_path).name if file_path else None
        lookup, event = _lookup(knowledge_base, question, task_id, file_name, settings, client)
        event.elapsed_s = elapsed()
        events.append(event)
    elif not (use_rag and settings.RAG_ENABLED):
        why = "disabled for this run" if not use_rag else "RAG_ENABLED is false"
        events.append(RagLookup(elapsed_s=elapsed(), tier="off", excluded_task_id=task_id, note=why))

    file_route = route_for(file_path, active_tools) if file_path else None
    hint = dict(file_path=file_route.path if file_route else None,
                file_type=file_route.file_type if file_route else None,
                tool_hint=file_route.tool if file_route else None)

    if lookup is not None and lookup.tier == "answer" and lookup.answer:
        best = lookup.best
        reason = f"knowledge base answered (similarity {best.similarity:.3f})" if best else "knowledge base answered"
        events.append(RouteDecided(elapsed_s=elapsed(), route="rag", reason=reason, **hint))
        return Decision("rag", reason, answer=lookup.answer, file_route=file_route, events=events)

    reasons = []
    context = ""
    if lookup is not None and lookup.tier in ("candidates", "hints") and lookup.context.strip():
        context = lookup.context
        reasons.append(f"RAG {lookup.tier} added to the prompt")
    if file_route is not None:
        reasons.append(f"attachment {file_route.extension or file_route.file_type} "
                       f"→ {file_route.tool or 'no active tool'}")
    reason = "; ".join(reasons) or "no knowledge-base answer; agent loop"
    events.append(RouteDecided(elapsed_s=elapsed(), route="agent", reason=reason, **hint))
    return Decision("agent", reason, rag_context=context, file_route=file_route, events=events)


def _lookup(kb: KnowledgeBase, question: str, task_id: str | None, file_name: str | None,
            settings: Settings, client: ModelClient | None) -> tuple[LookupResult | None, RagLookup]:
    start = time.monotonic()
    hint_llm = partial(client.ask, purpose="rag_hint") if client is not None else None
    try:
        # The attachment's name lets the knowledge base refuse a stored answer that belongs to another file.
        result = kb.lookup(question, exclude_task_id=task_id, file_name=file_name, hint_llm=hint_llm)
    except Exception as exc:  # noqa: BLE001 - a broken index must not stop the agent
        note = redact(f"lookup failed, continuing without RAG: {type(exc).__name__}: {exc}", settings)[:500]
        return None, RagLookup(tier="miss", excluded_task_id=task_id, note=note,
                               duration_s=round(time.monotonic() - start, 4))
    best = result.best
    return result, RagLookup(
        tier=result.tier, similarity=round(best.similarity, 4) if best else 0.0,
        matched_question=best.question if best else None, answer=result.answer,
        task_id=best.task_id if best else None, excluded_task_id=task_id, note=result.note,
        duration_s=round(time.monotonic() - start, 4))

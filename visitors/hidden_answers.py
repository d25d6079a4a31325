"""What a visitor who may not spend gets from the Debug tab: tasks without answers, lookups without a model.

GAIA asks that its answers not be re-shared in crawlable form, and a knowledge base built from its
validation split stores them too; the app holds its owner's HF token and API key. So for a visitor
APP_ALLOWED_USERS does not name (`visitors.access`), loaded tasks keep their questions, levels and files but
not their expected answers or the annotators' solving steps, and a RAG lookup lists the nearest
stored questions by similarity (a local embedding, no model request) without their answers or any
hint written by the model. Local GAIA folders load in the budgeted worker (`visitors.jobs`), whoever
asks: a folder may be a visitor's own upload.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from config import Settings
from visitors.jobs import run_job

HIDDEN_ANSWER = "(hidden: shown to allowed users only)"


def without_answers(samples: list[Any]) -> list[Any]:
    """The samples with their expected answers and solving steps replaced (for a visitor who may not spend)."""
    return [dataclasses.replace(s, final_answer=HIDDEN_ANSWER if s.has_answer else s.final_answer, annotator=None)
            for s in samples]


class LoadRefused(RuntimeError):
    """A local folder's tasks were not loaded: too big, too slow, or unreadable (the message says which)."""


def load_local_tasks(settings: Settings, split: str, level: int | None, data_dir: str) -> list[Any]:
    """A local GAIA folder's tasks (split and level validated by the form), loaded in the budgeted worker."""
    from evaluation.dataset import AnnotatorMetadata, Sample

    job = run_job(settings, "load_tasks", {"split": split, "level": level, "data_dir": data_dir})
    if not job.ok:
        raise LoadRefused(job.refusal)
    samples = []
    for raw in job.value:
        annotator = AnnotatorMetadata(**raw["annotator"]) if raw.get("annotator") else None
        file_path = Path(raw["file_path"]) if raw.get("file_path") else None
        samples.append(Sample(**(raw | {"annotator": annotator, "file_path": file_path})))
    return samples


def lookup_without_answers(kb: Any, question: str, task_id: str | None, top_k: int) -> str:
    """Markdown of the nearest stored questions, with no answer and no model request."""
    search = getattr(kb, "search", None)
    note = "Stored answers and model-written hints are shown to allowed users only (APP_ALLOWED_USERS)."
    if search is None:  # no index loaded (RAG disabled or missing): nothing to list
        return f"**RAG lookup**\n\n{note}\n\n{getattr(kb, 'note', '') or 'No knowledge base is loaded.'}"
    matches = search(question, k=top_k, exclude_task_ids=[task_id] if task_id else [])
    if not matches:
        return f"**RAG lookup**\n\n{note}\n\nNo stored question is similar."
    rows = "\n".join(f"| {m.similarity:.3f} | {' '.join(m.question.split())[:150].replace('|', chr(92) + '|')} |"
                     for m in matches)
    return f"**RAG lookup**\n\n{note}\n\n| similarity | stored question |\n| ---: | --- |\n{rows}"

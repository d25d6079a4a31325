"""Where knowledge comes from: a GAIA-format folder, a JSONL of question/answer pairs, a finished run.

The GAIA folder is read by `gaia_layout`, the same reader as `evaluation.dataset`'s.

Each reader returns `Entry` objects (not yet embedded) or raises `SourceError` naming the file and
what is wrong with it. Entries without a known answer (GAIA's test split answers '?') are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gaia_layout import LayoutError, find_split_dir, int_or_none, metadata_files, read_split, text
from rag.store import Entry


class SourceError(ValueError):
    """A source file is missing or malformed; the message names it."""


def _known(answer: str) -> bool:
    return bool(answer) and answer != "?"


def find_gaia_metadata(directory: Path | str, split: str) -> Path:
    """The (first) metadata file of `split`: DIR/2023/SPLIT/, DIR/SPLIT/ or DIR itself; parquet before jsonl."""
    try:
        return metadata_files(find_split_dir(Path(directory), split))[0]
    except LayoutError as exc:
        raise SourceError(str(exc)) from None


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"cannot read {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise SourceError(f"{path} line {number} is not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise SourceError(f"{path} line {number} is not a JSON object")
        yield number, record


def from_gaia_dir(directory: Path | str, split: str = "validation") -> list[Entry]:
    """Entries from a GAIA split (Question / Final answer / task_id / Level / file_name columns)."""
    try:
        gaia = read_split(directory, split)
    except LayoutError as exc:
        raise SourceError(str(exc)) from None
    if gaia.rows and (missing := {"Question", "Final answer"} - gaia.columns):
        raise SourceError(f"{gaia.metadata} lacks the column(s) {', '.join(sorted(missing))}")
    entries = [Entry(question=r.question, answer=r.final_answer, task_id=r.task_id or None, source=f"gaia:{split}",
                     level=r.level, file_name=r.file_name)
               for r in gaia.rows if r.question and _known(r.final_answer)]
    if not entries:
        raise SourceError(f"{gaia.metadata} has no rows with a known answer (the test split's answers are '?'); "
                          "use the validation split")
    return entries


def from_jsonl(path: Path | str) -> list[Entry]:
    """Entries from lines {"question", "answer", optional "task_id", "level", "source", "file_name"}."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path} does not exist")
    entries = []
    for number, r in _read_jsonl(path):
        question = text(r.get("question", r.get("Question")))
        answer = text(r.get("answer", r.get("Final answer")))
        if not question or not answer:
            raise SourceError(f"{path} line {number} needs non-empty 'question' and 'answer' fields")
        entries.append(Entry(question=question, answer=answer, task_id=text(r.get("task_id")) or None,
                             source=text(r.get("source")) or f"jsonl:{path.name}",
                             level=int_or_none(r.get("level", r.get("Level"))), file_name=text(r.get("file_name"))))
    if not entries:
        raise SourceError(f"{path} holds no question/answer lines")
    return entries


def from_run(run_dir: Path | str) -> list[Entry]:
    """Entries from a finished evaluation run's details.jsonl: only tasks scored correct."""
    run_dir = Path(run_dir)
    path = run_dir if run_dir.is_file() else run_dir / "details.jsonl"
    if not path.is_file():
        raise SourceError(f"{path} does not exist (a finished run directory has details.jsonl)")
    entries = []
    for number, r in _read_jsonl(path):
        if r.get("correct") is not True:
            continue
        question = text(r.get("question"))
        answer = text(r.get("expected")) or text(r.get("predicted"))
        if not question or not _known(answer):
            raise SourceError(f"{path} line {number}: a correct record needs 'question' and 'expected' "
                              f"(or 'predicted')")
        entries.append(Entry(question=question, answer=answer, task_id=text(r.get("task_id")) or None,
                             source=f"run:{path.parent.name}", level=int_or_none(r.get("level")),
                             file_name=text(r.get("file_name"))))
    if not entries:
        raise SourceError(f"{path} has no task scored correct: nothing to learn from")
    return entries

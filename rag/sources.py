"""Where knowledge comes from: a GAIA-format folder, a JSONL of question/answer pairs, a finished run.

Each reader returns `Entry` objects (not yet embedded) or raises `SourceError` naming the file and
what is wrong with it. Entries without a known answer (GAIA's test split answers '?') are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from rag.store import Entry


class SourceError(ValueError):
    """A source file is missing or malformed; the message names it."""


def _level(value: Any) -> int | None:
    try:
        return int(str(value).strip()) if value is not None and str(value).strip() not in ("", "nan", "None") else None
    except ValueError:
        return None


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # NaN from pandas
        return ""
    return str(value).strip()


def _known(answer: str) -> bool:
    return bool(answer) and answer != "?"


def find_gaia_metadata(directory: Path | str, split: str) -> Path:
    """The metadata file of `split`: DIR/2023/SPLIT/, DIR/SPLIT/ or DIR itself; parquet before jsonl."""
    root = Path(directory)
    for folder in (root / "2023" / split, root / split, root):
        for name in ("metadata.parquet", "metadata.jsonl"):
            if (folder / name).is_file():
                return folder / name
    raise SourceError(f"no GAIA metadata for split {split!r} under {root}: expected {root}/2023/{split}/metadata.parquet "
                      "or metadata.jsonl (or a split folder that contains one)")


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict]]:
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
    path = find_gaia_metadata(directory, split)
    if path.suffix == ".parquet":
        import pandas as pd

        try:
            rows = pd.read_parquet(path).to_dict("records")
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for damaged files
            raise SourceError(f"cannot read {path}: {exc}") from None
    else:
        rows = [record for _, record in _read_jsonl(path)]
    missing = {"Question", "Final answer"} - set().union(*(r.keys() for r in rows)) if rows else set()
    if missing:
        raise SourceError(f"{path} lacks the column(s) {', '.join(sorted(missing))}")
    entries = [
        Entry(question=_text(r.get("Question")), answer=_text(r.get("Final answer")), task_id=_text(r.get("task_id")) or None,
              source=f"gaia:{split}", level=_level(r.get("Level")), file_name=_text(r.get("file_name")))
        for r in rows
    ]
    entries = [e for e in entries if e.question and _known(e.answer)]
    if not entries:
        raise SourceError(f"{path} has no rows with a known answer (the test split's answers are '?'); use the validation split")
    return entries


def from_jsonl(path: Path | str) -> list[Entry]:
    """Entries from lines {"question", "answer", optional "task_id", "level", "source", "file_name"}."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path} does not exist")
    entries = []
    for number, r in _read_jsonl(path):
        question = _text(r.get("question", r.get("Question")))
        answer = _text(r.get("answer", r.get("Final answer")))
        if not question or not answer:
            raise SourceError(f"{path} line {number} needs non-empty 'question' and 'answer' fields")
        entries.append(Entry(question=question, answer=answer, task_id=_text(r.get("task_id")) or None,
                             source=_text(r.get("source")) or f"jsonl:{path.name}", level=_level(r.get("level", r.get("Level"))),
                             file_name=_text(r.get("file_name"))))
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
        question = _text(r.get("question"))
        answer = _text(r.get("expected")) or _text(r.get("predicted"))
        if not question or not _known(answer):
            raise SourceError(f"{path} line {number}: a correct record needs 'question' and 'expected' (or 'predicted')")
        entries.append(Entry(question=question, answer=answer, task_id=_text(r.get("task_id")) or None,
                             source=f"run:{path.parent.name}", level=_level(r.get("level")), file_name=_text(r.get("file_name"))))
    if not entries:
        raise SourceError(f"{path} has no task scored correct: nothing to learn from")
    return entries

"""A small GAIA-format folder for tests: real attachments, deterministic easy answers.

    root = make_gaia_folder(tmp_path)                      # hub style: 2023/validation/metadata.parquet
    root = make_gaia_folder(tmp_path, fmt="jsonl", level_as_str=False)   # pre-October-2025 style
    samples = load_split("validation", data_dir=root)

Layout mirrors the hub: `root/2023/<split>/metadata.parquet` (+ `metadata.level{1,2,3}.parquet`, with a
`file_path` column relative to `root`) or `metadata.jsonl` (no `file_path`; attachments found by
`file_name` in the split folder). The `test` split has the same questions under other task ids and
answers "?", like the real test split.

`FIXTURE_TASKS` lists the validation tasks; `answer_for(text)` finds the expected answer of whichever
fixture question occurs in `text` (handy for a scripted model server answering concurrent tasks).
"""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


def _write_xlsx(path: Path) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Month", "Sales"])
    for month, sales in (("Jan", 10), ("Feb", 20), ("Mar", 30)):
        ws.append([month, sales])
    wb.save(path)


def _write_py(path: Path) -> None:
    path.write_text("values = [6, 7]\nresult = values[0] * values[1]\nprint(result)\n", encoding="utf-8")


def _write_csv(path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["name", "city"])
        writer.writerows([["Ann", "Paris"], ["Bob", "Berlin"], ["Cid", "Paris"], ["Dee", "Rome"]])


def _write_txt(path: Path) -> None:
    path.write_text("cherry\napple\nbanana\n", encoding="utf-8")


@dataclass(frozen=True)
class FixtureTask:
    """One fixture task: its question, level, answer and optional attachment writer."""

    key: str
    question: str
    level: int
    answer: str
    file_name: str = ""
    write_file: Callable[[Path], None] | None = field(default=None, compare=False, repr=False)
    tools: tuple[str, ...] = ()

    def task_id(self, split: str = "validation") -> str:
        """Deterministic UUID, different per split (the real splits share no ids)."""
        return str(uuid.uuid5(_NAMESPACE, f"{split}/{self.key}"))


FIXTURE_TASKS: tuple[FixtureTask, ...] = (
    FixtureTask("arith", "What is 2 + 2? Answer with a number.", 1, "4", tools=("calculator",)),
    FixtureTask(
        "xlsx", "What is the total of the Sales column in the attached spreadsheet?", 1, "60",
        file_name="sales.xlsx", write_file=_write_xlsx, tools=("read_excel",),
    ),
    FixtureTask(
        "py", "What number does the attached Python program print?", 2, "42",
        file_name="program.py", write_file=_write_py, tools=("run_python",),
    ),
    FixtureTask(
        "csv", "How many people in the attached CSV file live in Paris?", 2, "2",
        file_name="people.csv", write_file=_write_csv, tools=("read_csv",),
    ),
    FixtureTask(
        "txt", "List the fruits in the attached text file in alphabetical order, comma-separated.", 3,
        "apple, banana, cherry", file_name="fruits.txt", write_file=_write_txt, tools=("read_file",),
    ),
    FixtureTask("capital", "What is the capital city of France?", 3, "Paris", tools=("web_search",)),
)

VALIDATION_ANSWERS: dict[str, str] = {t.task_id("validation"): t.answer for t in FIXTURE_TASKS}
"""task_id -> expected answer for the validation split."""

LEVEL_COUNTS: dict[int, int] = {lvl: sum(t.level == lvl for t in FIXTURE_TASKS) for lvl in (1, 2, 3)}


def answer_for(text: str) -> str | None:
    """The expected answer of the fixture question contained in `text` (None if none is)."""
    for task in FIXTURE_TASKS:
        if task.question in text:
            return task.answer
    return None


def _row(task: FixtureTask, split: str, fmt: str, level_as_str: bool) -> dict[str, Any]:
    test = split == "test"
    row: dict[str, Any] = {
        "task_id": task.task_id(split),
        "Question": task.question,
        "Level": str(task.level) if level_as_str else task.level,
        "Final answer": "?" if test else task.answer,
        "file_name": task.file_name,
    }
    if fmt == "parquet":
        row["file_path"] = f"2023/{split}/{task.file_name}" if task.file_name else ""
    row["Annotator Metadata"] = None if test else {
        "Steps": f"1. Read the question.\n2. Work out {task.answer}.",
        "Number of steps": "2",
        "How long did this take?": "1 minute",
        "Tools": "\n".join(f"{i}. {name}" for i, name in enumerate(task.tools, 1)) or "None",
        "Number of tools": str(len(task.tools)),
    }
    return row


def make_gaia_folder(
    root: Path,
    *,
    fmt: Literal["parquet", "jsonl"] = "parquet",
    level_as_str: bool = True,
    split: str = "validation",
    tasks: Sequence[FixtureTask] = FIXTURE_TASKS,
) -> Path:
    """Write the fixture split (or `tasks`) under `root/2023/<split>/` and return `root` (the dataset folder)."""
    folder = Path(root) / "2023" / split
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        if task.write_file is not None:
            task.write_file(folder / task.file_name)
    rows = [_row(t, split, fmt, level_as_str) for t in tasks]
    if fmt == "jsonl":
        with (folder / "metadata.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    elif fmt == "parquet":
        import pandas as pd

        frame = pd.DataFrame(rows)
        frame.to_parquet(folder / "metadata.parquet", index=False)
        # The hub also ships per-level files; a loader must not count their rows twice.
        for lvl in (1, 2, 3):
            mask = frame["Level"].astype(int) == lvl
            frame[mask].to_parquet(folder / f"metadata.level{lvl}.parquet", index=False)
    else:
        raise ValueError(f"fmt must be 'parquet' or 'jsonl', not {fmt!r}")
    return Path(root)

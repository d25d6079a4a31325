"""The GAIA folder layout, read in one place: `evaluation.dataset` (tasks) and `rag.sources` (knowledge).

Layout: `<root>/2023/<split>/metadata.parquet` (hub format since October 2025: `Level` a string, a
`file_path` column relative to `<root>`, plus per-level `metadata.levelN.parquet` copies, read only
when the main file is absent) or the older `metadata.jsonl` (attachments found by `file_name` in the
split folder). `<root>` may also be the split folder itself, or hold `<split>/` directly.

A bottom-layer module like `config.py`: it knows no package of this repository (pandas is imported
only to read parquet), so `rag`, below `evaluation` in the layering, can use it as well.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class LayoutError(ValueError):
    """The folder is not a readable GAIA split; the message names the file and what is wrong."""


class UnsafeAttachment(LayoutError):
    """A row's `file_name`/`file_path` names a file outside its split folder (`../`, absolute path, symlink out)."""


@dataclass(frozen=True)
class GaiaRow:
    """One metadata row, its columns converted once (text stripped of NaN, `Level` an int or None)."""

    task_id: str
    question: str
    level: int | None
    final_answer: str
    file_name: str
    file_path: str
    """The hub's attachment path relative to the dataset root; '' in the older layout."""
    annotator: Any
    """The raw `Annotator Metadata` value (a dict, or None when the column is absent)."""
    raw_level: Any = None
    """`Level` as stored, for error messages."""


@dataclass(frozen=True)
class GaiaSplit:
    """A split folder and its rows."""

    split_dir: Path
    """The folder holding the metadata file(s)."""
    dataset_root: Path
    """What the hub's `file_path` column is relative to (the folder above `2023/`)."""
    metadata: Path
    """The first metadata file read (for messages)."""
    columns: frozenset[str]
    """Every column some row has (a caller checks the ones it needs)."""
    rows: list[GaiaRow]

    def attachment_path(self, row: GaiaRow) -> Path | None:
        """Absolute path of the row's attachment (where it should be, even when missing); None without one.

        Raises UnsafeAttachment when the metadata points outside the split folder: an uploaded
        `metadata.jsonl` is a visitor's input, and `../../etc/passwd` must not become an attachment.
        """
        if not row.file_name:
            return None
        candidates = [self.dataset_root / row.file_path] if row.file_path else []
        candidates.append(self.split_dir / row.file_name)
        for candidate in candidates:
            self._check_inside(candidate, row)
        chosen = next((c for c in candidates if c.is_file()), candidates[0])
        # normpath, not resolve(): a hub snapshot's files are symlinks to hashed blobs, and tools need the real name.
        return Path(os.path.normpath(chosen.absolute()))

    def _check_inside(self, candidate: Path, row: GaiaRow) -> None:
        split_dir = Path(os.path.normpath(self.split_dir.absolute()))
        lexical = Path(os.path.normpath(candidate.absolute()))
        inside = lexical != split_dir and lexical.is_relative_to(split_dir)
        if inside and candidate.exists():
            target = candidate.resolve()
            inside = target.is_relative_to(split_dir.resolve()) or any(
                target.is_relative_to(root) for root in self._blob_roots())
        if not inside:
            named = row.file_path or row.file_name
            raise UnsafeAttachment(f"task {row.task_id}: attachment {named!r} is outside the split folder "
                                   f"{self.split_dir.name}/; it is not opened")

    def _blob_roots(self) -> list[Path]:
        """Where a hub cache snapshot's symlinks point (`<repo>/blobs`), the one place outside the split allowed."""
        snapshots = self.dataset_root.parent
        if snapshots.name != "snapshots":
            return []
        return [(snapshots.parent / "blobs").resolve()]


def text(value: Any) -> str:
    """A cell as stripped text: '' for None and pandas' NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def int_or_none(value: Any) -> int | None:
    """A cell as an int: "2", 2 and 2.0 (an int column with gaps becomes float) give 2; anything else None."""
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def find_split_dir(root: Path, split: str) -> Path:
    """The folder of `split` under `root`: ROOT/2023/SPLIT, ROOT/SPLIT or ROOT itself, the first with metadata."""
    for candidate in (root / "2023" / split, root / split, root):
        if metadata_files(candidate):
            if candidate == root and root.name != split:
                log.warning("Using %s as the %r split folder (its name does not say so).", root, split)
            return candidate
    raise LayoutError(f"{root} has no GAIA metadata for split {split!r}: expected {root}/2023/{split}/metadata.parquet "
                      "or metadata.jsonl (or a split folder containing one)")


def metadata_files(split_dir: Path) -> list[Path]:
    """The files to read: metadata.parquet, else the per-level parquet copies, else metadata.jsonl; [] if none."""
    if (main := split_dir / "metadata.parquet").is_file():
        return [main]
    if levels := sorted(split_dir.glob("metadata.level*.parquet")):
        return levels
    return [jsonl] if (jsonl := split_dir / "metadata.jsonl").is_file() else []


def _read_raw(files: list[Path]) -> list[dict[str, Any]]:
    if files[0].suffix == ".parquet":
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for path in files:
            try:
                rows += pd.read_parquet(path).to_dict(orient="records")
            except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for damaged files
                raise LayoutError(f"Cannot read {path}: {exc}") from exc
        return rows
    path = files[0]
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LayoutError(f"Cannot read {path}: {exc}") from exc
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LayoutError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise LayoutError(f"{path}:{number}: not a JSON object")
        out.append(record)
    return out


def _row(raw: dict[str, Any]) -> GaiaRow:
    return GaiaRow(task_id=text(raw.get("task_id")), question=text(raw.get("Question")),
                   level=int_or_none(raw.get("Level")), final_answer=text(raw.get("Final answer")),
                   file_name=text(raw.get("file_name")), file_path=text(raw.get("file_path")),
                   annotator=raw.get("Annotator Metadata"), raw_level=raw.get("Level"))


def read_split(root: Path | str, split: str) -> GaiaSplit:
    """Find and read one split under `root` (see the module docstring); LayoutError says what is wrong."""
    split_dir = find_split_dir(Path(root), split)
    files = metadata_files(split_dir)
    raw = _read_raw(files)
    columns = set().union(*(r.keys() for r in raw)) if raw else set()
    dataset_root = split_dir.parent.parent if split_dir.parent.name == "2023" else split_dir
    return GaiaSplit(split_dir, dataset_root, files[0], frozenset(columns), [_row(r) for r in raw])

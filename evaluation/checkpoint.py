"""The run's checkpoint: one JSON line per finished task, appended and fsync'ed the moment it finishes.

A process killed at any instant loses at most the tasks still in flight; a torn last line (killed
mid-write) is skipped on load and its task simply runs again. Each line is a `TaskRecord` plus the
`session` that wrote it, so a resumed run can report the wall time of each session rather than the
time the run sat dead between them.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.records import TaskRecord

log = logging.getLogger(__name__)

CHECKPOINT_NAME = "checkpoint.jsonl"


class FolderBusy(RuntimeError):
    """Another live process (or run) holds the run folder."""


@dataclass
class Loaded:
    """What a checkpoint holds: the latest record per task and each session's records."""

    records: dict[str, TaskRecord] = field(default_factory=dict)
    sessions: dict[str, list[TaskRecord]] = field(default_factory=dict)
    skipped_lines: int = 0


class Checkpoint:
    """Append-only JSONL of TaskRecords; thread-safe; durable per record."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = Path(path)
        self.session = session
        self._lock = threading.Lock()

    def load(self) -> Loaded:
        """Read every complete line; later lines for a task_id win; broken lines are counted and skipped."""
        out = Loaded()
        if not self.path.exists():
            return out
        with self.path.open("r", encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    record = TaskRecord.from_dict(data)
                except (ValueError, TypeError) as exc:
                    out.skipped_lines += 1
                    log.warning("%s:%d: unreadable checkpoint line skipped (%s)", self.path, number, exc)
                    continue
                out.records[record.task_id] = record
                out.sessions.setdefault(str(data.get("session", "")), []).append(record)
        return out

    def append(self, record: TaskRecord) -> None:
        """Write one record and force it to disk before returning."""
        line = json.dumps({**record.to_dict(), "session": self.session}, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A torn line left by a kill has no newline: start on a fresh line so this record stays readable.
            prefix = "\n" if self._ends_mid_line() else ""
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(prefix + line)
                fh.flush()
                os.fsync(fh.fileno())

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the run folder for this run; FolderBusy if another live run holds it.

        An OS file lock: a killed process releases it with its last breath, so resuming is never blocked.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with (self.path.parent / ".lock").open("a") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise FolderBusy(f"another run is writing {self.path.parent}") from None
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _ends_mid_line(self) -> bool:
        try:
            with self.path.open("rb") as fh:
                fh.seek(0, os.SEEK_END)
                if fh.tell() == 0:
                    return False
                fh.seek(-1, os.SEEK_END)
                return fh.read(1) != b"\n"
        except FileNotFoundError:
            return False


def session_wall_time(sessions: dict[str, list[TaskRecord]]) -> float:
    """Sum over sessions of (last task end - first task start): the run's wall time without dead gaps."""
    total = 0.0
    for records in sessions.values():
        starts = [r.started_at for r in records if r.started_at]
        ends = [r.finished_at for r in records if r.finished_at]
        if starts and ends:
            total += max(0.0, max(ends) - min(starts))
    return round(total, 3)


def write_jsonl_atomic(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as JSONL through a temporary file and a rename (a kill never leaves half a file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path

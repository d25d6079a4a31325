"""The order a batch starts its tasks in, so the provider's ceiling stays busy to the very end.

A batch at a rate limit is as fast as its requests are steady. Two things break that: a long task
started last (transcribing audio, reading a video, parsing a large spreadsheet or PDF) keeps the run
going while every other worker is idle — the idle tail —, and several long tasks in their tool work at
the same moment leave no worker asking the model anything. So each task gets an expected duration —
from the times earlier runs recorded for it (the checkpoints of this run and of earlier runs of the
same split), else from the steps its annotator took (GAIA's validation metadata: a ten-step research chain is
no one-step lookup, whatever its level) or its level, plus its attachment's type and size and its question (a
video link) — and
the queue is planned by simulating the workers: the longest tool-bound task first, but never more of
them at once than leaves most workers free to keep requests flowing (unless the other work left could
no longer cover a waiting one); the request-dense tasks fill in, longest first, and the shortest finish
last, when a worker that frees up early can still keep the ceiling busy.
"""

from __future__ import annotations

import heapq
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from evaluation.checkpoint import CHECKPOINT_NAME
from evaluation.dataset import Sample

log = logging.getLogger(__name__)

BASE_S = 8.0
"""A task without an attachment: a few model calls and quick tools."""
LEVEL_FACTOR = {1: 1.0, 2: 1.4, 3: 2.0}
"""Harder levels take more steps."""
STEP_S = 2.0
"""Per step the annotator took (GAIA's level 1 takes about four: BASE_S), when the task's metadata says."""
ATTACHMENT_S = {
    "mp3": 40.0, "wav": 40.0, "m4a": 40.0, "flac": 40.0, "ogg": 40.0,  # transcription
    "mp4": 60.0, "mov": 60.0, "webm": 60.0, "mkv": 60.0, "avi": 60.0,  # frames + transcription
    "xlsx": 8.0, "xls": 8.0, "xlsm": 8.0, "csv": 4.0, "pdf": 10.0,
    "png": 10.0, "jpg": 10.0, "jpeg": 10.0, "gif": 10.0, "webp": 10.0, "bmp": 10.0,  # OCR or vision
    "zip": 8.0, "docx": 4.0, "pptx": 6.0, "py": 4.0, "pdb": 4.0,
}
"""Extra seconds the tool for each attachment type usually takes."""
PER_MB_S = {"xlsx": 10.0, "xls": 10.0, "xlsm": 10.0, "csv": 5.0, "pdf": 12.0, "mp3": 20.0, "wav": 4.0,
            "m4a": 20.0, "mp4": 10.0, "zip": 8.0, "pptx": 3.0, "docx": 3.0}
"""Extra seconds per megabyte, where size drives the tool's time (rows, pages, minutes of audio)."""
VIDEO_LINK = re.compile(r"(youtube\.com/watch|youtu\.be/|vimeo\.com/|\.mp4\b)", re.IGNORECASE)
HEAVY_S = 30.0
"""A task recorded to have taken at least this long counts as tool-bound."""
TOOL_BOUND_S = 10.0
"""A task whose attachment promises at least this much tool work counts as tool-bound."""
RECENT_RUNS = 20
"""Earlier run folders of the split whose checkpoints are read for durations."""


def tool_seconds(sample: Sample) -> float:
    """Seconds of slow tool work the task's attachment (or video link) is expected to need."""
    seconds = 0.0
    if sample.file_type:
        seconds += (ATTACHMENT_S.get(sample.file_type, 4.0)
                    + PER_MB_S.get(sample.file_type, 0.0) * _size_mb(sample.file_path))
    if VIDEO_LINK.search(sample.question or ""):
        seconds += ATTACHMENT_S["mp4"]
    return seconds


def model_seconds(sample: Sample) -> float:
    """Seconds of model turns and quick tools: by the annotator's step count where known, else by the level."""
    steps = sample.annotator.number_of_steps if sample.annotator is not None else None
    if steps is not None and steps > 0:
        return STEP_S * steps
    return BASE_S * LEVEL_FACTOR.get(sample.level, 1.4)


def expected_duration(sample: Sample, recorded: Mapping[str, float] | None = None) -> float:
    """Seconds `sample` is expected to take: as recorded in an earlier run, else estimated from its metadata."""
    if recorded and sample.task_id in recorded:
        return recorded[sample.task_id]
    return model_seconds(sample) + tool_seconds(sample)


def tool_bound(sample: Sample, recorded: Mapping[str, float] | None = None) -> bool:
    """Whether the task spends long stretches in a tool, asking the model nothing meanwhile."""
    if recorded and sample.task_id in recorded:
        return recorded[sample.task_id] >= HEAVY_S
    return tool_seconds(sample) >= TOOL_BOUND_S


def plan_order(samples: Sequence[Sample], concurrency: int,
               recorded: Mapping[str, float] | None = None) -> list[Sample]:
    """The start order for `samples` on `concurrency` workers (see the module docstring); same tasks, reordered."""
    if concurrency <= 1 or len(samples) <= 1:
        return list(samples)  # one worker: nothing overlaps, the dataset order is as good as any
    durations = {s.task_id: expected_duration(s, recorded) for s in samples}
    ranked = sorted(samples, key=lambda s: -durations[s.task_id])  # stable: ties keep the dataset order
    cap = max(1, (concurrency - 1) // 2)
    slow = [s for s in ranked if tool_bound(s, recorded)]
    dense = [s for s in ranked if not tool_bound(s, recorded)]
    # Simulate the workers: whoever frees first takes the longest tool-bound task while fewer than `cap`
    # run, else the longest of the others.
    free_at: list[tuple[float, int]] = [(0.0, i) for i in range(concurrency)]
    heapq.heapify(free_at)
    running: list[float] = []  # end times of the tool-bound tasks in progress
    order: list[Sample] = []
    while slow or dense:
        now, worker = heapq.heappop(free_at)
        running = [end for end in running if end > now]
        # Past the cap only when waiting longer would make a slow task the run's tail: the other work
        # left, spread over the other workers, no longer covers it.
        dense_left = sum(durations[s.task_id] for s in dense) / max(1, concurrency - len(running) - 1)
        take_slow = bool(slow) and (len(running) < cap or dense_left < durations[slow[0].task_id])
        sample = slow.pop(0) if take_slow else dense.pop(0)
        end = now + durations[sample.task_id]
        if take_slow:
            running.append(end)
        order.append(sample)
        heapq.heappush(free_at, (end, worker))
    return order


def recorded_durations(run_dir: Path, split: str, *, recent: int = RECENT_RUNS) -> dict[str, float]:
    """Task id -> seconds it took, from the checkpoints of `run_dir` and of earlier runs of `split` beside it.

    The newest record of a task wins; tasks that ended with an error are left out (a failure's time
    says little about a success's). Unreadable lines are skipped.
    """
    folders = sorted((p.parent for p in run_dir.parent.glob(f"{split}-*/{CHECKPOINT_NAME}")
                      if p.parent != run_dir), key=_mtime)[-recent:]
    durations: dict[str, float] = {}
    for folder in [*folders, run_dir]:
        for task_id, seconds in _durations_in(folder / CHECKPOINT_NAME):
            durations[task_id] = seconds
    return durations


def _durations_in(path: Path) -> Iterable[tuple[str, float]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    for line in lines:
        try:
            row = json.loads(line)
            seconds = float(row.get("latency_s") or 0.0)
        except (ValueError, TypeError, AttributeError):
            continue
        if row.get("task_id") and seconds > 0 and not row.get("error"):
            yield str(row["task_id"]), seconds


def _mtime(folder: Path) -> float:
    try:
        return folder.stat().st_mtime
    except OSError:
        return 0.0


def _size_mb(path: Path | None) -> float:
    try:
        return path.stat().st_size / 1e6 if path is not None else 0.0
    except OSError:
        return 0.0

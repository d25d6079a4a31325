"""The runs folder as the batch tab lists it: runs to compare (with level, accuracy and date) and runs to resume."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from config import Settings


def _summary(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def run_label(folder: Path) -> str:
    """`validation-20261201-094000 · 2026-12-01 09:40 · 3/3 correct (100%) · L1 2/2 · L2 1/1`."""
    summary = _summary(folder)
    parts = [folder.name, time.strftime("%Y-%m-%d %H:%M", time.localtime(folder.stat().st_mtime))]
    scored, correct = summary.get("scored"), summary.get("correct", 0)
    if scored:
        parts.append(f"{correct}/{scored} correct ({100 * correct / scored:.0f}%)")
    elif summary:
        parts.append(f"{summary.get('total', 0)} task(s), none scored")
    else:
        parts.append("no summary yet")
    for level, group in sorted((summary.get("level_metrics") or {}).items()):
        if group.get("scored"):
            parts.append(f"L{level} {group.get('correct', 0)}/{group['scored']}")
    return " · ".join(parts)


def list_runs(settings: Settings) -> list[tuple[str, str]]:
    """(label, path) of the run folders under OUTPUT_DIR (with a details.jsonl or results.jsonl), newest first."""
    root = Path(settings.OUTPUT_DIR)
    if not root.is_dir():
        return []
    runs = [p for p in root.iterdir() if p.is_dir() and ((p / "details.jsonl").is_file() or (p / "results.jsonl").is_file())]
    return [(run_label(p), str(p)) for p in sorted(runs, key=lambda p: p.stat().st_mtime, reverse=True)]


def resumable_choices(settings: Settings, session_dir: str | None = None) -> list[tuple[str, str]]:
    """(label, path) of the unfinished runs under OUTPUT_DIR; this session's own run first."""
    from evaluation.run_info import resumable_runs

    runs = resumable_runs(Path(settings.OUTPUT_DIR))
    own = Path(session_dir).resolve() if session_dir else None
    runs.sort(key=lambda r: r.path.resolve() != own)  # stable: newest first otherwise
    return [(r.label, str(r.path)) for r in runs]


def compare(run_a: str | None, run_b: str | None) -> str:
    """Markdown comparison of two runs: fixed, regressed, unchanged."""
    if not run_a or not run_b:
        return "Pick two runs to compare."
    if run_a == run_b:
        return "Pick two different runs."
    from evaluation.compare import compare_runs

    try:
        head = f"**A**: {run_label(Path(run_a))}  \n**B**: {run_label(Path(run_b))}\n\n"
        return head + compare_runs(Path(run_a), Path(run_b)).to_markdown()
    except Exception as exc:  # noqa: BLE001 - a half-written run folder: say which
        return f"❌ Cannot compare: {type(exc).__name__}: {exc}"

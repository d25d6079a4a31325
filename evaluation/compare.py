"""Compare two runs: which tasks got fixed, which regressed, and accuracy per level.

Reads each run's `details.jsonl` (one TaskRecord dict per line; a task listed twice counts by its last
line). Fixed/regressed/unchanged are over the tasks scored in both runs; per-level accuracy is each
run's own (correct / scored), so a run over a subset is still summarised honestly.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


class CompareError(ValueError):
    """A run folder cannot be compared; the message says which and why."""


@dataclass
class LevelDelta:
    """Accuracy of one level (or 'all') in both runs."""

    a_correct: int
    a_scored: int
    b_correct: int
    b_scored: int

    @property
    def a_accuracy(self) -> float | None:
        """Run A's accuracy, None when it scored nothing here."""
        return self.a_correct / self.a_scored if self.a_scored else None

    @property
    def b_accuracy(self) -> float | None:
        """Run B's accuracy, None when it scored nothing here."""
        return self.b_correct / self.b_scored if self.b_scored else None

    @property
    def delta(self) -> float | None:
        """B minus A (positive = B is better)."""
        a, b = self.a_accuracy, self.b_accuracy
        return None if a is None or b is None else b - a


@dataclass
class Comparison:
    """Task-level and level-level differences between run A and run B."""

    run_a: Path
    run_b: Path
    fixed: list[str] = field(default_factory=list)
    regressed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unchanged_correct: int = 0
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    levels: dict[str, LevelDelta] = field(default_factory=dict)
    skipped_lines: int = 0
    a_cost_usd: float = 0.0
    """What run A's recorded tasks cost (their `cost_usd`; 0 when the prices were unknown)."""
    b_cost_usd: float = 0.0
    a_tokens: int = 0
    """Prompt + completion tokens of run A's recorded tasks."""
    b_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (accuracies included)."""
        data = asdict(self)
        data["run_a"], data["run_b"] = str(self.run_a), str(self.run_b)
        data["levels"] = {k: {**asdict(v), "a_accuracy": v.a_accuracy, "b_accuracy": v.b_accuracy, "delta": v.delta}
                          for k, v in self.levels.items()}
        return data

    def to_markdown(self) -> str:
        """A short report: level table, then fixed and regressed task ids."""
        pct = lambda v: "n/a" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        pts = lambda v: "n/a" if v is None else f"{100 * v:+.1f} pts"  # noqa: E731
        lines = ["# Run comparison", "", f"- A: `{self.run_a}`", f"- B: `{self.run_b}`",
                 f"- fixed {len(self.fixed)}, regressed {len(self.regressed)}, unchanged {len(self.unchanged)} "
                 f"({self.unchanged_correct} correct in both); only in A {len(self.only_in_a)}, "
                 f"only in B {len(self.only_in_b)}",
                 f"- cost: A ${self.a_cost_usd:.4f} ({self.a_tokens:,} tokens), "
                 f"B ${self.b_cost_usd:.4f} ({self.b_tokens:,} tokens)",
                 "", "| Level | A | B | Delta |", "|---|---:|---:|---:|"]
        for name, d in self.levels.items():
            lines.append(f"| {name} | {pct(d.a_accuracy)} ({d.a_correct}/{d.a_scored}) "
                         f"| {pct(d.b_accuracy)} ({d.b_correct}/{d.b_scored}) | {pts(d.delta)} |")
        for title, ids in (("Fixed (wrong in A, correct in B)", self.fixed),
                           ("Regressed (correct in A, wrong in B)", self.regressed)):
            lines += ["", f"## {title}", ""] + ([f"- {t}" for t in ids] or ["- none"])
        if self.skipped_lines:
            lines += ["", f"Note: {self.skipped_lines} malformed line(s) in details.jsonl were skipped."]
        return "\n".join(lines) + "\n"


def _load(run: Path) -> tuple[dict[str, dict[str, Any]], int]:
    path = run / "details.jsonl" if run.is_dir() else run
    if not path.is_file():
        raise CompareError(f"{run} has no details.jsonl (is it a run output folder of `python -m evaluation run`?)")
    rows: dict[str, dict[str, Any]] = {}
    skipped = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            row = None
            skipped += 1  # e.g. a line cut short by a killed process
        if isinstance(row, dict) and row.get("task_id"):
            rows[str(row["task_id"])] = row
    return rows, skipped


def _level_counts(rows: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for row in rows.values():
        if row.get("correct") is None:
            continue
        for key in ("all", str(row.get("level") if row.get("level") is not None else "unknown")):
            correct, scored = counts.get(key, (0, 0))
            counts[key] = (correct + bool(row["correct"]), scored + 1)
    return counts


def _spent(rows: dict[str, dict[str, Any]]) -> tuple[float, int]:
    """(cost in USD, tokens) of a run's recorded tasks; rows from before costs were recorded count 0."""
    cost = sum(float(r.get("cost_usd") or 0.0) for r in rows.values())
    tokens = sum(int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in rows.values())
    return round(cost, 6), tokens


def compare_runs(run_a: Path, run_b: Path) -> Comparison:
    """Compare two run folders (or their details.jsonl files)."""
    a, skipped_a = _load(Path(run_a))
    b, skipped_b = _load(Path(run_b))
    result = Comparison(Path(run_a), Path(run_b), skipped_lines=skipped_a + skipped_b)
    result.only_in_a = [t for t in a if t not in b]
    result.only_in_b = [t for t in b if t not in a]
    for task_id in (t for t in a if t in b):
        was, now = a[task_id].get("correct"), b[task_id].get("correct")
        if was is None or now is None:
            continue
        if now and not was:
            result.fixed.append(task_id)
        elif was and not now:
            result.regressed.append(task_id)
        else:
            result.unchanged.append(task_id)
            result.unchanged_correct += bool(now)
    result.a_cost_usd, result.a_tokens = _spent(a)
    result.b_cost_usd, result.b_tokens = _spent(b)
    ca, cb = _level_counts(a), _level_counts(b)
    keys = sorted(set(ca) | set(cb), key=lambda k: (k == "all", k))
    result.levels = {k: LevelDelta(*ca.get(k, (0, 0)), *cb.get(k, (0, 0))) for k in keys}
    return result

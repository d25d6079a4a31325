"""Compare two runs: which tasks got fixed, which regressed, and accuracy per level.

Reads each run's `details.jsonl` (one TaskRecord dict per line; a task listed twice counts by its last
line). Everything is over the tasks scored in BOTH runs — fixed/regressed/unchanged and the per-level
accuracies — so a 3-task run against a 10-task run compares those 3 tasks, not two different task sets;
the report says how many tasks that is and warns when the runs cover different tasks. Each run's own
accuracy (over all it scored) is kept in `own_levels`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluation.repair_table import repair_table
from evaluation.run_folder import RunFolder


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
    """Accuracy per level over the tasks scored in both runs."""
    skipped_lines: int = 0
    a_cost_usd: float = 0.0
    """What run A's recorded tasks cost (their `cost_usd`; 0 when the prices were unknown)."""
    b_cost_usd: float = 0.0
    a_tokens: int = 0
    """Prompt + completion tokens of run A's recorded tasks."""
    b_tokens: int = 0
    own_levels: dict[str, LevelDelta] = field(default_factory=dict)
    """Each run's own accuracy per level (over everything it scored): not comparable when the task sets differ."""
    questions: dict[str, str] = field(default_factory=dict)
    """task id → its question (from either run), to name tasks in the report."""
    a_strategy: str = "react"
    """The strategy run A solved its tasks with (run.json, else its records; react before strategies)."""
    b_strategy: str = "react"
    still_wrong: list[str] = field(default_factory=list)
    """Wrong in both runs (a subset of `unchanged`)."""
    categories: dict[str, tuple[str, str]] = field(default_factory=dict)
    """task id → (its failure category in A, in B), for the repair table."""

    @property
    def common(self) -> int:
        """Tasks scored in both runs (what the deltas are over)."""
        return len(self.fixed) + len(self.regressed) + len(self.unchanged)

    @property
    def same_tasks(self) -> bool:
        """True when both runs hold the same tasks."""
        return not self.only_in_a and not self.only_in_b

    def warning(self) -> str:
        """Empty when the runs cover the same tasks; else what differs and what the comparison is over."""
        if self.same_tasks:
            return ""
        return (f"⚠️ The runs cover different tasks (only in A: {len(self.only_in_a)}, only in B: "
                f"{len(self.only_in_b)}): accuracies and deltas below are over the {self.common} task(s) "
                "scored in both.")

    def _task(self, task_id: str) -> str:
        question = " ".join(self.questions.get(task_id, "").split())
        short = question[:90] + ("…" if len(question) > 90 else "")
        return f"- `{task_id[:8]}` {short}".rstrip()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (accuracies included)."""
        data = asdict(self)
        data["run_a"], data["run_b"] = str(self.run_a), str(self.run_b)
        for name in ("levels", "own_levels"):
            data[name] = {k: {**asdict(v), "a_accuracy": v.a_accuracy, "b_accuracy": v.b_accuracy, "delta": v.delta}
                          for k, v in getattr(self, name).items()}
        data["common"], data["same_tasks"] = self.common, self.same_tasks
        data.pop("questions", None)
        return data

    def to_markdown(self) -> str:
        """A short report: the task sets, the level table over the common tasks, then fixed and regressed tasks."""
        pct: Callable[[float | None], str] = lambda v: "n/a" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        pts: Callable[[float | None], str] = lambda v: "n/a" if v is None else f"{100 * v:+.1f} pts"  # noqa: E731
        lines = ["# Run comparison", "", f"- A: `{self.run_a}`", f"- B: `{self.run_b}`",
                 f"- compared over **{self.common} task(s) scored in both**: fixed {len(self.fixed)}, regressed "
                 f"{len(self.regressed)}, unchanged {len(self.unchanged)} ({self.unchanged_correct} correct in both); "
                 f"only in A {len(self.only_in_a)}, only in B {len(self.only_in_b)}",
                 f"- cost: A ${self.a_cost_usd:.4f} ({self.a_tokens:,} tokens), "
                 f"B ${self.b_cost_usd:.4f} ({self.b_tokens:,} tokens)",
                 f"- strategy: A {self.a_strategy}, B {self.b_strategy}"]
        if warning := self.warning():
            own = self.own_levels.get("all")
            alone = (f" Each alone: A {pct(own.a_accuracy)} of {own.a_scored}, B {pct(own.b_accuracy)} of "
                     f"{own.b_scored}." if own else "")
            lines += ["", warning + alone]
        lines += ["", "| Level | A | B | Delta |", "|---|---:|---:|---:|"]
        for name, d in self.levels.items():
            lines.append(f"| {name} | {pct(d.a_accuracy)} ({d.a_correct}/{d.a_scored}) "
                         f"| {pct(d.b_accuracy)} ({d.b_correct}/{d.b_scored}) | {pts(d.delta)} |")
        for title, ids in (("Fixed (wrong in A, correct in B)", self.fixed),
                           ("Regressed (correct in A, wrong in B)", self.regressed)):
            lines += ["", f"## {title}", ""] + ([self._task(t) for t in ids] or ["- none"])
        lines += ["", *repair_table(self.fixed, self.regressed, self.still_wrong, self.categories)]
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
            if not now:
                result.still_wrong.append(task_id)
        result.categories[task_id] = (str(a[task_id].get("failure_category") or "unscored"),
                                      str(b[task_id].get("failure_category") or "unscored"))
    result.a_cost_usd, result.a_tokens = _spent(a)
    result.b_cost_usd, result.b_tokens = _spent(b)
    common = set(result.fixed) | set(result.regressed) | set(result.unchanged)
    result.levels = _deltas({t: a[t] for t in common}, {t: b[t] for t in common})
    result.own_levels = _deltas(a, b)
    result.questions = {t: str(row.get("question") or "") for t, row in (b | a).items()}
    result.a_strategy, result.b_strategy = _strategy(Path(run_a), a), _strategy(Path(run_b), b)
    return result


def _strategy(run: Path, rows: dict[str, dict[str, Any]]) -> str:
    """The run's strategy: its run.json's, else its records' (several: joined), else react."""
    info = RunFolder(run if run.is_dir() else run.parent).info()
    if info is not None and info.strategy:
        return info.strategy
    return "/".join(sorted({str(r.get("strategy") or "react") for r in rows.values()})) or "react"


def _deltas(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, LevelDelta]:
    ca, cb = _level_counts(a), _level_counts(b)
    keys = sorted(set(ca) | set(cb), key=lambda k: (k == "all", k))
    return {k: LevelDelta(*ca.get(k, (0, 0)), *cb.get(k, (0, 0))) for k in keys}

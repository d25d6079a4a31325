"""The repair view of a comparison: fixed / broken / still wrong, per task and per failure category.

A fixed or still-wrong task counts under its failure category in run A (what was repaired, or not); a
broken task under its category in run B (how it broke). Categories are evaluation/failures.py's.
"""

from __future__ import annotations

from collections import defaultdict

Outcome = tuple[str, str]


def repair_table(fixed: list[str], broken: list[str], still_wrong: list[str],
                 categories: dict[str, tuple[str, str]]) -> list[str]:
    """Markdown lines: a per-category count table, then one row per task with its categories in A and B."""
    outcomes = [(t, "fixed") for t in fixed] + [(t, "broken") for t in broken] + [(t, "still wrong")
                                                                                  for t in still_wrong]
    lines = ["## Repair: fixed / broken / still wrong", ""]
    if not outcomes:
        return lines + ["- no task was wrong in either run"]
    per: dict[str, dict[str, int]] = defaultdict(lambda: {"fixed": 0, "broken": 0, "still wrong": 0})
    for task_id, outcome in outcomes:
        a, b = categories.get(task_id, ("unscored", "unscored"))
        per[b if outcome == "broken" else a][outcome] += 1
    lines += ["| Failure category | Fixed | Broken | Still wrong |", "|---|---:|---:|---:|"]
    lines += [f"| {c} | {n['fixed']} | {n['broken']} | {n['still wrong']} |" for c, n in sorted(per.items())]
    lines += ["", "| Task | Outcome | Category in A | Category in B |", "|---|---|---|---|"]
    for task_id, outcome in outcomes:
        a, b = categories.get(task_id, ("unscored", "unscored"))
        lines.append(f"| `{task_id[:8]}` | {outcome} | {a} | {b} |")
    return lines
